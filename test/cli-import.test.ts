/**
 * `trove import` end to end against a real server. The interruption scenarios run the CLI as a
 * child process (kill -9 in the middle and resume exactly once with --id-field; Ctrl-C and resume
 * with server-generated ids); the other scenarios call the same `runImport` in process: failed
 * items (exit code 1 and a summary), bulk-format files, and a fatal error (exit code 2).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { exitCodeFor, formatSummary, runImport as runImportInProcess, type ImportOptions } from '../src/cli/import.ts';
import { cities } from './corpora.ts';
import { REPO_ROOT, call, startServer, type TroveServer } from './harness.ts';

let server: TroveServer;
let workDir: string;
const DOCS = 30_000;

before(async () => {
  server = await startServer();
  workDir = await mkdtemp(join(tmpdir(), 'trove-import-'));
  const file = join(workDir, 'cities.ndjson');
  await writeFile(file, cities(DOCS).map((city) => JSON.stringify(city)).join('\n') + '\n');
  for (const name of ['resumed', 'interrupted', 'failures', 'pairs']) {
    const created = await call(server, 'PUT', `/${name}`, {
      json: { mappings: { properties: { id: { type: 'keyword' }, name: { type: 'text' }, population: { type: 'long' } } } },
    });
    assert.equal(created.status, 200, created.text);
  }
});

after(async () => {
  await server?.cleanup();
  if (workDir) await rm(workDir, { recursive: true, force: true });
});

interface Run {
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** Runs `trove import`; `interrupt` may kill it once the resume file shows progress. */
async function runCli(args: string[], interrupt?: NodeJS.Signals): Promise<Run> {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', join(REPO_ROOT, 'src', 'cli', 'main.ts'), 'import', ...args, '--url', server.url, '--no-progress'],
    { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<[number | null, NodeJS.Signals | null]>((resolve) => child.once('exit', (code, signal) => resolve([code, signal])));
  if (interrupt) {
    const stateFile = `${args[0]}.trove-import.json`;
    let running = true;
    void exited.then(() => (running = false));
    while (running) {
      const state = await readFile(stateFile, 'utf8').then((text) => JSON.parse(text) as { offset: number; completed: boolean }, () => null);
      if (state !== null && state.offset > 0 && !state.completed) {
        child.kill(interrupt);
        break;
      }
      await sleep(5);
    }
  }
  const [exitCode, signal] = await exited;
  return { exitCode, signal, stdout, stderr };
}

/** Runs an import in this process; returns the exit code and the summary text. */
async function importHere(file: string, options: Partial<ImportOptions> & { collection: string }): Promise<{ exitCode: number; stdout: string }> {
  const summary = await runImportInProcess({
    file,
    url: server.url,
    batch: 1000,
    concurrency: 2,
    format: 'auto',
    restart: false,
    progress: false,
    ...options,
  });
  return { exitCode: exitCodeFor(summary), stdout: formatSummary(summary, file) };
}

async function count(collection: string): Promise<number> {
  return (await call(server, 'GET', `/${collection}/_count`)).body.count;
}

test('kill -9 in the middle, rerun resumes and lands every document exactly once (--id-field)', async () => {
  const file = join(workDir, 'cities.ndjson');
  const args = [file, '--collection', 'resumed', '--id-field', 'id', '--batch', '50', '--concurrency', '1'];
  const killed = await runCli(args, 'SIGKILL');
  assert.equal(killed.signal, 'SIGKILL', `the import finished before it could be interrupted: ${killed.stdout}`);
  const partial = await count('resumed');
  assert.ok(partial > 0 && partial < DOCS, `partial count ${partial}`);

  const resumed = await runCli([file, '--collection', 'resumed', '--id-field', 'id', '--batch', '2000']);
  assert.equal(resumed.exitCode, 0, resumed.stdout + resumed.stderr);
  assert.match(resumed.stdout, /resumed after byte \d+/);
  assert.equal(await count('resumed'), DOCS);
  const state = JSON.parse(await readFile(`${file}.trove-import.json`, 'utf8'));
  assert.equal(state.completed, true);
  assert.equal(state.collection, 'resumed');

  const again = await importHere(file, { collection: 'resumed' });
  assert.equal(again.exitCode, 0);
  assert.match(again.stdout, /already imported/);
  assert.equal(await count('resumed'), DOCS);

  const otherCollection = await importHere(file, { collection: 'pairs' });
  assert.equal(otherCollection.exitCode, 2);
  assert.match(otherCollection.stdout, /--restart/);
});

test('Ctrl-C waits for batches in flight; resuming with generated ids loses and duplicates nothing', async () => {
  const file = join(workDir, 'generated.ndjson');
  await writeFile(file, await readFile(join(workDir, 'cities.ndjson')));
  const interrupted = await runCli([file, '--collection', 'interrupted', '--batch', '50', '--concurrency', '2'], 'SIGINT');
  assert.equal(interrupted.exitCode, 130, interrupted.stdout + interrupted.stderr);
  assert.match(interrupted.stdout, /interrupted/);
  const resumed = await importHere(file, { collection: 'interrupted', batch: 3000 });
  assert.equal(resumed.exitCode, 0, resumed.stdout);
  assert.equal(await count('interrupted'), DOCS);
});

test('failed items: exit code 1, a summary by error type, the rest imported', async () => {
  const file = join(workDir, 'mixed.ndjson');
  const lines = [
    JSON.stringify({ id: 'a', name: 'Alpha', population: 1 }),
    JSON.stringify({ id: 'b', name: 'Beta', population: 'many' }),
    '{"id": "c", "name": broken json',
    JSON.stringify({ id: 'd', name: 'Delta', population: 4 }),
    '',
    JSON.stringify({ id: 'e', name: 'Epsilon', population: 'lots' }),
    JSON.stringify({ id: 'f', name: 'Phi', population: 6 }),
    JSON.stringify({ name: 'No id', population: 7 }),
  ];
  await writeFile(file, lines.join('\n') + '\n');
  const run = await importHere(file, { collection: 'failures', idField: 'id' });
  assert.equal(run.exitCode, 1, run.stdout);
  assert.match(run.stdout, /imported 3 documents, 4 failed/);
  assert.match(run.stdout, /mapper_parsing_exception: 2/);
  assert.match(run.stdout, /json_parse_exception: 1/);
  assert.match(run.stdout, /illegal_argument_exception: 1 \(e\.g\. line 8: the document has no string or number \[id\]\)/);
  assert.equal(await count('failures'), 3);
  const failed = (await readFile(`${file}.trove-import.failed.ndjson`, 'utf8')).trim().split('\n').map((line) => JSON.parse(line));
  assert.deepEqual(failed.map((entry: { line: number }) => entry.line).sort(), [2, 3, 6, 8]);
});

test('bulk-format files (action and source lines) are imported as they are', async () => {
  const file = join(workDir, 'pairs.ndjson');
  const lines = [
    { index: { _id: 'x1' } },
    { id: 'x1', name: 'One', population: 1 },
    { create: { _id: 'x2' } },
    { id: 'x2', name: 'Two', population: 2 },
    { index: { _id: 'x3' } },
    { id: 'x3', name: 'Three', population: 3 },
    { delete: { _id: 'x3' } },
  ];
  await writeFile(file, lines.map((line) => JSON.stringify(line)).join('\n') + '\n');
  const run = await importHere(file, { collection: 'pairs' });
  assert.equal(run.exitCode, 0, run.stdout);
  assert.equal(await count('pairs'), 2);
  assert.equal((await call(server, 'GET', '/pairs/_doc/x2')).body._source.name, 'Two');
});

test('an unknown collection stops the import with exit code 2', async () => {
  const file = join(workDir, 'small.ndjson');
  await writeFile(file, JSON.stringify({ id: 'z', name: 'Zed' }) + '\n');
  const run = await importHere(file, { collection: 'does-not-exist' });
  assert.equal(run.exitCode, 2, run.stdout);
  assert.match(run.stdout, /no such index \[does-not-exist\]/);
});
