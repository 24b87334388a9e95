/**
 * On two nodes with a real etcd: cluster settings set through one node are seen and applied by
 * the other (and by a node that restarts while the other stays up, transient ones included), and
 * the scroll id of a first page, sent to either node in turn, answers successive pages (the
 * position lives in the reader context) and then an empty page.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startEtcd, startEtcdNodes, type EtcdServer } from './etcd.fixture.ts';
import { call, ndjson, until, type TroveServer } from './harness.ts';

let etcd: EtcdServer | undefined;
let skipReason: string | undefined;
const nodes: TroveServer[] = [];
const COUNT = 250;

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
  await startEtcdNodes(etcd, 2, 'settings', nodes);
  const created = await call(nodes[0]!, 'PUT', '/spread', { json: { settings: { number_of_shards: 4 }, mappings: { properties: { n: { type: 'long' } } } } });
  assert.equal(created.status, 200, created.text);
  const lines: unknown[] = [];
  for (let i = 0; i < COUNT; i++) lines.push({ index: { _id: `d${i}` } }, { n: i });
  const loaded = await call(nodes[1]!, 'POST', '/spread/_bulk?refresh=true', { body: ndjson(lines), headers: { 'content-type': 'application/x-ndjson' } });
  assert.equal(loaded.body.errors, false, loaded.text.slice(0, 300));
  await green();
});

after(async () => {
  for (const node of nodes) await node.cleanup();
  await etcd?.cleanup();
});

test('cluster settings set through one node apply on the other, and on a node that restarts', async (t) => {
  if (skipReason) return t.skip(skipReason);
  const put = await call(nodes[0]!, 'PUT', '/_cluster/settings', { json: { persistent: { 'action.auto_create_index': false }, transient: { 'search.max_keep_alive_secs': 60 } } });
  assert.equal(put.status, 200, put.text);
  const expected = { persistent: { 'action.auto_create_index': 'false' }, transient: { 'search.max_keep_alive_secs': '60' } };
  await until(async () => {
    const seen = await call(nodes[1]!, 'GET', '/_cluster/settings?flat_settings=true');
    return JSON.stringify(seen.body) === JSON.stringify(expected) ? true : undefined;
  }, 'node 2 sees the cluster settings', 10_000);
  const refused = await call(nodes[1]!, 'PUT', '/missing/_doc/1', { json: { a: 1 } });
  assert.equal(refused.status, 404, refused.text);
  const tooLong = await call(nodes[1]!, 'POST', '/spread/_search?scroll=2m', { json: { size: 1 } });
  assert.equal(tooLong.status, 400, tooLong.text);
  assert.match(tooLong.body.error.reason, /It must be less than \(60s\)/);

  // Node 2 restarts while node 1 stays up: the cluster did not restart, so the transient settings stay.
  await nodes[1]!.restart();
  await green();
  assert.deepEqual((await call(nodes[1]!, 'GET', '/_cluster/settings?flat_settings=true')).body, expected);
  assert.equal((await call(nodes[1]!, 'POST', '/spread/_search?scroll=2m', { json: { size: 1 } })).status, 400);

  const reset = await call(nodes[1]!, 'PUT', '/_cluster/settings', { json: { persistent: { 'action.auto_create_index': null }, transient: { 'search.max_keep_alive_secs': null } } });
  assert.equal(reset.status, 200, reset.text);
  await until(async () => {
    const response = await call(nodes[0]!, 'PUT', '/made-now/_doc/1', { json: { a: 1 } });
    return response.status === 201 ? true : undefined;
  }, 'node 1 creates collections again', 10_000);
});

test('the first scroll id, sent to either node in turn, answers successive pages', async (t) => {
  if (skipReason) return t.skip(skipReason);
  const first = await call(nodes[0]!, 'POST', '/spread/_search?scroll=1m', { json: { size: 40, sort: [{ n: 'asc' }] } });
  assert.equal(first.status, 200, first.text);
  const values: number[] = first.body.hits.hits.map((hit: { _source: { n: number } }) => hit._source.n);
  for (let page = 1; page <= 7; page++) {
    const next = await call(nodes[page % 2]!, 'POST', '/_search/scroll', { json: { scroll: '1m', scroll_id: first.body._scroll_id } });
    assert.equal(next.status, 200, next.text);
    values.push(...next.body.hits.hits.map((hit: { _source: { n: number } }) => hit._source.n));
  }
  assert.deepEqual(values, Array.from({ length: COUNT }, (_, i) => i));
  const cleared = await call(nodes[1]!, 'DELETE', '/_search/scroll', { json: { scroll_id: first.body._scroll_id } });
  assert.deepEqual(cleared.body, { succeeded: true, num_freed: 4 });
});
