/**
 * The index setting `index.mapping.ignore_malformed` through real HTTP: the default
 * `ignore_malformed` of every field that takes one (mapped at creation or dynamically), which a
 * field's own `ignore_malformed: false` overrides; shown by GET _settings and GET /{collection},
 * hidden from GET _mapping; static (PUT _settings refuses it) and a boolean. Also `fielddata` on
 * text fields: accepted, kept and shown, and a sort or aggregation on such a field says that
 * Trove does not apply it.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { call, startServer, type TroveServer } from './harness.ts';

let server: TroveServer;

before(async () => {
  server = await startServer();
  const created = await call(server, 'PUT', '/lenient', {
    json: {
      settings: { index: { mapping: { ignore_malformed: true } }, number_of_shards: 2 },
      mappings: { properties: { count: { type: 'integer' }, when: { type: 'date' }, exact: { type: 'integer', ignore_malformed: false }, name: { type: 'keyword' } } },
    },
  });
  assert.equal(created.status, 200, created.text);
});

after(async () => {
  await server?.cleanup();
});

async function ids(query: unknown): Promise<string[]> {
  const response = await call(server, 'POST', '/lenient/_search', { json: { query, size: 20 } });
  assert.equal(response.status, 200, response.text);
  return response.body.hits.hits.map((hit: any) => hit._id).sort();
}

test('fields without their own ignore_malformed skip malformed values under the index setting', async () => {
  const written = await call(server, 'PUT', '/lenient/_doc/1?refresh=true', { json: { count: 'many', when: 'someday', name: 'a' } });
  assert.equal(written.status, 201, written.text);
  const good = await call(server, 'PUT', '/lenient/_doc/2?refresh=true', { json: { count: 4, when: '2024-01-01', name: 'b' } });
  assert.equal(good.status, 201, good.text);
  assert.deepEqual(await ids({ term: { _ignored: 'count' } }), ['1']);
  assert.deepEqual(await ids({ term: { _ignored: 'when' } }), ['1']);
  assert.deepEqual(await ids({ exists: { field: 'count' } }), ['2']);
  const got = await call(server, 'GET', '/lenient/_doc/1');
  assert.deepEqual(got.body._source, { count: 'many', when: 'someday', name: 'a' });
  // A field's own ignore_malformed: false wins over the index setting.
  const refused = await call(server, 'PUT', '/lenient/_doc/3', { json: { exact: 'x' } });
  assert.equal(refused.status, 400, refused.text);
  assert.equal(refused.body.error.type, 'mapper_parsing_exception');
});

test('dynamically mapped fields follow the index setting too', async () => {
  const first = await call(server, 'PUT', '/lenient/_doc/4?refresh=true', { json: { size: 10 } });
  assert.equal(first.status, 201, first.text);
  const second = await call(server, 'PUT', '/lenient/_doc/5?refresh=true', { json: { size: 'large' } });
  assert.equal(second.status, 201, second.text);
  assert.deepEqual(await ids({ term: { _ignored: 'size' } }), ['5']);
  const mapping = await call(server, 'GET', '/lenient/_mapping');
  assert.equal(mapping.body.lenient.mappings.properties.size.type, 'long');
});

test('the setting is shown by GET _settings and GET /{collection}, not by GET _mapping; it is static and a boolean', async () => {
  const settings = await call(server, 'GET', '/lenient/_settings');
  assert.equal(settings.body.lenient.settings.index.mapping.ignore_malformed, 'true');
  const described = await call(server, 'GET', '/lenient');
  assert.equal(described.body.lenient.settings.index.mapping.ignore_malformed, 'true');
  assert.deepEqual(Object.keys(described.body.lenient.mappings).sort(), ['properties']);
  const mapping = await call(server, 'GET', '/lenient/_mapping');
  assert.deepEqual(Object.keys(mapping.body.lenient.mappings).sort(), ['properties']);
  const update = await call(server, 'PUT', '/lenient/_settings', { json: { index: { mapping: { ignore_malformed: false } } } });
  assert.equal(update.status, 400, update.text);
  assert.match(update.body.error.reason, /index\.mapping\.ignore_malformed/);
  const bad = await call(server, 'PUT', '/lenient_bad', { json: { settings: { 'index.mapping.ignore_malformed': 'maybe' } } });
  assert.equal(bad.status, 400, bad.text);
  assert.equal(bad.body.error.type, 'illegal_argument_exception');
  const strict = await call(server, 'PUT', '/strict_default', { json: { mappings: { properties: { count: { type: 'integer' } } } } });
  assert.equal(strict.status, 200);
  const refused = await call(server, 'PUT', '/strict_default/_doc/1', { json: { count: 'many' } });
  assert.equal(refused.status, 400);
});

test('after a restart the setting still applies', async () => {
  await server.restart();
  const written = await call(server, 'PUT', '/lenient/_doc/6?refresh=true', { json: { count: 'lots' } });
  assert.equal(written.status, 201, written.text);
  assert.deepEqual(await ids({ term: { _ignored: 'count' } }), ['1', '6']);
  const mapping = await call(server, 'GET', '/lenient/_mapping');
  assert.deepEqual(Object.keys(mapping.body.lenient.mappings).sort(), ['properties']);
});

test('fielddata on a text field is accepted and shown; sorting on it says it is not applied', async () => {
  const created = await call(server, 'PUT', '/texts', { json: { mappings: { properties: { body: { type: 'text', fielddata: true }, plain: { type: 'text' } } } } });
  assert.equal(created.status, 200, created.text);
  const mapping = await call(server, 'GET', '/texts/_mapping');
  assert.deepEqual(mapping.body.texts.mappings.properties.body, { type: 'text', fielddata: true });
  const sorted = await call(server, 'POST', '/texts/_search', { json: { sort: ['body'] } });
  assert.equal(sorted.status, 400, sorted.text);
  assert.match(sorted.body.error.reason, /\[body\] is mapped with fielddata=true, which is accepted but not applied/);
  const aggregated = await call(server, 'POST', '/texts/_search', { json: { size: 0, aggs: { words: { terms: { field: 'plain' } } } } });
  assert.equal(aggregated.status, 400);
  assert.match(aggregated.body.error.reason, /Alternatively, set fielddata=true on \[plain\]/);
  const bad = await call(server, 'PUT', '/texts_bad', { json: { mappings: { properties: { k: { type: 'keyword', fielddata: true } } } } });
  assert.equal(bad.status, 400);
});
