/**
 * Deep pagination end to end through real HTTP: scroll and point in time each page through 100k
 * documents of a 3-shard collection while a writer adds, updates (whole documents and inplace
 * fields) and deletes documents and a force merge runs, and see exactly the documents of their
 * open, with their content then: no repeat, no gap. Then the rest of the API: scroll ids and
 * sort values, `_doc` order, aggregations on the first page, `rest_total_hits_as_int`, clearing
 * (by id, `_all`), expiry, the node's context limit, point in time in both spellings (OpenSearch
 * and Elasticsearch) with `_shard_doc`, listing and deleting, and the 400s and 404s.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { call, ndjson, startServer, type TroveServer } from './harness.ts';

let server: TroveServer;
/** The big collection's documents as the test's writes left them (the writer below is its only writer). */
const bigModel = new Map<string, Record<string, unknown>>();
/** Rounds of concurrent writes so far (new document ids and values never repeat across writers). */
let writerRounds = 0;

const BIG = 'deep';
const BIG_COUNT = 100_000;
const MAPPINGS = { properties: { n: { type: 'long' }, tag: { type: 'keyword' }, v: { type: 'long' }, views: { type: 'long', inplace: true } } };

async function bulk(collection: string, lines: unknown[]): Promise<void> {
  const response = await call(server, 'POST', `/${collection}/_bulk`, { body: ndjson(lines), headers: { 'content-type': 'application/x-ndjson' } });
  assert.equal(response.status, 200, response.text.slice(0, 500));
  assert.equal(response.body.errors, false, response.text.slice(0, 500));
}

async function createCollection(collection: string, shards: number, count: number): Promise<void> {
  const created = await call(server, 'PUT', `/${collection}`, { json: { settings: { number_of_shards: shards }, mappings: MAPPINGS } });
  assert.equal(created.status, 200, created.text);
  const batch = 25_000;
  for (let start = 0; start < count; start += batch) {
    const lines: unknown[] = [];
    for (let i = start; i < Math.min(count, start + batch); i++) lines.push({ index: { _id: `d${i}` } }, { n: i, tag: i % 3 === 0 ? 'three' : 'other', v: 0, views: i });
    await bulk(collection, lines);
  }
  if (collection === BIG) for (let i = 0; i < count; i++) bigModel.set(`d${i}`, { n: i, tag: i % 3 === 0 ? 'three' : 'other', v: 0, views: i });
}

before(async () => {
  server = await startServer();
  await createCollection(BIG, 3, BIG_COUNT);
  await createCollection('small', 2, 50);
});

after(async () => {
  await server?.cleanup();
});

/**
 * Writes until `stop()`: new documents, whole-document updates (`v: 1`), inplace updates of
 * `views` and deletes of original documents, and one force merge down to one segment.
 */
function concurrentWriter(collection: string): { stop: () => Promise<{ writes: number; merged: boolean }> } {
  let running = true;
  let writes = 0;
  let round = 0;
  let merged = false;
  const loop = (async () => {
    while (running) {
      const lines: unknown[] = [];
      const applied: Array<() => void> = [];
      for (let i = 0; i < 200; i++) {
        const victim = `d${(round * 7919 + i * 104_729) % BIG_COUNT}`;
        const added = `new-${writerRounds}-${i}`;
        const source = { n: BIG_COUNT + writerRounds * 200 + i, tag: 'three', v: 1, views: 0 };
        lines.push({ index: { _id: added } }, source);
        applied.push(() => bigModel.set(added, source));
        if (i % 4 === 0) {
          const replaced = { n: Number(victim.slice(1)), tag: 'three', v: 1, views: -1 };
          lines.push({ index: { _id: victim } }, replaced);
          applied.push(() => bigModel.set(victim, replaced));
        } else if (i % 4 === 1) {
          lines.push({ update: { _id: victim } }, { doc: { views: -5 } });
          applied.push(() => {
            const current = bigModel.get(victim);
            if (current) bigModel.set(victim, { ...current, views: -5 });
          });
        } else if (i % 4 === 2) {
          lines.push({ delete: { _id: victim } });
          applied.push(() => bigModel.delete(victim));
        }
      }
      writerRounds++;
      const response = await call(server, 'POST', `/${collection}/_bulk`, { body: ndjson(lines), headers: { 'content-type': 'application/x-ndjson' } });
      assert.equal(response.status, 200, response.text.slice(0, 300));
      for (const apply of applied) apply();
      writes += 350;
      round++;
      if (round === 3) {
        const merge = await call(server, 'POST', `/${collection}/_forcemerge?max_num_segments=1`);
        assert.equal(merge.status, 200, merge.text);
        merged = true;
      }
    }
  })();
  return {
    stop: async () => {
      running = false;
      await loop;
      return { writes, merged };
    },
  };
}

/** Checks that `seen` is exactly the documents of the open (`expected`), each once, with its content of then. */
function assertSnapshot(seen: Map<string, Record<string, unknown>>, duplicates: string[], expected: ReadonlyMap<string, Record<string, unknown>>): void {
  assert.deepEqual(duplicates.slice(0, 5), [], `${duplicates.length} documents came twice`);
  assert.equal(seen.size, expected.size);
  for (const [id, source] of expected) {
    const found = seen.get(id);
    assert.ok(found, `${id} is missing`);
    if (JSON.stringify(found) !== JSON.stringify(source)) assert.fail(`${id} is ${JSON.stringify(found)}, was ${JSON.stringify(source)} at the open`);
  }
}

test('a scroll pages through 100k documents exactly as they were, while writes and a force merge go on', { timeout: 120_000 }, async () => {
  const started = Date.now();
  const first = await call(server, 'POST', `/${BIG}/_search?scroll=1m`, { json: { size: 2000, query: { match_all: {} } } });
  assert.equal(first.status, 200, first.text);
  const expected = new Map(bigModel);
  const writer = concurrentWriter(BIG);
  const seen = new Map<string, Record<string, unknown>>();
  const duplicates: string[] = [];
  let page = first.body;
  let pages = 0;
  while (page.hits.hits.length > 0) {
    assert.equal(Object.keys(page)[0], '_scroll_id');
    for (const hit of page.hits.hits) {
      if (seen.has(hit._id)) duplicates.push(hit._id);
      seen.set(hit._id, hit._source);
      assert.equal(hit.sort, undefined, 'a scroll without a sort shows no sort values');
    }
    pages++;
    const next = await call(server, 'POST', '/_search/scroll', { json: { scroll: '1m', scroll_id: page._scroll_id } });
    assert.equal(next.status, 200, next.text);
    page = next.body;
  }
  const { writes, merged } = await writer.stop();
  assert.ok(merged, 'the force merge ran during the scroll');
  assert.ok(writes > 1000, `writes during the scroll: ${writes}`);
  assert.equal(pages, BIG_COUNT / 2000);
  assert.deepEqual(page.hits.total, { value: 10_000, relation: 'gte' });
  assertSnapshot(seen, duplicates, expected);
  const cleared = await call(server, 'DELETE', '/_search/scroll', { json: { scroll_id: page._scroll_id } });
  assert.deepEqual(cleared.body, { succeeded: true, num_freed: 3 });
  console.log(`scroll of ${BIG_COUNT} documents with ${writes} concurrent writes: ${Date.now() - started} ms`);
});

test('a point in time pages through 100k documents with search_after exactly as they were, while writes and a force merge go on', { timeout: 120_000 }, async () => {
  const started = Date.now();
  const created = await call(server, 'POST', `/${BIG}/_search/point_in_time?keep_alive=1m`);
  assert.equal(created.status, 200, created.text);
  const pitId = created.body.pit_id;
  const expected = new Map(bigModel);
  assert.equal(typeof pitId, 'string');
  assert.deepEqual(created.body._shards, { total: 3, successful: 3, skipped: 0, failed: 0 });
  const writer = concurrentWriter(BIG);
  const seen = new Map<string, Record<string, unknown>>();
  const duplicates: string[] = [];
  let searchAfter: unknown[] | undefined;
  let previousN = -1;
  for (;;) {
    const body: Record<string, unknown> = { size: 2500, pit: { id: pitId, keep_alive: '1m' }, sort: [{ n: 'asc' }], track_total_hits: true };
    if (searchAfter) body.search_after = searchAfter;
    const response = await call(server, 'POST', '/_search', { json: body });
    assert.equal(response.status, 200, response.text);
    assert.equal(response.body.pit_id, pitId);
    assert.equal(response.body.hits.total.value, expected.size, 'the total is the snapshot\'s');
    const hits = response.body.hits.hits;
    if (hits.length === 0) break;
    for (const hit of hits) {
      if (seen.has(hit._id)) duplicates.push(hit._id);
      seen.set(hit._id, hit._source);
      assert.equal(hit.sort.length, 2, 'sort values end with the _shard_doc tiebreaker');
      assert.ok(hit.sort[0] > previousN, `sorted by n: ${hit.sort[0]} after ${previousN}`);
      previousN = hit.sort[0];
    }
    searchAfter = hits.at(-1).sort;
  }
  const { merged } = await writer.stop();
  assert.ok(merged, 'the force merge ran during the paging');
  assertSnapshot(seen, duplicates, expected);
  const deleted = await call(server, 'DELETE', '/_search/point_in_time', { json: { pit_id: [pitId] } });
  assert.deepEqual(deleted.body, { pits: [{ successful: true, pit_id: pitId }] });
  // The live collection did change.
  const live = await call(server, 'POST', `/${BIG}/_count`, { json: { query: { term: { v: 1 } } } });
  assert.ok(live.body.count > 0);
  console.log(`point in time over ${BIG_COUNT} documents with concurrent writes: ${Date.now() - started} ms`);
});

test('scroll: sort values, _doc order, aggregations on the first page only, rest_total_hits_as_int, GET forms', async () => {
  const first = await call(server, 'POST', '/small/_search?scroll=30s&rest_total_hits_as_int=true', {
    json: { size: 20, sort: [{ n: 'desc' }], aggs: { tags: { terms: { field: 'tag' } } } },
  });
  assert.equal(first.status, 200, first.text);
  assert.equal(first.body.hits.total, 50);
  assert.deepEqual(first.body.hits.hits.map((hit: { sort: unknown[] }) => hit.sort), Array.from({ length: 20 }, (_, i) => [49 - i]));
  assert.ok(first.body.aggregations.tags.buckets.length > 0);
  const second = await call(server, 'GET', `/_search/scroll?scroll=30s&scroll_id=${first.body._scroll_id}&rest_total_hits_as_int=true`);
  assert.equal(second.status, 200, second.text);
  assert.equal(second.body.hits.total, 50);
  assert.equal(second.body.aggregations, undefined);
  assert.deepEqual(second.body.hits.hits.map((hit: { _source: { n: number } }) => hit._source.n), Array.from({ length: 20 }, (_, i) => 29 - i));
  const third = await call(server, 'POST', `/_search/scroll/${second.body._scroll_id}`);
  assert.equal(third.status, 200, third.text);
  assert.deepEqual(third.body.hits.hits.map((hit: { _source: { n: number } }) => hit._source.n), Array.from({ length: 10 }, (_, i) => 9 - i));
  assert.equal((await call(server, 'POST', '/_search/scroll', { json: { scroll_id: third.body._scroll_id } })).body.hits.hits.length, 0);
  await call(server, 'DELETE', `/_search/scroll/${third.body._scroll_id}`);

  const byDoc = await call(server, 'POST', '/small/_search?scroll=30s', { json: { size: 15, sort: ['_doc'], _source: false } });
  const ids: string[] = byDoc.body.hits.hits.map((hit: { _id: string }) => hit._id);
  let scrollId = byDoc.body._scroll_id;
  for (;;) {
    const next = await call(server, 'POST', '/_search/scroll', { json: { scroll_id: scrollId } });
    if (next.body.hits.hits.length === 0) break;
    ids.push(...next.body.hits.hits.map((hit: { _id: string }) => hit._id));
    scrollId = next.body._scroll_id;
  }
  assert.equal(new Set(ids).size, 50);
  assert.equal(ids.length, 50);
  await call(server, 'DELETE', '/_search/scroll', { json: { scroll_id: [scrollId] } });
});

test('scroll: clear by id and _all, expiry, the node limit, and the errors', async () => {
  const open = async (keepAlive = '1m'): Promise<string> => {
    const response = await call(server, 'POST', `/small/_search?scroll=${keepAlive}`, { json: { size: 5 } });
    assert.equal(response.status, 200, response.text);
    return response.body._scroll_id;
  };
  const scrollId = await open();
  const cleared = await call(server, 'DELETE', '/_search/scroll', { json: { scroll_id: scrollId } });
  assert.deepEqual([cleared.status, cleared.body], [200, { succeeded: true, num_freed: 2 }]);
  const again = await call(server, 'DELETE', '/_search/scroll', { json: { scroll_id: scrollId } });
  assert.deepEqual([again.status, again.body], [404, { succeeded: true, num_freed: 0 }]);
  const gone = await call(server, 'POST', '/_search/scroll', { json: { scroll_id: scrollId } });
  assert.equal(gone.status, 404);
  assert.equal(gone.body.error.type, 'search_context_missing_exception');

  await open();
  await open();
  const all = await call(server, 'DELETE', '/_search/scroll/_all');
  assert.deepEqual(all.body, { succeeded: true, num_freed: 4 });

  const short = await open('1s');
  await sleep(1600);
  const expired = await call(server, 'POST', '/_search/scroll', { json: { scroll_id: short } });
  assert.equal(expired.status, 404);
  assert.equal(expired.body.error.type, 'search_context_missing_exception');

  const limited = await call(server, 'PUT', '/_node/_local/settings', { json: { 'search.max_open_scroll_context': 3 } });
  assert.equal(limited.status, 200, limited.text);
  try {
    const kept = await open();
    const refused = await call(server, 'POST', '/small/_search?scroll=1m', { json: { size: 5 } });
    assert.equal(refused.status, 429, refused.text);
    assert.equal(refused.body.error.type, 'too_many_scroll_contexts_exception');
    assert.match(refused.body.error.reason, /Trying to create too many scroll contexts. Must be less than or equal to: \[3\]/);
    // The refused open left nothing behind: after clearing the first, one fits again.
    await call(server, 'DELETE', '/_search/scroll', { json: { scroll_id: kept } });
    await call(server, 'DELETE', '/_search/scroll', { json: { scroll_id: await open() } });
  } finally {
    await call(server, 'PUT', '/_node/_local/settings', { json: { 'search.max_open_scroll_context': null } });
  }

  const errors: Array<[string, string, unknown, number, string]> = [
    ['POST', '/small/_search?scroll=1m', { from: 5 }, 400, 'action_request_validation_exception'],
    ['POST', '/small/_search?scroll=1m', { sort: ['n'], search_after: [3] }, 400, 'action_request_validation_exception'],
    ['POST', '/small/_search?scroll=2d', {}, 400, 'illegal_argument_exception'],
    ['POST', '/small/_search?scroll=soon', {}, 400, 'parsing_exception'],
    ['POST', '/_search/scroll', { scroll_id: 'not-a-scroll-id' }, 400, 'illegal_argument_exception'],
    ['POST', '/_search/scroll', {}, 400, 'action_request_validation_exception'],
    ['DELETE', '/_search/scroll', { scroll_id: '%%%' }, 400, 'illegal_argument_exception'],
  ];
  for (const [method, path, json, status, type] of errors) {
    const response = await call(server, method, path, { json });
    assert.equal(response.status, status, `${method} ${path} ${JSON.stringify(json)}: ${response.text}`);
    assert.equal(response.body.error.type, type, `${path}: ${response.text}`);
  }
});

test('point in time: Elasticsearch and OpenSearch forms, _shard_doc paging, listing, deleting and errors', async () => {
  const es = await call(server, 'POST', '/small/_pit?keep_alive=1m');
  assert.equal(es.status, 200, es.text);
  assert.deepEqual(Object.keys(es.body), ['id', '_shards']);
  // A document written after the open is not seen; one deleted still is.
  await call(server, 'PUT', '/small/_doc/late?refresh=true', { json: { n: 1000, tag: 'late', v: 0, views: 0 } });
  await call(server, 'DELETE', '/small/_doc/d0?refresh=true');
  const ids: string[] = [];
  let searchAfter: unknown[] | undefined;
  let lastShardDoc = -1;
  for (;;) {
    const response = await call(server, 'POST', '/_search', { json: { size: 7, pit: { id: es.body.id }, sort: ['_shard_doc'], ...(searchAfter ? { search_after: searchAfter } : {}) } });
    assert.equal(response.status, 200, response.text);
    const hits = response.body.hits.hits;
    if (hits.length === 0) break;
    for (const hit of hits) {
      assert.equal(hit.sort.length, 1);
      assert.ok(hit.sort[0] > lastShardDoc);
      lastShardDoc = hit.sort[0];
      ids.push(hit._id);
    }
    searchAfter = hits.at(-1).sort;
  }
  assert.equal(ids.length, 50);
  assert.ok(ids.includes('d0') && !ids.includes('late'));
  assert.ok(lastShardDoc >= 2 ** 32, 'the second shard\'s _shard_doc values start at 2^32');
  const scored = await call(server, 'POST', '/_search', { json: { size: 3, pit: { id: es.body.id, keep_alive: '2m' }, query: { term: { tag: 'three' } } } });
  assert.equal(scored.body.hits.hits[0].sort.length, 2, 'a search without a sort is sorted by _score then _shard_doc');
  // _msearch items read a point in time too; a header naming a collection fails its own item only.
  const multi = await call(server, 'POST', '/_msearch', {
    body: ndjson([{}, { size: 100, pit: { id: es.body.id }, query: { match_all: {} } }, { index: 'small' }, { pit: { id: es.body.id } }, {}, { size: 0, query: { match_all: {} } }]),
    headers: { 'content-type': 'application/x-ndjson' },
  });
  assert.equal(multi.status, 200, multi.text);
  const [onPit, named, plain] = multi.body.responses;
  assert.equal(onPit.status, 200, JSON.stringify(onPit));
  assert.equal(onPit.pit_id, es.body.id);
  const pitIds = onPit.hits.hits.map((hit: { _id: string }) => hit._id);
  assert.equal(pitIds.length, 50);
  assert.ok(pitIds.includes('d0') && !pitIds.includes('late'), 'the item reads the snapshot');
  assert.deepEqual([named.status, named.error.type], [400, 'action_request_validation_exception']);
  assert.equal(plain.status, 200);
  const closed = await call(server, 'DELETE', '/_pit', { json: { id: es.body.id } });
  assert.deepEqual([closed.status, closed.body], [200, { succeeded: true, num_freed: 2 }]);
  const closedAgain = await call(server, 'DELETE', '/_pit', { json: { id: es.body.id } });
  assert.deepEqual([closedAgain.status, closedAgain.body], [404, { succeeded: true, num_freed: 0 }]);
  const missing = await call(server, 'POST', '/_search', { json: { pit: { id: es.body.id } } });
  assert.equal(missing.status, 404);
  assert.equal(missing.body.error.type, 'search_context_missing_exception');

  const one = await call(server, 'POST', '/small/_search/point_in_time?keep_alive=1m');
  const two = await call(server, 'POST', '/small,deep/_search/point_in_time?keep_alive=2m');
  assert.equal(two.body._shards.total, 5);
  const listed = await call(server, 'GET', '/_search/point_in_time/_all');
  assert.equal(listed.status, 200, listed.text);
  const listedIds = listed.body.pits.map((pit: { pit_id: string }) => pit.pit_id).sort();
  assert.deepEqual(listedIds, [one.body.pit_id, two.body.pit_id].sort());
  for (const pit of listed.body.pits) {
    assert.equal(typeof pit.creation_time, 'number');
    assert.ok([60_000, 120_000].includes(pit.keep_alive));
  }
  const both = await call(server, 'POST', '/_search', { json: { size: 0, pit: { id: two.body.pit_id }, track_total_hits: true } });
  assert.ok(both.body.hits.total.value >= BIG_COUNT);
  const deleteOne = await call(server, 'DELETE', '/_search/point_in_time', { json: { pit_id: one.body.pit_id } });
  assert.deepEqual(deleteOne.body, { pits: [{ successful: true, pit_id: one.body.pit_id }] });
  const deleteAll = await call(server, 'DELETE', '/_search/point_in_time/_all');
  assert.deepEqual(deleteAll.body, { pits: [{ successful: true, pit_id: two.body.pit_id }] });
  assert.deepEqual((await call(server, 'GET', '/_search/point_in_time/_all')).body, { pits: [] });

  const valid = (await call(server, 'POST', '/small/_pit?keep_alive=1m')).body.id;
  const errors: Array<[string, string, unknown, number, string]> = [
    ['POST', '/small/_pit', undefined, 400, 'action_request_validation_exception'],
    ['POST', '/small/_search/point_in_time?keep_alive=48h', undefined, 400, 'illegal_argument_exception'],
    ['POST', '/nope/_pit?keep_alive=1m', undefined, 404, 'index_not_found_exception'],
    ['POST', '/_search', { pit: { id: 'bad id' } }, 400, 'illegal_argument_exception'],
    ['POST', '/_search', { pit: { id: valid, other: 1 } }, 400, 'parsing_exception'],
    ['POST', '/small/_search', { pit: { id: valid } }, 400, 'action_request_validation_exception'],
    ['POST', '/_search?scroll=1m', { pit: { id: valid } }, 400, 'action_request_validation_exception'],
    ['POST', '/small/_search?scroll=1m', { collapse: { field: 'tag' } }, 400, 'action_request_validation_exception'],
    ['POST', '/small/_search?scroll=1m&request_cache=true', {}, 400, 'action_request_validation_exception'],
    ['POST', '/small/_search?scroll=1m', { size: 0 }, 400, 'action_request_validation_exception'],
    ['POST', '/small/_search', { sort: ['_shard_doc'] }, 400, 'action_request_validation_exception'],
    ['DELETE', '/_search/point_in_time', {}, 400, 'action_request_validation_exception'],
  ];
  for (const [method, path, json, status, type] of errors) {
    const response = await call(server, method, path, json === undefined ? {} : { json });
    assert.equal(response.status, status, `${method} ${path} ${JSON.stringify(json)}: ${response.text}`);
    assert.equal(response.body.error.type, type, `${path}: ${response.text}`);
  }
  const twoProblems = await call(server, 'POST', '/small/_search?scroll=1m&request_cache=true', { json: { size: 0 } });
  assert.equal(twoProblems.body.error.reason, 'Validation Failed: 1: [request_cache] cannot be used in a scroll context;2: [size] cannot be [0] in a scroll context;', 'every problem, numbered');
  await call(server, 'DELETE', '/_pit', { json: { id: valid } });
});

test('the OpenSearch client: search with scroll, scroll, clearScroll, the scrollDocuments helper, and the point-in-time calls', async () => {
  const { Client } = await import('@opensearch-project/opensearch');
  const client = new Client({ node: server.url });
  try {
    const first = await client.search({ index: 'small', scroll: '30s', size: 20, body: { sort: [{ n: 'asc' }] } });
    const ids: string[] = first.body.hits.hits.map((hit) => String(hit._id));
    let scrollId = first.body._scroll_id!;
    for (;;) {
      const next = await client.scroll({ scroll_id: scrollId, scroll: '30s' });
      if (next.body.hits.hits.length === 0) break;
      ids.push(...next.body.hits.hits.map((hit) => String(hit._id)));
      scrollId = next.body._scroll_id!;
    }
    const cleared = await client.clearScroll({ body: { scroll_id: [scrollId] } });
    assert.deepEqual(cleared.body, { succeeded: true, num_freed: 2 });
    const expected = (await call(server, 'POST', '/small/_search', { json: { size: 100, sort: [{ n: 'asc' }], _source: false } })).body.hits.hits.map((hit: { _id: string }) => hit._id);
    assert.deepEqual(ids, expected);

    const helped: string[] = [];
    for await (const document of client.helpers.scrollDocuments<{ n: number }>({ index: 'small', size: 7, body: { query: { match_all: {} } } })) helped.push(String(document.n));
    assert.equal(new Set(helped).size, expected.length);

    const pit = await client.createPit({ index: ['small'], keep_alive: '1m' });
    const pitId = pit.body.pit_id!;
    const listed = await client.getAllPits();
    assert.ok(listed.body.pits!.some((entry: { pit_id?: string }) => entry.pit_id === pitId));
    const page = await client.search({ body: { size: 5, pit: { id: pitId, keep_alive: '1m' }, sort: [{ n: 'desc' }] } });
    assert.equal(page.body.hits.hits.length, 5);
    assert.equal(page.body.pit_id, pitId);
    const deleted = await client.deletePit({ body: { pit_id: [pitId] } });
    assert.deepEqual(deleted.body.pits, [{ successful: true, pit_id: pitId }]);
    await client.createPit({ index: ['small'], keep_alive: '1m' });
    const all = await client.deleteAllPits();
    assert.equal(all.body.pits!.length, 1);
  } finally {
    await client.close();
  }
});

test('_update_by_query reads a snapshot: each document of its start is updated once while documents are added and a force merge runs', async () => {
  const count = 3000;
  const created = await call(server, 'PUT', '/byq', { json: { settings: { number_of_shards: 3 }, mappings: MAPPINGS } });
  assert.equal(created.status, 200, created.text);
  const lines: unknown[] = [];
  for (let i = 0; i < count; i++) lines.push({ index: { _id: `d${i}` } }, { n: i, tag: 'three', v: 0, views: i });
  await bulk('byq', lines);
  const running = call(server, 'POST', '/byq/_update_by_query?scroll_size=100&requests_per_second=2000', { json: { query: { term: { tag: 'three' } }, ops: [{ op: 'incr', field: 'views', value: 1 }] } });
  for (let round = 0; round < 5; round++) {
    await sleep(150);
    const added: unknown[] = [];
    for (let i = 0; i < 100; i++) added.push({ index: { _id: `late-${round}-${i}` } }, { n: count + round * 100 + i, tag: 'three', v: 1, views: 0 });
    await bulk('byq', added);
    if (round === 2) assert.equal((await call(server, 'POST', '/byq/_forcemerge?max_num_segments=1')).status, 200);
  }
  const response = await running;
  assert.equal(response.status, 200, response.text);
  assert.equal(response.body.total, count);
  assert.equal(response.body.updated, count);
  assert.equal(response.body.version_conflicts, 0);
  const all = await call(server, 'POST', '/byq/_search', { json: { size: 10_000, track_total_hits: true } });
  assert.equal(all.body.hits.total.value, count + 500);
  for (const hit of all.body.hits.hits) {
    const expected = hit._id.startsWith('late-') ? 0 : hit._source.n + 1;
    assert.equal(hit._source.views, expected, `${hit._id}: ${JSON.stringify(hit._source)}`);
  }
  // The run cleared its scroll (every other test cleared its own, or let it expire).
  assert.deepEqual((await call(server, 'DELETE', '/_search/scroll/_all')).body, { succeeded: true, num_freed: 0 });
});
