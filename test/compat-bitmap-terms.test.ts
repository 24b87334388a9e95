/**
 * `terms` with `value_type: bitmap` (OpenSearch's bitmap filtering), through real HTTP: a base64
 * roaring bitmap given inline or read by a terms lookup from a `binary` field filters an `integer`
 * field, alone and inside `bool`; other field types, malformed bitmaps and unknown value types are
 * 400s.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { call, startServer, type TroveServer } from './harness.ts';

let server: TroveServer;
const NDJSON = { 'content-type': 'application/x-ndjson' };
const ENROLLED: Record<string, string> = {
  '101': 'OjAAAAEAAAAAAAEAEAAAAG8A3gA=', // 111, 222
  '102': 'OjAAAAEAAAAAAAAAEAAAAG8A', // 111
  '104': 'OjAAAAEAAAAAAAEAEAAAAN4ATQE=', // 222, 333
};

before(async () => {
  server = await startServer();
  assert.equal((await call(server, 'PUT', '/students', { json: { mappings: { properties: { student_id: { type: 'integer' }, name: { type: 'keyword' } } } } })).status, 200);
  assert.equal((await call(server, 'PUT', '/classes', { json: { mappings: { properties: { enrolled: { type: 'binary', store: true } } } } })).status, 200);
  const students = [
    [111, 'jane'],
    [222, 'mary'],
    [333, 'john'],
  ].flatMap(([id, name], index) => [JSON.stringify({ index: { _index: 'students', _id: String(index + 1) } }), JSON.stringify({ student_id: id, name })]);
  const classes = Object.entries(ENROLLED).flatMap(([id, enrolled]) => [JSON.stringify({ index: { _index: 'classes', _id: id } }), JSON.stringify({ enrolled })]);
  const loaded = await call(server, 'POST', '/_bulk', { body: [...students, ...classes].join('\n') + '\n', headers: NDJSON });
  assert.equal(loaded.body.errors, false, loaded.text);
});

after(async () => {
  await server?.cleanup();
});

async function names(query: unknown): Promise<string[]> {
  const answer = await call(server, 'POST', '/students/_search', { json: { query, sort: [{ student_id: 'asc' }] } });
  assert.equal(answer.status, 200, answer.text);
  return answer.body.hits.hits.map((hit: { _source: { name: string } }) => hit._source.name);
}

const lookup = (id: string) => ({ terms: { student_id: { index: 'classes', id, path: 'enrolled', store: true }, value_type: 'bitmap' } });

test('an inline bitmap and a looked-up one filter the integer field', async () => {
  assert.deepEqual(await names({ terms: { student_id: ENROLLED['101'], value_type: 'bitmap' } }), ['jane', 'mary']);
  assert.deepEqual(await names({ terms: { student_id: [ENROLLED['104']], value_type: 'bitmap' } }), ['mary', 'john']);
  assert.deepEqual(await names(lookup('101')), ['jane', 'mary']);
  assert.deepEqual(await names({ bool: { must: [lookup('101')], must_not: [lookup('104')] } }), ['jane']);
  assert.deepEqual(await names({ bool: { should: [lookup('102'), lookup('104')] } }), ['jane', 'mary', 'john']);
  const counted = await call(server, 'POST', '/students/_count', { json: { query: lookup('104') } });
  assert.equal(counted.body.count, 2, counted.text);
});

test('other field types, malformed bitmaps and unknown value types are 400s', async () => {
  const keyword = await call(server, 'POST', '/students/_search', { json: { query: { terms: { name: ENROLLED['101'], value_type: 'bitmap' } } } });
  assert.equal(keyword.status, 400);
  assert.match(keyword.body.error.reason, /only fields of type \[integer\]/);
  const truncated = await call(server, 'POST', '/students/_search', { json: { query: { terms: { student_id: 'OjAAAAEAAAAAAAEAEAAAAG8A', value_type: 'bitmap' } } } });
  assert.equal(truncated.status, 400);
  assert.match(truncated.body.error.reason, /not a serialized roaring bitmap/);
  const unknown = await call(server, 'POST', '/students/_search', { json: { query: { terms: { student_id: [111], value_type: 'bits' } } } });
  assert.equal(unknown.status, 400);
  const plain = await call(server, 'POST', '/students/_search', { json: { query: { terms: { student_id: [111], value_type: 'default' } } } });
  assert.equal(plain.body.hits.total.value, 1, plain.text);
});
