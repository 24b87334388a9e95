/**
 * Resource exhaustion against real servers (issue 12, items 5 and 6): shards bounded per node
 * (`cluster.max_shards_per_node`, refused before anything changes, on create and on restore); one
 * descriptor of its own per shard copy, so that a node with many shards starts and serves reads
 * under a low open-file limit; a flood of idle connections never leaves the node unable to open
 * its own files (the descriptor reserve) and is cut within seconds; and a trash step that fails
 * mid-way leaves no item directory behind.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readlinkSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { connect, type Socket } from 'node:net';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { call, ndjson, startServer, type CallOptions, type HttpResponse, type TroveServer } from './harness.ts';

/** The paths of the descriptors `pid` holds under `dir`. */
function descriptorsUnder(pid: number, dir: string): string[] {
  const paths: string[] = [];
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      const target = readlinkSync(`/proc/${pid}/fd/${fd}`);
      if (target.startsWith(dir)) paths.push(target);
    } catch {
      // closed meanwhile
    }
  }
  return paths;
}

/** Checks the ES error body with its status and type. */
function assertEsError(response: HttpResponse, status: number, type: string): void {
  assert.equal(response.status, status, response.text);
  assert.equal(response.body.status, status);
  assert.equal(response.body.error.type, type, response.text);
  assert.ok(typeof response.body.error.reason === 'string' && response.body.error.reason.length > 0);
}

test('cluster.max_shards_per_node: creates and restores past it are a 400 validation_exception that changes nothing', async () => {
  const server = await startServer({ settings: { 'cluster.max_shards_per_node': '8' } });
  try {
    assert.equal((await call(server, 'PUT', '/six', { json: { settings: { number_of_shards: 6 } } })).status, 200);
    const refused = await call(server, 'PUT', '/three', { json: { settings: { number_of_shards: 3 } } });
    assertEsError(refused, 400, 'validation_exception');
    assert.match(refused.body.error.reason, /would add \[3\] shards, but node \[.+\] currently has \[6\]\/\[8\] maximum shards open \(cluster\.max_shards_per_node\)/);
    assert.equal((await call(server, 'GET', '/three')).status, 404, 'no collection was created');
    assert.equal((await readdir(join(server.dataDir, 'shards'))).length, 6, 'no shard directory was created');
    assert.equal((await call(server, 'PUT', '/two', { json: { settings: { number_of_shards: 2 } } })).status, 200, 'up to the limit is fine');

    const deleted = await call(server, 'DELETE', '/six');
    assert.equal(deleted.status, 200, deleted.text);
    const itemId: string = deleted.body.trash_items[0].item_id;
    assert.equal((await call(server, 'PUT', '/filler', { json: { settings: { number_of_shards: 3 } } })).status, 200);
    assertEsError(await call(server, 'POST', `/_cluster/trash/${itemId}/_restore`), 400, 'validation_exception');
    assert.equal((await call(server, 'GET', '/six')).status, 404, 'a refused restore changes nothing');
    assert.equal((await call(server, 'GET', '/_cluster/trash')).body.namespaces.default.items[0].item_id, itemId, 'the item stays in the trash');
  } finally {
    await server.cleanup();
  }
});

test('a shard copy holds one descriptor of its own: 80 shards with rotated logs and several segments start and serve reads under a 300-descriptor limit', { skip: process.platform !== 'linux' }, async () => {
  const settings = { 'epoch.max_docs': '6', 'wal.segment_bytes': '4kb', 'merge.enabled': 'false' };
  const server = await startServer({ settings, maxOpenFiles: 300 });
  try {
    for (const name of ['left', 'right']) {
      const created = await call(server, 'PUT', `/${name}`, { json: { settings: { number_of_shards: 40 }, mappings: { properties: { body: { type: 'text' } } } } });
      assert.equal(created.status, 200, created.text);
      for (let batch = 0; batch < 2; batch++) {
        const lines: unknown[] = [];
        for (let index = 0; index < 500; index++) lines.push({ index: { _id: `${batch}-${index}` } }, { body: `document ${index} of batch ${batch} `.repeat(8) });
        const written = await call(server, 'POST', `/${name}/_bulk`, { body: ndjson(lines), headers: { 'content-type': 'application/x-ndjson' } });
        assert.equal(written.status, 200, written.text.slice(0, 300));
        assert.equal(written.body.errors, false);
      }
    }
    await sleep(500); // let the last epochs finish
    const shardsDir = join(server.dataDir, 'shards');
    const held = descriptorsUnder(server.pid()!, shardsDir);
    const walFiles = (await Promise.all((await readdir(shardsDir)).map(async (uuid) => (await readdir(join(shardsDir, uuid, 'wal'))).length))).reduce((sum, count) => sum + count, 0);
    // Before: one descriptor per log file and per segment, over 300 here; the node failed with EMFILE.
    assert.ok(walFiles > 80, `logs rotated (${walFiles} files)`);
    assert.equal(held.filter((path) => path.includes('/wal/')).length, 80, 'one active log file per shard');
    assert.ok(held.length <= 80 + 3 * 128, `${held.length} descriptors under shards/`);

    await server.restart();
    for (const name of ['left', 'right']) {
      const counted = await call(server, 'GET', `/${name}/_count`);
      assert.equal(counted.status, 200, counted.text);
      assert.equal(counted.body.count, 1000);
      const found = await call(server, 'POST', `/${name}/_search`, { json: { query: { match: { body: 'batch' } }, size: 50 } });
      assert.equal(found.status, 200, found.text);
      assert.equal(found.body.hits.hits.length, 50);
    }
    assert.doesNotMatch(server.output(), /EMFILE/);
  } finally {
    await server.cleanup();
  }
});

/** Keeps up to `size` idle connections open to `server`, reopening each one the server closes. */
function flood(server: TroveServer, size: number): { alive(): number; stop(): void } {
  const sockets = new Set<Socket>();
  let stopped = false;
  const open = (): void => {
    if (stopped) return;
    const socket = connect(server.port, '127.0.0.1');
    socket.on('error', () => undefined);
    sockets.add(socket);
    socket.once('close', () => {
      sockets.delete(socket);
      setTimeout(open, 50);
    });
  };
  for (let index = 0; index < size; index++) open();
  return {
    alive: () => [...sockets].filter((socket) => socket.readyState === 'open').length,
    stop: () => {
      stopped = true;
      for (const socket of sockets) socket.destroy();
    },
  };
}

/** Calls the server, retrying while a flood leaves no connection slot (the connection is reset). */
async function callThroughFlood(server: TroveServer, method: string, path: string, options: CallOptions): Promise<HttpResponse> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    try {
      return await call(server, method, path, options);
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await sleep(100);
    }
  }
}

test('under a flood of idle connections the node keeps descriptors for its own files; idle strangers are cut within seconds', { skip: process.platform !== 'linux' }, async () => {
  // Reserve: 256 headroom + 3 threads x 128 read descriptors + 40 shards to come = 680 of 1100.
  const server = await startServer({ security: true, maxOpenFiles: 1100, settings: { 'cluster.max_shards_per_node': '40' } });
  const crowd = flood(server, 900);
  let mostDescriptors = 0;
  const sampling = setInterval(() => {
    mostDescriptors = Math.max(mostDescriptors, readdirSync(`/proc/${server.pid()}/fd`).length);
  }, 50);
  try {
    const apiKey = await server.bootstrapKey();
    await sleep(1500);

    const created = await callThroughFlood(server, 'PUT', '/crowded', { apiKey, json: { settings: { number_of_shards: 40 } } });
    assert.equal(created.status, 200, created.text);
    const lines: unknown[] = [];
    for (let index = 0; index < 400; index++) lines.push({ index: { _id: String(index) } }, { title: `document ${index}` });
    const written = await callThroughFlood(server, 'POST', '/crowded/_bulk', { apiKey, body: ndjson(lines), headers: { 'content-type': 'application/x-ndjson' } });
    assert.equal(written.status, 200, written.text.slice(0, 300));
    assert.equal(written.body.errors, false);
    const deleted = await callThroughFlood(server, 'DELETE', '/crowded', { apiKey });
    assert.equal(deleted.status, 200, deleted.text);
    assert.equal((await readdir(join(server.dataDir, 'trash'))).length, 1);
    assert.ok(crowd.alive() > 0, 'the flood went on all along');
    assert.ok(mostDescriptors <= 1100 - 256, `the process held at most ${mostDescriptors} of 1100 descriptors: connections never ate into the reserve`);

    // A stranger that sends part of its headers and stops is cut under pressure well before the 10 s headers timeout.
    const slow = connect(server.port, '127.0.0.1');
    slow.on('error', () => undefined);
    const cut = new Promise<number>((resolve) => slow.once('close', () => resolve(Date.now())));
    const sentAt = Date.now();
    slow.write('GET / HTTP/1.1\r\nHost: x\r\n');
    const closedAt = await Promise.race([cut, sleep(8_000).then(() => 0)]);
    assert.ok(closedAt !== 0 && closedAt - sentAt < 4_000, 'a slow stranger holds its slot for a second or two under pressure');
    assert.doesNotMatch(server.output(), /EMFILE/);
  } finally {
    clearInterval(sampling);
    crowd.stop();
    await server.cleanup();
  }
});

test('a collection delete that fails while recording its trash intent leaves no trash directory and the collection as it was', async () => {
  const server = await startServer({ env: { TROVE_FAULTS: 'trash.delete.fail_intent' } });
  try {
    assert.equal((await call(server, 'PUT', '/kept/_doc/1', { json: { title: 'still here' } })).status, 201);
    const failed = await call(server, 'DELETE', '/kept');
    assert.equal(failed.status, 503, failed.text);
    assert.equal(failed.body.error.type, 'trash_unavailable_exception');
    assert.deepEqual(await readdir(join(server.dataDir, 'trash')), [], 'no empty data/trash/<id>/ is left');
    assert.equal((await call(server, 'GET', '/kept/_doc/1')).body._source.title, 'still here');
    assert.equal((await call(server, 'GET', '/_cluster/trash')).status, 200);
  } finally {
    await server.cleanup();
  }
});
