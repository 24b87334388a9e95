/**
 * `trove cluster up`: one command starts etcd and two nodes that form one cluster, prints their
 * URLs and the admin key file, and Ctrl-C (SIGINT) stops every process it started.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { etcdSkipReason } from './etcd.fixture.ts';
import { call, freePortRun, REPO_ROOT } from './harness.ts';

test('trove cluster up starts etcd and the nodes as one cluster, and Ctrl-C stops them all', { skip: etcdSkipReason() }, async () => {
  const data = await mkdtemp(join(tmpdir(), 'trove-cluster-up-'));
  // Node N listens on port + N - 1, etcd's peer port is its client port + 1.
  const port = await freePortRun(2);
  let etcdPort = await freePortRun(2);
  for (let attempt = 0; attempt < 100 && Math.abs(etcdPort - port) < 2; attempt++) etcdPort = await freePortRun(2);
  const child = spawn(process.execPath, [join(REPO_ROOT, 'bin', 'trove.js'), 'cluster', 'up', '--nodes', '2', '--port', String(port), '--etcd-port', String(etcdPort), '--data', data], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  const exited = once(child, 'exit');
  try {
    const deadline = Date.now() + 120_000;
    while (!output.includes('is up') && child.exitCode === null && Date.now() < deadline) await sleep(200);
    assert.match(output, /cluster \[local\] is up/, output.slice(-3000));
    assert.match(output, new RegExp(`node-1: http://127\\.0\\.0\\.1:${port}`));
    assert.match(output, new RegExp(`node-2: http://127\\.0\\.0\\.1:${port + 1}`));
    const keyFile = /admin key: (\S+)/.exec(output)?.[1];
    assert.ok(keyFile, 'the admin key file is named');
    const apiKey = (await readFile(keyFile!, 'utf8')).trim();
    for (const url of [`http://127.0.0.1:${port}`, `http://127.0.0.1:${port + 1}`]) {
      let nodes = 0;
      for (let attempt = 0; attempt < 100 && nodes !== 2; attempt++) {
        nodes = (await call({ url }, 'GET', '/_cluster/health', { apiKey })).body.number_of_nodes;
        if (nodes !== 2) await sleep(100);
      }
      assert.equal(nodes, 2, `${url} sees both nodes`);
    }
    child.kill('SIGINT');
    const [code] = await exited;
    assert.equal(code, 0, output.slice(-3000));
    assert.match(output, /stopping the cluster/);
    for (const url of [`http://127.0.0.1:${port}`, `http://127.0.0.1:${etcdPort}/health`]) {
      await assert.rejects(fetch(url), `${url} is down`);
    }
  } finally {
    if (child.exitCode === null) {
      child.kill('SIGKILL');
      await exited;
    }
    await rm(data, { recursive: true, force: true });
  }
});
