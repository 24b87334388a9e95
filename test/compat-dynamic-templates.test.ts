/**
 * `dynamic_templates` through real HTTP: rules chosen by name, path and JSON type map the fields
 * documents introduce (`{name}` and `{dynamic_type}` substituted), the mapped types answer queries
 * as declared ones do, GET _mapping shows the templates, PUT _mapping merges them by name, and a
 * template that does not make a valid mapping is OpenSearch's 400; `date_detection` and
 * `numeric_detection` decide how strings are read.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { call, startServer, type TroveServer } from './harness.ts';

let server: TroveServer;

const TEMPLATES = [
  { ips: { match: '*_ip', mapping: { type: 'ip' } } },
  { labels: { path_match: 'labels.*', match_mapping_type: 'object', mapping: { type: 'flattened' } } },
  { strings: { match_mapping_type: 'string', mapping: { type: 'keyword' } } },
  { counts: { match_pattern: 'regex', match: '^n_\\d+$', mapping: { type: '{dynamic_type}', meta: { source: '{name}' } } } },
];

before(async () => {
  server = await startServer();
  const created = await call(server, 'PUT', '/dyn', { json: { mappings: { dynamic_templates: TEMPLATES } } });
  assert.equal(created.status, 200, created.text);
  for (const [id, doc] of [
    ['1', { client_ip: '10.1.2.3', labels: { env: { stage: 'prod' } }, title: 'Hello World', n_1: 5 }],
    ['2', { client_ip: '192.168.0.9', labels: { env: { stage: 'dev' } }, title: 'hello', n_1: 9 }],
  ] as const) {
    const written = await call(server, 'PUT', `/dyn/_doc/${id}?refresh=true`, { json: doc });
    assert.equal(written.status, 201, written.text);
  }
});

after(async () => {
  await server?.cleanup();
});

async function ids(query: unknown): Promise<string[]> {
  const response = await call(server, 'POST', '/dyn/_search', { json: { query } });
  assert.equal(response.status, 200, response.text);
  return response.body.hits.hits.map((hit: any) => hit._id).sort();
}

test('templates map new fields and the fields answer as their types', async () => {
  const mapping = await call(server, 'GET', '/dyn/_mapping');
  const { properties, dynamic_templates } = mapping.body.dyn.mappings;
  assert.deepEqual(dynamic_templates, TEMPLATES);
  assert.deepEqual(properties.client_ip, { type: 'ip' });
  assert.deepEqual(properties.labels.properties.env, { type: 'flattened' });
  assert.deepEqual(properties.title, { type: 'keyword' });
  assert.deepEqual(properties.n_1, { type: 'long', meta: { source: 'n_1' } });
  assert.deepEqual(await ids({ term: { client_ip: '10.0.0.0/8' } }), ['1']);
  assert.deepEqual(await ids({ term: { 'labels.env.stage': 'dev' } }), ['2']);
  assert.deepEqual(await ids({ term: { title: 'Hello World' } }), ['1']);
  assert.deepEqual(await ids({ range: { n_1: { gt: 6 } } }), ['2']);
});

test('PUT _mapping merges templates by name; an invalid template is a 400', async () => {
  const update = await call(server, 'PUT', '/dyn/_mapping', { json: { dynamic_templates: [{ strings: { match_mapping_type: 'string', mapping: { type: 'text' } } }] } });
  assert.equal(update.status, 200, update.text);
  const written = await call(server, 'PUT', '/dyn/_doc/3?refresh=true', { json: { summary: 'Quick brown fox' } });
  assert.equal(written.status, 201, written.text);
  assert.deepEqual(await ids({ match: { summary: 'fox' } }), ['3']);
  const mapping = await call(server, 'GET', '/dyn/_mapping');
  assert.deepEqual(mapping.body.dyn.mappings.dynamic_templates.map((template: object) => Object.keys(template)[0]), ['ips', 'labels', 'strings', 'counts']);
  const bad = await call(server, 'PUT', '/dyn_bad', { json: { mappings: { dynamic_templates: [{ broken: { match: 'x', mapping: { type: 'text', analyzer: 'nope' } } }] } } });
  assert.equal(bad.status, 400, bad.text);
  assert.equal(bad.body.error.type, 'mapper_parsing_exception');
  assert.match(bad.body.error.reason, /^dynamic template \[broken\] has invalid content/);
});

test('date_detection and numeric_detection at the mapping root', async () => {
  const created = await call(server, 'PUT', '/detect', { json: { mappings: { date_detection: false, numeric_detection: true } } });
  assert.equal(created.status, 200, created.text);
  const written = await call(server, 'PUT', '/detect/_doc/1?refresh=true', { json: { day: '2024-01-01', count: '42' } });
  assert.equal(written.status, 201, written.text);
  const mapping = await call(server, 'GET', '/detect/_mapping');
  const { properties, date_detection, numeric_detection } = mapping.body.detect.mappings;
  assert.equal(date_detection, false);
  assert.equal(numeric_detection, true);
  assert.equal(properties.day.type, 'text');
  assert.deepEqual(properties.count, { type: 'long' });
  const range = await call(server, 'POST', '/detect/_search', { json: { query: { range: { count: { gt: 40 } } } } });
  assert.equal(range.body.hits.hits.length, 1);
  const update = await call(server, 'PUT', '/detect/_mapping', { json: { date_detection: true } });
  assert.equal(update.status, 200, update.text);
  const later = await call(server, 'PUT', '/detect/_doc/2?refresh=true', { json: { when: '2024-02-01' } });
  assert.equal(later.status, 201, later.text);
  const remapped = await call(server, 'GET', '/detect/_mapping');
  assert.equal(remapped.body.detect.mappings.properties.when.type, 'date');
});

test('dynamic: strict_allow_templates takes new fields a template maps and refuses the others', async () => {
  const mappings = {
    dynamic: 'strict_allow_templates',
    dynamic_templates: [{ strings: { match: 'str*', match_mapping_type: 'string', mapping: { type: 'keyword' } } }],
    properties: { title: { type: 'text' } },
  };
  const created = await call(server, 'PUT', '/templated-strict', { json: { mappings } });
  assert.equal(created.status, 200, created.text);
  const mapped = await call(server, 'PUT', '/templated-strict/_doc/1', { json: { title: 'a', strName: 'x' } });
  assert.equal(mapped.status, 201, mapped.text);
  const refused = await call(server, 'PUT', '/templated-strict/_doc/2', { json: { title: 'b', other: 'y' } });
  assert.equal(refused.status, 400);
  assert.equal(refused.body.error.type, 'strict_dynamic_mapping_exception');
  assert.match(refused.body.error.reason, /mapping set to strict_allow_templates, dynamic introduction of \[other\] within \[_doc\] is not allowed/);
  const mapping = await call(server, 'GET', '/templated-strict/_mapping');
  assert.equal(mapping.body['templated-strict'].mappings.dynamic, 'strict_allow_templates');
  assert.equal(mapping.body['templated-strict'].mappings.properties.strName.type, 'keyword');
  assert.equal(mapping.body['templated-strict'].mappings.properties.other, undefined);
});
