/**
 * Request details OpenSearch clients and its REST tests rely on, through real HTTP: `_type` on a
 * bulk action line is read and ignored, an empty action line gets OpenSearch's message, the URL's
 * `_source` gives every bulk update its `get` section, GET takes `version_type` external and
 * external_gte (checked for equality, as reads are), and `_validate/query` answers `valid: false`
 * for a body key other than `query`.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { call, startServer, type TroveServer } from './harness.ts';

let server: TroveServer;
const NDJSON = { 'content-type': 'application/x-ndjson' };

before(async () => {
  server = await startServer();
});

after(async () => {
  await server?.cleanup();
});

function bulk(lines: unknown[], query = '') {
  return call(server, 'POST', `/_bulk${query}`, { body: lines.map((line) => JSON.stringify(line)).join('\n') + '\n', headers: NDJSON });
}

test('_type on an action line is ignored; an empty action line is refused with OpenSearch words', async () => {
  const typed = await bulk([{ index: { _index: 'typed', _type: '_doc', _id: '1' } }, { foo: 'bar' }]);
  assert.equal(typed.status, 200, typed.text);
  assert.equal(typed.body.errors, false, typed.text);
  const empty = await bulk([{ index: { _index: 'typed', _id: '2' } }, { f: 1 }, {}]);
  assert.equal(empty.status, 400);
  assert.match(empty.body.error.reason, /Malformed action\/metadata line \[3\], expected FIELD_NAME but found \[END_OBJECT\]/);
  assert.equal((await call(server, 'GET', '/typed/_doc/2')).status, 404, 'nothing of a refused request is applied');
});

test("the URL's _source is the default of every bulk update's get section", async () => {
  await bulk([{ index: { _index: 'src', _id: '1' } }, { foo: 'bar', n: 1 }]);
  const answer = await bulk([{ update: { _index: 'src', _id: '1' } }, { doc: { foo: 'garply' } }, { update: { _index: 'src', _id: '1', _source: 'n' } }, { doc: { n: 2 } }], '?_source=true');
  assert.equal(answer.body.errors, false, answer.text);
  assert.deepEqual(answer.body.items[0].update.get._source, { foo: 'garply', n: 1 });
  assert.deepEqual(answer.body.items[1].update.get._source, { n: 2 }, "an item's own _source wins");
  const plain = await bulk([{ update: { _index: 'src', _id: '1' } }, { doc: { foo: 'x' } }]);
  assert.equal(plain.body.items[0].update.get, undefined);
});

test('GET with version_type external or external_gte checks the version for equality', async () => {
  await call(server, 'PUT', '/versions/_doc/1', { json: { v: 1 } });
  await call(server, 'PUT', '/versions/_doc/1', { json: { v: 2 } });
  for (const type of ['external', 'external_gte']) {
    assert.equal((await call(server, 'GET', `/versions/_doc/1?version=2&version_type=${type}`)).status, 200);
    assert.equal((await call(server, 'GET', `/versions/_doc/1?version=10&version_type=${type}`)).status, 409);
    assert.equal((await call(server, 'GET', `/versions/_doc/1?version=1&version_type=${type}`)).status, 409);
  }
  assert.equal((await call(server, 'GET', '/versions/_doc/1?version=2&version_type=force')).status, 400);
});

test('_validate/query: a body key other than query is valid: false, with the reason under explain', async () => {
  await call(server, 'PUT', '/validated');
  const plain = await call(server, 'POST', '/_validate/query', { json: { match_all: {} } });
  assert.equal(plain.status, 200, plain.text);
  assert.equal(plain.body.valid, false);
  assert.equal(plain.body.error, undefined);
  const explained = await call(server, 'POST', '/_validate/query?explain=true', { json: { match_all: {} } });
  assert.equal(explained.body.valid, false);
  assert.match(explained.body.error, /request does not support \[match_all\]/);
  assert.equal((await call(server, 'POST', '/_validate/query', { json: { query: { match_all: {} } } })).body.valid, true);
});

test('search parameter errors as OpenSearch words them; track_total_hits -1 disables the count', async () => {
  await call(server, 'PUT', '/window');
  await call(server, 'PUT', '/window/_doc/1?refresh=true', { json: { title: 'one' } });
  const negative = await call(server, 'POST', '/window/_search?track_total_hits=-2');
  assert.equal(negative.status, 400);
  assert.equal(negative.body.error.reason, '[track_total_hits] parameter must be positive or equals to -1, got -2');
  const disabled = await call(server, 'POST', '/window/_search?track_total_hits=-1');
  assert.equal(disabled.status, 200, disabled.text);
  assert.equal(disabled.body.hits.total, undefined);
  assert.equal(disabled.body.hits.hits.length, 1);
  const cutoff = await call(server, 'POST', '/window/_search', { json: { query: { multi_match: { query: 'o', fields: ['title'], type: 'bool_prefix', cutoff_frequency: 0.1 } } } });
  assert.equal(cutoff.status, 400);
  assert.match(cutoff.body.error.reason, /\[cutoff_frequency\] not allowed for type \[bool_prefix\]/);
  const shardDoc = await call(server, 'POST', '/window/_search', { json: { sort: ['_shard_doc'] } });
  assert.equal(shardDoc.status, 400);
  assert.equal(shardDoc.body.error.type, 'action_request_validation_exception');
});

test('indices_boost naming a missing collection is a 404, left out with ignore_unavailable', async () => {
  await call(server, 'PUT', '/boost-a/_doc/1?refresh=true', { json: { t: 'x' } });
  await call(server, 'PUT', '/boost-b/_doc/1?refresh=true', { json: { t: 'x' } });
  const body = { query: { match: { t: 'x' } }, indices_boost: [{ nonexistent: 2 }, { 'boost-a': 1 }, { 'boost-b': 2 }] };
  const missing = await call(server, 'POST', '/boost-*/_search', { json: body });
  assert.equal(missing.status, 404);
  assert.match(missing.body.error.reason, /no such index \[nonexistent\]/);
  const ignored = await call(server, 'POST', '/boost-*/_search?ignore_unavailable=true', { json: body });
  assert.equal(ignored.status, 200, ignored.text);
  assert.deepEqual(ignored.body.hits.hits.map((hit: { _index: string }) => hit._index), ['boost-b', 'boost-a']);
});

test('date fields take microsecond patterns, zone offsets and named patterns such as basic_date', async () => {
  const mappings = { properties: { at: { type: 'date', format: 'yyyy-MM-dd HH:mm:ss.SSSSSS' }, day: { type: 'date', format: 'basic_date' }, zoned: { type: 'date', format: "yyyy-MM-dd'T'HH:mmXXX" } } };
  assert.equal((await call(server, 'PUT', '/dates', { json: { mappings } })).status, 200);
  const loaded = await bulk([
    { index: { _index: 'dates', _id: '1' } },
    { at: '2019-10-21 00:30:04.828740', day: '20191021', zoned: '2019-10-21T02:30+02:00' },
    { index: { _index: 'dates', _id: '2' } },
    { at: '2019-10-21 08:30:04.828733', day: '20191022', zoned: '2019-10-21T00:31Z' },
  ], '?refresh=true');
  assert.equal(loaded.body.errors, false, loaded.text);
  const sorted = await call(server, 'POST', '/dates/_search', { json: { sort: [{ at: 'desc' }] } });
  assert.deepEqual(sorted.body.hits.hits.map((hit: { _id: string }) => hit._id), ['2', '1']);
  const byZone = await call(server, 'POST', '/dates/_search', { json: { sort: [{ zoned: 'asc' }] } });
  assert.deepEqual(byZone.body.hits.hits.map((hit: { sort: number[] }) => hit.sort[0]), [Date.UTC(2019, 9, 21, 0, 30), Date.UTC(2019, 9, 21, 0, 31)]);
  const ranged = await call(server, 'POST', '/dates/_search', { json: { query: { range: { day: { gte: '20191022' } } } } });
  assert.deepEqual(ranged.body.hits.hits.map((hit: { _id: string }) => hit._id), ['2']);
  const bad = await call(server, 'PUT', '/dates-bad', { json: { mappings: { properties: { at: { type: 'date', format: 'yyyy-ww' } } } } });
  assert.equal(bad.status, 400);
});

test('GET _mapping of a missing collection is a 404, or {} with ignore_unavailable', async () => {
  assert.equal((await call(server, 'GET', '/missing-one/_mapping')).status, 404);
  const ignored = await call(server, 'GET', '/missing-one/_mapping?ignore_unavailable=true');
  assert.equal(ignored.status, 200, ignored.text);
  assert.deepEqual(ignored.body, {});
});
