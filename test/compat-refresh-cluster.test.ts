/**
 * `index.visibility: refresh` on two nodes with a real etcd and a replica of every shard: each
 * copy (primary or replica, on either node) keeps its own refreshed view, a search on either node
 * reads its own copies, and `_refresh`, `refresh=true`, `refresh=wait_for` and the periodic
 * refresh reach every copy.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startEtcd, startEtcdNodes, type EtcdServer } from './etcd.fixture.ts';
import { call, ndjson, until, type TroveServer } from './harness.ts';

let etcd: EtcdServer | undefined;
let skipReason: string | undefined;
const nodes: TroveServer[] = [];
const NDJSON = { 'content-type': 'application/x-ndjson' };

before(async () => {
  try {
    etcd = await startEtcd();
  } catch (error) {
    skipReason = (error as Error).message;
    return;
  }
  await startEtcdNodes(etcd, 2, 'refresh', nodes);
  const created = await call(nodes[0]!, 'PUT', '/cl', {
    json: { settings: { number_of_shards: 2, number_of_replicas: 1, visibility: 'refresh', refresh_interval: '-1' }, mappings: { properties: { n: { type: 'long' } } } },
  });
  assert.equal(created.status, 200, created.text);
  await until(async () => ((await call(nodes[1]!, 'GET', '/_cluster/health/cl')).body.status === 'green' ? true : undefined), 'the collection is green', 60_000);
  // Each node holds a copy of each shard: the searches of each node read its own copies.
  const shards = (await call(nodes[0]!, 'GET', '/_cluster/state/shards')).body.shards.cl as Record<string, { primary: { node: string }; in_sync: string[] }>;
  for (const row of Object.values(shards)) assert.equal(row.in_sync.length, 2);
});

after(async () => {
  for (const node of nodes) await node.cleanup();
  await etcd?.cleanup();
});

/** The count a search on each node sees. */
async function counts(): Promise<number[]> {
  return Promise.all(
    nodes.map(async (node) => {
      const response = await call(node, 'POST', '/cl/_search', { json: { size: 0, track_total_hits: true } });
      assert.equal(response.status, 200, response.text);
      return response.body.hits.total.value as number;
    }),
  );
}

test('writes stay hidden on every copy until a refresh, which reaches primaries and replicas on both nodes', async (t) => {
  if (skipReason) return t.skip(skipReason);
  const lines: unknown[] = [];
  for (let i = 0; i < 20; i++) lines.push({ index: { _id: `d${i}` } }, { n: i });
  const bulk = await call(nodes[0]!, 'POST', '/cl/_bulk', { body: ndjson(lines), headers: NDJSON });
  assert.equal(bulk.body.errors, false, bulk.text.slice(0, 300));
  assert.deepEqual(await counts(), [0, 0]);
  assert.equal((await call(nodes[1]!, 'GET', '/cl/_doc/d3')).body.found, true, 'a realtime get reads the latest');
  const refreshed = await call(nodes[1]!, 'POST', '/cl/_refresh');
  assert.deepEqual(refreshed.body, { _shards: { total: 4, successful: 4, failed: 0 } });
  assert.deepEqual(await counts(), [20, 20]);

  assert.equal((await call(nodes[0]!, 'DELETE', '/cl/_doc/d0')).status, 200);
  assert.deepEqual(await counts(), [20, 20]);
  await call(nodes[0]!, 'POST', '/_refresh');
  assert.deepEqual(await counts(), [19, 19]);
});

test('refresh=true refreshes every copy of the written shard before answering; wait_for waits for them', async (t) => {
  if (skipReason) return t.skip(skipReason);
  const before = (await counts())[0]!;
  for (let i = 0; i < 4; i++) {
    const written = await call(nodes[i % 2]!, 'PUT', `/cl/_doc/t${i}?refresh=true`, { json: { n: 100 + i } });
    assert.equal(written.status, 201, written.text);
    assert.equal(written.body.forced_refresh, true);
    assert.deepEqual(await counts(), [before + i + 1, before + i + 1], `write ${i}`);
  }
  let answered = false;
  const pending = call(nodes[1]!, 'PUT', '/cl/_doc/w?refresh=wait_for', { json: { n: 200 } }).then((response) => {
    answered = true;
    return response;
  });
  await until(async () => ((await call(nodes[0]!, 'GET', '/cl/_doc/w')).body.found === true ? true : undefined), 'the write is applied', 10_000);
  await new Promise((resolve) => setTimeout(resolve, 300));
  assert.equal(answered, false, 'no copy refreshed yet');
  await call(nodes[0]!, 'POST', '/cl/_refresh');
  assert.equal((await pending).status, 201);
  assert.deepEqual(await counts(), [before + 5, before + 5]);
});

test('the periodic refresh runs on every copy', async (t) => {
  if (skipReason) return t.skip(skipReason);
  const before = (await counts())[0]!;
  assert.equal((await call(nodes[1]!, 'PUT', '/cl/_settings', { json: { 'index.refresh_interval': '100ms' } })).status, 200);
  const lines: unknown[] = [];
  for (let i = 0; i < 10; i++) lines.push({ index: { _id: `p${i}` } }, { n: 300 + i });
  await call(nodes[1]!, 'POST', '/cl/_bulk', { body: ndjson(lines), headers: NDJSON });
  await until(async () => ((await counts()).every((seen) => seen === before + 10) ? true : undefined), 'both nodes see the writes', 15_000);
});
