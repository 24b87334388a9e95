/**
 * Hostile and malformed requests on every route: each answer is a 4xx with an ES error body,
 * the server stays up, and the data (document count, mapping, a document, the collection list)
 * is exactly what it was before.
 */
import { after, afterEach, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { call, ndjson, sendRefusable, startServer, type CallOptions, type TroveServer } from './harness.ts';

let server: TroveServer;
const MAX_CONTENT_LENGTH = 64 * 1024;

interface Snapshot {
  count: number;
  mapping: unknown;
  document: unknown;
  collections: string[];
}

let baseline: Snapshot;

async function snapshot(): Promise<Snapshot> {
  const count = await call(server, 'GET', '/target/_count');
  const mapping = await call(server, 'GET', '/target/_mapping');
  const document = await call(server, 'GET', '/target/_doc/1');
  const collections = await call(server, 'GET', '/_cat/collections?format=json');
  return {
    count: count.body.count,
    mapping: mapping.body,
    document: document.body._source,
    collections: collections.body.map((row: { index: string }) => row.index).sort(),
  };
}

/** Sends a request that must be refused: 4xx (or the given status) with a well-formed ES error body. */
async function refused(method: string, path: string, options: CallOptions, status?: number, type?: string): Promise<any> {
  const response = await call(server, method, path, options);
  const label = `${method} ${path} -> ${response.status} ${response.text.slice(0, 300)}`;
  if (status !== undefined) assert.equal(response.status, status, label);
  assert.ok(response.status >= 400 && response.status < 500, label);
  if (method === 'HEAD') return response.body;
  assert.equal(response.body.status, response.status, label);
  assert.equal(typeof response.body.error.type, 'string', label);
  assert.equal(typeof response.body.error.reason, 'string', label);
  assert.ok(response.body.error.reason.length > 0, label);
  assert.ok(Array.isArray(response.body.error.root_cause), label);
  assert.equal(response.body.error.root_cause[0].type, response.body.error.type, label);
  if (type !== undefined) assert.equal(response.body.error.type, type, label);
  return response.body;
}

function deeplyNested(depth: number): unknown {
  let value: unknown = 'leaf';
  for (let level = 0; level < depth; level++) value = { level: value };
  return value;
}

function manyFields(count: number): Record<string, number> {
  const out: Record<string, number> = {};
  for (let index = 0; index < count; index++) out[`field_${index}`] = index;
  return out;
}

const JSON_BODY_ROUTES: Array<[string, string]> = [
  ['PUT', '/fresh'],
  ['PUT', '/target/_mapping'],
  ['PUT', '/target/_doc/1'],
  ['POST', '/target/_doc/1'],
  ['POST', '/target/_doc'],
  ['PUT', '/target/_create/new'],
  ['POST', '/target/_update/1'],
  ['POST', '/_mget'],
  ['POST', '/target/_mget'],
  ['POST', '/target/_search'],
  ['GET', '/target/_search'],
  ['POST', '/_search'],
  ['POST', '/target/_count'],
];

const BULK_ROUTES: Array<[string, string]> = [
  ['POST', '/_bulk'],
  ['POST', '/target/_bulk'],
  ['PUT', '/target/_bulk'],
];

before(async () => {
  server = await startServer({ settings: { 'http.max_content_length': String(MAX_CONTENT_LENGTH) } });
  const created = await call(server, 'PUT', '/target', {
    json: { mappings: { properties: { title: { type: 'text' }, count: { type: 'long' }, when: { type: 'date' } } } },
  });
  assert.equal(created.status, 200, created.text);
  for (let id = 1; id <= 5; id++) {
    const indexed = await call(server, 'PUT', `/target/_doc/${id}`, { json: { title: `document ${id}`, count: id, when: '2024-05-01' } });
    assert.equal(indexed.status, 201, indexed.text);
  }
  baseline = await snapshot();
  assert.equal(baseline.count, 5);
});

afterEach(async () => {
  assert.deepEqual(await snapshot(), baseline);
});

after(async () => {
  const root = await call(server, 'GET', '/');
  assert.equal(root.status, 200, `the server must survive every request:\n${server.output()}`);
  await server?.cleanup();
});

describe('malformed JSON', () => {
  test('every JSON route answers 400 x_content_parse_exception', async () => {
    for (const [method, path] of JSON_BODY_ROUTES) {
      for (const text of ['{"title": ', '{"a" 1}', '[1, 2', '{"a": tru}', '\u0000']) {
        await refused(method, path, { body: text, headers: { 'content-type': 'application/json' } }, 400, 'x_content_parse_exception');
      }
    }
  });

  test('a malformed bulk action line rejects the whole request', async () => {
    for (const [method, path] of BULK_ROUTES) {
      const body = `{"index":{"_index":"target","_id":"9"}}\n{"title":"ok"}\n{"index": \n{"title":"x"}\n`;
      await refused(method, path, { body, headers: { 'content-type': 'application/x-ndjson' } }, 400);
      await refused(method, path, { body: '{"explode":{"_index":"target"}}\n{}\n', headers: { 'content-type': 'application/x-ndjson' } }, 400);
      await refused(method, path, { body: '{"index":{"_index":"target"}}\n', headers: { 'content-type': 'application/x-ndjson' } }, 400);
      await refused(method, path, { body: '["index"]\n{}\n', headers: { 'content-type': 'application/x-ndjson' } }, 400);
    }
  });

  test('a malformed bulk source line fails that item only', async () => {
    const body = '{"index":{"_index":"target","_id":"b1"}}\n{"title": \n{"delete":{"_index":"target","_id":"never"}}\n';
    const response = await call(server, 'POST', '/_bulk', { body, headers: { 'content-type': 'application/x-ndjson' } });
    assert.equal(response.status, 200, response.text);
    assert.equal(response.body.errors, true);
    assert.equal(response.body.items[0].index.status, 400);
    assert.equal(typeof response.body.items[0].index.error.reason, 'string');
    assert.equal(response.body.items[1].delete.status, 404);
  });

  test('a __proto__ key is refused', async () => {
    await refused('PUT', '/target/_doc/1', { body: '{"__proto__": {"polluted": true}}', headers: { 'content-type': 'application/json' } }, 400);
    assert.equal(({} as Record<string, unknown>).polluted, undefined);
  });
});

describe('wrong types and values', () => {
  const cases: Array<[string, string, unknown]> = [
    ['POST', '/target/_search', { size: 'ten' }],
    ['POST', '/target/_search', { from: -1 }],
    ['POST', '/target/_search', { size: 1e20 }],
    ['POST', '/target/_search', { query: 5 }],
    ['POST', '/target/_search', { query: { match: { title: { query: 'x', operator: 'xor' } } } }],
    ['POST', '/target/_search', { query: { range: { count: { gte: 'abc' } } } }],
    ['POST', '/target/_search', { sort: 17 }],
    ['POST', '/target/_search', { aggs: { broken: { terms: {} } } }],
    ['POST', '/target/_search', { aggs: { broken: { unknown_agg: { field: 'count' } } } }],
    ['POST', '/target/_search', { unknown_top_level: true }],
    ['POST', '/target/_count', { query: [] }],
    ['PUT', '/fresh', { settings: { number_of_shards: 'many' } }],
    ['PUT', '/fresh', { settings: { number_of_shards: 0 } }],
    ['PUT', '/fresh', { mappings: { properties: { field: { type: 'no_such_type' } } } }],
    ['PUT', '/fresh', { mappings: { properties: { field: { type: 'text', inplace: true } } } }],
    ['PUT', '/target/_mapping', { properties: { title: { type: 'long' } } }],
    ['PUT', '/target/_mapping', { properties: 'title' }],
    ['PUT', '/target/_doc/1', [1, 2, 3]],
    ['PUT', '/target/_doc/1', 'just a string'],
    ['PUT', '/target/_doc/1', { count: 'not a number' }],
    ['PUT', '/target/_doc/1', { when: 'not a date' }],
    ['PUT', '/target/_doc/1', { count: 2 ** 70 }],
    ['POST', '/target/_update/1', { ops: 'incr' }],
    ['POST', '/target/_update/1', { ops: [{ op: 'incr', field: 'count', value: 'x' }] }],
    ['POST', '/target/_update/1', { ops: [{ op: 'toggle', field: 'count' }] }],
    ['POST', '/target/_update/1', { doc: { count: 'x' } }],
    ['POST', '/_mget', { docs: 'all' }],
    ['POST', '/_mget', { docs: [{ _id: 1 }] }],
    ['POST', '/target/_mget', { ids: [{}] }],
  ];
  test('bodies with wrong types are 400', async () => {
    for (const [method, path, json] of cases) await refused(method, path, { json }, 400);
  });

  test('query parameters with wrong types or unknown names are 400', async () => {
    await refused('GET', '/target/_search?size=abc', {}, 400, 'illegal_argument_exception');
    await refused('GET', '/target/_search?from=-5', {}, 400);
    await refused('GET', '/target/_search?no_such_param=1', {}, 400, 'illegal_argument_exception');
    await refused('PUT', '/target/_doc/1?if_seq_no=abc&if_primary_term=1', { json: { title: 'x' } }, 400);
    await refused('PUT', '/target/_doc/1?op_type=upsert', { json: { title: 'x' } }, 400);
    await refused('GET', '/target/_doc/1?_source_includes=', {}, 400);
    await refused('GET', '/_cat/collections?format=xml', {}, 400);
  });

  test('a negative from or size is refused in Elasticsearch words, in the URL and in the body', async () => {
    for (const name of ['from', 'size']) {
      const fromUrl = await refused('GET', `/target/_search?${name}=-2`, {}, 400, 'illegal_argument_exception');
      assert.match(fromUrl.error.reason, new RegExp(`^\\[${name}\\] parameter cannot be negative`));
      const fromBody = await refused('POST', '/target/_search', { json: { [name]: -2 } }, 400, 'illegal_argument_exception');
      assert.match(fromBody.error.reason, new RegExp(`^\\[${name}\\] parameter cannot be negative`));
    }
  });

  test('a missing body where one is required is 400', async () => {
    await refused('PUT', '/target/_doc/1', {}, 400);
    await refused('POST', '/target/_update/1', {}, 400);
    await refused('POST', '/_mget', {}, 400);
    await refused('POST', '/target/_bulk', {}, 400);
  });

  test('ids over 512 bytes are 400 on every write path', async () => {
    const id = 'x'.repeat(513);
    await refused('PUT', `/target/_doc/${id}`, { json: { title: 'x' } }, 400);
    await refused('PUT', `/target/_create/${id}`, { json: { title: 'x' } }, 400);
    await refused('POST', `/target/_update/${id}`, { json: { doc: { title: 'x' } } }, 400);
    await refused('DELETE', `/target/_doc/${id}`, {}, 400);
    const bulk = await call(server, 'POST', '/target/_bulk', {
      body: ndjson([{ index: { _id: id } }, { title: 'x' }, { index: { _id: 'é'.repeat(257) } }, { title: 'x' }]),
      headers: { 'content-type': 'application/x-ndjson' },
    });
    assert.equal(bulk.body.errors, true);
    assert.equal(bulk.body.items[0].index.status, 400);
    assert.equal(bulk.body.items[1].index.status, 400);
  });

  test('unsupported content types are refused', async () => {
    await refused('PUT', '/target/_doc/1', { body: 'title=x', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    await refused('POST', '/target/_search', { body: '{}', headers: { 'content-type': 'text/plain' } });
  });
});

describe('unknown collections, names and routes', () => {
  test('unknown collection is 404 index_not_found_exception naming it', async () => {
    const requests: Array<[string, string, unknown?]> = [
      ['GET', '/missing'],
      ['DELETE', '/missing'],
      ['GET', '/missing/_mapping'],
      ['PUT', '/missing/_mapping', { properties: { a: { type: 'keyword' } } }],
      ['PUT', '/missing/_doc/1', { a: 1 }],
      ['POST', '/missing/_doc', { a: 1 }],
      ['GET', '/missing/_doc/1'],
      ['DELETE', '/missing/_doc/1'],
      ['POST', '/missing/_update/1', { doc: { a: 1 } }],
      ['POST', '/missing/_search', {}],
      ['GET', '/missing/_count'],
    ];
    // Writes create a missing collection by default (OpenSearch's action.auto_create_index): off here.
    await call(server, 'PUT', '/_node/_local/settings', { json: { 'action.auto_create_index': false } });
    try {
      for (const [method, path, json] of requests) {
        const body = await refused(method, path, json === undefined ? {} : { json }, 404, 'index_not_found_exception');
        assert.equal(body.error.index, 'missing', `${method} ${path}`);
      }
    } finally {
      await call(server, 'PUT', '/_node/_local/settings', { json: { 'action.auto_create_index': null } });
    }
    await refused('HEAD', '/missing', {}, 404);
  });

  test('_mget and bulk items for an unknown collection fail per item, as in ES', async () => {
    const mget = await call(server, 'POST', '/missing/_mget', { json: { ids: ['1'] } });
    assert.equal(mget.status, 200);
    assert.equal(mget.body.docs[0].error.type, 'index_not_found_exception');
    const response = await call(server, 'POST', '/_bulk', {
      body: ndjson([{ delete: { _index: 'missing', _id: '1' } }]),
      headers: { 'content-type': 'application/x-ndjson' },
    });
    assert.equal(response.status, 200);
    assert.equal(response.body.items[0].delete.status, 404);
    assert.equal(response.body.items[0].delete.error.type, 'index_not_found_exception');
  });

  test('invalid and duplicate collection names', async () => {
    for (const name of ['UPPER', '_underscore', 'with%20space', 'a*b', 'comma,name']) {
      await refused('PUT', `/${name}`, { json: {} }, 400);
    }
    await refused('PUT', '/target', { json: {} }, 400, 'resource_already_exists_exception');
  });

  test('unknown routes are 400 no handler; wrong methods are 405', async () => {
    const unknown = await refused('GET', '/target/_nothing_here/x/y', {}, 400);
    assert.match(unknown.error.reason, /no handler found for uri \[\/target\/_nothing_here\/x\/y\] and method \[GET\]/);
    const wrongMethod = await refused('PATCH', '/target', { json: {} }, 405);
    assert.match(wrongMethod.error.reason, /allowed/);
    await refused('DELETE', '/target/_search', {}, 405);
    await refused('GET', '/target/_doc/%E0%A4%A', {}, 400);
  });
});

describe('limits', () => {
  test('bodies over http.max_content_length are 413 on every route, before parsing', async () => {
    const big = Buffer.from(JSON.stringify({ title: 'x'.repeat(MAX_CONTENT_LENGTH + 10) }));
    const chunks = Array.from({ length: 20 }, () => Buffer.alloc(8 * 1024, 0x20));
    for (const [method, path] of [...JSON_BODY_ROUTES, ...BULK_ROUTES]) {
      const declared = await sendRefusable(server, method, path, [big], {
        'content-type': 'application/json',
        'content-length': String(big.length),
      });
      assert.equal(declared.status, 413, `${method} ${path}`);
      assert.equal(declared.body.error.type, 'content_too_long_exception');
      assert.equal(declared.body.status, 413);
      const streamed = await sendRefusable(server, method, path, chunks, {
        'content-type': 'application/json',
        'transfer-encoding': 'chunked',
      });
      assert.equal(streamed.status, 413, `${method} ${path} (chunked)`);
    }
  });

  test('nesting deeper than 20 is 400 on every JSON route and in bulk sources', async () => {
    for (const [method, path] of JSON_BODY_ROUTES) {
      const body = await refused(method, path, { json: { doc: deeplyNested(25) } }, 400);
      assert.match(body.error.reason, /depth/);
    }
    const bulk = await call(server, 'POST', '/target/_bulk', {
      body: ndjson([{ index: { _id: 'deep' } }, deeplyNested(30)]),
      headers: { 'content-type': 'application/x-ndjson' },
    });
    assert.equal(bulk.body.items[0].index.status, 400);
  });

  test('mapping explosion (over 1000 fields) is 400 by create, put mapping, dynamic index and bulk', async () => {
    const properties = Object.fromEntries(Object.keys(manyFields(1001)).map((name) => [name, { type: 'long' }]));
    await refused('PUT', '/fresh', { json: { mappings: { properties } } }, 400);
    await refused('PUT', '/target/_mapping', { json: { properties } }, 400);
    await refused('PUT', '/target/_doc/1', { json: manyFields(1001) }, 400);
    await refused('POST', '/target/_doc', { json: manyFields(1200) }, 400);
    await refused('POST', '/target/_update/1', { json: { doc: manyFields(1001) } }, 400);
    const bulk = await call(server, 'POST', '/target/_bulk', {
      body: ndjson([{ index: { _id: 'wide' } }, manyFields(1001)]),
      headers: { 'content-type': 'application/x-ndjson' },
    });
    assert.equal(bulk.body.errors, true);
    assert.equal(bulk.body.items[0].index.status, 400);
  });
});
