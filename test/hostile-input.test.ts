/**
 * Regressions of hostile input that once broke the whole server (issue 12): field names that
 * reach `Object.prototype` (`__proto__`, `constructor`, `prototype` as dotted path segments),
 * inplace fields and aggregations named like `Object.prototype` members (`toString`, `valueOf`),
 * and collection settings so large that the next cluster health request ran out of memory. Every
 * answer must be a 4xx (or a correct 200), and the server must keep answering every route normally
 * afterwards.
 */
import { after, afterEach, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { compact, waitForJob } from './compaction.fixture.ts';
import { call, ndjson, startServer, type CallOptions, type TroveServer } from './harness.ts';

let server: TroveServer;

/** Sends a request that must be refused with `status` and the ES error `type` (or one of `types`); returns the reason. */
async function refused(method: string, path: string, options: CallOptions, status: number, type: string | string[]): Promise<string> {
  const response = await call(server, method, path, options);
  const label = `${method} ${path} ${JSON.stringify(options.json)} -> ${response.status} ${response.text.slice(0, 300)}`;
  assert.equal(response.status, status, label);
  assert.ok((Array.isArray(type) ? type : [type]).includes(response.body.error?.type), label);
  assert.equal(response.body.error.root_cause[0].type, response.body.error.type, label);
  return response.body.error.reason as string;
}

/** The routes a pollution of `Object.prototype` broke: each must still answer normally. */
async function assertServerHealthy(): Promise<void> {
  const root = await call(server, 'GET', '/');
  assert.equal(root.status, 200, `GET / -> ${root.status} ${root.text}\n${server.output()}`);
  const health = await call(server, 'GET', '/_cluster/health');
  assert.equal(health.status, 200, `GET /_cluster/health -> ${health.status} ${health.text}`);
  const search = await call(server, 'POST', '/target/_search', { json: { query: { match_all: {} }, size: 1 } });
  assert.equal(search.status, 200, `POST /target/_search -> ${search.status} ${search.text}`);
  const document = await call(server, 'GET', '/target/_doc/1');
  assert.equal(document.status, 200, `GET /target/_doc/1 -> ${document.status} ${document.text}`);
  assert.equal(({} as Record<string, unknown>).unknown, undefined, 'the test process itself is not polluted');
}

before(async () => {
  server = await startServer();
  const created = await call(server, 'PUT', '/target', {
    json: { mappings: { properties: { tag: { type: 'keyword' }, views: { type: 'long', inplace: true }, when: { type: 'date' } } } },
  });
  assert.equal(created.status, 200, created.text);
  for (const [id, tag] of [['1', 'a'], ['2', 'b'], ['3', 'a']]) {
    const indexed = await call(server, 'PUT', `/target/_doc/${id}`, { json: { tag, views: Number(id) } });
    assert.equal(indexed.status, 201, indexed.text);
  }
});

afterEach(async () => {
  await assertServerHealthy();
});

after(async () => {
  await server?.cleanup();
});

const RESERVED = ['__proto__', 'constructor', 'prototype'];

describe('prototype pollution through field names', () => {
  test('the issue 12 reproduction: a mapped __proto__.unknown inplace field is refused and pollutes nothing', async () => {
    const created = await call(server, 'PUT', '/pp', {
      json: { mappings: { properties: { '__proto__.unknown': { type: 'boolean', inplace: true } } } },
    });
    // Before the fix these succeeded and left `unknown` on Object.prototype: every route then answered 400.
    await call(server, 'PUT', '/pp/_doc/1', { json: { '__proto__.unknown': true } });
    await call(server, 'GET', '/pp/_doc/1');
    await assertServerHealthy();
    assert.equal(created.status, 400, created.text);
    assert.equal(created.body.error.type, 'mapper_parsing_exception', created.text);
    assert.match(created.body.error.reason, /__proto__/);
    await refused('GET', '/pp', {}, 404, 'index_not_found_exception');
  });

  test('a mapped __proto__.hasOwnProperty inplace long is refused (it killed the process on read)', async () => {
    const reason = await refused(
      'PUT',
      '/pp2',
      { json: { mappings: { properties: { '__proto__.hasOwnProperty': { type: 'long', inplace: true } } } } },
      400,
      'mapper_parsing_exception',
    );
    assert.match(reason, /__proto__/);
  });

  test('every reserved segment is refused in mappings: create, put mapping, nested properties and multi-fields', async () => {
    for (const name of RESERVED) {
      const shapes: unknown[] = [
        { properties: { [`${name}.x`]: { type: 'long' } } },
        { properties: { [`a.${name}`]: { type: 'long' } } },
        { properties: { outer: { properties: { [`${name}.x`]: { type: 'keyword' } } } } },
      ];
      // A bare "__proto__" key is refused earlier, by the JSON body parser (bad-input.test.ts).
      if (name !== '__proto__') {
        shapes.push({ properties: { [name]: { type: 'long' } } }, { properties: { title: { type: 'text', fields: { [name]: { type: 'keyword' } } } } });
      }
      for (const mappings of shapes) {
        const created = await refused('PUT', '/pp3', { json: { mappings } }, 400, 'mapper_parsing_exception');
        assert.ok(created.includes(name), created);
        const updated = await refused('PUT', '/target/_mapping', { json: mappings }, 400, 'mapper_parsing_exception');
        assert.ok(updated.includes(name), updated);
      }
    }
    const mapping = await call(server, 'GET', '/target/_mapping');
    assert.deepEqual(Object.keys(mapping.body.target.mappings.properties).sort(), ['tag', 'views', 'when']);
  });

  test('documents introducing a reserved field name under dynamic mapping are refused, by every write path', async () => {
    for (const name of RESERVED) {
      for (const source of [{ [`${name}.unknown`]: true }, { nested: { [`${name}.x`]: 1 } }, ...(name === '__proto__' ? [] : [{ [name]: 1 }])]) {
        const reason = await refused('PUT', '/target/_doc/hostile', { json: source }, 400, 'mapper_parsing_exception');
        assert.ok(reason.includes(name), reason);
        await refused('POST', '/target/_update/1', { json: { doc: source } }, 400, 'mapper_parsing_exception');
        const bulk = await call(server, 'POST', '/target/_bulk', {
          body: ndjson([{ index: { _id: 'hostile' } }, source]),
          headers: { 'content-type': 'application/x-ndjson' },
        });
        assert.equal(bulk.status, 200, bulk.text);
        assert.equal(bulk.body.items[0].index.status, 400, bulk.text);
      }
    }
    const missing = await call(server, 'GET', '/target/_doc/hostile');
    assert.equal(missing.status, 404, missing.text);
  });

  test('update ops refuse a reserved segment in [field] and in a rename target', async () => {
    // A `set` on a new field reaches dynamic mapping first (mapper_parsing); the op itself refuses it otherwise.
    const types = ['illegal_argument_exception', 'mapper_parsing_exception'];
    for (const name of RESERVED) {
      for (const field of [`${name}.polluted`, `tag.${name}`, ...(name === '__proto__' ? [] : [name])]) {
        for (const op of [{ op: 'set', field, value: 1 }, { op: 'unset', field }, { op: 'toggle', field }]) {
          const reason = await refused('POST', '/target/_update/1', { json: { ops: [op] } }, 400, types);
          assert.ok(reason.includes(name), reason);
        }
        const reason = await refused('POST', '/target/_update/1', { json: { ops: [{ op: 'incr', field: 'views', value: 1 }, { op: 'set', field, value: 1 }] } }, 400, types);
        assert.ok(reason.includes(name), reason);
      }
      const renamed = await refused(
        'POST',
        '/target/_update/1',
        { json: { ops: [{ op: 'rename', field: 'tag', value: `${name}.hasOwnProperty` }] } },
        400,
        'illegal_argument_exception',
      );
      assert.ok(renamed.includes(name), renamed);
    }
    const document = await call(server, 'GET', '/target/_doc/1');
    assert.deepEqual(document.body._source, { tag: 'a', views: 1 });
  });
});

describe('inplace fields named like Object.prototype members', () => {
  test('an inplace field named toString or valueOf survives compaction and a restart', async () => {
    const created = await call(server, 'PUT', '/proto-named', {
      json: { mappings: { properties: { toString: { type: 'long', inplace: true }, valueOf: { type: 'boolean', inplace: true } } } },
    });
    assert.equal(created.status, 200, created.text);
    assert.equal((await call(server, 'PUT', '/proto-named/_doc/1', { json: { toString: 1, valueOf: false } })).status, 201);
    const ops = [{ op: 'incr', field: 'toString', value: 5 }, { op: 'toggle', field: 'valueOf' }];
    const updated = await call(server, 'POST', '/proto-named/_update/1', { json: { ops } });
    assert.equal(updated.status, 200, updated.text);
    // Before the fix the epoch looked up the column generation `inplaceGens["toString"]` and got
    // Object.prototype.toString: every compaction pass (and epoch) of the shard failed.
    const job = await waitForJob(server, (await compact(server, 'proto-named')).job_id);
    assert.equal(job.state, 'done', JSON.stringify(job));
    await server.restart();
    const read = await call(server, 'GET', '/proto-named/_doc/1');
    assert.deepEqual(read.body._source, { toString: 6, valueOf: true }, read.text);
  });
});

describe('aggregation names that are Object.prototype members', () => {
  test('aggregations named constructor, toString, valueOf and hasOwnProperty answer 200 with their results, and order by them', async () => {
    const names = ['constructor', 'toString', 'valueOf', 'hasOwnProperty', 'isPrototypeOf'];
    const aggs = Object.fromEntries(
      names.map((name) => [name, { terms: { field: 'tag', order: { [name]: 'asc' } }, aggs: { [name]: { max: { field: 'views' } } } }]),
    );
    const response = await call(server, 'POST', '/target/_search', { json: { size: 0, aggs } });
    assert.equal(response.status, 200, response.text);
    for (const name of names) {
      const buckets = response.body.aggregations[name].buckets;
      assert.deepEqual(
        buckets.map((bucket: Record<string, any>) => [bucket.key, bucket.doc_count, bucket[name].value]),
        [['b', 1, 2], ['a', 2, 3]],
        name,
      );
    }
  });

  test('a sibling metric named like a prototype member with no matching document renders empty', async () => {
    const response = await call(server, 'POST', '/target/_search', {
      json: { size: 0, query: { term: { tag: 'none' } }, aggs: { toString: { max: { field: 'views' } }, constructor: { value_count: { field: 'tag' } } } },
    });
    assert.equal(response.status, 200, response.text);
    assert.deepEqual(response.body.aggregations, { toString: { value: null }, constructor: { value: 0 } });
  });

  test('a date_histogram calendar_interval named like a prototype member is a 400, not a 500', async () => {
    for (const interval of ['constructor', 'toString', '__defineGetter__']) {
      await refused(
        'POST',
        '/target/_search',
        { json: { size: 0, aggs: { by_time: { date_histogram: { field: 'when', calendar_interval: interval } } } } },
        400,
        'parsing_exception',
      );
    }
  });
});

describe('collection settings', () => {
  test('number_of_replicas 2147483648 is refused and cluster health keeps answering', async () => {
    const reason = await refused('PUT', '/r1', { json: { settings: { number_of_replicas: 2147483648 } } }, 400, 'illegal_argument_exception');
    assert.match(reason, /number_of_replicas/);
    const health = await call(server, 'GET', '/_cluster/health');
    assert.equal(health.status, 200, health.text);
  });

  test('out-of-range, fractional and non-numeric shard and replica counts are refused, naming the setting', async () => {
    const bad: unknown[] = [1e308, 2 ** 64, -1, 1.5, 'abc', {}, [], [1], null, true, '1e3', ' 2'];
    for (const setting of ['number_of_shards', 'number_of_replicas']) {
      for (const value of [...bad, setting === 'number_of_shards' ? 1025 : 33, ...(setting === 'number_of_shards' ? [0] : [])]) {
        for (const settings of [{ [setting]: value }, { index: { [setting]: value } }, { [`index.${setting}`]: value }]) {
          const reason = await refused('PUT', '/r1', { json: { settings } }, 400, 'illegal_argument_exception');
          assert.ok(reason.includes(setting), `${JSON.stringify(settings)}: ${reason}`);
        }
      }
    }
    await refused('GET', '/r1', {}, 404, 'index_not_found_exception');
    // In-range counts are still accepted, as numbers and as strings of digits.
    const cases: Array<[string, Record<string, unknown>, string, string]> = [
      ['r2', { number_of_shards: 2, number_of_replicas: 32 }, '2', '32'],
      ['r3', { index: { number_of_shards: '1', number_of_replicas: '0' } }, '1', '0'],
    ];
    for (const [name, settings, shards, replicas] of cases) {
      const created = await call(server, 'PUT', `/${name}`, { json: { settings } });
      assert.equal(created.status, 200, created.text);
      const read = await call(server, 'GET', `/${name}`);
      assert.equal(read.body[name].settings.index.number_of_shards, shards, read.text);
      assert.equal(read.body[name].settings.index.number_of_replicas, replicas, read.text);
      const deleted = await call(server, 'DELETE', `/${name}`);
      assert.equal(deleted.status, 200, deleted.text);
    }
  });
});
