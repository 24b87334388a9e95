import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { baseLogLevel } from './run-node.ts';

const TROVE = fileURLToPath(new URL('../../bin/trove.js', import.meta.url));

function startTrove(args: string[], env: Record<string, string> = {}) {
  const child = spawn(process.execPath, [TROVE, 'start', ...args], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: Array<Record<string, unknown>> = [];
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const reader = createInterface({ input: child.stdout });
  const started = new Promise<Record<string, unknown>>((resolve, reject) => {
    reader.on('line', (line) => {
      const entry = JSON.parse(line) as Record<string, unknown>;
      lines.push(entry);
      if (typeof entry.msg === 'string' && entry.msg.startsWith('trove started')) resolve(entry);
    });
    child.on('exit', (code) => reject(new Error(`exited with ${code} before starting: ${stderr}`)));
  });
  started.catch(() => undefined);
  return { child, lines, started, stderr: () => stderr };
}

test('baseLogLevel takes the untargeted directive', () => {
  assert.equal(baseLogLevel('warn,engine=debug'), 'warn');
  assert.equal(baseLogLevel('engine=debug'), 'info');
});

test('trove start serves, logs one start line, and stops cleanly on a signal delivered twice', async () => {
  const dataPath = await mkdtemp(join(tmpdir(), 'trove-start-'));
  try {
    const trove = startTrove(['--port', '0', '--data', dataPath, '--node.name', 'cli-test'], { TROVE_SECURITY_ENABLED: 'false' });
    const line = await trove.started;
    assert.equal(line.nodeName, 'cli-test');
    assert.equal(line.dataPath, dataPath);
    assert.match(String(line.nodeId), /^[A-Za-z0-9_-]{22}$/);
    assert.match(String(line.address), /^http:\/\/127\.0\.0\.1:\d+$/);

    const response = await fetch(`${String(line.address)}/`);
    assert.equal(response.status, 200);
    assert.ok(existsSync(join(dataPath, 'node.lock.sock')));

    // One Ctrl-C under `npm start` arrives twice (terminal and tsx): still a graceful stop.
    trove.child.kill('SIGINT');
    trove.child.kill('SIGINT');
    const [code] = await once(trove.child, 'exit');
    assert.equal(code, 0, trove.stderr());
    assert.ok(trove.lines.some((entry) => entry.msg === 'trove stopped'));
    assert.equal(existsSync(join(dataPath, 'node.lock.sock')), false, 'the data path lock is released');
  } finally {
    await rm(dataPath, { recursive: true, force: true });
  }
});

test('a configuration error names the key and exits 1 before opening anything', async () => {
  const dataPath = await mkdtemp(join(tmpdir(), 'trove-start-'));
  try {
    const configPath = join(dataPath, 'trove.yml');
    await writeFile(configPath, 'http.port: 9200\nhttp.prot: 1\n');
    const trove = startTrove(['--config', configPath, '--data', join(dataPath, 'data')]);
    const [code] = await once(trove.child, 'exit');
    assert.equal(code, 1);
    assert.match(trove.stderr(), /unknown setting \[http\.prot\].*did you mean \[http\.port\]/);
    assert.equal(existsSync(join(dataPath, 'data')), false);
  } finally {
    await rm(dataPath, { recursive: true, force: true });
  }
});
