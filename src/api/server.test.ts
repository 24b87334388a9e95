import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { pino } from 'pino';
import { loadConfig } from '../config/load-config.ts';
import { NodeService } from '../node/node-service.ts';
import { buildServer } from './server.ts';

let dataDir: string;
let node: NodeService;
let app: FastifyInstance;

before(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'trove-api-'));
  const config = loadConfig({ flags: { 'path.data': dataDir, 'http.max_content_length': '2kb', 'security.enabled': 'false' }, env: {} });
  const logger = pino({ level: 'silent' });
  node = await NodeService.open({ config, logger });
  app = await buildServer({ node, config, logger });
  await app.ready();
  await node.register('http://127.0.0.1:0');
  const created = await app.inject({ method: 'PUT', url: '/things', payload: { mappings: { properties: { name: { type: 'keyword' } } } } });
  assert.equal(created.statusCode, 200, created.body);
  for (const name of ['alpha', 'beta']) {
    await app.inject({ method: 'PUT', url: `/things/_doc/${name}`, payload: { name } });
  }
});

after(async () => {
  await app?.close();
  await node?.close();
  await rm(dataDir, { recursive: true, force: true });
});

test('unknown paths are 400 "no handler", known paths with another method 405', async () => {
  const unknown = await app.inject({ method: 'GET', url: '/things/_nothing/1/2' });
  assert.equal(unknown.statusCode, 400);
  assert.equal(unknown.json().error.type, 'no_handler_found_exception');
  assert.equal(unknown.json().error.reason, 'no handler found for uri [/things/_nothing/1/2] and method [GET]');
  const undecodable = await app.inject({ method: 'GET', url: '/things/_doc/%E0%A4%A' });
  assert.equal(undecodable.statusCode, 400);
  assert.equal(undecodable.json().error.type, 'illegal_argument_exception');
  assert.equal(undecodable.json().status, 400);
  const wrong = await app.inject({ method: 'DELETE', url: '/things/_search' });
  assert.equal(wrong.statusCode, 405);
  assert.equal(wrong.headers.allow, 'GET, POST');
  assert.equal(wrong.json().status, 405);
});

test('a trailing slash where the same method takes an id is that id left empty: 400 naming it', async () => {
  const empty = await app.inject({ method: 'POST', url: '/things/_doc/', payload: { name: 'gamma' } });
  assert.equal(empty.statusCode, 400, empty.body);
  assert.match(empty.json().error.reason, /path parameter \[id\] is empty/);
  const jobs = await app.inject({ method: 'GET', url: '/_jobs/?pretty' });
  assert.equal(jobs.statusCode, 400);
  assert.match(jobs.json().error.reason, /\[job_id\]/);
  const collection = await app.inject({ method: 'GET', url: '/things/' });
  assert.equal(collection.statusCode, 200, 'a trailing slash is still ignored where no id could follow');
  const count = await app.inject({ method: 'GET', url: '/things/_count' });
  assert.equal(count.json().count, 2, 'nothing was indexed');
});

test('numbers must be finite: coerced "Infinity", "-Infinity" and "1e309" are 400s naming the parameter', async () => {
  for (const value of ['Infinity', '-Infinity', '1e309', 'NaN']) {
    const response = await app.inject({ method: 'GET', url: `/things/_search?size=${value}` });
    assert.equal(response.statusCode, 400, `${value}: ${response.body}`);
    assert.match(response.json().error.reason, /parameter \[size\]/);
  }
  const body = await app.inject({ method: 'POST', url: '/things/_search', payload: '{"size": "1e309"}', headers: { 'content-type': 'application/json' } });
  assert.equal(body.statusCode, 400, body.body);
  assert.match(body.json().error.reason, /field \[size\] of the request body must be a finite number/);
  assert.equal((await app.inject({ method: 'GET', url: '/things/_search?size=1' })).statusCode, 200);
});

test('ES client content types are accepted; others are 406', async () => {
  for (const contentType of [
    'application/json',
    'application/json; charset=utf-8',
    'application/vnd.opensearch+json; compatible-with=2',
    'application/vnd.elasticsearch+json; compatible-with=8',
  ]) {
    const response = await app.inject({
      method: 'POST',
      url: '/things/_search',
      headers: { 'content-type': contentType },
      payload: JSON.stringify({ query: { term: { name: 'alpha' } } }),
    });
    assert.equal(response.statusCode, 200, `${contentType}: ${response.body}`);
    assert.equal(response.json().hits.total.value, 1);
  }
  const plain = await app.inject({ method: 'POST', url: '/things/_search', headers: { 'content-type': 'text/plain' }, payload: '{}' });
  assert.equal(plain.statusCode, 406);
  assert.equal(plain.json().error.type, 'media_type_header_exception');
});

test('GET with a body searches; a body without Content-Type is read as JSON', async () => {
  const response = await app.inject({ method: 'GET', url: '/things/_count', headers: { 'content-type': 'application/json' }, payload: '{"query":{"term":{"name":"beta"}}}' });
  assert.equal(response.json().count, 1);
  const noType = await app.inject({ method: 'POST', url: '/things/_count', payload: Buffer.from('{"query":{"term":{"name":"beta"}}}') });
  assert.equal(noType.json().count, 1);
});

test('body limit (413), nesting limit (400), malformed JSON (400)', async () => {
  const big = await app.inject({ method: 'POST', url: '/things/_search', payload: { query: { term: { name: 'x'.repeat(3000) } } } });
  assert.equal(big.statusCode, 413);
  assert.equal(big.json().error.type, 'content_too_long_exception');
  let nested: unknown = 1;
  for (let level = 0; level < 21; level++) nested = [nested];
  const deep = await app.inject({ method: 'PUT', url: '/things/_doc/deep', payload: { value: nested } });
  assert.equal(deep.statusCode, 400);
  assert.match(deep.json().error.reason, /depth of \[20\]/);
  const malformed = await app.inject({ method: 'PUT', url: '/things/_doc/bad', headers: { 'content-type': 'application/json' }, payload: '{"name": ' });
  assert.equal(malformed.statusCode, 400);
  assert.equal(malformed.json().error.type, 'x_content_parse_exception');
  assert.equal((await app.inject({ method: 'GET', url: '/things/_count' })).json().count, 2);
});

test('filter_path and pretty shape any JSON response', async () => {
  const filtered = await app.inject({ method: 'GET', url: '/things/_search?filter_path=hits.hits._id,-hits.total&sort=name:asc' });
  assert.deepEqual(filtered.json(), { hits: { hits: [{ _id: 'alpha' }, { _id: 'beta' }] } });
  const pretty = await app.inject({ method: 'GET', url: '/things/_count?pretty' });
  assert.ok(pretty.body.includes('\n  "count": 2'));
});

test('_cat/collections renders a text table (v, h, s, bytes) and JSON', async () => {
  const table = await app.inject({ method: 'GET', url: '/_cat/collections?v&h=index,pri,docs.count&s=index' });
  assert.equal(table.headers['content-type'], 'text/plain; charset=utf-8');
  assert.deepEqual(table.body.split('\n'), ['index  pri docs.count', 'things   1          2', '']);
  const json = await app.inject({ method: 'GET', url: '/_cat/indices/thi*?format=json&h=index,docs.count,store.size&bytes=b' });
  const [row] = json.json();
  assert.equal(row.index, 'things');
  assert.equal(row['docs.count'], '2');
  assert.match(row['store.size'], /^\d+$/);
  const unknownColumn = await app.inject({ method: 'GET', url: '/_cat/collections?h=nope' });
  assert.equal(unknownColumn.statusCode, 400);
});

test('bulk accepts application/json and NDJSON without a trailing newline', async () => {
  const response = await app.inject({
    method: 'POST',
    url: '/things/_bulk',
    headers: { 'content-type': 'application/json' },
    payload: '{"index":{"_id":"gamma"}}\n{"name":"gamma"}\n{"delete":{"_id":"gamma"}}',
  });
  assert.equal(response.statusCode, 200, response.body);
  const body = response.json();
  assert.equal(body.errors, false);
  assert.equal(body.items[0].index.status, 201);
  assert.equal(body.items[1].delete.status, 200);
  assert.equal(body.items[1].delete.result, 'deleted');
});

test('root, HEAD and _refresh', async () => {
  const root = await app.inject({ method: 'GET', url: '/' });
  assert.equal(root.json().version.distribution, 'trove');
  assert.equal((await app.inject({ method: 'HEAD', url: '/' })).statusCode, 200);
  const refreshed = await app.inject({ method: 'POST', url: '/things/_refresh' });
  assert.deepEqual(refreshed.json(), { _shards: { total: 1, successful: 1, failed: 0 } });
  assert.equal((await app.inject({ method: 'POST', url: '/nowhere/_refresh' })).statusCode, 404);
});
