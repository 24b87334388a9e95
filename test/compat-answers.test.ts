/**
 * Answers that used to be silently wrong for Elasticsearch/OpenSearch clients (issue 17): `term`
 * and `terms` on `_id`, `exists` on metadata fields, `_seq_no` counted from 0, `max_score` when
 * sorting on `[_score, _doc]`, `typed_keys`, an empty `_id` in `_bulk`, `ignore_unavailable`.
 * Through real HTTP and through the OpenSearch JS client.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { Client } from '@opensearch-project/opensearch';
import { call, ndjson, startServer, type TroveServer } from './harness.ts';

let server: TroveServer;
let client: Client;

before(async () => {
  server = await startServer();
  client = new Client({ node: server.url });
  const created = await call(server, 'PUT', '/notes', {
    json: { settings: { number_of_shards: 2 }, mappings: { properties: { text: { type: 'text' }, tag: { type: 'keyword' }, n: { type: 'long' }, ratio: { type: 'double' } } } },
  });
  assert.equal(created.status, 200, created.text);
  const docs = [
    { text: 'red apple', tag: 'fruit', n: 1, ratio: 0.5 },
    { text: 'green apple pie', tag: 'fruit', n: 2, ratio: 1.5 },
    { text: 'red car', tag: 'thing', n: 3, ratio: 2.5 },
  ];
  const loaded = await call(server, 'POST', '/notes/_bulk', { body: ndjson(docs.flatMap((doc, index) => [{ index: { _id: `d${index + 1}` } }, doc])), headers: { 'content-type': 'application/x-ndjson' } });
  assert.equal(loaded.body.errors, false, loaded.text);
});

after(async () => {
  await client?.close();
  await server?.cleanup();
});

async function ids(body: unknown, path = '/notes/_search'): Promise<string[]> {
  const response = await call(server, 'POST', path, { json: body });
  assert.equal(response.status, 200, response.text);
  return response.body.hits.hits.map((hit: { _id: string }) => hit._id).sort();
}

test('term and terms on _id match like ids', async () => {
  assert.deepEqual(await ids({ query: { term: { _id: 'd2' } } }), ['d2']);
  assert.deepEqual(await ids({ query: { term: { _id: { value: 'd3', boost: 2 } } } }), ['d3']);
  assert.deepEqual(await ids({ query: { terms: { _id: ['d1', 'd3', 'nope'] } } }), ['d1', 'd3']);
  assert.deepEqual(await ids({ query: { bool: { must_not: { term: { _id: 'd1' } } } } }), ['d2', 'd3']);
  const refused = await call(server, 'POST', '/notes/_search', { json: { query: { terms: { _id: [{}] } } } });
  assert.equal(refused.status, 400);
});

test('exists on _id, _index, _seq_no, _version matches every document', async () => {
  for (const field of ['_id', '_index', '_seq_no', '_version']) {
    assert.deepEqual(await ids({ query: { exists: { field } } }), ['d1', 'd2', 'd3'], field);
  }
  const count = await call(server, 'POST', '/notes/_count', { json: { query: { exists: { field: '_id' } } } });
  assert.equal(count.body.count, 3);
});

test('_seq_no counts from 0: if_seq_no=0 after the first write succeeds', async () => {
  await call(server, 'PUT', '/seqs', { json: { settings: { number_of_shards: 1 } } });
  const first = await call(server, 'PUT', '/seqs/_doc/a', { json: { v: 1 } });
  assert.equal(first.body._seq_no, 0);
  const got = await call(server, 'GET', '/seqs/_doc/a');
  assert.equal(got.body._seq_no, 0);
  const searched = await call(server, 'POST', '/seqs/_search', { json: { seq_no_primary_term: true } });
  assert.equal(searched.body.hits.hits[0]._seq_no, 0);
  const second = await call(server, 'PUT', `/seqs/_doc/a?if_seq_no=0&if_primary_term=${first.body._primary_term}`, { json: { v: 2 } });
  assert.equal(second.status, 200, second.text);
  assert.equal(second.body._seq_no, 1);
  const stale = await call(server, 'PUT', '/seqs/_doc/a?if_seq_no=0&if_primary_term=1', { json: { v: 3 } });
  assert.equal(stale.status, 409);
  assert.match(stale.body.error.reason, /required seqNo \[0\], primary term \[1\]\. current document has seqNo \[1\]/);
  const update = await call(server, 'POST', '/seqs/_update/a?if_seq_no=1&if_primary_term=1', { json: { doc: { v: 4 } } });
  assert.equal(update.body._seq_no, 2, update.text);
  const mget = await call(server, 'POST', '/seqs/_mget', { json: { ids: ['a'] } });
  assert.equal(mget.body.docs[0]._seq_no, 2);
  const bulk = await call(server, 'POST', '/seqs/_bulk', {
    body: ndjson([{ delete: { _id: 'a', if_seq_no: 2, if_primary_term: 1 } }]),
    headers: { 'content-type': 'application/x-ndjson' },
  });
  assert.equal(bulk.body.items[0].delete.status, 200, bulk.text);
  assert.equal(bulk.body.items[0].delete._seq_no, 3);
  const bulkIndex = await call(server, 'POST', '/seqs/_bulk', {
    body: ndjson([{ index: { _id: 'c' } }, { v: 1 }, { index: { _id: 'c', if_seq_no: 4, if_primary_term: 1 } }, { v: 2 }]),
    headers: { 'content-type': 'application/x-ndjson' },
  });
  assert.deepEqual(bulkIndex.body.items.map((item: any) => [item.index.status, item.index._seq_no]), [[201, 4], [200, 5]], bulkIndex.text);
  // The OpenSearch client: index, then a conditional index on the seq_no it was given.
  const indexed = await client.index({ index: 'seqs', id: 'b', body: { v: 1 } });
  const replaced = await client.index({ index: 'seqs', id: 'b', body: { v: 2 }, if_seq_no: indexed.body._seq_no, if_primary_term: indexed.body._primary_term });
  assert.equal(replaced.body.result, 'updated');
});

test('max_score is set when sorting on [_score, _doc]', async () => {
  const sorted = await call(server, 'POST', '/notes/_search', { json: { query: { match: { text: 'apple red' } }, sort: ['_score', '_doc'] } });
  const plain = await call(server, 'POST', '/notes/_search', { json: { query: { match: { text: 'apple red' } } } });
  assert.equal(typeof sorted.body.hits.max_score, 'number');
  assert.equal(sorted.body.hits.max_score, plain.body.hits.max_score);
  assert.equal(sorted.body.hits.max_score, sorted.body.hits.hits[0]._score);
  const byField = await call(server, 'POST', '/notes/_search', { json: { sort: [{ n: 'asc' }] } });
  assert.equal(byField.body.hits.max_score, null);
});

test('typed_keys prefixes every aggregation name with its result type', async () => {
  const aggs = {
    tags: { terms: { field: 'tag' }, aggs: { avg_n: { avg: { field: 'n' } } } },
    ns: { terms: { field: 'n' } },
    ratios: { terms: { field: 'ratio' } },
    hist: { histogram: { field: 'n', interval: 2 } },
    ranges: { range: { field: 'n', ranges: [{ to: 2 }] } },
    total: { sum: { field: 'n' } },
    distinct: { cardinality: { field: 'tag' } },
  };
  const typed = await call(server, 'POST', '/notes/_search?typed_keys=true&size=0', { json: { aggs } });
  assert.equal(typed.status, 200, typed.text);
  assert.deepEqual(Object.keys(typed.body.aggregations).sort(), [
    'cardinality#distinct', 'dterms#ratios', 'histogram#hist', 'lterms#ns', 'range#ranges', 'sterms#tags', 'sum#total',
  ]);
  assert.deepEqual(Object.keys(typed.body.aggregations['sterms#tags'].buckets[0]).sort(), ['avg#avg_n', 'doc_count', 'key']);
  const plain = await call(server, 'POST', '/notes/_search?size=0', { json: { aggs } });
  assert.ok('tags' in plain.body.aggregations);
  const viaClient = await client.search({ index: 'notes', typed_keys: true, body: { size: 0, aggs: { tags: { terms: { field: 'tag' } } } as any } });
  assert.ok('sterms#tags' in (viaClient.body.aggregations as object));
});

test('a _bulk item with an empty _id fails alone', async () => {
  const response = await call(server, 'POST', '/notes/_bulk', {
    body: ndjson([{ index: { _id: '' } }, { text: 'x' }, { index: { _id: 'd9' } }, { text: 'kept' }, { delete: { _id: '' } }]),
    headers: { 'content-type': 'application/x-ndjson' },
  });
  assert.equal(response.status, 200, response.text);
  assert.equal(response.body.errors, true);
  const [empty, kept, emptyDelete] = response.body.items;
  assert.equal(empty.index.status, 400);
  assert.equal(empty.index.error.type, 'illegal_argument_exception', 'as OpenSearch answers an index item with an empty _id');
  assert.equal(empty.index.error.reason, 'if _id is specified it must not be empty');
  assert.equal(kept.index.status, 201);
  assert.equal(emptyDelete.delete.status, 400);
  assert.equal((await call(server, 'GET', '/notes/_doc/d9')).body.found, true);
  await call(server, 'DELETE', '/notes/_doc/d9');
});

test('ignore_unavailable=true leaves unknown collections out of search and count', async () => {
  assert.equal((await call(server, 'POST', '/notes,missing/_search', { json: {} })).status, 404);
  const search = await call(server, 'POST', '/notes,missing/_search?ignore_unavailable=true', { json: {} });
  assert.equal(search.status, 200, search.text);
  assert.equal(search.body.hits.total.value, 3);
  const alone = await call(server, 'POST', '/missing/_search?ignore_unavailable=true', { json: { aggs: { t: { terms: { field: 'tag' } } } } });
  assert.equal(alone.status, 200, alone.text);
  assert.equal(alone.body.hits.total.value, 0);
  assert.equal(alone.body._shards.total, 0);
  const count = await call(server, 'GET', '/missing,notes/_count?ignore_unavailable');
  assert.equal(count.body.count, 3);
  const viaClient = await client.count({ index: 'nowhere', ignore_unavailable: true });
  assert.equal(viaClient.body.count, 0);
});

test('_validate/query says whether a query parses, with explanations on request', async () => {
  const valid = await call(server, 'POST', '/notes/_validate/query', { json: { query: { match: { text: 'apple' } } } });
  assert.equal(valid.status, 200, valid.text);
  assert.equal(valid.body.valid, true);
  const invalid = await call(server, 'POST', '/notes/_validate/query?explain=true', { json: { query: { bogus: {} } } });
  assert.equal(invalid.body.valid, false);
  assert.equal(invalid.body.explanations[0].index, 'notes');
  assert.match(invalid.body.explanations[0].error, /bogus/);
  assert.equal((await call(server, 'GET', '/notes/_validate/query?q=text:apple')).body.valid, true);
  assert.equal((await call(server, 'POST', '/nope/_validate/query', { json: {} })).status, 404);
  const viaClient = await client.indices.validateQuery({ index: 'notes', body: { query: { term: { tag: 'fruit' } } } });
  assert.equal(viaClient.body.valid, true);
});

test('_analyze returns the tokens of a named analyzer or of a field', async () => {
  const standard = await call(server, 'POST', '/_analyze', { json: { analyzer: 'standard', text: 'The Quick 42' } });
  assert.deepEqual(standard.body.tokens, [
    { token: 'the', start_offset: 0, end_offset: 3, type: '<ALPHANUM>', position: 0 },
    { token: 'quick', start_offset: 4, end_offset: 9, type: '<ALPHANUM>', position: 1 },
    { token: '42', start_offset: 10, end_offset: 12, type: '<NUM>', position: 2 },
  ]);
  const multi = await call(server, 'POST', '/_analyze', { json: { analyzer: 'whitespace', text: ['a b', 'c'] } });
  assert.deepEqual(multi.body.tokens.map((token: any) => [token.token, token.position, token.start_offset]), [['a', 0, 0], ['b', 1, 2], ['c', 102, 4]]);
  const byField = await call(server, 'POST', '/notes/_analyze', { json: { field: 'tag', text: 'Red Fruit' } });
  assert.deepEqual(byField.body.tokens.map((token: any) => token.token), ['Red Fruit']);
  assert.equal((await call(server, 'POST', '/_analyze', { json: { tokenizer: 'standard', text: 'x' } })).status, 400);
  assert.equal((await call(server, 'POST', '/_analyze', { json: { analyzer: 'nope', text: 'x' } })).status, 400);
  const viaClient = await client.indices.analyze({ body: { analyzer: 'english', text: 'running dogs' } });
  assert.deepEqual(viaClient.body.tokens!.map((token) => token.token), ['run', 'dog']);
});
