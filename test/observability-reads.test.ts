/**
 * Cluster and node reads end to end: `_cluster/health` at every level, `_cluster/state` and its
 * section filters, `_node/_local` with the host facts and warnings, `_node/_local/stats` counters
 * after known work, and `_metrics` agreeing with the stats.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { call, ndjson, startServer, type TroveServer } from './harness.ts';
import { waitForJob } from './compaction.fixture.ts';

let server: TroveServer;

before(async () => {
  server = await startServer();
  assert.equal((await call(server, 'PUT', '/_namespace/shop')).status, 200);
  const products = await call(server, 'PUT', '/products', {
    json: {
      namespace: 'shop',
      settings: { number_of_shards: 2 },
      mappings: { properties: { title: { type: 'text' }, views: { type: 'long', inplace: true } } },
    },
  });
  assert.equal(products.status, 200, products.text);
  // One replica cannot be placed on a single node: the collection is yellow.
  const logs = await call(server, 'PUT', '/logs', { json: { settings: { number_of_replicas: 1 } } });
  assert.equal(logs.status, 200, logs.text);
  const bulk = await call(server, 'POST', '/products/_bulk', {
    body: ndjson([
      { index: { _id: '1' } },
      { title: 'red shoes', views: 1 },
      { index: { _id: '2' } },
      { title: 'blue shirt', views: 5 },
      { delete: { _id: 'missing' } },
      { update: { _id: 'absent' } },
      { doc: { title: 'x' } },
    ]),
    headers: { 'content-type': 'application/x-ndjson' },
  });
  assert.equal(bulk.status, 200, bulk.text);
  assert.equal(bulk.body.errors, true);
  assert.equal((await call(server, 'PUT', '/products/_doc/3', { json: { title: 'green hat', views: 0 } })).status, 201);
  assert.equal((await call(server, 'POST', '/products/_update/1', { json: { ops: [{ op: 'incr', field: 'views', value: 2 }] } })).status, 200);
  assert.equal((await call(server, 'POST', '/products/_update/2', { json: { doc: { title: 'navy shirt' } } })).status, 200);
  assert.equal((await call(server, 'POST', '/products/_update/2', { json: { doc: { title: 'navy shirt' } } })).body.result, 'noop');
  // A literal dotted key is planned on the whole document: a full re-index.
  assert.equal((await call(server, 'POST', '/products/_update/1', { json: { doc: { 'note.text': 'gift' } } })).status, 200);
  assert.equal((await call(server, 'DELETE', '/products/_doc/3')).status, 200);
  assert.equal((await call(server, 'POST', '/products/_search', { json: { query: { match: { title: 'shirt' } } } })).status, 200);
});

after(async () => {
  await server?.cleanup();
});

test('cluster health: worst status upward, nested detail per level', async () => {
  const cluster = await call(server, 'GET', '/_cluster/health');
  assert.equal(cluster.status, 200, cluster.text);
  assert.equal(cluster.body.status, 'yellow');
  assert.equal(cluster.body.number_of_nodes, 1);
  assert.equal(cluster.body.number_of_collections, 2);
  assert.equal(cluster.body.active_primary_shards, 3);
  assert.equal(cluster.body.active_shards, 3);
  assert.equal(cluster.body.unassigned_shards, 1);
  assert.equal(cluster.body.active_shards_percent_as_number, 75);
  assert.equal(cluster.body.namespaces, undefined);

  const namespaces = (await call(server, 'GET', '/_cluster/health?level=namespaces')).body;
  assert.deepEqual(Object.keys(namespaces.namespaces), ['default', 'shop']);
  assert.equal(namespaces.namespaces.default.status, 'yellow');
  assert.equal(namespaces.namespaces.shop.status, 'green');
  assert.equal(namespaces.namespaces.shop.number_of_collections, 1);
  assert.equal(namespaces.namespaces.shop.collections, undefined);

  const collections = (await call(server, 'GET', '/_cluster/health?level=collections')).body;
  assert.deepEqual(collections.namespaces.shop.collections.products, {
    status: 'green',
    number_of_shards: 2,
    number_of_replicas: 0,
    active_primary_shards: 2,
    active_shards: 2,
    relocating_shards: 0,
    initializing_shards: 0,
    unassigned_shards: 0,
  });
  assert.equal(collections.namespaces.default.collections.logs.status, 'yellow');
  assert.equal(collections.namespaces.default.collections.logs.shards, undefined);
  assert.deepEqual(collections.indices.products, collections.namespaces.shop.collections.products, 'indices: the same, flat by name, as Elasticsearch');
  assert.deepEqual(Object.keys(collections.indices).sort(), ['logs', 'products']);
  const flat = (await call(server, 'GET', '/_cluster/health?level=indices')).body;
  assert.equal(flat.indices.logs.status, 'yellow', 'level=indices is the collections level');
  assert.equal(flat.indices.logs.shards, undefined);
  assert.equal(cluster.body.indices, undefined);
  assert.equal(cluster.body.discovered_master, true);
  assert.equal(cluster.body.discovered_cluster_manager, true);

  const shards = (await call(server, 'GET', '/_cluster/health?level=shards')).body;
  assert.deepEqual(shards.namespaces.default.collections.logs.shards['0'], {
    status: 'yellow',
    primary_active: true,
    active_shards: 1,
    relocating_shards: 0,
    initializing_shards: 0,
    unassigned_shards: 1,
  });
  assert.deepEqual(Object.keys(shards.namespaces.shop.collections.products.shards), ['0', '1']);

  // Elasticsearch's name for the collection level is accepted as such.
  const indices = await call(server, 'GET', '/_cluster/health?level=indices');
  assert.equal(indices.status, 200);
  assert.deepEqual(indices.body, { ...(await call(server, 'GET', '/_cluster/health?level=collections')).body });
  const bad = await call(server, 'GET', '/_cluster/health?level=everything');
  assert.equal(bad.status, 400);
  assert.match(bad.body.error.reason, /level/);
});

test('cluster state: every section, comma filters, 400 naming valid sections', async () => {
  const full = (await call(server, 'GET', '/_cluster/state')).body;
  for (const section of ['nodes', 'namespaces', 'collections', 'shards', 'master', 'metadata']) assert.ok(section in full, section);
  assert.equal(typeof full.cluster_uuid, 'string');
  const [nodeId] = Object.keys(full.nodes);
  assert.equal(full.master.node_id, nodeId);
  assert.equal(full.master.coordinator, 'local');
  assert.deepEqual(full.namespaces.shop.collections, ['products']);
  assert.equal(full.collections.products.namespace, 'shop');
  assert.equal(full.collections.products.mappings.properties.views.inplace, true);
  assert.deepEqual(full.shards.logs['0'].primary, { node: nodeId, state: 'started' });
  assert.deepEqual(full.shards.logs['0'].replicas, [{ node: null, state: 'unassigned' }]);
  assert.equal(full.metadata.number_of_collections, 2);

  const filtered = (await call(server, 'GET', '/_cluster/state/collections,shards')).body;
  assert.deepEqual(Object.keys(filtered).sort(), ['cluster_name', 'cluster_uuid', 'collections', 'revision', 'shards']);
  assert.deepEqual(Object.keys((await call(server, 'GET', '/_cluster/state/_all')).body).length, Object.keys(full).length);

  const unknown = await call(server, 'GET', '/_cluster/state/collections,routing_table');
  assert.equal(unknown.status, 400);
  assert.equal(unknown.body.error.type, 'illegal_argument_exception');
  assert.match(unknown.body.error.reason, /unknown cluster state section \[routing_table\]; valid sections: \[_all, nodes, namespaces, collections, shards, master, metadata\]/);
});

test('node info: identity and every host fact as a value or a reason, with warnings', async () => {
  const response = await call(server, 'GET', '/_node/_local');
  assert.equal(response.status, 200, response.text);
  const info = response.body;
  assert.equal(typeof info.node_id, 'string');
  assert.deepEqual(info.roles, ['data', 'coordinator']);
  assert.equal(info.addresses.http, server.url);
  const { host } = info;
  const facts: Array<[string, { value: unknown; error?: string }]> = [];
  const walk = (node: unknown, path: string): void => {
    if (node === null || typeof node !== 'object') return;
    if ('value' in node) facts.push([path, node as { value: unknown; error?: string }]);
    else for (const [key, child] of Object.entries(node)) walk(child, path ? `${path}.${key}` : key);
  };
  walk(host, '');
  assert.ok(facts.length >= 25, `${facts.length} facts`);
  for (const [path, item] of facts) {
    assert.ok(item.value !== null || (typeof item.error === 'string' && item.error !== ''), `${path} has a value or a reason`);
  }
  for (const family of ['os', 'numa', 'network', 'data_disk', 'environment', 'platform', 'transparent_hugepages', 'resources']) {
    assert.ok(family in host, family);
  }
  if (existsSync('/proc/sys/kernel/osrelease')) assert.equal(typeof host.os.kernel.value.release, 'string');
  if (existsSync('/proc/self/limits')) assert.ok(host.resources.file_descriptors.value.open > 0);
  if (existsSync('/proc/sys/vm/max_map_count')) assert.ok(host.resources.memory_maps.value.max_map_count > 0);
  if (existsSync('/proc/self/mountinfo')) assert.equal(typeof host.data_disk.mount.value.atime, 'string');
  assert.ok(Array.isArray(info.warnings));
  for (const warning of info.warnings) {
    assert.deepEqual(Object.keys(warning).sort(), ['check', 'message', 'recommended', 'value']);
  }
  const descriptors = host.resources.file_descriptors.value;
  const fdWarning = info.warnings.find((warning: { check: string }) => warning.check === 'file_descriptors');
  if (descriptors?.soft_limit != null && descriptors.soft_limit < 65536) assert.deepEqual([fdWarning.value, fdWarning.recommended], [descriptors.soft_limit, 65536]);
  else assert.equal(fdWarning, undefined);
});

test('node stats count the work done, per lane and per update path', async () => {
  const response = await call(server, 'GET', '/_node/_local/stats');
  assert.equal(response.status, 200, response.text);
  const stats = response.body;
  // Bulk: 2 indexed, 1 delete of a missing id (not counted as deleted), 1 failed update; then 1 PUT
  // and 1 full update (the inplace and the field-level update re-index nothing).
  assert.equal(stats.indexing.index_total, 2 + 1 + 1);
  assert.equal(stats.indexing.delete_total, 1);
  assert.deepEqual(
    [stats.updates.total, stats.updates.inplace, stats.updates.fields, stats.updates.full, stats.updates.noop, stats.updates.failed],
    [5, 1, 1, 1, 1, 1],
  );
  assert.deepEqual([stats.bulk.requests, stats.bulk.items, stats.bulk.failed_items], [1, 4, 1]);
  assert.equal(stats.search.lanes.default.completed, 1);
  assert.equal(stats.search.query_total, 1);
  assert.equal(stats.segments.shards.length, 3);
  assert.equal(typeof stats.compaction.jobs, 'object');
  assert.ok(stats.http.requests_total >= 10);
  assert.ok(stats.http.responses['2xx'] >= 10);
  assert.ok(stats.http.current_open >= 1);
  assert.ok(stats.process.rss_bytes > 0);
  assert.equal(typeof stats.process.event_loop_lag.p99_ms, 'number');
  assert.ok(stats.os.cpus >= 1);
  assert.ok(stats.fs.data.total_bytes > 0);
  const steal = stats.cpu.steal_percent;
  assert.ok(Array.isArray(steal.trend));
  if (existsSync('/proc/stat')) {
    assert.equal(typeof steal.current, 'number');
    assert.equal(typeof steal.avg_1m, 'number');
    assert.equal(typeof steal.avg_5m, 'number');
  } else assert.equal(typeof steal.error, 'string');
});

const glibc = process.platform === 'linux' && (process.report?.getReport() as { header?: { glibcVersionRuntime?: string } }).header?.glibcVersionRuntime !== undefined;

test('after an epoch, a quiet shard thread frees its buffers and returns the pages: node stats count it', { skip: !glibc && 'needs glibc' }, async () => {
  const release = async (): Promise<{ trims: number; collections: number; collection_time_in_millis: number }> =>
    (await call(server, 'GET', '/_node/_local/stats')).body.process.memory_release;
  const before = await release();
  const compact = await call(server, 'POST', '/products/_compact');
  assert.equal(compact.status, 200, compact.text);
  assert.equal((await waitForJob(server, compact.body.nodes[0].job_id)).state, 'done');
  const deadline = Date.now() + 20_000;
  let after = await release();
  while (Date.now() < deadline && !(after.collections > before.collections && after.trims > before.trims)) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    after = await release();
  }
  // The compaction's epochs froze the in-memory layers and nothing allocates since: the threads ran a collection each.
  assert.ok(after.collections > before.collections, `collections ${before.collections} -> ${after.collections}`);
  assert.ok(after.trims > before.trims, `trims ${before.trims} -> ${after.trims}`);
  assert.ok(after.collection_time_in_millis >= before.collection_time_in_millis);
});

test('GET /_metrics is Prometheus text with the same counters', async () => {
  const stats = (await call(server, 'GET', '/_node/_local/stats')).body;
  const metrics = await call(server, 'GET', '/_metrics');
  assert.equal(metrics.status, 200);
  assert.match(String(metrics.headers['content-type']), /^text\/plain; version=0\.0\.4/);
  const value = (line: string): number => {
    const found = metrics.text.split('\n').find((candidate) => candidate.startsWith(`${line} `));
    assert.ok(found, `${line} is exported`);
    return Number(found.slice(line.length + 1));
  };
  assert.match(metrics.text, /# TYPE trove_updates_total counter/);
  assert.equal(value('trove_updates_total{path="inplace"}'), stats.updates.inplace);
  assert.equal(value('trove_updates_total{path="fields"}'), stats.updates.fields);
  assert.equal(value('trove_updates_total{path="full"}'), stats.updates.full);
  assert.equal(value('trove_indexing_docs_total{op="index"}'), stats.indexing.index_total);
  assert.equal(value('trove_search_queries_total{lane="default"}'), stats.search.lanes.default.completed);
  assert.equal(value('trove_search_lane_max_queue{lane="default"}'), stats.search.lanes.default.max_queue);
  assert.equal(value('trove_segments'), stats.segments.count);
  assert.equal(value('trove_shards'), 3);
  assert.equal(value('trove_memory_release_collections_total'), stats.process.memory_release.collections);
  assert.ok(value('trove_cpu_steal_percent{window="current"}') >= 0 || !existsSync('/proc/stat'));
});
