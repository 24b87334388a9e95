/**
 * Replication on three nodes and a real etcd: replicas recover and join the in-sync set (health
 * yellow → green), every kind of write reaches both copies, a killed primary's node is replaced by
 * its in-sync replica under a new primary term with no acknowledged write lost, the change feed
 * goes on from its cursor, the returning node recovers as a replica, and finally every copy of
 * every shard holds the same documents, versions and sources (read offline, copy by copy).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { everyNodeSees, startEtcd, type EtcdServer } from './etcd.fixture.ts';
import { call, ndjson, startServer, until, type TroveServer } from './harness.ts';
import { readCopy, type CopyContents } from './replication-copies.ts';

const TTL_MS = 2_000;
const MAPPING = { properties: { title: { type: 'text' }, tag: { type: 'keyword' }, hits: { type: 'long', inplace: true } } };

let etcd: EtcdServer | undefined;
let skipReason: string | undefined;
const nodes: TroveServer[] = [];
const nodeIds: string[] = [];
/** Last acknowledged state of each document: its source, or null once deleted. */
const acknowledged = new Map<string, Record<string, unknown> | null>();

async function green(node: TroveServer, what: string): Promise<void> {
  await until(async () => {
    const health = await call(node, 'GET', '/_cluster/health');
    return health.body.status === 'green' ? true : undefined;
  }, what, 60_000);
}

interface ShardRow {
  uuid: string;
  primary: { node: string; state: string };
  replicas: Array<{ node: string | null; state: string }>;
  primary_term: number;
  in_sync: string[];
}

async function shardsOf(node: TroveServer, collection = 'rep'): Promise<Record<string, ShardRow>> {
  return (await call(node, 'GET', '/_cluster/state/shards')).body.shards[collection];
}

before(async () => {
  try {
    etcd = await startEtcd();
  } catch (error) {
    skipReason = (error as Error).message;
    return;
  }
  for (let index = 0; index < 3; index++) {
    nodes.push(
      await startServer({
        settings: {
          'cluster.etcd': etcd.endpoint,
          'cluster.name': 'replication',
          'node.name': `node-${index + 1}`,
          'cluster.node_ttl_ms': String(TTL_MS),
          // Small log files, so that a history can be trimmed (and a new replica must copy files).
          'wal.segment_bytes': '65536',
        },
      }),
    );
    nodeIds.push((await call(nodes[index]!, 'GET', '/')).body.node_id);
  }
  await until(async () => ((await call(nodes[0]!, 'GET', '/_cluster/health')).body.number_of_nodes === 3 ? true : undefined), 'three nodes');
});

after(async () => {
  for (const node of nodes) await node.cleanup();
  await etcd?.cleanup();
});

test('replicas recover, join the in-sync set, and health turns green', async (t) => {
  if (skipReason) return t.skip(skipReason);
  const created = await call(nodes[0]!, 'PUT', '/rep', { json: { settings: { number_of_shards: 2, number_of_replicas: 1 }, mappings: MAPPING } });
  assert.equal(created.status, 200, created.text);
  await green(nodes[1]!, 'the new collection is green');
  const shards = await shardsOf(nodes[2]!);
  for (const row of Object.values(shards)) {
    assert.equal(row.replicas.length, 1);
    assert.notEqual(row.replicas[0]!.node, row.primary.node, 'never two copies of a shard on one node');
    assert.deepEqual([...row.in_sync].sort(), [row.primary.node, row.replicas[0]!.node].sort(), JSON.stringify(row));
    assert.equal(row.primary_term, 1);
  }
});

test('every kind of write is acknowledged with both copies in sync', async (t) => {
  if (skipReason) return t.skip(skipReason);
  const lines: unknown[] = [];
  for (let index = 0; index < 120; index++) {
    lines.push({ index: { _index: 'rep', _id: `d${index}` } }, { title: `document number ${index}`, tag: `t${index % 5}`, hits: index });
  }
  const bulk = await call(nodes[1]!, 'POST', '/_bulk?refresh=true', { body: ndjson(lines), headers: { 'content-type': 'application/x-ndjson' } });
  assert.equal(bulk.status, 200, bulk.text);
  assert.equal(bulk.body.errors, false, bulk.text.slice(0, 500));
  for (let index = 0; index < 120; index++) acknowledged.set(`d${index}`, { title: `document number ${index}`, tag: `t${index % 5}`, hits: index });

  for (let index = 0; index < 10; index++) {
    const node = nodes[index % 3]!;
    const incremented = await call(node, 'POST', `/rep/_update/d${index}`, { json: { ops: [{ op: 'incr', field: 'hits', value: 1000 }] } });
    assert.equal(incremented.status, 200, incremented.text);
    acknowledged.set(`d${index}`, { ...acknowledged.get(`d${index}`)!, hits: index + 1000 });
    const merged = await call(node, 'POST', `/rep/_update/d${index + 10}`, { json: { doc: { tag: 'changed' } } });
    assert.equal(merged.status, 200, merged.text);
    acknowledged.set(`d${index + 10}`, { ...acknowledged.get(`d${index + 10}`)!, tag: 'changed' });
    const deleted = await call(node, 'DELETE', `/rep/_doc/d${index + 20}`);
    assert.equal(deleted.status, 200, deleted.text);
    acknowledged.set(`d${index + 20}`, null);
  }
  // Every node answers alike, whether it searches its own in-sync replica or the primary.
  for (const node of nodes) {
    const count = await call(node, 'GET', '/rep/_count');
    assert.equal(count.body.count, 110);
    const search = await call(node, 'POST', '/rep/_search', { json: { query: { term: { tag: 'changed' } }, size: 20, sort: [{ hits: 'asc' }] } });
    assert.deepEqual(search.body._shards, { total: 2, successful: 2, skipped: 0, failed: 0 });
    assert.deepEqual(search.body.hits.hits.map((hit: { _id: string }) => hit._id), ['d10', 'd11', 'd12', 'd13', 'd14', 'd15', 'd16', 'd17', 'd18', 'd19']);
  }
  await green(nodes[0]!, 'still green after the writes');
});

test('a killed primary node is replaced by its in-sync replica; nothing acknowledged is lost', async (t) => {
  if (skipReason) return t.skip(skipReason);
  const before = await shardsOf(nodes[0]!);
  const victimId = before['0']!.primary.node;
  const victim = nodeIds.indexOf(victimId);
  assert.ok(victim >= 0, `node ${victimId} is one of ours`);
  const survivor = nodes[(victim + 1) % 3]!;
  const feedStart = (await call(survivor, 'GET', '/rep/_changes?since=0&limit=100000')).body;

  // A document routed to shard 0: the first acknowledged id the shard-0 primary holds.
  const shard0Doc = await until(async () => {
    for (const id of acknowledged.keys()) {
      const answer = await call(survivor, 'GET', `/rep/_search_shards?routing=${id}`).catch(() => null);
      if (answer?.status === 200 && answer.body.shards?.[0]?.[0]?.shard === 0) return id;
    }
    return undefined;
  }, 'a document of shard 0', 5_000).catch(() => [...acknowledged.keys()][0]!);

  const killedAt = Date.now();
  await nodes[victim]!.kill('SIGKILL');
  let firstWriteMs = -1;
  for (let attempt = 0; attempt < 400; attempt++) {
    const written = await call(survivor, 'PUT', `/rep/_doc/after-failover-${attempt}`, { json: { title: 'written during failover', tag: 'f', hits: attempt } }).catch(() => null);
    if (written?.status === 200 || written?.status === 201) {
      acknowledged.set(`after-failover-${attempt}`, { title: 'written during failover', tag: 'f', hits: attempt });
      const routed = await call(survivor, 'GET', '/_cluster/state/shards');
      if (routed.body.shards.rep['0'].primary_term > 1) {
        firstWriteMs = Date.now() - killedAt;
        break;
      }
    }
    await sleep(50);
  }
  const after = await until(async () => {
    const shards = await shardsOf(survivor);
    return shards['0']!.primary_term === 2 && shards['0']!.primary.node !== victimId ? shards : undefined;
  }, 'shard 0 has a new primary under term 2');
  t.diagnostic(`shard 0: primary ${victimId} killed; ${after['0']!.primary.node} promoted under term 2; first acknowledged write ${firstWriteMs} ms after the kill (TTL ${TTL_MS} ms)`);
  assert.ok(firstWriteMs > 0, 'a write was acknowledged after the failover');
  const write0 = await call(survivor, 'POST', `/rep/_update/${shard0Doc}`, { json: { doc: { tag: 'after' } } });
  if (acknowledged.get(shard0Doc)) {
    assert.equal(write0.status, 200, write0.text);
    acknowledged.set(shard0Doc, { ...acknowledged.get(shard0Doc)!, tag: 'after' });
  }

  for (const [id, source] of acknowledged) {
    const got = await call(survivor, 'GET', `/rep/_doc/${id}`);
    if (source === null) assert.equal(got.status, 404, `${id} stays deleted`);
    else assert.deepEqual(got.body._source, source, `${id} after failover`);
  }
  const feed = (await call(survivor, 'GET', `/rep/_changes?since=${encodeURIComponent(feedStart.last_seq)}&limit=100000`)).body;
  const ids = feed.results.map((result: { id: string }) => result.id);
  for (const id of acknowledged.keys()) if (id.startsWith('after-failover-')) assert.ok(ids.includes(id), `the feed from the old cursor holds ${id}`);
  assert.equal(new Set(feed.results.map((result: { seq: string }) => result.seq)).size, feed.results.length, 'no change is repeated');

  await nodes[victim]!.restart();
  await green(survivor, 'green again once the returning node recovered its copies');
  // Health can turn green on the other two nodes before every node's registry view holds the returning one.
  await everyNodeSees(nodes, nodes.length);
  const final = await shardsOf(survivor);
  for (const row of Object.values(final)) assert.equal(row.in_sync.length, 2, JSON.stringify(row));
});

test('a replica added to a collection whose history was trimmed recovers by copying files', async (t) => {
  if (skipReason) return t.skip(skipReason);
  for (const id of nodeIds) {
    const set = await call(nodes[0]!, 'PUT', `/_node/${id}/settings`, { json: { 'changes.retention_secs': 0, 'epoch.interval_ms': 100 } });
    assert.equal(set.status, 200, set.text);
  }
  assert.equal((await call(nodes[0]!, 'PUT', '/grow', { json: { settings: { number_of_shards: 1, number_of_replicas: 0 }, mappings: MAPPING } })).status, 200);
  for (let batch = 0; batch < 6; batch++) {
    const lines: unknown[] = [];
    for (let index = 0; index < 200; index++) lines.push({ index: { _id: `g${batch * 200 + index}` } }, { title: `grown document ${batch} ${index} `.repeat(4), tag: 'g', hits: index });
    const bulk = await call(nodes[batch % 3]!, 'POST', '/grow/_bulk', { body: ndjson(lines), headers: { 'content-type': 'application/x-ndjson' } });
    assert.equal(bulk.body.errors, false, bulk.text.slice(0, 300));
  }
  await until(async () => {
    const oldest = await call(nodes[1]!, 'GET', '/grow/_changes?since=0&limit=1');
    const first = oldest.body.results?.[0]?.id;
    return typeof first === 'string' && first !== 'g0' ? true : undefined;
  }, 'the primary trimmed the start of its history');
  assert.equal((await call(nodes[2]!, 'PUT', '/grow/_settings', { json: { index: { number_of_replicas: 1 } } })).status, 200);
  await until(async () => ((await shardsOf(nodes[0]!, 'grow'))['0']!.in_sync.length === 2 ? true : undefined), 'the new replica is in sync', 60_000);
  await green(nodes[0]!, 'the new replica recovered');
  const recovery = (await call(nodes[1]!, 'GET', '/grow/_recovery')).body.grow.shards;
  assert.equal(recovery.length, 1, JSON.stringify(recovery));
  assert.equal(recovery[0].method, 'files', JSON.stringify(recovery));
  assert.ok(recovery[0].index.size.recovered_in_bytes > 0 && recovery[0].index.files.recovered > 0, JSON.stringify(recovery));
  t.diagnostic(`file-based recovery: ${JSON.stringify(recovery[0])}`);
  const rep = (await call(nodes[1]!, 'GET', '/rep/_recovery')).body.rep.shards;
  assert.ok(rep.some((row: { method: string }) => row.method === 'operations'), `the returning node recovered by operations: ${JSON.stringify(rep)}`);
  assert.equal((await call(nodes[0]!, 'GET', '/grow/_count')).body.count, 1200);
  for (const id of nodeIds) await call(nodes[0]!, 'PUT', `/_node/${id}/settings`, { json: { 'changes.retention_secs': null, 'epoch.interval_ms': null } });
});

test('every copy of every shard holds the same documents, versions and sources', async (t) => {
  if (skipReason) return t.skip(skipReason);
  const shards = (await call(nodes[0]!, 'GET', '/_cluster/state/shards')).body.shards as Record<string, Record<string, ShardRow>>;
  const mapping = (await call(nodes[0]!, 'GET', '/rep/_mapping')).body.rep.mappings;
  const grown = Array.from({ length: 1200 }, (_, index) => `g${index}`);
  const wanted = [...Object.entries(shards.rep!).map(([shard, row]) => ({ shard, row, ids: [...acknowledged.keys()] })), ...Object.entries(shards.grow!).map(([shard, row]) => ({ shard, row, ids: grown }))];
  for (const node of nodes) await node.kill('SIGTERM');
  for (const { shard, row, ids } of wanted) {
    const copies: CopyContents[] = [];
    for (const nodeId of [row.primary.node, ...row.replicas.map((replica) => replica.node!)]) {
      const server = nodes[nodeIds.indexOf(nodeId)]!;
      const copy = await readCopy({ dataDir: server.dataDir, node: nodeId, shard: Number(shard), uuid: row.uuid, mapping, ids });
      assert.ok(copy, `copy of shard ${shard} on ${nodeId} exists`);
      copies.push(copy);
    }
    assert.equal(copies.length, 2);
    assert.deepEqual(copies[1]!.documents, copies[0]!.documents, `shard ${shard}: both copies hold the same documents`);
  }
  for (const node of nodes) await node.restart();
});
