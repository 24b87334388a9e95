/**
 * `nested` mappings, through real HTTP: accepted, shown and merged like objects; their fields stay
 * in the source and out of every other query and aggregation (as in OpenSearch, where only nested
 * queries see them), unless `include_in_parent` / `include_in_root` index them on the document;
 * `_field_caps` reports them; a `nested` query is a 400 saying why.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { call, startServer, type TroveServer } from './harness.ts';

let server: TroveServer;

const MAPPINGS = {
  properties: {
    title: { type: 'keyword' },
    users: { type: 'nested', properties: { first: { type: 'keyword' }, age: { type: 'long' } } },
    tags: { type: 'nested', include_in_parent: true, properties: { name: { type: 'keyword' } } },
  },
};

before(async () => {
  server = await startServer();
  const created = await call(server, 'PUT', '/groups', { json: { mappings: MAPPINGS } });
  assert.equal(created.status, 200, created.text);
  const docs = [
    { title: 'a', users: [{ first: 'john', age: 30 }, { first: 'alice', age: 25, city: 'paris' }], tags: [{ name: 'red' }] },
    { title: 'b', users: { first: 'bob', age: 40 }, tags: [{ name: 'blue' }, { name: 'red' }] },
  ];
  for (const [index, doc] of docs.entries()) {
    const written = await call(server, 'PUT', `/groups/_doc/${index + 1}?refresh=true`, { json: doc });
    assert.equal(written.status, 201, written.text);
  }
});

after(async () => {
  await server?.cleanup();
});

async function hits(query: unknown): Promise<string[]> {
  const answer = await call(server, 'POST', '/groups/_search', { json: { query } });
  assert.equal(answer.status, 200, answer.text);
  return answer.body.hits.hits.map((hit: { _id: string }) => hit._id).sort();
}

test('the mapping is kept and shown; dynamic fields inside a nested object join its properties', async () => {
  const mapping = await call(server, 'GET', '/groups/_mapping');
  const properties = mapping.body.groups.mappings.properties;
  assert.equal(properties.users.type, 'nested');
  assert.deepEqual(properties.users.properties.first, { type: 'keyword' });
  assert.equal(properties.users.properties.city.type, 'text');
  assert.equal(properties.tags.include_in_parent, true);
  const source = await call(server, 'GET', '/groups/_doc/1');
  assert.deepEqual(source.body._source.users[1], { first: 'alice', age: 25, city: 'paris' });
});

test('nested fields are seen by no other query or aggregation; include_in_parent ones are', async () => {
  assert.deepEqual(await hits({ term: { 'users.first': 'john' } }), []);
  assert.deepEqual(await hits({ exists: { field: 'users.age' } }), []);
  assert.deepEqual(await hits({ term: { 'tags.name': 'red' } }), ['1', '2']);
  assert.deepEqual(await hits({ term: { title: 'b' } }), ['2']);
  const aggs = await call(server, 'POST', '/groups/_search', { json: { size: 0, aggs: { first: { terms: { field: 'users.first' } }, tag: { terms: { field: 'tags.name' } } } } });
  assert.deepEqual(aggs.body.aggregations.first.buckets, []);
  assert.deepEqual(aggs.body.aggregations.tag.buckets.map((bucket: { key: string; doc_count: number }) => [bucket.key, bucket.doc_count]), [['red', 2], ['blue', 1]]);
  const nested = await call(server, 'POST', '/groups/_search', { json: { query: { nested: { path: 'users', query: { match_all: {} } } } } });
  assert.equal(nested.status, 400);
  assert.match(nested.body.error.reason, /\[nested\] queries are not supported/);
});

test('_field_caps reports nested objects and their fields from their mappings', async () => {
  const caps = await call(server, 'GET', '/groups/_field_caps?fields=users*,tags*');
  assert.equal(caps.status, 200, caps.text);
  assert.equal(caps.body.fields.users.nested.searchable, false);
  assert.equal(caps.body.fields['users.age'].long.aggregatable, true);
  assert.equal(caps.body.fields['tags.name'].keyword.searchable, true);
});

test('a nested object cannot become an object, nor change include_in_parent; bad parameters are 400s', async () => {
  const retyped = await call(server, 'PUT', '/groups/_mapping', { json: { properties: { users: { type: 'object' } } } });
  assert.equal(retyped.status, 400);
  assert.match(retyped.body.error.reason, /cannot be changed from type \[nested\] to \[object\]/);
  const flipped = await call(server, 'PUT', '/groups/_mapping', { json: { properties: { tags: { type: 'nested', include_in_parent: false } } } });
  assert.equal(flipped.status, 400);
  const added = await call(server, 'PUT', '/groups/_mapping', { json: { properties: { users: { type: 'nested', properties: { last: { type: 'keyword' } } } } } });
  assert.equal(added.status, 200, added.text);
  const bad = await call(server, 'PUT', '/other', { json: { mappings: { properties: { n: { type: 'nested', include_in_parent: 'yes' } } } } });
  assert.equal(bad.status, 400);
  const onLeaf = await call(server, 'PUT', '/other', { json: { mappings: { properties: { n: { type: 'keyword', include_in_parent: true } } } } });
  assert.equal(onLeaf.status, 400);
});
