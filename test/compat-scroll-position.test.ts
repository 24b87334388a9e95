/**
 * Where a scroll stands lives in its server-side context, as in Elasticsearch and OpenSearch:
 * calling `_search/scroll` again and again with the id of the first page answers the next page
 * each time and then an empty one, whatever id of the scroll is used; calls at once with the same
 * id get different pages whose union is every document once; a cleared scroll is gone for every
 * id of it.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { call, ndjson, startServer, type TroveServer } from './harness.ts';

let server: TroveServer;
const COUNT = 53;

before(async () => {
  server = await startServer();
  const created = await call(server, 'PUT', '/paged', { json: { settings: { number_of_shards: 3 }, mappings: { properties: { n: { type: 'long' } } } } });
  assert.equal(created.status, 200, created.text);
  const lines: unknown[] = [];
  for (let i = 0; i < COUNT; i++) lines.push({ index: { _id: `d${i}` } }, { n: i });
  const loaded = await call(server, 'POST', '/paged/_bulk?refresh=true', { body: ndjson(lines), headers: { 'content-type': 'application/x-ndjson' } });
  assert.equal(loaded.body.errors, false, loaded.text.slice(0, 300));
});

after(async () => {
  await server?.cleanup();
});

test('the first scroll id, sent again and again, answers the next page each time and then an empty page', async () => {
  const first = await call(server, 'POST', '/paged/_search?scroll=1m', { json: { size: 10, sort: [{ n: 'asc' }] } });
  assert.equal(first.status, 200, first.text);
  const firstId: string = first.body._scroll_id;
  const seen: number[] = first.body.hits.hits.map((hit: { _source: { n: number } }) => hit._source.n);
  for (let page = 1; page <= 6; page++) {
    const next = await call(server, 'POST', '/_search/scroll', { json: { scroll: '1m', scroll_id: firstId } });
    assert.equal(next.status, 200, next.text);
    assert.equal(next.body._scroll_id, firstId, 'the id stays the same');
    const values = next.body.hits.hits.map((hit: { _source: { n: number } }) => hit._source.n);
    assert.deepEqual(values, Array.from({ length: Math.max(0, Math.min(10, COUNT - 10 * page)) }, (_, i) => 10 * page + i), `page ${page}`);
    seen.push(...values);
  }
  assert.deepEqual(seen, Array.from({ length: COUNT }, (_, i) => i));
  // Past the end it stays empty, with the GET form too.
  const again = await call(server, 'GET', `/_search/scroll?scroll_id=${firstId}`);
  assert.deepEqual([again.status, again.body.hits.hits.length], [200, 0]);
  const cleared = await call(server, 'DELETE', '/_search/scroll', { json: { scroll_id: firstId } });
  assert.deepEqual(cleared.body, { succeeded: true, num_freed: 3 });
  const gone = await call(server, 'POST', '/_search/scroll', { json: { scroll_id: firstId } });
  assert.equal(gone.status, 404);
  assert.equal(gone.body.error.type, 'search_context_missing_exception');
});

test('a scroll without a sort continues from its context too, and each scroll has its own position', async () => {
  const one = await call(server, 'POST', '/paged/_search?scroll=1m', { json: { size: 20, _source: false } });
  const two = await call(server, 'POST', '/paged/_search?scroll=1m', { json: { size: 20, _source: false } });
  assert.notEqual(one.body._scroll_id, two.body._scroll_id);
  const ids = (response: { body: { hits: { hits: Array<{ _id: string }> } } }): string[] => response.body.hits.hits.map((hit) => hit._id);
  const seenOne = ids(one);
  const seenTwo = ids(two);
  for (let round = 0; round < 5; round++) {
    seenOne.push(...ids(await call(server, 'POST', `/_search/scroll/${one.body._scroll_id}`)));
    if (round < 2) seenTwo.push(...ids(await call(server, 'POST', '/_search/scroll', { json: { scroll_id: two.body._scroll_id } })));
  }
  assert.equal(seenOne.length, COUNT);
  assert.equal(new Set(seenOne).size, COUNT);
  assert.equal(seenTwo.length, COUNT);
  assert.equal(new Set(seenTwo).size, COUNT);
  await call(server, 'DELETE', '/_search/scroll/_all');
});

test('calls at once with the same id get different pages: every document once', async () => {
  const first = await call(server, 'POST', '/paged/_search?scroll=1m', { json: { size: 4, sort: ['n'] } });
  const values: number[] = first.body.hits.hits.map((hit: { _source: { n: number } }) => hit._source.n);
  const pages = await Promise.all(Array.from({ length: 16 }, () => call(server, 'POST', '/_search/scroll', { json: { scroll_id: first.body._scroll_id } })));
  for (const page of pages) {
    assert.equal(page.status, 200, page.text);
    values.push(...page.body.hits.hits.map((hit: { _source: { n: number } }) => hit._source.n));
  }
  assert.equal(pages.filter((page) => page.body.hits.hits.length === 0).length, 3, 'three calls came after the end');
  assert.deepEqual([...values].sort((a, b) => a - b), Array.from({ length: COUNT }, (_, i) => i));
  await call(server, 'DELETE', '/_search/scroll', { json: { scroll_id: first.body._scroll_id } });
});
