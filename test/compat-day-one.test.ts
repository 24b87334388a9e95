/**
 * Behaviour Elasticsearch/OpenSearch users meet on day one (issue 17): `rest_total_hits_as_int`,
 * `version` on search, `forced_refresh` after `refresh=true`, `_msearch` with per-item errors,
 * and automatic collection creation on the first write. Through real HTTP and the OpenSearch JS
 * client.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { Client } from '@opensearch-project/opensearch';
import { call, ndjson, startServer, type TroveServer } from './harness.ts';

let server: TroveServer;
let client: Client;
const NDJSON = { 'content-type': 'application/x-ndjson' };

before(async () => {
  server = await startServer();
  client = new Client({ node: server.url });
  const created = await call(server, 'PUT', '/films', { json: { mappings: { properties: { title: { type: 'text' }, genre: { type: 'keyword' }, year: { type: 'integer' } } } } });
  assert.equal(created.status, 200, created.text);
  const films = [
    { title: 'the red shoes', genre: 'drama', year: 1948 },
    { title: 'red river', genre: 'western', year: 1948 },
    { title: 'the third man', genre: 'noir', year: 1949 },
  ];
  const loaded = await call(server, 'POST', '/films/_bulk', { body: ndjson(films.flatMap((film, index) => [{ index: { _id: `f${index}` } }, film])), headers: NDJSON });
  assert.equal(loaded.body.errors, false, loaded.text);
});

after(async () => {
  await client?.close();
  await server?.cleanup();
});

test('rest_total_hits_as_int renders hits.total as a number, counted exactly', async () => {
  const response = await call(server, 'GET', '/films/_search?rest_total_hits_as_int=true&q=title:red');
  assert.equal(response.status, 200, response.text);
  assert.equal(response.body.hits.total, 2);
  const notTracked = await call(server, 'POST', '/films/_search?rest_total_hits_as_int', { json: { track_total_hits: false } });
  assert.equal(notTracked.body.hits.total, -1);
  const bounded = await call(server, 'POST', '/films/_search?rest_total_hits_as_int=true', { json: { track_total_hits: 10 } });
  assert.equal(bounded.status, 400, 'a bare number cannot say the count stopped at a bound');
  assert.match(bounded.body.error.reason, /\[rest_total_hits_as_int\] cannot be used if the tracking of total hits is not accurate, got 10/);
  const many = await call(server, 'POST', '/_msearch?rest_total_hits_as_int=true', {
    body: '{"index": "films"}\n{"track_total_hits": 10}\n{"index": "films"}\n{}\n',
    headers: { 'content-type': 'application/x-ndjson' },
  });
  assert.equal(many.status, 400, 'the whole _msearch is refused, as Elasticsearch');
});

test('version=true on search adds _version to hits', async () => {
  const response = await call(server, 'GET', '/films/_search?version=true&q=title:third');
  assert.equal(response.body.hits.hits[0]._version, 1);
  const viaClient = await client.search({ index: 'films', version: true, q: 'title:third' });
  assert.equal(viaClient.body.hits.hits[0]._version, 1);
});

test('refresh=true writes answer forced_refresh: true', async () => {
  const indexed = await call(server, 'PUT', '/films/_doc/tmp?refresh=true', { json: { title: 'tmp' } });
  assert.equal(indexed.body.forced_refresh, true);
  const updated = await call(server, 'POST', '/films/_update/tmp?refresh', { json: { doc: { year: 2000 } } });
  assert.equal(updated.body.forced_refresh, true);
  const bulk = await call(server, 'POST', '/films/_bulk?refresh=true', { body: ndjson([{ index: { _id: 'tmp2' } }, { title: 'x' }]), headers: NDJSON });
  assert.equal(bulk.body.items[0].index.forced_refresh, true);
  const plain = await call(server, 'DELETE', '/films/_doc/tmp2');
  assert.equal(plain.body.forced_refresh, undefined);
  const deleted = await call(server, 'DELETE', '/films/_doc/tmp?refresh=true');
  assert.equal(deleted.body.forced_refresh, true);
});

test('_msearch runs each search and fails items one by one', async () => {
  const body = ndjson([
    {}, { query: { match: { title: 'red' } } },
    { index: 'films' }, { size: 0, aggs: { genres: { terms: { field: 'genre' } } } },
    { index: 'nowhere' }, { query: { match_all: {} } },
    { index: 'films' }, { query: { bogus: {} } },
    { index: ['films', 'nowhere'], ignore_unavailable: true }, { query: { term: { _id: 'f2' } } },
  ]);
  const response = await call(server, 'POST', '/films/_msearch?typed_keys', { body, headers: NDJSON });
  assert.equal(response.status, 200, response.text);
  const [red, aggs, missing, bogus, ignored] = response.body.responses;
  assert.equal(red.status, 200);
  assert.equal(red.hits.total.value, 2);
  assert.ok('sterms#genres' in aggs.aggregations);
  assert.equal(missing.status, 404);
  assert.equal(missing.error.type, 'index_not_found_exception');
  assert.equal(bogus.status, 400);
  assert.equal(ignored.hits.hits[0]._id, 'f2');
  const refused = await call(server, 'POST', '/_msearch', { body: '{"index":"films"}\n{"query":\n', headers: NDJSON });
  assert.equal(refused.status, 400);
  const unknownKey = await call(server, 'POST', '/_msearch', { body: ndjson([{ indx: 'films' }, {}]), headers: NDJSON });
  assert.equal(unknownKey.status, 400);
  const viaClient = await client.msearch({ body: [{ index: 'films' }, { query: { match: { title: 'man' } } }, { index: 'films' }, { size: 1 }] });
  assert.equal(viaClient.body.responses.length, 2);
  assert.equal((viaClient.body.responses[0] as any).hits.hits[0]._id, 'f2');
});

test('the first write to a missing name creates the collection (action.auto_create_index)', async () => {
  const indexed = await call(server, 'PUT', '/auto-docs/_doc/1', { json: { title: 'first', year: 2001 } });
  assert.equal(indexed.status, 201, indexed.text);
  const mapping = await call(server, 'GET', '/auto-docs/_mapping');
  assert.equal(mapping.body['auto-docs'].mappings.properties.year.type, 'long');
  const bulk = await call(server, 'POST', '/_bulk', { body: ndjson([{ index: { _index: 'auto-bulk', _id: '1' } }, { n: 1 }, { delete: { _index: 'auto-gone', _id: '1' } }]), headers: NDJSON });
  assert.equal(bulk.body.items[0].index.status, 201, bulk.text);
  assert.equal(bulk.body.items[1].delete.status, 404);
  assert.equal((await call(server, 'HEAD', '/auto-gone')).status, 404);
  const upserted = await call(server, 'POST', '/auto-upsert/_update/1', { json: { doc: { n: 1 }, doc_as_upsert: true } });
  assert.equal(upserted.status, 201, upserted.text);
  assert.equal((await call(server, 'DELETE', '/auto-none/_doc/1')).status, 404);
  // Integers beyond 2^53 keep their digits in a new collection too (the creation check reads the body's text).
  const exact = await call(server, 'PUT', '/auto-long/_doc/1', { body: '{"n": 9223372036854775807}', headers: { 'content-type': 'application/json' } });
  assert.equal(exact.status, 201, exact.text);
  const exactBulk = await call(server, 'POST', '/_bulk', { body: '{"index":{"_index":"auto-long-bulk","_id":"1"}}\n{"n": 72057594037927937}\n', headers: NDJSON });
  assert.equal(exactBulk.body.items[0].index.status, 201, exactBulk.text);
  for (const [name, digits] of [['auto-long', '9223372036854775807'], ['auto-long-bulk', '72057594037927937']]) {
    const got = await call(server, 'GET', `/${name}/_doc/1`);
    assert.ok(got.text.includes(`"n": ${digits}`) || got.text.includes(`"n":${digits}`), got.text);
    const found = await call(server, 'POST', `/${name}/_search`, { json: { query: { term: { n: digits } } } });
    assert.equal(found.body.hits.total.value, 1, `${name}: term on the exact value`);
  }
  // A write that fails creates nothing (PRODUCT.md principle 5), unlike OpenSearch.
  const refused = await call(server, 'PUT', '/auto-bad/_doc/1', { body: '{"n": {"_id": 1}, "_id": "x"}', headers: { 'content-type': 'application/json' } });
  assert.equal(refused.status, 400, refused.text);
  assert.equal((await call(server, 'POST', '/auto-none/_update/1', { json: { doc: { n: 1 } } })).status, 404);
  const badBulk = await call(server, 'POST', '/auto-bad-bulk/_bulk', { body: '{"index":{"_id":"1"}}\n{"_id": "x"}\n', headers: NDJSON });
  assert.equal(badBulk.body.items[0].index.status, 400, badBulk.text);
  assert.equal(badBulk.body.items[0].index.error.type, 'mapper_parsing_exception');
  for (const name of ['auto-bad', 'auto-none', 'auto-bad-bulk']) assert.equal((await call(server, 'HEAD', `/${name}`)).status, 404, name);
  const viaClient = await client.index({ index: 'auto-client', id: '1', body: { ok: true } });
  assert.equal(viaClient.body.result, 'created');

  const patterns = await call(server, 'PUT', '/_node/_local/settings', { json: { 'action.auto_create_index': '+logs-*,-*' } });
  assert.equal(patterns.status, 200, patterns.text);
  assert.equal((await call(server, 'PUT', '/logs-1/_doc/1', { json: { m: 'x' } })).status, 201);
  const denied = await call(server, 'PUT', '/metrics-1/_doc/1', { json: { m: 'x' } });
  assert.equal(denied.status, 404);
  assert.equal(denied.body.error.type, 'index_not_found_exception');
  assert.match(denied.body.error.reason, /action\.auto_create_index/);
  await call(server, 'PUT', '/_node/_local/settings', { json: { 'action.auto_create_index': false } });
  assert.equal((await call(server, 'PUT', '/logs-2/_doc/1', { json: { m: 'x' } })).status, 404);
  await call(server, 'PUT', '/_node/_local/settings', { json: { 'action.auto_create_index': null } });
  assert.equal((await call(server, 'PUT', '/logs-2/_doc/1', { json: { m: 'x' } })).status, 201);
});

test('version_type=external|external_gte on index, delete and bulk', async () => {
  const created = await call(server, 'PUT', '/films/_doc/v1?version=5&version_type=external', { json: { title: 'v' } });
  assert.equal(created.status, 201, created.text);
  assert.equal(created.body._version, 5);
  const same = await call(server, 'PUT', '/films/_doc/v1?version=5&version_type=external', { json: { title: 'v' } });
  assert.equal(same.status, 409);
  assert.match(same.body.error.reason, /current version \[5\] is higher or equal to the one provided \[5\]/);
  assert.equal((await call(server, 'PUT', '/films/_doc/v1?version=5&version_type=external_gte', { json: { title: 'v' } })).body._version, 5);
  assert.equal((await call(server, 'PUT', '/films/_doc/v1?version=7&version_type=external', { json: { title: 'v7' } })).body._version, 7);
  assert.equal((await call(server, 'GET', '/films/_doc/v1')).body._version, 7);
  assert.equal((await call(server, 'PUT', '/films/_doc/v1?version=9', { json: { title: 'x' } })).status, 400);
  assert.equal((await call(server, 'PUT', '/films/_doc/v1?version=9&version_type=external&op_type=create', { json: { title: 'x' } })).status, 400);
  assert.equal((await call(server, 'PUT', '/films/_doc/v1?version_type=external', { json: { title: 'x' } })).status, 400);
  assert.equal((await call(server, 'GET', '/films/_doc/v1')).body._source.title, 'v7', 'refused writes change nothing');
  assert.equal((await call(server, 'DELETE', '/films/_doc/v1?version=6&version_type=external')).status, 409);
  const deleted = await call(server, 'DELETE', '/films/_doc/v1?version=8&version_type=external');
  assert.equal(deleted.status, 200, deleted.text);
  assert.equal(deleted.body._version, 8);
  const bulk = await call(server, 'POST', '/films/_bulk', {
    body: ndjson([{ index: { _id: 'v2', version: 10, version_type: 'external' } }, { title: 'b' }, { index: { _id: 'v2', version: 9, version_type: 'external' } }, { title: 'c' }]),
    headers: NDJSON,
  });
  assert.deepEqual(bulk.body.items.map((item: any) => [item.index.status, item.index._version]), [[201, 10], [409, undefined]], bulk.text);
  const viaClient = await client.index({ index: 'films', id: 'v2', body: { title: 'd' }, version: 20, version_type: 'external' });
  assert.equal(viaClient.body._version, 20);
  await call(server, 'DELETE', '/films/_doc/v2');
});

test('get and mget: stored_fields returns stored fields under fields (and _source only when listed); get with version is a 409 on another version', async () => {
  const created = await call(server, 'PUT', '/stored', { json: { mappings: { properties: { foo: { type: 'keyword', store: true }, count: { type: 'integer', store: true }, other: { type: 'keyword' } } } } });
  assert.equal(created.status, 200, created.text);
  assert.equal((await call(server, 'PUT', '/stored/_doc/1', { json: { foo: 'bar', count: 1, other: 'x' } })).status, 201);
  const one = await call(server, 'GET', '/stored/_doc/1?stored_fields=foo');
  assert.deepEqual(one.body.fields, { foo: ['bar'] });
  assert.equal(one.body._source, undefined, 'stored_fields without _source leaves the source out');
  const withSource = await call(server, 'GET', '/stored/_doc/1?stored_fields=foo,count,_source');
  assert.deepEqual(withSource.body.fields, { foo: ['bar'], count: [1] });
  assert.deepEqual(withSource.body._source, { foo: 'bar', count: 1, other: 'x' });
  const notStored = await call(server, 'GET', '/stored/_doc/1?stored_fields=other');
  assert.equal(notStored.body.fields, undefined, 'a field without store: true is not returned');
  const many = await call(server, 'POST', '/stored/_mget?stored_fields=count', { json: { docs: [{ _id: '1', stored_fields: ['foo'] }, { _id: '1' }] } });
  assert.deepEqual(many.body.docs[0].fields, { foo: ['bar'] });
  assert.deepEqual(many.body.docs[1].fields, { count: [1] }, 'the URL stored_fields applies to entries without their own');
  assert.equal(many.body.docs[1]._source, undefined);
  const conflict = await call(server, 'GET', '/stored/_doc/1?version=2');
  assert.equal(conflict.status, 409);
  assert.equal(conflict.body.error.type, 'version_conflict_engine_exception');
  assert.equal((await call(server, 'GET', '/stored/_doc/1?version=1')).status, 200);
  const noId = await call(server, 'POST', '/_mget', { json: { docs: [{ _index: 'stored', _id: '1' }, { _index: 'stored' }] } });
  assert.equal(noId.status, 400);
  assert.equal(noId.body.error.type, 'action_request_validation_exception');
  assert.match(noId.body.error.reason, /1: id is missing for doc 1;/);
  const viaClient = await client.get({ index: 'stored', id: '1', stored_fields: ['foo'] });
  assert.deepEqual(viaClient.body.fields, { foo: ['bar'] });
});

test('search accepts the execution-tuning parameters clients send (request_cache, max_concurrent_shard_requests, pre_filter_shard_size, batched_reduce_size, ccs_minimize_roundtrips)', async () => {
  const tuned = await call(server, 'POST', '/films/_search?request_cache=true&max_concurrent_shard_requests=5&pre_filter_shard_size=1&batched_reduce_size=512&ccs_minimize_roundtrips=false', { json: { query: { match: { title: 'red' } } } });
  assert.equal(tuned.status, 200, tuned.text);
  assert.equal(tuned.body.hits.total.value, 2);
  assert.equal((await call(server, 'POST', '/films/_search?max_concurrent_shard_requests=0', { json: {} })).status, 400, 'bounds still apply');
});

test('GET _mapping of a collection without fields shows mappings: {} (as Elasticsearch)', async () => {
  assert.equal((await call(server, 'PUT', '/bare')).status, 200);
  const bare = await call(server, 'GET', '/bare/_mapping');
  assert.deepEqual(bare.body, { bare: { mappings: {} } });
  const mapped = await call(server, 'GET', '/films/_mapping');
  assert.equal(mapped.body.films.mappings.properties.title.type, 'text');
  const all = await call(server, 'GET', '/_mapping');
  assert.deepEqual(all.body.bare, { mappings: {} });
  await call(server, 'DELETE', '/bare');
});
