/**
 * The `token_count` field type through real HTTP, on its own and as a multi-field of a text
 * field: values are counted with the field's analyzer (positions by default, so stop words the
 * analyzer drops still count; tokens with `enable_position_increments: false`), and the counts
 * answer term, range and exists queries, sort, aggregations, `docvalue_fields` and `_field_caps`.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { call, ndjson, startServer, type TroveServer } from './harness.ts';

let server: TroveServer;

const MAPPINGS = {
  properties: {
    title: { type: 'text', fields: { length: { type: 'token_count', analyzer: 'standard' } } },
    words: { type: 'token_count', analyzer: 'english' },
    kept: { type: 'token_count', analyzer: 'english', enable_position_increments: false },
  },
};

const DOCS: Record<string, Record<string, unknown>> = {
  a: { title: 'The quick brown fox', words: 'the cat and the hat', kept: 'the cat and the hat' },
  b: { title: 'Hello', words: 'running dogs', kept: 'running dogs' },
  c: { title: ['one two', 'three four five'] },
  d: { words: null },
};

before(async () => {
  server = await startServer();
  const created = await call(server, 'PUT', '/counts', { json: { settings: { number_of_shards: 2 }, mappings: MAPPINGS } });
  assert.equal(created.status, 200, created.text);
  const body = ndjson(Object.entries(DOCS).flatMap(([id, doc]) => [{ index: { _id: id } }, doc]));
  const loaded = await call(server, 'POST', '/counts/_bulk?refresh=true', { body, headers: { 'content-type': 'application/x-ndjson' } });
  assert.equal(loaded.body.errors, false, loaded.text);
});

after(async () => {
  await server?.cleanup();
});

async function search(body: Record<string, unknown>): Promise<any> {
  const response = await call(server, 'POST', '/counts/_search', { json: body });
  assert.equal(response.status, 200, response.text);
  return response.body;
}

const idsOf = (answer: any): string[] => answer.hits.hits.map((hit: any) => hit._id).sort();

test('token counts answer numeric queries', async () => {
  assert.deepEqual(idsOf(await search({ query: { term: { 'title.length': 4 } } })), ['a']);
  assert.deepEqual(idsOf(await search({ query: { range: { 'title.length': { gte: 3 } } } })), ['a', 'c']);
  assert.deepEqual(idsOf(await search({ query: { term: { 'title.length': 2 } } })), ['c']);
  // english drops "the" and "and" but keeps their positions: 5; without position increments: 2.
  assert.deepEqual(idsOf(await search({ query: { term: { words: 5 } } })), ['a']);
  assert.deepEqual(idsOf(await search({ query: { term: { kept: 2 } } })), ['a', 'b']);
  assert.deepEqual(idsOf(await search({ query: { exists: { field: 'words' } } })), ['a', 'b']);
});

test('token counts sort, aggregate and come back as doc values', async () => {
  const sorted = await search({ query: { exists: { field: 'title.length' } }, sort: [{ 'title.length': { order: 'desc', mode: 'max' } }] });
  assert.deepEqual(sorted.hits.hits.map((hit: any) => [hit._id, hit.sort[0]]), [['a', 4], ['c', 3], ['b', 1]]);
  const aggs = await search({ size: 0, aggs: { lengths: { terms: { field: 'title.length' } }, most: { max: { field: 'words' } } } });
  assert.deepEqual(aggs.aggregations.lengths.buckets.map((bucket: any) => [bucket.key, bucket.doc_count]).sort(), [[1, 1], [2, 1], [3, 1], [4, 1]]);
  assert.equal(aggs.aggregations.most.value, 5);
  const fields = await search({ query: { ids: { values: ['c'] } }, docvalue_fields: ['title.length'] });
  assert.deepEqual(fields.hits.hits[0].fields['title.length'], [2, 3]);
  const caps = await call(server, 'GET', '/counts/_field_caps?fields=title.length');
  assert.deepEqual(caps.body.fields['title.length'], { token_count: { type: 'token_count', searchable: true, aggregatable: true } });
});

test('token_count needs an analyzer, and GET _mapping shows it as declared', async () => {
  const refused = await call(server, 'PUT', '/counts_bad', { json: { mappings: { properties: { n: { type: 'token_count' } } } } });
  assert.equal(refused.status, 400);
  assert.equal(refused.body.error.type, 'mapper_parsing_exception');
  assert.equal(refused.body.error.reason, "Analyzer must be set for field [n] but wasn't.");
  const mapping = await call(server, 'GET', '/counts/_mapping');
  assert.deepEqual(mapping.body.counts.mappings.properties.kept, MAPPINGS.properties.kept);
  const bad = await call(server, 'PUT', '/counts/_doc/x', { json: { words: { nested: true } } });
  assert.equal(bad.status, 400);
});
