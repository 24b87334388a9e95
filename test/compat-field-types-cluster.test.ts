/**
 * The new field types, mapping parameters and index settings on two nodes with a real etcd: a
 * mapping created through one node and documents written through the other are queried, sorted
 * and aggregated through both (shards on both nodes, each parsing the query against its own copy
 * of the mapping from the catalog), a mapping update and a settings change made on one node are
 * obeyed on the other. Skipped, saying why, without an etcd binary.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startEtcd, startEtcdNodes, type EtcdServer } from './etcd.fixture.ts';
import { call, ndjson, until, type TroveServer } from './harness.ts';

let etcd: EtcdServer | undefined;
let skipReason: string | undefined;
const nodes: TroveServer[] = [];

const ADDRESSES = ['10.0.0.2', '10.0.0.10', '192.168.1.1', '2001:db8::1', '10.1.0.1', '172.16.0.1'];

before(async () => {
  try {
    etcd = await startEtcd();
  } catch (error) {
    skipReason = (error as Error).message;
    return;
  }
  await startEtcdNodes(etcd, 2, 'types', nodes);
  const created = await call(nodes[0]!, 'PUT', '/hosts', {
    json: {
      settings: { number_of_shards: 4, max_result_window: 4 },
      mappings: {
        properties: {
          addr: { type: 'ip' },
          labels: { type: 'flattened' },
          rank: { type: 'short', index: false },
          name: { type: 'keyword', doc_values: false },
          seen: { type: 'date', format: 'yyyy/MM/dd' },
        },
      },
    },
  });
  assert.equal(created.status, 200, created.text);
  const lines = ADDRESSES.flatMap((addr, index) => [
    { index: { _id: `h${index}` } },
    { addr, labels: { zone: index % 2 === 0 ? 'a' : 'b', rack: { id: String(index) } }, rank: index, name: `host-${index}`, seen: `2024/01/0${index + 1}` },
  ]);
  const loaded = await call(nodes[1]!, 'POST', '/hosts/_bulk?refresh=true', { body: ndjson(lines), headers: { 'content-type': 'application/x-ndjson' } });
  assert.equal(loaded.body.errors, false, loaded.text.slice(0, 300));
  const shards = (await call(nodes[0]!, 'GET', '/_cluster/state/shards')).body.shards.hosts;
  const placed = new Set(Object.values(shards as Record<string, { primary: { node: string } }>).map((copy) => copy.primary.node));
  assert.equal(placed.size, 2, 'the primaries are on both nodes');
});

after(async () => {
  for (const node of nodes) await node.cleanup();
  await etcd?.cleanup();
});

async function search(node: TroveServer, body: Record<string, unknown>): Promise<any> {
  const response = await call(node, 'POST', '/hosts/_search', { json: { size: 4, ...body } });
  assert.equal(response.status, 200, response.text);
  return response.body;
}

const idsOf = (answer: any): string[] => answer.hits.hits.map((hit: any) => hit._id).sort();

test('ip, flattened and date formats answer the same through either node', async (t) => {
  if (skipReason) return t.skip(skipReason);
  for (const node of nodes) {
    assert.deepEqual(idsOf(await search(node, { query: { term: { addr: '10.0.0.0/8' } } })), ['h0', 'h1', 'h4']);
    assert.deepEqual(idsOf(await search(node, { query: { range: { addr: { gte: '10.0.0.5', lt: '172.0.0.0' } } } })), ['h1', 'h4']);
    assert.deepEqual(idsOf(await search(node, { query: { term: { 'labels.zone': 'b' } } })), ['h1', 'h3', 'h5']);
    assert.deepEqual(idsOf(await search(node, { query: { term: { 'labels.rack.id': '4' } } })), ['h4']);
    assert.deepEqual(idsOf(await search(node, { query: { range: { seen: { gte: '2024/01/05' } } } })), ['h4', 'h5']);
    const sorted = await search(node, { sort: [{ addr: 'asc' }] });
    assert.deepEqual(sorted.hits.hits.map((hit: any) => hit.sort[0]), ['10.0.0.2', '10.0.0.10', '10.1.0.1', '172.16.0.1']);
    const keys = await search(node, { size: 0, aggs: { a: { terms: { field: 'addr', size: 10, order: { _key: 'desc' } } } } });
    assert.deepEqual(keys.aggregations.a.buckets.map((bucket: any) => bucket.key), ['2001:db8::1', '192.168.1.1', '172.16.0.1', '10.1.0.1', '10.0.0.10', '10.0.0.2']);
    const ranked = await search(node, { sort: [{ rank: 'desc' }], size: 2 });
    assert.deepEqual(ranked.hits.hits.map((hit: any) => hit._id), ['h5', 'h4'], 'index: false still sorts');
    const refused = await call(node, 'POST', '/hosts/_search', { json: { query: { term: { rank: 1 } } } });
    assert.equal(refused.status, 400);
    const noDocValues = await call(node, 'POST', '/hosts/_search', { json: { sort: ['name'] } });
    assert.equal(noDocValues.status, 400);
  }
});

test('a mapping update and a settings change made through one node hold on the other', async (t) => {
  if (skipReason) return t.skip(skipReason);
  const tooFar = await call(nodes[1]!, 'POST', '/hosts/_search', { json: { size: 5 } });
  assert.equal(tooFar.status, 400, 'max_result_window 4 on the other node');
  const raised = await call(nodes[0]!, 'PUT', '/hosts/_settings', { json: { index: { max_result_window: 100 } } });
  assert.equal(raised.status, 200, raised.text);
  await until(async () => ((await call(nodes[1]!, 'POST', '/hosts/_search', { json: { size: 5 } })).status === 200 ? true : undefined), 'the new window reaches node 2');
  const added = await call(nodes[1]!, 'PUT', '/hosts/_mapping', { json: { properties: { gateway: { type: 'ip' }, load: { type: 'scaled_float', scaling_factor: 10 } } } });
  assert.equal(added.status, 200, added.text);
  const changed = await call(nodes[0]!, 'PUT', '/hosts/_mapping', { json: { properties: { rank: { type: 'short' } } } });
  assert.equal(changed.status, 400);
  assert.equal(changed.body.error.type, 'illegal_argument_exception');
  const written = await call(nodes[0]!, 'PUT', '/hosts/_doc/g1?refresh=true', { json: { gateway: '10.9.0.1', load: 0.26 } });
  assert.equal(written.status, 201, written.text);
  const bad = await call(nodes[0]!, 'PUT', '/hosts/_doc/g2', { json: { gateway: 'router' } });
  assert.equal(bad.status, 400);
  assert.equal(bad.body.error.type, 'mapper_parsing_exception');
  for (const node of nodes) {
    assert.deepEqual(idsOf(await search(node, { query: { term: { gateway: '10.9.0.0/16' } } })), ['g1']);
    assert.deepEqual(idsOf(await search(node, { query: { term: { load: 0.3 } } })), ['g1'], '0.26 is held as 0.3 with scaling_factor 10');
  }
});
