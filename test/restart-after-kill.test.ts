/**
 * The data-path lock is released by the kernel with its process: a server killed with SIGKILL is
 * restarted at once on the same data path, 20 times in a row, and every acknowledged write is
 * there after each restart; a restart succeeds even while the killed process is still a zombie
 * (its parent has not reaped it); and a second live process on the same path is refused with one
 * line on stderr and exit code 1.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { REPO_ROOT, TEST_SHARD_WORKERS, call, freePort, startServer, type TroveServer } from './harness.ts';

const MAIN = join(REPO_ROOT, 'src', 'cli', 'main.ts');
const RESTARTS = 20;
let server: TroveServer;

before(async () => {
  // A failed restart logs its stack under the `start` target, kept in the server's output.
  server = await startServer({ settings: { 'log.level': 'warn,start=debug' } });
  const created = await call(server, 'PUT', '/survivors', { json: { settings: { number_of_shards: 2 }, mappings: { properties: { round: { type: 'integer' } } } } });
  assert.equal(created.status, 200, created.text);
});

after(async () => {
  await server?.cleanup();
});

/** Arguments of `trove start` on the test server's data path (and another port). */
function startArgs(port: number): string[] {
  const settings = { 'http.host': '127.0.0.1', 'http.port': String(port), 'path.data': server.dataDir, 'security.enabled': 'false', 'log.level': 'warn,start=debug', 'node.shard_workers': TEST_SHARD_WORKERS };
  return ['--import', 'tsx', MAIN, 'start', ...Object.entries(settings).flatMap(([key, value]) => [`--${key}`, value])];
}

test(`kill -9 and an immediate restart, ${RESTARTS} times: every restart starts and keeps every acknowledged write`, async () => {
  for (let round = 1; round <= RESTARTS; round++) {
    const written = await call(server, 'PUT', `/survivors/_doc/${round}`, { json: { round } });
    assert.equal(written.status, 201, written.text);
    // restart() kills with SIGKILL and starts again at once; it throws if the new process exits.
    await server.restart();
    const count = await call(server, 'GET', '/survivors/_count');
    assert.equal(count.body.count, round, `after restart ${round}: ${count.text}`);
    const last = await call(server, 'GET', `/survivors/_doc/${round}`);
    assert.equal(last.body._source?.round, round, last.text);
  }
});

test('a second live process on the same data path is refused with one line and exit code 1', async () => {
  const second = spawn(process.execPath, startArgs(await freePort()), { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  second.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const code = await new Promise<number | null>((resolve) => second.once('exit', resolve));
  assert.equal(code, 1, stderr);
  assert.equal(stderr, `trove: cannot start: data path ${server.dataDir} is in use by another Trove process (pid ${server.pid()}); stop it or choose another --path.data\n`);
  assert.equal((await call(server, 'GET', '/survivors/_count')).body.count, RESTARTS, 'the running server is untouched');
});

test('a restart succeeds while the killed server is still a zombie', { skip: process.platform !== 'linux' }, async () => {
  await server.kill('SIGKILL');
  // The server's parent blocks its event loop as soon as the server is spawned, so it never
  // reaps it: once killed, the server stays a zombie, its pid alive to kill(pid, 0).
  const parentScript = `
    const { spawn } = require('node:child_process');
    const child = spawn(process.execPath, JSON.parse(process.argv[1]), { cwd: ${JSON.stringify(REPO_ROOT)}, stdio: 'ignore' });
    require('node:fs').writeSync(1, child.pid + '\\n');
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0);
  `;
  const port = await freePort();
  const parent = spawn(process.execPath, ['-e', parentScript, JSON.stringify(startArgs(port))], { stdio: ['ignore', 'pipe', 'inherit'] });
  let restarted: ChildProcess | undefined;
  try {
    const zombiePid = Number((await firstLine(parent)).trim());
    await waitUntilServing(`http://127.0.0.1:${port}`);
    process.kill(zombiePid, 'SIGKILL');
    await waitForZombie(zombiePid);
    process.kill(zombiePid, 0); // still "alive" as a zombie: the pid-file lock refused this case

    restarted = spawn(process.execPath, startArgs(port), { cwd: REPO_ROOT, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    restarted.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => restarted!.once('exit', resolve));
    const serving = waitUntilServing(`http://127.0.0.1:${port}`).then(() => 'serving' as const);
    const outcome = await Promise.race([serving, exited.then((code) => `exited with ${code}: ${stderr}`)]);
    assert.equal(outcome, 'serving');
    assert.equal((await call({ url: `http://127.0.0.1:${port}` }, 'GET', '/survivors/_count')).body.count, RESTARTS);
  } finally {
    restarted?.kill('SIGKILL');
    parent.kill('SIGKILL');
  }
});

/** The first line a child writes on stdout. */
function firstLine(child: ChildProcess): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      text += chunk.toString();
      if (text.includes('\n')) resolve(text.split('\n')[0]!);
    });
    child.once('exit', (code) => reject(new Error(`exited with ${code} before writing a line`)));
  });
}

/** Waits until `GET /` answers 200 (at most two minutes: tsx loads slowly on a busy machine). */
async function waitUntilServing(url: string): Promise<void> {
  const deadline = Date.now() + 120_000;
  while (Date.now() < deadline) {
    try {
      if ((await fetch(`${url}/`)).status === 200) return;
    } catch {
      // not listening yet
    }
    await sleep(50);
  }
  throw new Error(`${url} did not answer within two minutes`);
}

/** Waits until a killed process is a zombie (state Z in /proc), i.e. dead but not reaped. */
async function waitForZombie(pid: number): Promise<void> {
  for (let attempt = 0; attempt < 200; attempt++) {
    const status = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => '');
    if (/\) Z /.test(status)) return;
    await sleep(25);
  }
  throw new Error(`process ${pid} did not become a zombie`);
}
