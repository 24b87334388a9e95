/**
 * Three nodes on a real etcd: they find each other and elect one master, a collection's primaries
 * spread over them, any node serves any document operation (forwarded to the primary's node), and
 * searches, counts, aggregations, sorts, `search_after` and the change feed answer through every
 * node exactly as a single node holding the same data answers.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { cities } from './corpora.ts';
import { startEtcd, startEtcdNodes, type EtcdServer } from './etcd.fixture.ts';
import { call, ndjson, startServer, until, type TroveServer } from './harness.ts';

let etcd: EtcdServer | undefined;
let skipReason: string | undefined;
const nodes: TroveServer[] = [];
let single: TroveServer | undefined;

const MAPPING = { properties: { name: { type: 'text' }, country: { type: 'keyword' }, population: { type: 'long' } } };
const CITY_COUNT = 3000;

before(async () => {
  try {
    etcd = await startEtcd();
  } catch (error) {
    skipReason = (error as Error).message;
    return;
  }
  await startEtcdNodes(etcd, 3, 'e2e', nodes);
  single = await startServer();
});

after(async () => {
  for (const node of nodes) await node.cleanup();
  await single?.cleanup();
  await etcd?.cleanup();
});

/** A response body without what legitimately differs between nodes (timing). */
function comparable(body: Record<string, unknown>): Record<string, unknown> {
  const { took: _took, ...rest } = body;
  return rest;
}

test('the nodes find each other through etcd and agree on one master', async (t) => {
  if (skipReason) return t.skip(skipReason);
  const states = await Promise.all(nodes.map(async (node) => (await call(node, 'GET', '/_cluster/state/nodes,master')).body));
  const ids = states.map((state) => Object.keys(state.nodes).sort());
  for (const listed of ids) assert.equal(listed.length, 3);
  assert.deepEqual(ids[1], ids[0]);
  assert.deepEqual(ids[2], ids[0]);
  const masters = new Set(states.map((state) => state.master.node_id));
  assert.equal(masters.size, 1, `one master: ${[...masters].join(',')}`);
  assert.ok(ids[0]!.includes([...masters][0]), 'the master is one of the nodes');
});

test('a collection created through one node has its primaries spread over all three', async (t) => {
  if (skipReason) return t.skip(skipReason);
  const created = await call(nodes[1]!, 'PUT', '/cities', { json: { settings: { number_of_shards: 3 }, mappings: MAPPING } });
  assert.equal(created.status, 200, created.text);
  assert.equal(created.body.shards_acknowledged, true, 'the create waited for every primary, on every node');
  const shards = (await call(nodes[2]!, 'GET', '/_cluster/state/shards')).body.shards.cities;
  const primaries = Object.values(shards as Record<string, { primary: { node: string; state: string } }>).map((copy) => copy.primary);
  assert.equal(new Set(primaries.map((primary) => primary.node)).size, 3, JSON.stringify(primaries));
  assert.ok(primaries.every((primary) => primary.state === 'started'), JSON.stringify(primaries));
  const local = await call(single!, 'PUT', '/cities', { json: { settings: { number_of_shards: 3 }, mappings: MAPPING } });
  assert.equal(local.status, 200, local.text);
});

test('any node serves index, get, update, delete, bulk and mget', async (t) => {
  if (skipReason) return t.skip(skipReason);
  const created = await call(nodes[0]!, 'PUT', '/towns', { json: { settings: { number_of_shards: 3 }, mappings: MAPPING } });
  assert.equal(created.status, 200, created.text);
  for (const [index, node] of nodes.entries()) {
    const put = await call(node, 'PUT', `/towns/_doc/doc-${index}`, { json: { name: `Town ${index}`, country: 'XX', population: index } });
    assert.equal(put.status, 201, put.text);
  }
  for (const [index] of nodes.entries()) {
    for (const reader of nodes) {
      const got = await call(reader, 'GET', `/towns/_doc/doc-${index}`);
      assert.equal(got.status, 200, got.text);
      assert.deepEqual(got.body._source, { name: `Town ${index}`, country: 'XX', population: index });
    }
  }
  const updated = await call(nodes[2]!, 'POST', '/towns/_update/doc-0', { json: { ops: [{ op: 'incr', field: 'population', value: 41 }] } });
  assert.equal(updated.status, 200, updated.text);
  assert.equal((await call(nodes[1]!, 'GET', '/towns/_doc/doc-0')).body._source.population, 41);
  const bulk = await call(nodes[0]!, 'POST', '/towns/_bulk', {
    body: ndjson([{ delete: { _id: 'doc-1' } }, { index: { _id: 'doc-9' } }, { name: 'Bulk town', country: 'YY', population: 9 }]),
    headers: { 'content-type': 'application/x-ndjson' },
  });
  assert.equal(bulk.body.errors, false, bulk.text);
  const mget = await call(nodes[1]!, 'POST', '/towns/_mget', { json: { ids: ['doc-0', 'doc-1', 'doc-2', 'doc-9'] } });
  assert.deepEqual(
    mget.body.docs.map((doc: { _id: string; found: boolean }) => [doc._id, doc.found]),
    [['doc-0', true], ['doc-1', false], ['doc-2', true], ['doc-9', true]],
  );
  const removed = await call(nodes[2]!, 'DELETE', '/towns/_doc/doc-9');
  assert.equal(removed.body.result, 'deleted');
  for (const id of ['doc-0', 'doc-2']) assert.equal((await call(nodes[0]!, 'DELETE', `/towns/_doc/${id}`)).body.result, 'deleted');
});

test('searches, counts, aggregations, sorts and search_after answer alike on every node and on one node', async (t) => {
  if (skipReason) return t.skip(skipReason);
  const lines = cities(CITY_COUNT).flatMap((city) => [{ index: { _id: city.id } }, { name: city.name, country: city.country, population: city.population }]);
  for (const target of [nodes[0]!, single!]) {
    const loaded = await call(target, 'POST', '/cities/_bulk', { body: ndjson(lines), headers: { 'content-type': 'application/x-ndjson' } });
    const failed = loaded.body.items?.find((item: { index: { error?: unknown } }) => item.index.error !== undefined);
    assert.equal(loaded.body.errors, false, JSON.stringify(failed ?? loaded.body).slice(0, 500));
  }
  const searches: Array<[string, string, unknown]> = [
    ['POST', '/cities/_search', { query: { match: { name: 'san' } }, size: 20 }],
    ['POST', '/cities/_search', { query: { bool: { must: { match: { name: 'city' } }, filter: { range: { population: { gte: 10_000 } } } } } }],
    ['POST', '/cities/_search', { query: { match_all: {} }, sort: [{ population: 'desc' }, { _doc: 'asc' }], size: 7 }],
    ['POST', '/cities/_search', { size: 0, aggs: { countries: { terms: { field: 'country', size: 5 } }, population: { stats: { field: 'population' } } } }],
    ['POST', '/cities/_count', { query: { term: { country: 'US' } } }],
  ];
  for (const [method, path, json] of searches) {
    const expected = comparable((await call(single!, method, path, { json })).body);
    for (const node of nodes) assert.deepEqual(comparable((await call(node, method, path, { json })).body), expected, `${path} ${JSON.stringify(json)}`);
  }
  const first = await call(nodes[1]!, 'POST', '/cities/_search', { json: { sort: [{ population: 'desc' }, { _doc: 'asc' }], size: 5 } });
  assert.equal(first.status, 200, first.text);
  const after = first.body.hits.hits.at(-1).sort;
  const next = { sort: [{ population: 'desc' }, { _doc: 'asc' }], size: 5, search_after: after };
  const expected = comparable((await call(single!, 'POST', '/cities/_search', { json: next })).body);
  assert.deepEqual(comparable((await call(nodes[2]!, 'POST', '/cities/_search', { json: next })).body), expected);
});

test('the change feed reads from any node with the same cursor', async (t) => {
  if (skipReason) return t.skip(skipReason);
  const head = await call(nodes[0]!, 'GET', '/cities/_changes?limit=10');
  assert.equal(head.status, 200, head.text);
  assert.equal(head.body.results.length, 10);
  const rest = await call(nodes[2]!, `GET`, `/cities/_changes?since=${encodeURIComponent(head.body.last_seq)}`);
  assert.equal(rest.status, 200, rest.text);
  const again = await call(nodes[1]!, `GET`, `/cities/_changes?since=${encodeURIComponent(head.body.last_seq)}`);
  assert.deepEqual(again.body, rest.body, 'two nodes continue a cursor identically');
  assert.equal(head.body.results.length + rest.body.results.length, CITY_COUNT, 'every write once');
  const single_ = await call(single!, 'GET', '/cities/_changes');
  assert.deepEqual(
    new Set([...head.body.results, ...rest.body.results].map((change: { id: string }) => change.id)),
    new Set(single_.body.results.map((change: { id: string }) => change.id)),
  );
});

test('a new field added by dynamic mapping on one node is indexed by the primary on another', async (t) => {
  if (skipReason) return t.skip(skipReason);
  const created = await call(nodes[2]!, 'PUT', '/notes', { json: { settings: { number_of_shards: 3 } } });
  assert.equal(created.status, 200, created.text);
  for (let index = 0; index < 12; index++) {
    const node = nodes[index % 3]!;
    const put = await call(node, 'PUT', `/notes/_doc/n${index}`, { json: { [`field${index}`]: `value ${index}`, rank: index } });
    assert.equal(put.status, 201, put.text);
  }
  for (const node of nodes) {
    for (let index = 0; index < 12; index++) {
      const found = await call(node, 'POST', '/notes/_search', { json: { query: { match: { [`field${index}`]: `value` } } } });
      assert.equal(found.body.hits.total.value, 1, `field${index} is searchable through ${node.url}`);
    }
    const ranked = await call(node, 'POST', '/notes/_search', { json: { query: { range: { rank: { gte: 6 } } } } });
    assert.equal(ranked.body.hits.total.value, 6);
  }
});
