/**
 * Scroll and point in time on two nodes with a real etcd: the reader contexts live on the node
 * hosting each copy, any node serves the next page (the ids carry where the contexts are), writes
 * through the other node do not change what they see, listing and deleting reach both nodes, and
 * a node that restarts takes its contexts with it (search_context_missing_exception, 404).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startEtcd, startEtcdNodes, type EtcdServer } from './etcd.fixture.ts';
import { call, ndjson, until, type TroveServer } from './harness.ts';

let etcd: EtcdServer | undefined;
let skipReason: string | undefined;
const nodes: TroveServer[] = [];
const COUNT = 4000;

async function green(): Promise<void> {
  await until(async () => {
    const health = await call(nodes[0]!, 'GET', '/_cluster/health');
    return health.body.number_of_nodes === 2 && health.body.status === 'green' ? true : undefined;
  }, 'the cluster is green on two nodes', 60_000);
}

before(async () => {
  try {
    etcd = await startEtcd();
  } catch (error) {
    skipReason = (error as Error).message;
    return;
  }
  await startEtcdNodes(etcd, 2, 'scroll', nodes);
  const created = await call(nodes[0]!, 'PUT', '/spread', { json: { settings: { number_of_shards: 4 }, mappings: { properties: { n: { type: 'long' }, v: { type: 'long' } } } } });
  assert.equal(created.status, 200, created.text);
  const lines: unknown[] = [];
  for (let i = 0; i < COUNT; i++) lines.push({ index: { _id: `d${i}` } }, { n: i, v: 0 });
  const loaded = await call(nodes[1]!, 'POST', '/spread/_bulk?refresh=true', { body: ndjson(lines), headers: { 'content-type': 'application/x-ndjson' } });
  assert.equal(loaded.body.errors, false, loaded.text.slice(0, 300));
  const shards = (await call(nodes[0]!, 'GET', '/_cluster/state/shards')).body.shards.spread;
  const placed = new Set(Object.values(shards as Record<string, { primary: { node: string } }>).map((copy) => copy.primary.node));
  assert.equal(placed.size, 2, 'the primaries are on both nodes');
});

after(async () => {
  for (const node of nodes) await node.cleanup();
  await etcd?.cleanup();
});

/** Writes through node 2 that a snapshot must not see: updates, deletes and new documents. */
async function write(round: number): Promise<void> {
  const lines: unknown[] = [];
  for (let i = 0; i < 50; i++) {
    const victim = `d${(round * 131 + i * 37) % COUNT}`;
    lines.push({ index: { _id: `new-${round}-${i}` } }, { n: COUNT + round * 50 + i, v: 1 });
    lines.push(i % 2 === 0 ? { delete: { _id: victim } } : { index: { _id: victim } }, ...(i % 2 === 0 ? [] : [{ n: -1, v: 1 }]));
  }
  const response = await call(nodes[1]!, 'POST', '/spread/_bulk', { body: ndjson(lines), headers: { 'content-type': 'application/x-ndjson' } });
  assert.equal(response.status, 200, response.text.slice(0, 300));
}

type Hit = { _id: string; _source: { n: number; v: number } };

/** The live documents (fewer than 10 000), read while nothing writes: the state a snapshot opened now must show. */
async function liveDocuments(): Promise<Map<string, string>> {
  const response = await call(nodes[0]!, 'POST', '/spread/_search', { json: { size: 10_000, track_total_hits: true } });
  assert.equal(response.status, 200, response.text);
  assert.ok(response.body.hits.total.value < 10_000);
  return new Map((response.body.hits.hits as Hit[]).map((hit) => [hit._id, JSON.stringify(hit._source)]));
}

/** Checks a page-through saw each document of `expected` once, with its content then. */
function assertSnapshot(seen: Hit[], expected: Map<string, string>): void {
  assert.equal(seen.length, expected.size);
  assert.equal(new Set(seen.map((hit) => hit._id)).size, expected.size);
  for (const hit of seen) assert.equal(JSON.stringify(hit._source), expected.get(hit._id), hit._id);
}

test('a scroll opened on one node pages through the other while writes go on, and any node clears it', async (t) => {
  if (skipReason) return t.skip(skipReason);
  const expected = await liveDocuments();
  const first = await call(nodes[0]!, 'POST', '/spread/_search?scroll=1m', { json: { size: 300, sort: ['_doc'] } });
  assert.equal(first.status, 200, first.text);
  assert.equal(first.body._shards.total, 4);
  const seen = [...first.body.hits.hits];
  let scrollId = first.body._scroll_id;
  for (let page = 1; ; page++) {
    await write(page);
    const next = await call(nodes[page % 2]!, 'POST', '/_search/scroll', { json: { scroll: '1m', scroll_id: scrollId } });
    assert.equal(next.status, 200, next.text);
    if (next.body.hits.hits.length === 0) break;
    seen.push(...next.body.hits.hits);
    scrollId = next.body._scroll_id;
  }
  assertSnapshot(seen, expected);
  const cleared = await call(nodes[1]!, 'DELETE', '/_search/scroll', { json: { scroll_id: scrollId } });
  assert.deepEqual(cleared.body, { succeeded: true, num_freed: 4 });
});

test('a point in time created on one node is searched, listed and deleted through the other', async (t) => {
  if (skipReason) return t.skip(skipReason);
  const expected = await liveDocuments();
  const created = await call(nodes[1]!, 'POST', '/spread/_pit?keep_alive=1m');
  assert.equal(created.status, 200, created.text);
  const seen: Hit[] = [];
  let searchAfter: unknown[] | undefined;
  for (let page = 0; ; page++) {
    await write(100 + page);
    const response = await call(nodes[page % 2]!, 'POST', '/_search', { json: { size: 500, pit: { id: created.body.id }, sort: [{ n: 'asc' }], ...(searchAfter ? { search_after: searchAfter } : {}) } });
    assert.equal(response.status, 200, response.text);
    if (response.body.hits.hits.length === 0) break;
    seen.push(...response.body.hits.hits);
    searchAfter = response.body.hits.hits.at(-1).sort;
  }
  assertSnapshot(seen, expected);
  const listed = await call(nodes[0]!, 'GET', '/_search/point_in_time/_all');
  assert.deepEqual(listed.body.pits.map((pit: { pit_id: string }) => pit.pit_id), [created.body.id]);
  const closed = await call(nodes[0]!, 'DELETE', '/_pit', { json: { id: created.body.id } });
  assert.deepEqual(closed.body, { succeeded: true, num_freed: 4 });
});

test('a node that restarts takes its reader contexts with it', async (t) => {
  if (skipReason) return t.skip(skipReason);
  await green();
  const first = await call(nodes[0]!, 'POST', '/spread/_search?scroll=5m', { json: { size: 10 } });
  assert.equal(first.status, 200, first.text);
  await nodes[1]!.restart();
  await green();
  const next = await call(nodes[0]!, 'POST', '/_search/scroll', { json: { scroll_id: first.body._scroll_id } });
  assert.equal(next.status, 404, next.text);
  assert.equal(next.body.error.type, 'search_context_missing_exception');
  // The copies on the node that stayed still hold theirs until cleared.
  const cleared = await call(nodes[0]!, 'DELETE', '/_search/scroll', { json: { scroll_id: first.body._scroll_id } });
  assert.equal(cleared.body.succeeded, true);
  assert.ok(cleared.body.num_freed > 0 && cleared.body.num_freed < 4, `freed ${cleared.body.num_freed} of 4`);
});
