/**
 * Index operations end to end, as OpenSearch clients call them: `_stats/{metric}` (only the
 * sections asked, real figures where Trove has them, OpenSearch's 400 for an unknown metric),
 * `_flush` (the in-memory layer becomes a segment), `primary_only` on `_forcemerge`, and the
 * put-alias forms with the collection and alias in the body, with `is_hidden` shown by `GET _alias`.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { call, ndjson, startServer, type TroveServer } from './harness.ts';

let server: TroveServer;
const METRICS = ['docs', 'store', 'indexing', 'get', 'search', 'merge', 'refresh', 'flush', 'warmer', 'query_cache', 'fielddata', 'completion', 'segments', 'translog', 'request_cache', 'recovery'];

before(async () => {
  // Epochs only when asked: the flush below is the one that makes the segment.
  server = await startServer({ settings: { 'epoch.interval_ms': '3600000', 'epoch.max_docs': '1000000' } });
  for (const name of ['ops-a', 'ops-b']) {
    const created = await call(server, 'PUT', `/${name}`, { json: { settings: { number_of_shards: 2 } } });
    assert.equal(created.status, 200, created.text);
  }
  const lines: unknown[] = [];
  for (let i = 0; i < 30; i++) lines.push({ index: { _index: i < 20 ? 'ops-a' : 'ops-b', _id: `d${i}` } }, { n: i });
  const loaded = await call(server, 'POST', '/_bulk', { body: ndjson(lines), headers: { 'content-type': 'application/x-ndjson' } });
  assert.equal(loaded.body.errors, false, loaded.text.slice(0, 300));
});

after(async () => {
  await server?.cleanup();
});

test('_stats/{metric} answers only the sections asked, for _all and each collection', async () => {
  const one = await call(server, 'GET', '/_stats/docs');
  assert.equal(one.status, 200, one.text);
  assert.deepEqual(Object.keys(one.body._all.primaries), ['docs']);
  assert.deepEqual(one.body.indices['ops-a'].primaries.docs, { count: 20, deleted: 0 });
  assert.deepEqual(one.body.indices['ops-b'].total.docs, { count: 10, deleted: 0 });
  assert.equal(one.body._all.total.docs.count, 30);

  const two = await call(server, 'GET', '/ops-a/_stats/store,segments');
  assert.equal(two.status, 200, two.text);
  assert.deepEqual(Object.keys(two.body.indices), ['ops-a']);
  assert.deepEqual(Object.keys(two.body.indices['ops-a'].primaries), ['store', 'segments']);
  assert.ok(two.body.indices['ops-a'].primaries.store.size_in_bytes > 0);

  const all = await call(server, 'GET', '/_stats/_all');
  assert.deepEqual(Object.keys(all.body._all.total), METRICS);
  assert.ok(all.body._all.total.indexing.index_total >= 30, 'the node counts its writes');
  const plain = await call(server, 'GET', '/_stats');
  assert.deepEqual(Object.keys(plain.body._all.total), METRICS);
  assert.deepEqual(plain.body._all.total.query_cache.hit_count, 0);
});

test('an unknown metric is OpenSearch\'s 400, with its suggestion', async () => {
  const unknown = await call(server, 'GET', '/_stats/doc');
  assert.equal(unknown.status, 400, unknown.text);
  assert.equal(unknown.body.error.type, 'illegal_argument_exception');
  assert.equal(unknown.body.error.reason, 'request [/_stats/doc] contains unrecognized metric: [doc] -> did you mean [docs]?');
  const several = await call(server, 'GET', '/ops-a/_stats/docs,xyz,abc');
  assert.equal(several.status, 400);
  assert.equal(several.body.error.reason, 'request [/ops-a/_stats/docs,xyz,abc] contains unrecognized metrics: [abc], [xyz]');
  const mixed = await call(server, 'GET', '/_stats/_all,docs');
  assert.equal(mixed.status, 400);
  assert.equal(mixed.body.error.reason, 'request [/_stats/_all,docs] contains _all and individual metrics [_all,docs]');
});

test('_flush freezes the in-memory layer into segments, and _forcemerge takes primary_only', async () => {
  const before = await call(server, 'GET', '/ops-a/_stats/segments,translog,flush');
  assert.equal(before.body.indices['ops-a'].primaries.segments.count, 0, before.text);
  assert.ok(before.body.indices['ops-a'].primaries.translog.uncommitted_operations > 0);
  const flushed = await call(server, 'POST', '/ops-a/_flush');
  assert.equal(flushed.status, 200, flushed.text);
  assert.deepEqual(flushed.body, { _shards: { total: 2, successful: 2, failed: 0 } });
  const after = await call(server, 'GET', '/ops-a/_stats/segments,translog,flush,refresh');
  const stats = after.body.indices['ops-a'].primaries;
  assert.equal(stats.segments.count, 2, after.text);
  assert.equal(stats.translog.uncommitted_operations, 0);
  assert.ok(stats.flush.total > before.body.indices['ops-a'].primaries.flush.total);
  // The other collection was not flushed; `_flush` of everything is.
  assert.equal((await call(server, 'GET', '/ops-b/_stats/segments')).body.indices['ops-b'].primaries.segments.count, 0);
  const everything = await call(server, 'GET', '/_flush');
  assert.deepEqual(everything.body, { _shards: { total: 4, successful: 4, failed: 0 } });
  assert.equal((await call(server, 'GET', '/ops-b/_stats/segments')).body.indices['ops-b'].primaries.segments.count, 2);
  const count = await call(server, 'GET', '/ops-a,ops-b/_count');
  assert.equal(count.body.count, 30);
  assert.equal((await call(server, 'POST', '/missing/_flush')).status, 404);

  const merged = await call(server, 'POST', '/ops-a/_forcemerge?primary_only=true&max_num_segments=1');
  assert.equal(merged.status, 200, merged.text);
  assert.equal(merged.body._shards.failed, 0);
});

test('put alias with the collection and alias in the body, and is_hidden shown by GET _alias', async () => {
  const forms: Array<[string, string, unknown]> = [
    ['PUT', '/_alias/by-path-name', { index: 'ops-a' }],
    ['POST', '/ops-a/_alias', { alias: 'by-path-index', is_hidden: true }],
    ['PUT', '/_alias', { index: 'ops-b', alias: 'by-body', is_hidden: false, is_write_index: true }],
    ['PUT', '/ops-b/_aliases/hidden-one', { is_hidden: true }],
  ];
  for (const [method, path, json] of forms) {
    const response = await call(server, method, path, { json });
    assert.deepEqual([response.status, response.body], [200, { acknowledged: true }], `${method} ${path}: ${response.text}`);
  }
  const aliases = await call(server, 'GET', '/_alias');
  assert.deepEqual(aliases.body['ops-a'].aliases, { 'by-path-index': { is_hidden: true }, 'by-path-name': {} });
  assert.deepEqual(aliases.body['ops-b'].aliases, { 'by-body': { is_write_index: true, is_hidden: false }, 'hidden-one': { is_hidden: true } });
  const search = await call(server, 'POST', '/by-path-name/_count');
  assert.equal(search.body.count, 20);

  // As OpenSearch: every collection of an alias has the same is_hidden.
  const mixed = await call(server, 'PUT', '/ops-a/_alias/hidden-one');
  assert.equal(mixed.status, 400, mixed.text);
  assert.equal(
    mixed.body.error.reason,
    'alias [hidden-one] has is_hidden set to true on indices [ops-b] but does not have is_hidden set to true on indices [ops-a]; alias must have the same is_hidden setting on all indices',
  );
  const missingIndex = await call(server, 'PUT', '/_alias', { json: { alias: 'nowhere' } });
  assert.equal(missingIndex.status, 400, missingIndex.text);
  assert.equal(missingIndex.body.error.type, 'action_request_validation_exception');
  const badHidden = await call(server, 'PUT', '/ops-a/_alias/x', { json: { is_hidden: 'yes' } });
  assert.equal(badHidden.status, 400, badHidden.text);
});
