/**
 * Sliced scroll and sliced point-in-time search end to end: the slices of one scroll or point in
 * time partition its documents (by shard with no more slices than shards, by a hash of `_id`
 * within a shard past that), so their union is every document exactly once and their totals add
 * up; and the validation errors as OpenSearch words them, `index.max_slices_per_scroll` included.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { call, ndjson, startServer, type TroveServer } from './harness.ts';

let server: TroveServer;
const COUNT = 300;

before(async () => {
  server = await startServer();
  const created = await call(server, 'PUT', '/sliced', { json: { settings: { number_of_shards: 3 }, mappings: { properties: { n: { type: 'long' } } } } });
  assert.equal(created.status, 200, created.text);
  const lines: unknown[] = [];
  for (let i = 0; i < COUNT; i++) lines.push({ index: { _id: `doc-${i}` } }, { n: i });
  const loaded = await call(server, 'POST', '/sliced/_bulk?refresh=true', { body: ndjson(lines), headers: { 'content-type': 'application/x-ndjson' } });
  assert.equal(loaded.body.errors, false, loaded.text.slice(0, 300));
});

after(async () => {
  await server?.cleanup();
});

/** Every id one sliced scroll returns, and its total. */
async function scrollSlice(id: number, max: number): Promise<{ ids: string[]; total: number }> {
  const first = await call(server, 'POST', '/sliced/_search?scroll=1m', { json: { size: 17, slice: { id, max }, track_total_hits: true, _source: false } });
  assert.equal(first.status, 200, first.text);
  const ids: string[] = first.body.hits.hits.map((hit: { _id: string }) => hit._id);
  for (let page = 0; page < COUNT; page++) {
    const next = await call(server, 'POST', '/_search/scroll', { json: { scroll: '1m', scroll_id: first.body._scroll_id } });
    assert.equal(next.status, 200, next.text);
    if (next.body.hits.hits.length === 0) break;
    ids.push(...next.body.hits.hits.map((hit: { _id: string }) => hit._id));
  }
  await call(server, 'DELETE', '/_search/scroll', { json: { scroll_id: first.body._scroll_id } });
  return { ids, total: first.body.hits.total.value };
}

/** Checks that slices' ids are every document once, and that each slice's total is its count. */
function assertPartition(slices: Array<{ ids: string[]; total: number }>, max: number): void {
  const all = slices.flatMap((slice) => slice.ids);
  assert.equal(new Set(all).size, all.length, `max ${max}: a document came in two slices (or twice in one)`);
  assert.equal(all.length, COUNT, `max ${max}: every document once`);
  for (const slice of slices) assert.equal(slice.total, slice.ids.length, `max ${max}: a slice's total is its documents`);
  assert.ok(slices.every((slice) => slice.ids.length > 0), `max ${max}: no slice is empty`);
}

test('sliced scrolls partition the documents, by shard and by _id within shards', async () => {
  for (const max of [2, 3, 5, 8]) {
    const slices = [];
    for (let id = 0; id < max; id++) slices.push(await scrollSlice(id, max));
    assertPartition(slices, max);
  }
});

test('sliced searches of a point in time partition it, paging with search_after', async () => {
  const created = await call(server, 'POST', '/sliced/_search/point_in_time?keep_alive=1m');
  assert.equal(created.status, 200, created.text);
  const pit = created.body.pit_id;
  // Written after the point in time opened: no slice sees it.
  await call(server, 'PUT', '/sliced/_doc/late?refresh=true', { json: { n: -1 } });
  for (const max of [2, 7]) {
    const slices = [];
    for (let id = 0; id < max; id++) {
      const ids: string[] = [];
      let total = -1;
      let searchAfter: unknown[] | undefined;
      for (let page = 0; page < COUNT; page++) {
        const body: Record<string, unknown> = { size: 23, pit: { id: pit }, slice: { id, max }, sort: [{ n: 'asc' }], track_total_hits: true, _source: false };
        if (searchAfter) body.search_after = searchAfter;
        const response = await call(server, 'POST', '/_search', { json: body });
        assert.equal(response.status, 200, response.text);
        total = response.body.hits.total.value;
        const hits = response.body.hits.hits;
        if (hits.length === 0) break;
        ids.push(...hits.map((hit: { _id: string }) => hit._id));
        searchAfter = hits.at(-1).sort;
      }
      slices.push({ ids, total });
    }
    assertPartition(slices, max);
  }
  await call(server, 'DELETE', '/sliced/_doc/late?refresh=true');
  await call(server, 'DELETE', '/_search/point_in_time', { json: { pit_id: [pit] } });
});

test('slice validation as OpenSearch words it, and index.max_slices_per_scroll', async () => {
  const cases: Array<[unknown, string, RegExp]> = [
    [{ id: 0, max: 1 }, 'illegal_argument_exception', /^max must be greater than 1$/],
    [{ id: 3, max: 3 }, 'illegal_argument_exception', /^max must be greater than id$/],
    [{ id: -1, max: 3 }, 'illegal_argument_exception', /^id must be greater than or equal to 0$/],
    [{ id: 0, max: 2, other: 1 }, 'parsing_exception', /unknown field \[other\]/],
    [{ id: 0, max: 2, field: 'n' }, 'illegal_argument_exception', /slices by \[_id\]/],
    [{ id: 0, max: 1025 }, 'illegal_argument_exception', /^The number of slices \[1025\] is too large\. It must be less than \[1024\]\. This limit can be set by changing the \[index\.max_slices_per_scroll\] index level setting\.$/],
  ];
  for (const [slice, type, reason] of cases) {
    const response = await call(server, 'POST', '/sliced/_search?scroll=1m', { json: { slice } });
    assert.equal(response.status, 400, `${JSON.stringify(slice)}: ${response.text}`);
    assert.equal(response.body.error.type, type, response.text);
    assert.match(response.body.error.reason, reason);
  }
  const plain = await call(server, 'POST', '/sliced/_search', { json: { slice: { id: 0, max: 2 } } });
  assert.equal(plain.status, 400, plain.text);
  assert.equal(plain.body.error.type, 'action_request_validation_exception');
  assert.match(plain.body.error.reason, /\[slice\] can only be used with \[scroll\] or \[point-in-time\] requests/);
  const raised = await call(server, 'PUT', '/sliced/_settings', { json: { index: { max_slices_per_scroll: 1025 } } });
  assert.equal(raised.status, 200, raised.text);
  const allowed = await call(server, 'POST', '/sliced/_search?scroll=1m', { json: { slice: { id: 1024, max: 1025 } } });
  assert.equal(allowed.status, 200, allowed.text);
  await call(server, 'DELETE', '/_search/scroll', { json: { scroll_id: allowed.body._scroll_id } });
});
