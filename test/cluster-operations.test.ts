/**
 * The seed's cluster-wide operations on three real nodes and a real etcd: `_compact` answers one row
 * per hosting node (a node refusing through a fault point, and a node paused by SIGSTOP, fail their
 * own rows while the others stand), jobs are read through any node, `_node/{id}` (info, stats,
 * settings GET and PUT) reaches any node through any node, `_cat/indices` counts every node's
 * primaries, the trash (delete, list, verify, restore, purge, namespaces) spans every node, a node
 * leaves and rejoins, and etcd restarts under running nodes (health says the coordinator is
 * unavailable, catalog writes fail whole with 503, node settings keep working).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { everyNodeSees, startEtcd, startEtcdNodes, type EtcdServer } from './etcd.fixture.ts';
import { call, until, type StartOptions, type TroveServer } from './harness.ts';
import { collectionState, seedBooks, settledState } from './trash.fixture.ts';

let etcd: EtcdServer | undefined;
let skipReason: string | undefined;
/** node-1, node-2, and node-3 (which refuses compaction requests through its fault point). */
const nodes: TroveServer[] = [];
const ids: string[] = [];
const TTL_MS = 3_000;


before(async () => {
  try {
    etcd = await startEtcd();
  } catch (error) {
    skipReason = (error as Error).message;
    return;
  }
  await startEtcdNodes(etcd, 3, 'ops', nodes, (index): StartOptions => ({
    settings: { 'cluster.node_ttl_ms': String(TTL_MS) },
    env: index === 2 ? { TROVE_FAULTS: 'compaction.fail_node' } : {},
  }));
  for (const node of nodes) ids.push((await call(node, 'GET', '/_node/_local')).body.node_id);
  await seedBooks(nodes[0]!, 'books', { shards: 3, count: 60 });
});

after(async () => {
  for (const node of nodes) await node.cleanup();
  await etcd?.cleanup();
});

/** The node each primary of `collection` is on, by shard number. */
async function primaries(node: TroveServer, collection: string): Promise<string[]> {
  const shards = (await call(node, 'GET', '/_cluster/state/shards')).body.shards[collection] as Record<string, { primary: { node: string } }>;
  return Object.values(shards).map((shard) => shard.primary.node);
}

test('_compact answers one row per hosting node; the refusing node fails only its own row; jobs are read through any node', async (t) => {
  if (skipReason) return t.skip(skipReason);
  assert.deepEqual(new Set(await primaries(nodes[0]!, 'books')), new Set(ids), 'one primary on each node');
  const compacted = await call(nodes[1]!, 'POST', '/books/_compact');
  assert.equal(compacted.status, 200, compacted.text);
  const rows = compacted.body.nodes as Array<{ node_id: string; node_name: string; status: string; job_id?: string; primary_passes?: number; error?: { type: string; reason: string } }>;
  assert.deepEqual(rows.map((row) => row.node_name), ['node-1', 'node-2', 'node-3']);
  assert.deepEqual(rows.map((row) => row.node_id), ids);
  for (const row of rows.slice(0, 2)) {
    assert.equal(row.status, 'queued', JSON.stringify(row));
    assert.equal(row.primary_passes, 1);
    assert.ok(row.job_id!.startsWith(`${row.node_id}:`), row.job_id);
  }
  assert.equal(rows[2]!.status, 'failed');
  assert.equal(rows[2]!.error!.type, 'fault_injected_exception');
  for (const row of rows.slice(0, 2)) {
    const job = await until(async () => {
      const read = await call(nodes[2]!, 'GET', `/_jobs/${encodeURIComponent(row.job_id!)}`);
      return read.body.state === 'done' ? read.body : undefined;
    }, `job ${row.job_id} is done`);
    assert.equal(job.node_id, row.node_id);
    assert.equal(job.node_name, row.node_name);
    assert.equal(job.passes.done, 1);
  }
  const listed = await call(nodes[2]!, 'GET', '/_jobs?collection=books');
  assert.deepEqual(new Set(listed.body.jobs.map((job: { job_id: string }) => job.job_id)), new Set(rows.slice(0, 2).map((row) => row.job_id)));
  const unknownNode = await call(nodes[0]!, 'GET', '/_jobs/no-such-node:1');
  assert.equal(unknownNode.status, 404, unknownNode.text);
});

test('_node/{id}, its stats and its settings reach any node through any node', async (t) => {
  if (skipReason) return t.skip(skipReason);
  for (const [index, target] of ids.entries()) {
    for (const via of nodes) {
      const info = await call(via, 'GET', `/_node/${target}`);
      assert.equal(info.status, 200, info.text);
      assert.equal(info.body.node_id, target);
      assert.equal(info.body.name, `node-${index + 1}`);
      assert.ok(info.body.host, 'host facts');
    }
    const byName = await call(nodes[(index + 1) % 3]!, 'GET', `/_node/node-${index + 1}/stats`);
    assert.equal(byName.status, 200, byName.text);
    assert.equal(byName.body.node_id, target);
  }
  const put = await call(nodes[0]!, 'PUT', `/_node/${ids[1]}/settings`, { json: { 'trash.retention_secs': 7200 } });
  assert.equal(put.status, 200, put.text);
  assert.equal(put.body.node_id, ids[1]);
  const seen = await call(nodes[2]!, 'GET', `/_node/node-2/settings`);
  assert.equal(seen.body.transient['trash.retention_secs'], 7200);
  assert.equal((await call(nodes[1]!, 'GET', '/_node/_local/settings')).body.transient['trash.retention_secs'], 7200);
  assert.equal((await call(nodes[0]!, 'GET', '/_node/_local/settings')).body.transient['trash.retention_secs'], undefined, 'only node-2 changed');
  const refused = await call(nodes[0]!, 'PUT', `/_node/${ids[2]}/settings`, { json: { 'trash.retention_secs': -1 } });
  assert.equal(refused.status, 400, refused.text);
  assert.equal((await call(nodes[0]!, 'PUT', `/_node/${ids[1]}/settings`, { json: { 'trash.retention_secs': null } })).status, 200);
  const missing = await call(nodes[0]!, 'GET', '/_node/nobody/stats');
  assert.equal(missing.status, 404, missing.text);
});

test('_cat/indices counts every node\'s primaries, through every node', async (t) => {
  if (skipReason) return t.skip(skipReason);
  const expected = (await call(nodes[0]!, 'GET', '/books/_count')).body.count;
  for (const node of nodes) {
    const rows = (await call(node, 'GET', '/_cat/indices?format=json')).body as Array<{ index: string; 'docs.count': string; health: string }>;
    const row = rows.find((candidate) => candidate.index === 'books')!;
    assert.equal(Number(row['docs.count']), expected, JSON.stringify(row));
    assert.equal(row.health, 'green');
  }
});

test('delete, list, verify, restore and purge span every node of the cluster', async (t) => {
  if (skipReason) return t.skip(skipReason);
  const before = await settledState(nodes[0]!, 'books');
  const placements = await primaries(nodes[0]!, 'books');
  const deleted = await call(nodes[1]!, 'DELETE', '/books');
  assert.equal(deleted.status, 200, deleted.text);
  const itemId: string = deleted.body.trash_items[0].item_id;
  for (const node of nodes) assert.equal((await call(node, 'GET', '/books')).status, 404);

  const listing = await call(nodes[2]!, 'GET', '/_cluster/trash');
  assert.equal(listing.body._nodes.successful, 3, listing.text);
  const item = listing.body.namespaces.default.items.find((candidate: { item_id: string }) => candidate.item_id === itemId);
  assert.deepEqual(item.nodes.map((node: { node_id: string; shards: number }) => [node.node_id, node.shards]).sort(), ids.map((id) => [id, 1]).sort());
  for (const [index, node] of nodes.entries()) {
    assert.ok((await readdir(join(node.dataDir, 'trash', itemId, 'shards'))).length === 1, `node-${index + 1} holds its copy in its trash`);
  }

  const verified = await call(nodes[0]!, 'POST', `/_cluster/trash/${itemId}/_verify`);
  assert.equal(verified.status, 200, verified.text);
  assert.equal(verified.body.complete, true);
  assert.equal(verified.body.summary.ok, 3);

  const restored = await call(nodes[2]!, 'POST', `/_cluster/trash/${itemId}/_restore`);
  assert.equal(restored.status, 200, restored.text);
  assert.deepEqual(await primaries(nodes[1]!, 'books'), placements, 'every copy back on its node');
  for (const node of nodes) assert.deepEqual(await settledState(node, 'books'), before);

  const again = await call(nodes[0]!, 'DELETE', '/books');
  const secondItem: string = again.body.trash_items[0].item_id;
  const purged = await call(nodes[1]!, 'DELETE', `/_cluster/trash/${secondItem}`);
  assert.equal(purged.status, 200, purged.text);
  assert.equal(purged.body.acknowledged, true);
  assert.equal(purged.body.nodes.length, 3);
  for (const node of nodes) {
    assert.deepEqual(await readdir(join(node.dataDir, 'trash')).then((entries) => entries.filter((entry) => entry.includes(secondItem))), []);
    assert.equal((await call(node, 'GET', '/_cluster/trash')).body.total_items, 0);
  }
});

test('a namespace delete is one item across nodes and comes back whole', async (t) => {
  if (skipReason) return t.skip(skipReason);
  assert.equal((await call(nodes[0]!, 'PUT', '/_namespace/shop')).status, 200);
  await seedBooks(nodes[1]!, 'orders', { namespace: 'shop', shards: 3, count: 24 });
  await seedBooks(nodes[2]!, 'invoices', { namespace: 'shop', shards: 2, count: 12 });
  const orders = await settledState(nodes[0]!, 'orders');
  const invoices = await settledState(nodes[0]!, 'invoices');
  const deleted = await call(nodes[2]!, 'DELETE', '/_namespace/shop');
  assert.equal(deleted.status, 200, deleted.text);
  const itemId = deleted.body.trash_item_id;
  const restored = await call(nodes[0]!, 'POST', `/_cluster/trash/${itemId}/_restore`);
  assert.equal(restored.status, 200, restored.text);
  for (const node of nodes) {
    assert.deepEqual(await collectionState(node, 'orders'), orders);
    assert.deepEqual(await collectionState(node, 'invoices'), invoices);
  }
});

test('a paused node fails its own rows of _compact and of the trash listing while the others stand', async (t) => {
  if (skipReason) return t.skip(skipReason);
  await seedBooks(nodes[0]!, 'paused', { shards: 3, count: 30 });
  const pid = nodes[1]!.pid()!;
  process.kill(pid, 'SIGSTOP');
  try {
    const compacted = await call(nodes[0]!, 'POST', '/paused/_compact');
    assert.equal(compacted.status, 200, compacted.text);
    const rows = compacted.body.nodes as Array<{ node_id: string; status: string; error?: { type: string; reason: string } }>;
    const byNode = new Map(rows.map((row) => [row.node_id, row]));
    assert.equal(byNode.get(ids[0]!)!.status, 'queued');
    assert.equal(byNode.get(ids[1]!)!.status, 'failed', JSON.stringify(rows));
    assert.match(byNode.get(ids[1]!)!.error!.reason, /did not answer|cannot be reached/);
    assert.equal(byNode.get(ids[2]!)!.status, 'failed');
    const listing = await call(nodes[2]!, 'GET', '/_cluster/trash');
    assert.equal(listing.status, 200, listing.text);
    assert.ok(listing.body._nodes.successful >= 2, listing.text);
    if (listing.body._nodes.total === 3) assert.equal(listing.body._nodes.failures[0].node_id, ids[1]);
    const deleted = await call(nodes[0]!, 'DELETE', '/paused');
    assert.equal(deleted.status, 503, `a delete needs every node holding copies: ${deleted.text}`);
    assert.equal((await call(nodes[0]!, 'GET', '/paused')).status, 200, 'nothing changed');
  } finally {
    process.kill(pid, 'SIGCONT');
  }
  await everyNodeSees(nodes, 3);
  await until(async () => ((await call(nodes[0]!, 'GET', '/paused/_count')).body.count === 29 ? true : undefined), 'the paused node serves again');
});

test('a node leaves and rejoins: health goes red, then green, with its data', async (t) => {
  if (skipReason) return t.skip(skipReason);
  const before = await settledState(nodes[0]!, 'paused');
  await nodes[2]!.kill('SIGTERM');
  await everyNodeSees(nodes.slice(0, 2), 2);
  const health = await call(nodes[0]!, 'GET', '/_cluster/health');
  assert.equal(health.body.status, 'red');
  const search = await call(nodes[1]!, 'POST', '/paused/_search', { json: { query: { match_all: {} } } });
  assert.equal(search.body._shards.failed, 1, search.text);
  await nodes[2]!.restart();
  await everyNodeSees(nodes, 3);
  await until(async () => ((await call(nodes[0]!, 'GET', '/_cluster/health')).body.status === 'green' ? true : undefined), 'health is green again');
  for (const node of nodes) assert.deepEqual(await settledState(node, 'paused'), before);
});

test('etcd restarts under running nodes: the coordinator is reported unavailable, catalog writes fail whole, node settings still work', async (t) => {
  if (skipReason) return t.skip(skipReason);
  await etcd!.kill('SIGKILL');
  try {
    const cutOff = await until(async () => {
      const health = await call(nodes[0]!, 'GET', '/_cluster/health');
      return health.body.coordinator.available === false ? health.body : undefined;
    }, 'health reports the coordinator unavailable');
    assert.match(cutOff.coordinator.reason, /etcd/);
    const create = await call(nodes[1]!, 'PUT', '/during-outage', { json: {} });
    assert.equal(create.status, 503, create.text);
    assert.equal(create.body.error.type, 'catalog_unavailable_exception');
    const settings = await call(nodes[2]!, 'PUT', '/_node/_local/settings', { json: { 'trash.retention_secs': 3600 } });
    assert.equal(settings.status, 200, settings.text);
    assert.equal((await call(nodes[2]!, 'GET', '/_node/_local/settings')).body.transient['trash.retention_secs'], 3600);
    assert.equal((await call(nodes[0]!, 'GET', '/paused/_count')).body.count, 29, 'searches keep working on the last catalog');
  } finally {
    await etcd!.restart();
  }
  await until(async () => ((await Promise.all(nodes.map(async (node) => (await call(node, 'GET', '/_cluster/health')).body))).every((health) => health.coordinator.available && health.number_of_nodes === 3) ? true : undefined), 'every node reaches etcd again', 60_000);
  for (const node of nodes) assert.equal((await call(node, 'GET', '/during-outage')).status, 404, 'the refused create left nothing');
  const created = await call(nodes[1]!, 'PUT', '/after-outage', { json: { settings: { number_of_shards: 3 } } });
  assert.equal(created.status, 200, created.text);
  assert.equal((await call(nodes[2]!, 'PUT', '/after-outage/_doc/1', { json: { n: 1 } })).status, 201);
  assert.equal((await call(nodes[0]!, 'GET', '/after-outage/_doc/1')).body._source.n, 1);
});
