/**
 * The `alias` field type through real HTTP on a one-shard and a three-shard collection: queries,
 * sort, aggregations, `fields`, `docvalue_fields`, highlight and `_field_caps` resolve an alias to
 * its target; writing a value to an alias and invalid `path`s are OpenSearch's errors; an alias
 * added by `PUT _mapping` works on documents written before it.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { call, startServer, type TroveServer } from './harness.ts';
import { loadKeyedCollections, sameAnswerOn } from './sharded-collections.ts';

let server: TroveServer;

const MAPPINGS = {
  properties: {
    title: { type: 'text', fields: { raw: { type: 'keyword' } } },
    title_alias: { type: 'alias', path: 'title' },
    raw_alias: { type: 'alias', path: 'title.raw' },
    price: { type: 'long' },
    meta: { properties: { cost: { type: 'alias', path: 'price' } } },
    when: { type: 'date' },
  },
};

const DOCS: Record<string, Record<string, unknown>> = {
  a: { title: 'red apple', price: 3, when: '2024-01-01' },
  b: { title: 'green apple', price: 5, when: '2024-02-01' },
  c: { title: 'red cherry', price: 9, when: '2024-03-01' },
};

const COLLECTIONS = ['alias1', 'alias3'];

before(async () => {
  server = await startServer();
  await loadKeyedCollections(server, [['alias1', 1], ['alias3', 3]], MAPPINGS, DOCS);
});

after(async () => {
  await server?.cleanup();
});

/** The search answer of both collections (checked to agree on the ids in order). */
async function search(body: Record<string, unknown>): Promise<any> {
  return sameAnswerOn(server, COLLECTIONS, body);
}

const idsOf = (answer: any): string[] => answer.hits.hits.map((hit: any) => hit._id).sort();

test('queries on an alias answer from its target', async () => {
  assert.deepEqual(idsOf(await search({ query: { match: { title_alias: 'red' } } })), ['a', 'c']);
  assert.deepEqual(idsOf(await search({ query: { term: { raw_alias: 'green apple' } } })), ['b']);
  assert.deepEqual(idsOf(await search({ query: { range: { 'meta.cost': { gte: 4 } } } })), ['b', 'c']);
  assert.deepEqual(idsOf(await search({ query: { terms: { 'meta.cost': [3, 9] } } })), ['a', 'c']);
  assert.deepEqual(idsOf(await search({ query: { exists: { field: 'meta.cost' } } })), ['a', 'b', 'c']);
  assert.deepEqual(idsOf(await search({ query: { query_string: { query: 'title_alias:cherry' } } })), ['c']);
  assert.deepEqual(idsOf(await search({ query: { prefix: { raw_alias: 'gr' } } })), ['b']);
});

test('sort, aggregations, fields, docvalue_fields and highlight resolve an alias', async () => {
  const sorted = await search({ sort: [{ 'meta.cost': 'desc' }] });
  assert.deepEqual(sorted.hits.hits.map((hit: any) => hit._id), ['c', 'b', 'a']);
  assert.deepEqual(sorted.hits.hits.map((hit: any) => hit.sort), [[9], [5], [3]]);
  const aggs = await search({ size: 0, aggs: { kinds: { terms: { field: 'raw_alias' } }, total: { sum: { field: 'meta.cost' } } } });
  assert.deepEqual(aggs.aggregations.kinds.buckets.map((bucket: any) => bucket.key).sort(), ['green apple', 'red apple', 'red cherry']);
  assert.equal(aggs.aggregations.total.value, 17);
  const fields = await search({ query: { ids: { values: ['a'] } }, fields: ['meta.cost', 'raw_alias'], docvalue_fields: ['title_alias.raw', 'meta.cost'] });
  const hit = fields.hits.hits[0];
  assert.deepEqual(hit.fields['meta.cost'], [3]);
  assert.deepEqual(hit.fields.raw_alias, ['red apple']);
  const highlighted = await search({ query: { match: { title_alias: 'cherry' } }, highlight: { fields: { title_alias: {} } } });
  assert.deepEqual(highlighted.hits.hits[0].highlight, { title_alias: ['red <em>cherry</em>'] });
});

test('_field_caps reports an alias with its target type, GET _mapping shows it as declared', async () => {
  const caps = await call(server, 'GET', '/alias1/_field_caps?fields=title_alias,raw_alias,meta.cost');
  assert.equal(caps.status, 200, caps.text);
  assert.deepEqual(caps.body.fields.title_alias, { text: { type: 'text', searchable: true, aggregatable: false } });
  assert.deepEqual(caps.body.fields.raw_alias, { keyword: { type: 'keyword', searchable: true, aggregatable: true } });
  assert.deepEqual(caps.body.fields['meta.cost'], { long: { type: 'long', searchable: true, aggregatable: true } });
  const mapping = await call(server, 'GET', '/alias1/_mapping');
  assert.deepEqual(mapping.body.alias1.mappings.properties.title_alias, { type: 'alias', path: 'title' });
  assert.deepEqual(mapping.body.alias1.mappings.properties.meta.properties, { cost: { type: 'alias', path: 'price' } });
});

test('writing to an alias and invalid paths are OpenSearch errors', async () => {
  const written = await call(server, 'PUT', '/alias1/_doc/x', { json: { title_alias: 'nope' } });
  assert.equal(written.status, 400, written.text);
  assert.equal(written.body.error.type, 'mapper_parsing_exception');
  assert.equal(written.body.error.reason, 'Cannot write to a field alias [title_alias].');
  const nested = await call(server, 'PUT', '/alias1/_doc/x', { json: { meta: { cost: 1 } } });
  assert.equal(nested.body.error.reason, 'Cannot write to a field alias [meta.cost].');
  const refuse = async (properties: Record<string, unknown>, reason: string): Promise<void> => {
    const response = await call(server, 'PUT', '/alias_bad', { json: { mappings: { properties } } });
    assert.equal(response.status, 400, response.text);
    assert.equal(response.body.error.type, 'mapper_parsing_exception');
    assert.equal(response.body.error.reason, reason);
  };
  await refuse({ a: { type: 'alias', path: 'missing' } }, 'Invalid [path] value [missing] for field alias [a]: an alias must refer to an existing field in the mappings.');
  await refuse({ o: { properties: { x: { type: 'long' } } }, a: { type: 'alias', path: 'o' } }, 'Invalid [path] value [o] for field alias [a]: an alias must refer to an existing field in the mappings.');
  await refuse({ x: { type: 'long' }, b: { type: 'alias', path: 'x' }, a: { type: 'alias', path: 'b' } }, 'Invalid [path] value [b] for field alias [a]: an alias cannot refer to another alias.');
  await refuse({ a: { type: 'alias', path: 'a' } }, 'Invalid [path] value [a] for field alias [a]: an alias cannot refer to itself.');
  await refuse({ a: { type: 'alias' } }, 'The [path] property must be specified for field [a].');
  await refuse({ x: { type: 'long' }, a: { type: 'alias', path: 'x', index: false } }, 'Mapping definition for [a] has unsupported parameters:  [index : false]');
  const update = await call(server, 'PUT', '/alias1/_mapping', { json: { properties: { bad: { type: 'alias', path: 'nowhere' } } } });
  assert.equal(update.status, 400, update.text);
  assert.match(update.body.error.reason, /an alias must refer to an existing field in the mappings/);
});

test('an alias added by PUT _mapping answers for documents written before it', async () => {
  for (const name of COLLECTIONS) {
    const update = await call(server, 'PUT', `/${name}/_mapping`, { json: { properties: { day: { type: 'alias', path: 'when' } } } });
    assert.equal(update.status, 200, update.text);
  }
  assert.deepEqual(idsOf(await search({ query: { range: { day: { gte: '2024-02-01' } } } })), ['b', 'c']);
  const histogram = await search({ size: 0, aggs: { months: { date_histogram: { field: 'day', calendar_interval: 'month' } } } });
  assert.deepEqual(histogram.aggregations.months.buckets.map((bucket: any) => bucket.doc_count), [1, 1, 1]);
});
