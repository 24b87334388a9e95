/**
 * `_bulk` document lines cross to their shards as the text the client sent and are parsed there:
 * the answers must be those of a parser in the HTTP thread. Per-item parse errors (whatever else
 * is wrong with the item), documents that are not objects, new fields through dynamic mapping,
 * order within a shard, the stored `_source`, and the write statistics, which leave out items
 * whose line does not parse.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { call, startServer, type CallOptions, type TroveServer } from './harness.ts';

let server: TroveServer;
let adminKey: string;

before(async () => {
  server = await startServer({ security: true });
  adminKey = await server.bootstrapKey();
  const created = await admin('PUT', '/mail', {
    json: { settings: { number_of_shards: 2 }, mappings: { properties: { subject: { type: 'text' }, size: { type: 'long' } } } },
  });
  assert.equal(created.status, 200, created.text);
});

after(async () => {
  await server.cleanup();
});

function admin(method: string, path: string, options: CallOptions = {}) {
  return call(server, method, path, { apiKey: adminKey, ...options });
}

function bulk(path: string, lines: string[], apiKey = adminKey) {
  return call(server, 'POST', path, { apiKey, body: lines.join('\n') + '\n', headers: { 'content-type': 'application/x-ndjson' } });
}

test('a document line that does not parse fails its item with the parse error, before any other check', async () => {
  const deep = '{"a":'.repeat(25) + '1' + '}'.repeat(25);
  const response = await bulk('/mail/_bulk', [
    '{"index":{"_id":"1"}}',
    '{"subject": "first" , "size": 1}',
    '{"index":{"_id":"2"}}',
    '{"subject": ',
    '{"create":{"_index":"no-such-collection","_id":"3"}}',
    '{"subject": ',
    '{"index":{"_id":""}}',
    '{broken',
    '{"index":{}}',
    deep,
    '{"index":{"_id":"4"}}',
    '{"__proto__": {"x": 1}}',
    '{"index":{"_id":"5"}}',
    '[1, 2]',
    '{"create":{"_index":"no-such-collection","_id":"6"}}',
    '[1, 2]',
    '{"index":{"_id":"7"}}',
    '{"subject": "seventh", "size": 7}',
  ]);
  assert.equal(response.status, 200, response.text);
  assert.equal(response.body.errors, true);
  const items = response.body.items as Array<Record<string, any>>;
  const summary = items.map((item) => {
    const [action, result] = Object.entries(item)[0]!;
    return [action, result._index, result._id, result.status, result.error?.type ?? result.result];
  });
  assert.deepEqual(summary, [
    ['index', 'mail', '1', 201, 'created'],
    ['index', 'mail', '2', 400, 'x_content_parse_exception'],
    ['create', 'no-such-collection', '3', 400, 'x_content_parse_exception'],
    ['index', 'mail', '', 400, 'x_content_parse_exception'],
    ['index', 'mail', null, 400, 'x_content_parse_exception'],
    ['index', 'mail', '4', 400, 'x_content_parse_exception'],
    ['index', 'mail', '5', 400, 'mapper_parsing_exception'],
    ['create', 'no-such-collection', '6', 400, 'mapper_parsing_exception'],
    ['index', 'mail', '7', 201, 'created'],
  ]);
  assert.match(items[1]!.index.error.reason, /Failed to parse the source on line \[4\]/);
  assert.match(items[4]!.index.error.reason, /the source on line \[10\] exceeds the maximum allowed depth/);
  assert.match(items[5]!.index.error.reason, /\[__proto__\] is not allowed/);
  const stored = await admin('GET', '/mail/_doc/1');
  assert.deepEqual(stored.body._source, { subject: 'first', size: 1 });
});

test('new fields in document lines extend the mapping once; writes to one id keep their order', async () => {
  const response = await bulk('/mail/_bulk', [
    '{"index":{"_id":"n1"}}',
    '{"subject":"with a label","label":"red","sent":"2024-05-01T10:00:00Z"}',
    '{"update":{"_id":"n1"}}',
    '{"doc":{"label":"blue"}}',
    '{"index":{"_id":"n2"}}',
    '{"subject":"nested","meta":{"folder":"inbox","flags":["seen"]}}',
    '{"delete":{"_id":"n2"}}',
    '{"index":{"_id":"n2"}}',
    '{"subject":"again"}',
  ]);
  assert.equal(response.status, 200, response.text);
  assert.equal(response.body.errors, false, response.text);
  const results = (response.body.items as Array<Record<string, any>>).map((item) => Object.values(item)[0].result);
  assert.deepEqual(results, ['created', 'updated', 'created', 'deleted', 'created']);
  const mapping = await admin('GET', '/mail/_mapping');
  const properties = mapping.body.mail.mappings.properties;
  assert.equal(properties.label.type, 'text');
  assert.equal(properties.sent.type, 'date');
  assert.equal(properties.meta.properties.folder.type, 'text');
  const search = await admin('POST', '/mail/_search', { json: { query: { match: { label: 'blue' } } } });
  assert.deepEqual(search.body.hits.hits.map((hit: { _id: string }) => hit._id), ['n1']);
  const again = await admin('GET', '/mail/_doc/n2');
  assert.deepEqual([again.body._version, again.body._source], [1, { subject: 'again' }]);
});

test('an update bringing a new field applies to a document an earlier item of the same request created', async () => {
  const response = await bulk('/mail/_bulk', [
    '{"index":{"_id":"u1"}}',
    '{"subject":"first"}',
    '{"update":{"_id":"u1"}}',
    '{"doc":{"reviewer":"ann"}}',
    '{"update":{"_id":"u2"}}',
    '{"doc":{"reviewer":"bob"}}',
  ]);
  assert.equal(response.status, 200, response.text);
  const results = (response.body.items as Array<Record<string, any>>).map((item) => Object.values(item)[0].result ?? Object.values(item)[0].error.type);
  assert.deepEqual(results, ['created', 'updated', 'document_missing_exception']);
  const got = await admin('GET', '/mail/_doc/u1');
  assert.deepEqual(got.body._source, { subject: 'first', reviewer: 'ann' });
  const mapping = await admin('GET', '/mail/_mapping');
  assert.equal(mapping.body.mail.mappings.properties.reviewer.type, 'text');
});

test('a strict mapping refuses a line with a new field, and only that item', async () => {
  const created = await admin('PUT', '/strict', { json: { mappings: { dynamic: 'strict', properties: { subject: { type: 'text' } } } } });
  assert.equal(created.status, 200, created.text);
  const response = await bulk('/strict/_bulk', ['{"index":{"_id":"1"}}', '{"subject":"ok"}', '{"index":{"_id":"2"}}', '{"subject":"no","extra":1}']);
  const types = (response.body.items as Array<Record<string, any>>).map((item) => item.index.error?.type ?? item.index.result);
  assert.deepEqual(types, ['created', 'strict_dynamic_mapping_exception']);
});

test('bulk statistics count the items that reached a shard, not the lines that did not parse', async () => {
  const before = await admin('GET', '/_node/_local/stats');
  const response = await bulk('/mail/_bulk', ['{"index":{"_id":"s1"}}', '{"subject":"counted"}', '{"index":{"_id":"s2"}}', '{not json', '{"index":{"_id":"s3"}}', '[]']);
  assert.equal(response.body.errors, true);
  const stats = await admin('GET', '/_node/_local/stats');
  const delta = (key: 'requests' | 'items' | 'failed_items') => stats.body.bulk[key] - before.body.bulk[key];
  assert.deepEqual([delta('requests'), delta('items'), delta('failed_items')], [1, 2, 1]);
});

test('a key limited to a namespace is not refused for a line that does not parse', async () => {
  const namespace = await admin('PUT', '/_namespace/team');
  assert.equal(namespace.status, 200, namespace.text);
  const other = await admin('PUT', '/team-mail', { json: { namespace: 'team' } });
  assert.equal(other.status, 200, other.text);
  const key = await admin('POST', '/_security/api_key', { json: { name: 'default-writer', role: 'write', namespaces: ['default'] } });
  assert.equal(key.status, 200, key.text);
  const writer = key.body.api_key as string;
  const allowed = await bulk('/_bulk', ['{"index":{"_index":"team-mail","_id":"x"}}', '{broken', '{"index":{"_index":"mail","_id":"y"}}', '{"subject":"allowed"}'], writer);
  assert.equal(allowed.status, 200, allowed.text);
  assert.deepEqual(
    (allowed.body.items as Array<Record<string, any>>).map((item) => item.index.error?.type ?? item.index.result),
    ['x_content_parse_exception', 'created'],
  );
  const refused = await bulk('/_bulk', ['{"index":{"_index":"team-mail","_id":"z"}}', '{"ok":1}'], writer);
  assert.equal(refused.status, 403, refused.text);
});
