import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { LOCK_SOCKET_FILE, loadNodeIdentity, lockDataPath, prepareDataPath } from './data-path.ts';

const DATA_PATH_MODULE = fileURLToPath(new URL('./data-path.ts', import.meta.url));

async function withDataPath(run: (dataPath: string) => Promise<void>): Promise<void> {
  const dataPath = await mkdtemp(join(tmpdir(), 'trove-node-'));
  try {
    await run(dataPath);
  } finally {
    await rm(dataPath, { recursive: true, force: true });
  }
}

/** A child process that takes the lock, says `locked`, and holds it until killed. */
async function lockInChild(dataPath: string) {
  const script = `const { lockDataPath } = await import(${JSON.stringify(DATA_PATH_MODULE)}); await lockDataPath(${JSON.stringify(dataPath)}); console.log('locked'); setInterval(() => {}, 1000);`;
  const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  let output = '';
  await new Promise<void>((resolve, reject) => {
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes('locked')) resolve();
    });
    child.once('exit', (code) => reject(new Error(`lock holder exited with ${code}`)));
  });
  return child;
}

test('the node id is generated once and kept', async () => {
  await withDataPath(async (dataPath) => {
    const first = await loadNodeIdentity(dataPath);
    assert.match(first.nodeId, /^[A-Za-z0-9_-]{22}$/);
    assert.deepEqual(await loadNodeIdentity(dataPath), first);
    const file = JSON.parse(await readFile(join(dataPath, 'node.json'), 'utf8'));
    assert.equal(file.format, 'trove-node');
    assert.equal(file.nodeId, first.nodeId);
    await writeFile(join(dataPath, 'node.json'), '{"format":');
    await assert.rejects(loadNodeIdentity(dataPath), /damaged/);
  });
});

test('the data path is created 0700 and an existing wider one is tightened', async () => {
  await withDataPath(async (root) => {
    const fresh = join(root, 'fresh');
    await prepareDataPath(fresh);
    assert.equal((await stat(fresh)).mode & 0o777, 0o700);
    const wide = join(root, 'wide');
    await mkdir(wide);
    await chmod(wide, 0o755);
    await prepareDataPath(wide);
    assert.equal((await stat(wide)).mode & 0o777, 0o700);
  });
});

test('the lock refuses a second holder in this process and is released', async () => {
  await withDataPath(async (dataPath) => {
    const lock = await lockDataPath(dataPath);
    assert.ok(existsSync(join(dataPath, LOCK_SOCKET_FILE)));
    await assert.rejects(lockDataPath(dataPath), /already in use by this process/);
    await lock.release();
    assert.equal(existsSync(join(dataPath, LOCK_SOCKET_FILE)), false);
    await (await lockDataPath(dataPath)).release();
  });
});

/** A live holder in another process is refused with its pid; after its kill -9 the lock is taken at once. */
async function checkLiveHolder(dataPath: string): Promise<void> {
  const holder = await lockInChild(dataPath);
  try {
    await assert.rejects(lockDataPath(dataPath), (error: Error) => {
      assert.match(error.message, new RegExp(`^data path .* is in use by another Trove process \\(pid ${holder.pid}\\)`));
      assert.doesNotMatch(error.message, /\n/);
      return true;
    });
  } finally {
    holder.kill('SIGKILL');
    await once(holder, 'exit');
  }
  // The socket file is left behind by the dead holder: stale, so it is taken over.
  assert.ok(existsSync(join(dataPath, LOCK_SOCKET_FILE)));
  const lock = await lockDataPath(dataPath);
  await lock.release();
}

test('a live holder in another process is refused with its pid; after kill -9 the lock is taken at once', async () => {
  await withDataPath(checkLiveHolder);
});

test('a stale lock file (no listener, or an old pid file) is taken over', async () => {
  await withDataPath(async (dataPath) => {
    await writeFile(join(dataPath, LOCK_SOCKET_FILE), 'not a socket');
    await writeFile(join(dataPath, 'node.lock'), `${process.ppid}\n`);
    const lock = await lockDataPath(dataPath);
    assert.equal(existsSync(join(dataPath, 'node.lock')), false, 'the pid file of earlier versions is removed');
    await lock.release();
  });
});

test('a data path too long for a socket address is locked through its directory descriptor (Linux)', { skip: process.platform !== 'linux' }, async () => {
  await withDataPath(async (root) => {
    const dataPath = join(root, 'd'.repeat(60), 'e'.repeat(60));
    assert.ok(Buffer.byteLength(join(dataPath, LOCK_SOCKET_FILE)) > 108);
    await checkLiveHolder(dataPath);
  });
});
