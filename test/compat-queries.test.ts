/**
 * The queries of the search-compatibility issue through real HTTP: dis_max, boosting, wildcard,
 * regexp, match_bool_prefix, match_phrase_prefix and the multi_match types most_fields,
 * phrase_prefix, bool_prefix and cross_fields — in search, count, `_validate/query`, `bool`
 * clauses and filter aggregations, on a one-shard and a three-shard copy of the same books; their
 * 400s; one search through the OpenSearch JS client.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { Client } from '@opensearch-project/opensearch';
import { call, startServer, type TroveServer } from './harness.ts';
import { idsOnOneAndThreeShards, loadShardedCollections, searchHits } from './sharded-collections.ts';

let server: TroveServer;
let client: Client;

const BOOKS = [
  { title: 'The Quick Brown Fox', summary: 'a fox jumps over a lazy dog', author: 'Ann Smith', code: 'FX-101', genre: 'fable' },
  { title: 'Quick Brownies', summary: 'baking brownies quickly', author: 'Bob Jones', code: 'BK-202', genre: 'cooking' },
  { title: 'Brown Bears of the North', summary: 'bears and a quick fox', author: 'Ann Jones', code: 'NT-303', genre: 'nature' },
  { title: 'Lazy Afternoons', summary: 'slow reading', author: 'Cy Smith', code: 'LZ-404', genre: 'essay' },
  { title: 'Endless', summary: 'long code', author: 'Di Long', code: 'a'.repeat(10_000), genre: 'test' },
];

before(async () => {
  server = await startServer();
  client = new Client({ node: server.url });
  const mappings = {
    properties: { title: { type: 'text' }, summary: { type: 'text' }, author: { type: 'text' }, code: { type: 'keyword' }, genre: { type: 'keyword' } },
  };
  await loadShardedCollections(server, [['books', 1], ['books3', 3]], mappings, BOOKS);
});

after(async () => {
  await client?.close();
  await server?.cleanup();
});

async function score(query: unknown, id: string): Promise<number> {
  const hit = (await searchHits(server, query)).find((candidate) => candidate._id === id);
  assert.ok(hit, `${id} should match ${JSON.stringify(query)}`);
  return hit._score;
}

test('dis_max: the best clause plus tie_breaker times the others, in score order', async () => {
  const title = { match: { title: 'quick fox' } };
  const summary = { match: { summary: 'quick fox' } };
  const best = await searchHits(server, { dis_max: { queries: [title, summary], tie_breaker: 0.3 } });
  assert.deepEqual(best.map((hit) => hit._id).sort(), ['b1', 'b2', 'b3']);
  const [titleScore, summaryScore] = [await score(title, 'b1'), await score(summary, 'b1')];
  const expected = Math.max(titleScore, summaryScore) + 0.3 * Math.min(titleScore, summaryScore);
  assert.ok(Math.abs(best.find((hit) => hit._id === 'b1')!._score - expected) < 1e-4);
  assert.equal(best[0]!._id, 'b1', 'the doc matching both fields best leads');
  assert.deepEqual(await idsOnOneAndThreeShards(server, { bool: { must: { dis_max: { queries: [title, summary] } }, filter: { term: { genre: 'nature' } } } }), ['b3']);
});

test('boosting demotes the documents matching negative', async () => {
  const positive = { match: { title: 'quick' } };
  const plain = await searchHits(server, positive);
  assert.equal(plain[0]!._id, 'b2', 'the shorter title scores higher on its own');
  const boosted = await searchHits(server, { boosting: { positive, negative: { term: { genre: 'cooking' } }, negative_boost: 0.1 } });
  assert.deepEqual(boosted.map((hit) => hit._id), ['b1', 'b2']);
  assert.ok(Math.abs(boosted[1]!._score - plain[0]!._score * 0.1) < 1e-4);
  assert.deepEqual(await idsOnOneAndThreeShards(server, { boosting: { positive, negative: { term: { genre: 'cooking' } }, negative_boost: 0.1 } }), ['b1', 'b2']);
});

test('wildcard and regexp on keyword and text fields, in search, count, bool and filter aggregations', async () => {
  assert.deepEqual(await idsOnOneAndThreeShards(server, { wildcard: { code: 'FX-*' } }), ['b1']);
  assert.deepEqual(await idsOnOneAndThreeShards(server, { wildcard: { code: { value: 'fx-1?1', case_insensitive: true } } }), ['b1']);
  assert.deepEqual(await idsOnOneAndThreeShards(server, { wildcard: { title: { wildcard: 'BROWN*' } } }), ['b1', 'b2', 'b3']);
  assert.deepEqual(await idsOnOneAndThreeShards(server, { regexp: { code: '[A-Z]{2}-[0-3]0[0-9]' } }), ['b1', 'b2', 'b3']);
  assert.deepEqual(await idsOnOneAndThreeShards(server, { regexp: { code: { value: 'lz-<400-499>', case_insensitive: true, flags: 'INTERVAL' } } }), ['b4']);
  assert.deepEqual(await idsOnOneAndThreeShards(server, { regexp: { title: 'brown(ies)?' } }), ['b1', 'b2', 'b3']);
  assert.deepEqual(await idsOnOneAndThreeShards(server, { bool: { should: [{ wildcard: { code: 'NT*' } }, { regexp: { code: 'LZ.*' } }], must_not: { term: { genre: 'essay' } } } }), ['b3']);
  const count = await call(server, 'POST', '/books3/_count', { json: { query: { wildcard: { code: '*0*' } } } });
  assert.equal(count.body.count, 4, count.text);
  const aggregated = await call(server, 'POST', '/books3/_search', {
    json: { size: 0, aggs: { coded: { filter: { regexp: { code: '[A-Z]+-[0-9]+' } } } } },
  });
  assert.equal(aggregated.status, 200, aggregated.text);
  assert.equal(aggregated.body.aggregations.coded.doc_count, 4);
});

test('patterns that would backtrack exponentially run in one pass over a 10k-character term', async () => {
  assert.deepEqual(await idsOnOneAndThreeShards(server, { wildcard: { code: '*a*a*a*a*a*a*a*b' } }), []);
  assert.deepEqual(await idsOnOneAndThreeShards(server, { wildcard: { code: '*a*a*a*a*a*a*a*' } }), ['b5']);
  assert.deepEqual(await idsOnOneAndThreeShards(server, { regexp: { code: '(a+)+b' } }), []);
});

test('match_bool_prefix, match_phrase_prefix and the multi_match types', async () => {
  assert.deepEqual(await idsOnOneAndThreeShards(server, { match_bool_prefix: { title: 'fox bro' } }), ['b1', 'b2', 'b3']);
  assert.deepEqual(await idsOnOneAndThreeShards(server, { match_bool_prefix: { title: { query: 'quick bro', operator: 'and' } } }), ['b1', 'b2']);
  assert.deepEqual(await idsOnOneAndThreeShards(server, { match_phrase_prefix: { title: 'quick brown f' } }), ['b1']);
  assert.deepEqual(await idsOnOneAndThreeShards(server, { match_phrase_prefix: { title: { query: 'quick bro', max_expansions: 10 } } }), ['b1', 'b2']);
  assert.deepEqual(await idsOnOneAndThreeShards(server, { multi_match: { query: 'quick fox', fields: ['title', 'summary'], type: 'most_fields' } }), ['b1', 'b2', 'b3']);
  assert.deepEqual(await idsOnOneAndThreeShards(server, { multi_match: { query: 'a quick f', fields: ['title', 'summary'], type: 'phrase_prefix' } }), ['b3']);
  assert.deepEqual(await idsOnOneAndThreeShards(server, { multi_match: { query: 'baking qui', fields: ['title', 'summary'], type: 'bool_prefix', operator: 'and' } }), ['b2']);
  assert.deepEqual(await idsOnOneAndThreeShards(server, { multi_match: { query: 'ann smith', fields: ['author', 'title'], type: 'cross_fields', operator: 'and' } }), ['b1']);
  assert.deepEqual(await idsOnOneAndThreeShards(server, { multi_match: { query: 'bears jones', fields: ['author', 'title^2'], type: 'cross_fields', operator: 'and' } }), ['b3']);
});

test('_validate/query knows the new queries', async () => {
  const valid = await call(server, 'POST', '/books/_validate/query', { json: { query: { boosting: { positive: { wildcard: { code: 'a*' } }, negative: { regexp: { code: 'b.*' } }, negative_boost: 0.5 } } } });
  assert.equal(valid.body.valid, true, valid.text);
  const invalid = await call(server, 'POST', '/books/_validate/query?explain=true', { json: { query: { regexp: { code: 'a(b' } } } });
  assert.equal(invalid.body.valid, false, invalid.text);
  assert.match(invalid.text, /expected '\)' at position 3/);
});

test('bad input is a 400 with the ES error type', async () => {
  const cases: Array<[unknown, string, RegExp]> = [
    [{ regexp: { code: '[ab]*a[ab]{20}' } }, 'too_complex_to_determinize_exception', /would result in more than 10000 states/],
    [{ wildcard: { code: `*a${'?'.repeat(20)}` } }, 'too_complex_to_determinize_exception', /more than 10000 states/],
    [{ regexp: { code: 'a'.repeat(1001) } }, 'illegal_argument_exception', /index\.max_regex_length/],
    [{ regexp: { code: { value: 'a', flags: 'SOMETIMES' } } }, 'parsing_exception', /Unknown regexp flag \[SOMETIMES\]/],
    [{ regexp: { code: 'a~b' } }, 'parsing_exception', /complement operator/],
    [{ boosting: { positive: { match_all: {} }, negative: { match_all: {} } } }, 'parsing_exception', /negative_boost/],
    [{ dis_max: { queries: [{ match_all: {} }], tie_breaker: 2 } }, 'parsing_exception', /tie_breaker/],
    [{ multi_match: { query: 'x', type: 'bool_prefix', slop: 2 } }, 'parsing_exception', /\[slop\] not allowed for type \[bool_prefix\]/],
    [{ wildcard: { code: { value: 'a*', speed: 'fast' } } }, 'parsing_exception', /unknown field \[speed\]/],
  ];
  for (const [query, type, reason] of cases) {
    for (const collection of ['books', 'books3']) {
      const response = await call(server, 'POST', `/${collection}/_search`, { json: { query } });
      assert.equal(response.status, 400, `${collection} ${JSON.stringify(query).slice(0, 80)}: ${response.text}`);
      assert.equal(response.body.error.type, type, response.text);
      assert.match(response.body.error.reason, reason);
    }
  }
});

test('through the OpenSearch client', async () => {
  const response = await client.search({
    index: 'books',
    body: { query: { bool: { must: { match_bool_prefix: { title: 'quick bro' } }, filter: { wildcard: { code: { value: 'fx-*', case_insensitive: true } } } } } },
  });
  assert.deepEqual(response.body.hits.hits.map((hit) => hit._id), ['b1']);
});

test('terms lookup: the values at a path of a document (by id) or of the documents a query matches, read before the search', async () => {
  const ndjsonHeaders = { 'content-type': 'application/x-ndjson' };
  const lookups = [
    { index: { _id: '1' } }, { tag: 'a', followers: ['foo', 'bar'], group: 'g1', nested: { ids: ['qux'] } },
    { index: { _id: '2' } }, { tag: 'b', followers: ['baz', 'foo'], group: 'g1' },
    { index: { _id: '3' } }, { tag: 'c', group: 'g2' },
    { index: { _id: '5' } }, { tag: 'e', followers: 'baz', group: 'g2' },
  ];
  const users = [
    { index: { _id: 'u1' } }, { user: 'foo' }, { index: { _id: 'u2' } }, { user: 'bar' },
    { index: { _id: 'u3' } }, { user: 'baz' }, { index: { _id: 'u4' } }, { user: 'qux' }, { index: { _id: 'u5' } }, { user: 'foo' },
  ];
  await call(server, 'PUT', '/lookups', { json: { mappings: { properties: { tag: { type: 'keyword' }, followers: { type: 'keyword' }, group: { type: 'keyword' } } } } });
  await call(server, 'PUT', '/people', { json: { settings: { number_of_shards: 3 }, mappings: { properties: { user: { type: 'keyword' } } } } });
  const toNdjson = (lines: unknown[]): string => lines.map((line) => JSON.stringify(line)).join('\n') + '\n';
  assert.equal((await call(server, 'POST', '/lookups/_bulk?refresh=true', { body: toNdjson(lookups), headers: ndjsonHeaders })).body.errors, false);
  assert.equal((await call(server, 'POST', '/people/_bulk?refresh=true', { body: toNdjson(users), headers: ndjsonHeaders })).body.errors, false);
  const ids = async (query: unknown): Promise<string[]> => {
    const response = await call(server, 'POST', '/people/_search', { json: { query, size: 20 } });
    assert.equal(response.status, 200, response.text);
    return response.body.hits.hits.map((hit: { _id: string }) => hit._id).sort();
  };
  assert.deepEqual(await ids({ terms: { user: { index: 'lookups', id: '1', path: 'followers' } } }), ['u1', 'u2', 'u5']);
  assert.deepEqual(await ids({ terms: { user: { index: 'lookups', id: '1', path: 'nested.ids' } } }), ['u4'], 'a dotted path');
  assert.deepEqual(await ids({ bool: { filter: [{ terms: { user: { index: 'lookups', id: '5', path: 'followers' } } }] } }), ['u3'], 'a scalar value, inside bool');
  assert.deepEqual(await ids({ terms: { user: { index: 'lookups', path: 'followers', query: { term: { group: 'g1' } } } } }), ['u1', 'u2', 'u3', 'u5'], 'by query');
  assert.deepEqual(await ids({ terms: { user: { index: 'lookups', id: 'missing', path: 'followers' } } }), [], 'a missing document gives no terms');
  assert.deepEqual(await ids({ terms: { user: { index: 'lookups', id: '3', path: 'followers' } } }), [], 'a missing path gives no terms');
  const counted = await call(server, 'POST', '/people/_count', { json: { query: { terms: { user: { index: 'lookups', id: '2', path: 'followers' } } } } });
  assert.equal(counted.body.count, 3);
  const missingIndex = await call(server, 'POST', '/people/_search', { json: { query: { terms: { user: { index: 'nowhere', id: '1', path: 'followers' } } } } });
  assert.equal(missingIndex.status, 404);
  assert.equal(missingIndex.body.error.type, 'index_not_found_exception');
  for (const lookup of [{ index: 'lookups', path: 'followers' }, { index: 'lookups', id: '1', path: 'followers', query: { match_all: {} } }, { index: 'lookups', id: '1', path: 'followers', extra: 1 }]) {
    const bad = await call(server, 'POST', '/people/_search', { json: { query: { terms: { user: lookup } } } });
    assert.equal(bad.status, 400, JSON.stringify(lookup));
  }
  const scrolled = await call(server, 'POST', '/people/_search?scroll=1m', { json: { size: 2, query: { terms: { user: { index: 'lookups', id: '1', path: 'followers' } } } } });
  assert.equal(scrolled.body.hits.total.value, 3);
  const next = await call(server, 'POST', '/_search/scroll', { json: { scroll_id: scrolled.body._scroll_id, scroll: '1m' } });
  assert.equal(next.status, 200, next.text);
  assert.equal(next.body.hits.hits.length, 1, 'later pages use the terms read at the open');
});
