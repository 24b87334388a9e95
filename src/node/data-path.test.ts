import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadNodeIdentity, lockDataPath } from './data-path.ts';

async function withDataPath(run: (dataPath: string) => Promise<void>): Promise<void> {
  const dataPath = await mkdtemp(join(tmpdir(), 'trove-node-'));
  try {
    await run(dataPath);
  } finally {
    await rm(dataPath, { recursive: true, force: true });
  }
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

test('the data path lock refuses a second holder and takes over a dead one', async () => {
  await withDataPath(async (dataPath) => {
    const lock = await lockDataPath(dataPath);
    await assert.rejects(lockDataPath(dataPath), /already in use by this process/);
    await lock.release();

    // A lock file naming a live process (our parent) is refused.
    await writeFile(join(dataPath, 'node.lock'), `${process.ppid}\n`);
    await assert.rejects(lockDataPath(dataPath), new RegExp(`pid ${process.ppid}`));

    // A lock file naming a process that has exited is taken over.
    const exited = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))']);
    await writeFile(join(dataPath, 'node.lock'), `${exited.stdout.toString()}\n`);
    const taken = await lockDataPath(dataPath);
    assert.equal((await readFile(join(dataPath, 'node.lock'), 'utf8')).trim(), String(process.pid));
    await taken.release();
  });
});
