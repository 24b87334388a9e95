/**
 * Index administration as Elasticsearch/OpenSearch clients call it (issue 17): `_forcemerge`,
 * `_stats`, `GET/PUT _settings`, and `_cluster/health` waiting for a status. Through real HTTP
 * and the OpenSearch JS client.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { Client } from '@opensearch-project/opensearch';
import { call, ndjson, startServer, type TroveServer } from './harness.ts';

let server: TroveServer;
let client: Client;

before(async () => {
  server = await startServer();
  client = new Client({ node: server.url });
  assert.equal((await call(server, 'PUT', '/logs', { json: { settings: { number_of_shards: 2, number_of_replicas: 1 } } })).status, 200);
  const lines = Array.from({ length: 40 }, (_, n) => [{ index: { _id: `l${n}` } }, { n, msg: `line ${n}` }]).flat();
  const loaded = await call(server, 'POST', '/logs/_bulk', { body: ndjson(lines), headers: { 'content-type': 'application/x-ndjson' } });
  assert.equal(loaded.body.errors, false, loaded.text);
  await call(server, 'DELETE', '/logs/_doc/l0');
});

after(async () => {
  await client?.close();
  await server?.cleanup();
});

test('_forcemerge waits for the merge and answers _shards; wait_for_completion=false answers a task', async () => {
  const merged = await call(server, 'POST', '/logs/_forcemerge?max_num_segments=1');
  assert.equal(merged.status, 200, merged.text);
  assert.deepEqual(merged.body, { _shards: { total: 2, successful: 2, failed: 0 } });
  const started = await call(server, 'POST', '/logs/_forcemerge?wait_for_completion=false');
  assert.equal(typeof started.body.task, 'string');
  const job = await call(server, 'GET', `/_jobs/${started.body.task}`);
  assert.equal(job.status, 200, job.text);
  assert.equal((await call(server, 'POST', '/nope/_forcemerge')).status, 404);
  const viaClient = await client.indices.forcemerge({ index: 'logs', max_num_segments: 1 });
  assert.equal(viaClient.body._shards.successful, 2);
});

test('_stats reports docs and store per collection and for _all', async () => {
  const stats = await call(server, 'GET', '/logs/_stats');
  assert.equal(stats.status, 200, stats.text);
  assert.equal(stats.body.indices.logs.primaries.docs.count, 39);
  assert.ok(stats.body.indices.logs.primaries.store.size_in_bytes > 0);
  assert.equal(stats.body._all.primaries.docs.count, 39);
  assert.deepEqual(stats.body._shards, { total: 4, successful: 2, failed: 0 }, 'logs: 2 shards, 1 replica each that one node cannot place');
  // Copies as Elasticsearch counts them: every copy the settings ask for; on one node the replicas cannot be placed.
  assert.equal((await call(server, 'PUT', '/stats-replicated', { json: { settings: { number_of_shards: 3, number_of_replicas: 1 } } })).status, 200);
  const replicated = await call(server, 'GET', '/stats-replicated/_stats');
  assert.deepEqual(replicated.body._shards, { total: 6, successful: 3, failed: 0 });
  assert.equal((await call(server, 'DELETE', '/stats-replicated')).status, 200);
  assert.ok(stats.body._all.total.indexing.index_total >= 40);
  const all = await client.indices.stats();
  assert.equal((all.body.indices as any).logs.primaries.docs.count, 39);
  assert.equal((await call(server, 'GET', '/nope/_stats')).status, 404);
  assert.deepEqual(Object.keys((await call(server, 'GET', '/nope,logs/_stats?ignore_unavailable=true')).body.indices), ['logs']);
  assert.deepEqual(Object.keys((await call(server, 'GET', '/nope,logs/_settings?ignore_unavailable=true')).body), ['logs']);
});

test('_settings: read, number_of_replicas applied, static settings refused with ES\'s message', async () => {
  const read = await call(server, 'GET', '/logs/_settings');
  assert.equal(read.body.logs.settings.index.number_of_shards, '2');
  assert.equal(read.body.logs.settings.index.number_of_replicas, '1');
  assert.equal((await call(server, 'GET', '/_cluster/health')).body.status, 'yellow');

  const refused = await call(server, 'PUT', '/logs/_settings', { json: { index: { number_of_shards: 3, number_of_replicas: 0 } } });
  assert.equal(refused.status, 400);
  assert.equal(refused.body.error.type, 'illegal_argument_exception');
  assert.match(refused.body.error.reason, /^Can't update non dynamic settings \[\[index\.number_of_shards\]\] for open indices \[\[logs\//);
  assert.equal((await call(server, 'GET', '/logs/_settings')).body.logs.settings.index.number_of_replicas, '1', 'a refused body changes nothing');
  const unknown = await call(server, 'PUT', '/logs/_settings', { json: { 'index.bogus': 1 } });
  assert.equal(unknown.status, 400);

  const applied = await client.indices.putSettings({ index: 'logs', body: { index: { number_of_replicas: 0 } } });
  assert.equal(applied.body.acknowledged, true);
  assert.equal((await call(server, 'GET', '/_settings')).body.logs.settings.index.number_of_replicas, '0');
  assert.equal((await call(server, 'GET', '/_cluster/health')).body.status, 'green');
});

test('_cluster/health waits for a status, nodes and active shards, and answers 408 timed_out when it runs out', async () => {
  assert.equal((await call(server, 'PUT', '/waits', { json: { settings: { number_of_replicas: 1 } } })).status, 200);
  const timedOut = await call(server, 'GET', '/_cluster/health?wait_for_status=green&timeout=300ms');
  assert.equal(timedOut.status, 408, timedOut.text);
  assert.equal(timedOut.body.timed_out, true);
  assert.equal(timedOut.body.status, 'yellow');
  assert.equal((await call(server, 'GET', '/_cluster/health?wait_for_status=yellow&wait_for_nodes=1&timeout=1s')).status, 200);
  assert.equal((await call(server, 'GET', '/_cluster/health?wait_for_nodes=>=2&timeout=200ms')).status, 408);
  assert.equal((await call(server, 'GET', '/_cluster/health?wait_for_active_shards=all&timeout=200ms')).status, 408);
  assert.equal((await call(server, 'GET', '/_cluster/health?wait_for_active_shards=1&wait_for_no_initializing_shards=true')).status, 200);
  assert.equal((await call(server, 'GET', '/_cluster/health?wait_for_nodes=many')).status, 400);

  // A waiting request answers as soon as the catalog change makes the cluster green.
  const started = performance.now();
  const waiting = call(server, 'GET', '/_cluster/health?wait_for_status=green&timeout=20s');
  await new Promise((resolve) => setTimeout(resolve, 300));
  await call(server, 'PUT', '/waits/_settings', { json: { index: { number_of_replicas: 0 } } });
  const answered = await waiting;
  assert.equal(answered.status, 200, answered.text);
  assert.equal(answered.body.status, 'green');
  assert.equal(answered.body.timed_out, false);
  assert.ok(performance.now() - started < 10_000);
  const viaClient = await client.cluster.health({ wait_for_status: 'green', timeout: '5s' });
  assert.equal(viaClient.body.status, 'green');
});
