/**
 * A first run as a new user makes it, through real processes: the admin key file named in plain
 * words in both log formats, start failures as one line and exit code 1, private file modes
 * under umask 022, and the README's `trove import` of the shipped sample file (and a missing file
 * as one line and exit code 1).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { copyFile, mkdtemp, readFile, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { REPO_ROOT, call, freePort, startServer, type TroveServer } from './harness.ts';

const MAIN = join(REPO_ROOT, 'src', 'cli', 'main.ts');
const SAMPLE = join(REPO_ROOT, 'examples', 'books.ndjson');
let workDir: string;

before(async () => {
  workDir = await mkdtemp(join(tmpdir(), 'trove-first-run-'));
});

after(async () => {
  if (workDir) await rm(workDir, { recursive: true, force: true });
});

interface Run {
  exitCode: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the CLI to its end (in the repository, as `npm start` and the README do). */
async function runCli(args: string[]): Promise<Run> {
  const child = spawn(process.execPath, ['--import', 'tsx', MAIN, ...args], { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exitCode = await new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { exitCode, stdout, stderr };
}

/** Asserts a run failed with exit code 1 and exactly one stderr line (no stack) matching `reason`. */
function assertOneLineFailure(run: Run, reason: RegExp): void {
  assert.equal(run.exitCode, 1, run.stdout + run.stderr);
  const lines = run.stderr.split('\n').filter((line) => line !== '');
  assert.equal(lines.length, 1, `one line expected on stderr:\n${run.stderr}`);
  assert.match(lines[0]!, reason);
  assert.doesNotMatch(run.stdout + run.stderr, /^\s+at /m, 'no stack trace');
}

/** Starts with `settings` on a fresh data path that is expected to fail before serving. */
async function failedStart(settings: Record<string, string>, extra: string[] = []): Promise<Run> {
  const flags = Object.entries({ 'path.data': join(workDir, `data-${Math.random().toString(36).slice(2)}`), 'http.port': '0', ...settings }).flatMap(
    ([key, value]) => [`--${key}`, value],
  );
  return runCli(['start', ...extra, ...flags]);
}

test('the first start names the admin key file in plain words, in pretty and in JSON logs', async () => {
  for (const format of ['pretty', 'json']) {
    const server = await startServer({ security: true, settings: { 'log.format': format } });
    try {
      const keyFile = join(server.dataDir, 'bootstrap-admin.key');
      const line = server.output().split('\n').find((text) => text.includes(`written once to ${keyFile}`));
      assert.ok(line, `no line names ${keyFile} in the ${format} log:\n${server.output()}`);
      if (format === 'json') assert.match(JSON.parse(line).msg, /created the admin API key/);
      else assert.match(line, /^\[[\d:.]+\] WARN: \[security\] .*created the admin API key/);
      assert.equal((await call(server, 'GET', '/', { apiKey: await server.bootstrapKey() })).status, 200);
    } finally {
      await server.cleanup();
    }
  }
});

test('start failures print one line on stderr and exit 1', async () => {
  const badYaml = join(workDir, 'bad.yml');
  await writeFile(badYaml, 'http.port: [9200\n');
  const unknownKey = join(workDir, 'unknown.yml');
  await writeFile(unknownKey, 'http.prot: 9300\n');
  assertOneLineFailure(await failedStart({}, ['--config', badYaml]), /^trove: cannot start: config file .*bad\.yml is not valid YAML: /);
  assertOneLineFailure(await failedStart({}, ['--config', unknownKey]), /^trove: cannot start: unknown setting \[http\.prot\] .*did you mean \[http\.port\]/);
  assertOneLineFailure(await failedStart({ 'log.format': 'xml' }), /^trove: cannot start: invalid value for setting \[log\.format\].*auto, json, pretty/);

  // The port is taken (by a plain listener here): the message says so and which flag changes it.
  const port = await freePort();
  const blocker = createServer();
  await new Promise<void>((resolve) => blocker.listen(port, '127.0.0.1', resolve));
  try {
    assertOneLineFailure(
      await failedStart({ 'http.host': '127.0.0.1', 'http.port': String(port), 'node.shard_workers': '0', 'security.enabled': 'false' }),
      new RegExp(`^trove: cannot start: port ${port} on 127\\.0\\.0\\.1 is already in use .*--http\\.port`),
    );
  } finally {
    blocker.close();
  }
});

test('under umask 022 the data path is 0700 and every file under it 0600', async () => {
  const previous = process.umask(0o022);
  let server: TroveServer;
  try {
    server = await startServer({ security: true, settings: { 'epoch.interval_ms': '50' } });
  } finally {
    process.umask(previous);
  }
  try {
    const key = await server.bootstrapKey();
    assert.equal((await call(server, 'PUT', '/modes', { apiKey: key, json: {} })).status, 200);
    assert.equal((await call(server, 'PUT', '/modes/_doc/1', { apiKey: key, json: { title: 'private' } })).status, 201);
    // Wait for the epoch that freezes the document into a segment.
    const deadline = Date.now() + 30_000;
    let entries = await listTree(server.dataDir);
    while (!entries.some((entry) => entry.path.includes('/segments/seg_')) && Date.now() < deadline) {
      await sleep(100);
      entries = await listTree(server.dataDir);
    }
    assert.equal((await stat(server.dataDir)).mode & 0o777, 0o700, 'the data path');
    for (const kind of ['catalog/catalog.json', '.wal', '/segments/seg_', 'bootstrap-admin.key']) {
      assert.ok(entries.some((entry) => entry.path.includes(kind) && entry.file), `no file like ${kind} in ${entries.map((entry) => entry.path).join(', ')}`);
    }
    const wrong = entries.filter((entry) => entry.mode !== (entry.file ? 0o600 : 0o700)).map((entry) => `${entry.path} ${entry.mode.toString(8)}`);
    assert.deepEqual(wrong, [], 'files 0600 and directories 0700');
  } finally {
    await server.cleanup();
  }
});

/** Every file and directory under `root` (not sockets) with its permission bits. */
async function listTree(root: string): Promise<Array<{ path: string; mode: number; file: boolean }>> {
  const out: Array<{ path: string; mode: number; file: boolean }> = [];
  for (const entry of await readdir(root, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile() && !entry.isDirectory()) continue;
    const path = join(entry.parentPath ?? entry.path, entry.name);
    try {
      out.push({ path: path.slice(root.length), mode: (await stat(path)).mode & 0o777, file: entry.isFile() });
    } catch {
      // a temporary file renamed away meanwhile
    }
  }
  return out;
}

test('the README import of examples/books.ndjson lands every book; a missing file is one line and exit 1', async () => {
  const server = await startServer();
  try {
    const created = await call(server, 'PUT', '/books', {
      json: { mappings: { properties: { title: { type: 'text' }, year: { type: 'integer' }, tags: { type: 'keyword' }, isbn: { type: 'keyword' } } } },
    });
    assert.equal(created.status, 200, created.text);
    // A copy: the import keeps its resume file beside the file it reads.
    const sample = join(workDir, 'books.ndjson');
    await copyFile(SAMPLE, sample);
    const lines = (await readFile(SAMPLE, 'utf8')).trim().split('\n');
    assert.ok(lines.length >= 15 && lines.length <= 40, `${lines.length} sample lines`);

    const imported = await runCli(['import', sample, '--collection', 'books', '--id-field', 'isbn', '--url', server.url, '--no-progress']);
    assert.equal(imported.exitCode, 0, imported.stdout + imported.stderr);
    assert.match(imported.stdout, new RegExp(`imported ${lines.length} documents, 0 failed`));
    await call(server, 'POST', '/books/_refresh');
    assert.equal((await call(server, 'GET', '/books/_count')).body.count, lines.length);
    const rose = await call(server, 'POST', '/books/_search', { json: { query: { match: { title: 'rose' } } } });
    assert.equal(rose.body.hits.hits[0]?._source.author, 'Umberto Eco');

    const missing = join(workDir, 'no-such-books.ndjson');
    assertOneLineFailure(await runCli(['import', missing, '--collection', 'books', '--url', server.url, '--no-progress']), new RegExp(`^trove import: no such file: ${missing}$`));
  } finally {
    await server.cleanup();
  }
});
