/**
 * Partial updates end to end (issue: the eleven operators and O(1) inplace columns): every
 * operator against missing fields, matching and wrong types, inplace and regular fields and dotted
 * paths; atomicity; visibility without refresh; concurrency; crash; epochs, merges and restart.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { call, ndjson, startServer, type TroveServer } from './harness.ts';

let server: TroveServer;

const MAPPINGS = {
  properties: {
    title: { type: 'text' },
    tags: { type: 'keyword' },
    views: { type: 'long', inplace: true },
    count: { type: 'long' },
    rating: { type: 'double', inplace: true },
    active: { type: 'boolean', inplace: true },
    flag: { type: 'boolean' },
    seen: { type: 'date', inplace: true },
    published: { type: 'date' },
    small: { type: 'integer' },
    stats: { type: 'object', properties: { hits: { type: 'long', inplace: true }, misses: { type: 'long' } } },
  },
};

before(async () => {
  server = await startServer({ settings: { 'epoch.max_docs': '4', 'merge.segments_per_tier': '2' } });
  const created = await call(server, 'PUT', '/items', { json: { settings: { number_of_shards: 2 }, mappings: MAPPINGS } });
  assert.equal(created.status, 200, created.text);
});

after(async () => {
  await server?.cleanup();
});

let nextId = 0;

async function update(initial: Record<string, unknown> | null, body: Record<string, unknown>) {
  const id = `u${nextId++}`;
  if (initial) {
    const put = await call(server, 'PUT', `/items/_doc/${id}`, { json: initial });
    assert.equal(put.status, 201, put.text);
  }
  const response = await call(server, 'POST', `/items/_update/${id}`, { json: body });
  const doc = await call(server, 'GET', `/items/_doc/${id}`);
  return { id, response, source: doc.body._source as Record<string, unknown> | undefined, doc: doc.body };
}

interface Case {
  name: string;
  initial: Record<string, unknown>;
  ops: { op: string; field: string; value?: unknown }[];
  expect: Record<string, unknown> | { error: RegExp };
}

const CASES: Case[] = [
  // set
  { name: 'set creates a missing inplace field', initial: {}, ops: [{ op: 'set', field: 'views', value: 5 }], expect: { views: 5 } },
  { name: 'set overwrites a regular field', initial: { count: 1 }, ops: [{ op: 'set', field: 'count', value: 9 }], expect: { count: 9 } },
  { name: 'set on a dotted path creates objects', initial: {}, ops: [{ op: 'set', field: 'stats.hits', value: 3 }], expect: { stats: { hits: 3 } } },
  { name: 'set rejects a value invalid for the type', initial: { views: 1 }, ops: [{ op: 'set', field: 'views', value: 'abc' }], expect: { error: /views/ } },
  // unset
  { name: 'unset of a missing field is a no-op', initial: { count: 1 }, ops: [{ op: 'unset', field: 'views' }], expect: { count: 1 } },
  { name: 'unset removes an inplace field', initial: { views: 4, count: 1 }, ops: [{ op: 'unset', field: 'views' }], expect: { count: 1 } },
  { name: 'unset removes a dotted regular field', initial: { stats: { misses: 2, hits: 1 } }, ops: [{ op: 'unset', field: 'stats.misses' }], expect: { stats: { hits: 1 } } },
  // incr
  { name: 'incr treats a missing field as 0', initial: {}, ops: [{ op: 'incr', field: 'views', value: 3 }], expect: { views: 3 } },
  { name: 'incr adds on an inplace field', initial: { views: 10 }, ops: [{ op: 'incr', field: 'views', value: 5 }], expect: { views: 15 } },
  { name: 'incr with a negative value decrements a regular field', initial: { count: 10 }, ops: [{ op: 'incr', field: 'count', value: -4 }], expect: { count: 6 } },
  { name: 'incr on a dotted inplace path', initial: { stats: { hits: 1 } }, ops: [{ op: 'incr', field: 'stats.hits', value: 1 }], expect: { stats: { hits: 2 } } },
  { name: 'incr rejects a non-numeric value', initial: { views: 1 }, ops: [{ op: 'incr', field: 'views', value: 'x' }], expect: { error: /incr/ } },
  { name: 'incr rejects a non-numeric field', initial: { title: 'hello' }, ops: [{ op: 'incr', field: 'title', value: 1 }], expect: { error: /title/ } },
  { name: 'incr rejects integer overflow', initial: { small: 2147483000 }, ops: [{ op: 'incr', field: 'small', value: 1000 }], expect: { error: /overflow/i } },
  // mul
  { name: 'mul makes a missing field 0', initial: {}, ops: [{ op: 'mul', field: 'count', value: 7 }], expect: { count: 0 } },
  { name: 'mul multiplies an inplace double', initial: { rating: 1.5 }, ops: [{ op: 'mul', field: 'rating', value: 2 }], expect: { rating: 3 } },
  { name: 'mul rejects a non-numeric field', initial: { flag: true }, ops: [{ op: 'mul', field: 'flag', value: 2 }], expect: { error: /flag/ } },
  // min / max
  { name: 'min sets a missing field to the value', initial: {}, ops: [{ op: 'min', field: 'views', value: 4 }], expect: { views: 4 } },
  { name: 'min keeps the smaller', initial: { views: 3 }, ops: [{ op: 'min', field: 'views', value: 8 }], expect: { views: 3 } },
  { name: 'max takes the larger on a regular field', initial: { count: 3 }, ops: [{ op: 'max', field: 'count', value: 8 }], expect: { count: 8 } },
  { name: 'max compares dates on an inplace date', initial: { seen: '2024-01-01T00:00:00.000Z' }, ops: [{ op: 'max', field: 'seen', value: '2025-06-01T00:00:00.000Z' }], expect: { seen: '2025-06-01T00:00:00.000Z' } },
  { name: 'min rejects a non-numeric value', initial: { views: 3 }, ops: [{ op: 'min', field: 'views', value: [1] }], expect: { error: /min/ } },
  // toggle
  { name: 'toggle makes a missing field true', initial: {}, ops: [{ op: 'toggle', field: 'active' }], expect: { active: true } },
  { name: 'toggle flips an inplace boolean', initial: { active: true }, ops: [{ op: 'toggle', field: 'active' }], expect: { active: false } },
  { name: 'toggle flips a regular boolean', initial: { flag: false }, ops: [{ op: 'toggle', field: 'flag' }], expect: { flag: true } },
  { name: 'toggle rejects a non-boolean field', initial: { count: 1 }, ops: [{ op: 'toggle', field: 'count' }], expect: { error: /toggle/ } },
  // append / add_to_set
  { name: 'append makes a missing field an array', initial: {}, ops: [{ op: 'append', field: 'tags', value: 'a' }], expect: { tags: ['a'] } },
  { name: 'append turns a scalar into an array', initial: { tags: 'a' }, ops: [{ op: 'append', field: 'tags', value: 'b' }], expect: { tags: ['a', 'b'] } },
  { name: 'append keeps duplicates', initial: { tags: ['a'] }, ops: [{ op: 'append', field: 'tags', value: 'a' }], expect: { tags: ['a', 'a'] } },
  { name: 'append rejects a value invalid for the type', initial: { count: 1 }, ops: [{ op: 'append', field: 'count', value: 'zz' }], expect: { error: /count/ } },
  { name: 'add_to_set skips an equal element', initial: { tags: ['a', 'b'] }, ops: [{ op: 'add_to_set', field: 'tags', value: 'b' }], expect: { tags: ['a', 'b'] } },
  { name: 'add_to_set adds a new element', initial: { tags: ['a'] }, ops: [{ op: 'add_to_set', field: 'tags', value: 'c' }], expect: { tags: ['a', 'c'] } },
  // rename
  { name: 'rename of a missing field is a no-op', initial: { count: 1 }, ops: [{ op: 'rename', field: 'stats.misses', value: 'count' }], expect: { count: 1 } },
  { name: 'rename moves and overwrites the target', initial: { stats: { misses: 5 }, count: 1 }, ops: [{ op: 'rename', field: 'stats.misses', value: 'count' }], expect: { stats: {}, count: 5 } },
  { name: 'rename rejects a target mapped to another type', initial: { count: 5 }, ops: [{ op: 'rename', field: 'count', value: 'title' }], expect: { error: /rename/ } },
  { name: 'rename rejects inplace to non-inplace', initial: { views: 5 }, ops: [{ op: 'rename', field: 'views', value: 'count' }], expect: { error: /inplace/ } },
  // current_date
  { name: 'current_date on a date field writes an ISO string', initial: {}, ops: [{ op: 'current_date', field: 'published' }], expect: { published: /^\d{4}-\d\d-\d\dT/ } },
  { name: 'current_date timestamp writes epoch millis', initial: {}, ops: [{ op: 'current_date', field: 'count', value: 'timestamp' }], expect: { count: 'number' } },
  { name: 'current_date rejects a non-date field without timestamp', initial: {}, ops: [{ op: 'current_date', field: 'count' }], expect: { error: /current_date/ } },
];

describe('operators', () => {
  for (const testCase of CASES) {
    test(testCase.name, async () => {
      const { response, source, doc } = await update(testCase.initial, { ops: testCase.ops });
      if ('error' in testCase.expect) {
        assert.equal(response.status, 400, response.text);
        assert.match(response.body.error.reason, testCase.expect.error as RegExp);
        assert.match(response.body.error.reason, /ops\[0\]/);
        assert.deepEqual(source, testCase.initial, 'a failed update leaves the document unchanged');
        assert.equal(doc._version, 1);
        return;
      }
      assert.equal(response.status, 200, response.text);
      for (const [field, expected] of Object.entries(testCase.expect)) {
        if (expected instanceof RegExp) assert.match(String(source![field]), expected);
        else if (expected === 'number') assert.equal(typeof source![field], 'number');
        else assert.deepEqual(source![field], expected, field);
      }
      for (const field of Object.keys(source!)) assert.ok(field in testCase.expect, `unexpected field ${field}`);
    });
  }

  test('unknown operator lists the eleven', async () => {
    const { response } = await update({ views: 1 }, { ops: [{ op: 'bump', field: 'views', value: 1 }] });
    assert.equal(response.status, 400);
    for (const op of ['set', 'unset', 'incr', 'mul', 'min', 'max', 'toggle', 'append', 'add_to_set', 'rename', 'current_date']) {
      assert.match(response.body.error.reason, new RegExp(op));
    }
  });

  test('doc is merged first, then ops in order', async () => {
    const { response, source } = await update(
      { stats: { hits: 1, misses: 1 }, count: 2 },
      { doc: { stats: { misses: 10 }, count: 5 }, ops: [{ op: 'mul', field: 'count', value: 3 }, { op: 'incr', field: 'count', value: 1 }] },
    );
    assert.equal(response.status, 200, response.text);
    assert.deepEqual(source, { stats: { hits: 1, misses: 10 }, count: 16 });
  });

  test('an update that changes nothing is a noop with the version unchanged', async () => {
    const { response, doc } = await update({ tags: ['a'] }, { ops: [{ op: 'add_to_set', field: 'tags', value: 'a' }] });
    assert.equal(response.status, 200);
    assert.equal(response.body.result, 'noop');
    assert.equal(doc._version, 1);
  });

  test('a missing document without upsert is 404 document_missing_exception', async () => {
    const { response } = await update(null, { ops: [{ op: 'incr', field: 'views', value: 1 }] });
    assert.equal(response.status, 404);
    assert.equal(response.body.error.type, 'document_missing_exception');
  });

  test('upsert and doc_as_upsert create the document', async () => {
    const first = await update(null, { ops: [{ op: 'incr', field: 'views', value: 1 }], upsert: { views: 100 } });
    assert.equal(first.response.body.result, 'created');
    assert.deepEqual(first.source, { views: 100 });
    const second = await update(null, { doc: { count: 2 }, doc_as_upsert: true });
    assert.equal(second.response.body.result, 'created');
    assert.deepEqual(second.source, { count: 2 });
  });
});

describe('atomicity and visibility', () => {
  test('a failing op in the middle leaves the document byte-identical', async () => {
    const initial = { title: 'atomic test', views: 7, count: 3, tags: ['x'] };
    await call(server, 'PUT', '/items/_doc/atomic', { json: initial });
    const before = await call(server, 'GET', '/items/_doc/atomic');
    const response = await call(server, 'POST', '/items/_update/atomic', {
      json: { ops: [{ op: 'incr', field: 'views', value: 1 }, { op: 'incr', field: 'title', value: 1 }, { op: 'incr', field: 'count', value: 1 }] },
    });
    assert.equal(response.status, 400);
    assert.match(response.body.error.reason, /ops\[1\]/);
    assert.match(response.body.error.reason, /title/);
    const afterwards = await call(server, 'GET', '/items/_doc/atomic');
    assert.equal(afterwards.text, before.text);
  });

  test('the next search sees an inplace update in queries, sorts, aggregations and ranking', async () => {
    await call(server, 'PUT', '/vis', { json: { mappings: { properties: { name: { type: 'text' }, pop: { type: 'long', inplace: true } } } } });
    for (const [id, pop] of [['a', 1], ['b', 2], ['c', 3]] as const) {
      await call(server, 'PUT', `/vis/_doc/${id}`, { json: { name: 'widget', pop } });
    }
    const incr = await call(server, 'POST', '/vis/_update/a', { json: { ops: [{ op: 'incr', field: 'pop', value: 10 }] } });
    assert.equal(incr.status, 200, incr.text);
    const range = await call(server, 'POST', '/vis/_search', { json: { query: { range: { pop: { gte: 11 } } } } });
    assert.deepEqual(range.body.hits.hits.map((hit: any) => hit._id), ['a']);
    const term = await call(server, 'POST', '/vis/_search', { json: { query: { term: { pop: 11 } } } });
    assert.deepEqual(term.body.hits.hits.map((hit: any) => hit._id), ['a']);
    const sorted = await call(server, 'POST', '/vis/_search', { json: { sort: [{ pop: 'desc' }] } });
    assert.deepEqual(sorted.body.hits.hits.map((hit: any) => hit._id), ['a', 'c', 'b']);
    const aggs = await call(server, 'POST', '/vis/_search', { json: { size: 0, aggs: { top: { max: { field: 'pop' } } } } });
    assert.equal(aggs.body.aggregations.top.value, 11);
    const ranked = await call(server, 'POST', '/vis/_search', {
      json: { query: { function_score: { query: { match: { name: 'widget' } }, field_value_factor: { field: 'pop' } } } },
    });
    assert.deepEqual(ranked.body.hits.hits.map((hit: any) => hit._id), ['a', 'c', 'b']);
    const doc = await call(server, 'GET', '/vis/_doc/a');
    assert.deepEqual(doc.body._source, { name: 'widget', pop: 11 });
  });

  test('bulk update actions accept ops', async () => {
    await call(server, 'PUT', '/items/_doc/bulk1', { json: { views: 1, count: 1 } });
    const response = await call(server, 'POST', '/_bulk', {
      body: ndjson([
        { update: { _index: 'items', _id: 'bulk1' } },
        { ops: [{ op: 'incr', field: 'views', value: 2 }, { op: 'incr', field: 'count', value: 3 }] },
        { update: { _index: 'items', _id: 'bulk1' } },
        { ops: [{ op: 'incr', field: 'title', value: 2 }] },
      ]),
      headers: { 'content-type': 'application/x-ndjson' },
    });
    assert.equal(response.status, 200, response.text);
    assert.equal(response.body.errors, true);
    assert.equal(response.body.items[0].update.status, 200);
    assert.equal(response.body.items[1].update.status, 400);
    const doc = await call(server, 'GET', '/items/_doc/bulk1');
    assert.deepEqual(doc.body._source, { views: 3, count: 4 });
  });
});

describe('durability and concurrency', () => {
  test('concurrent incr from many clients loses no increment', async () => {
    await call(server, 'PUT', '/items/_doc/counter', { json: { views: 0, count: 0 } });
    const clients = 8;
    const perClient = 25;
    await Promise.all(
      Array.from({ length: clients }, async () => {
        for (let index = 0; index < perClient; index++) {
          const response = await call(server, 'POST', '/items/_update/counter', {
            json: { ops: [{ op: 'incr', field: 'views', value: 1 }, { op: 'incr', field: 'count', value: 2 }] },
          });
          assert.equal(response.status, 200, response.text);
        }
      }),
    );
    const doc = await call(server, 'GET', '/items/_doc/counter');
    assert.deepEqual(doc.body._source, { views: clients * perClient, count: 2 * clients * perClient });
    assert.equal(doc.body._version, 1 + clients * perClient);
  });

  test('acknowledged updates survive kill -9, epochs, merges and restart', async () => {
    // epoch.max_docs is 4, so these writes go through several epochs and background merges.
    const expected = new Map<string, { views: number; count: number }>();
    for (let index = 0; index < 20; index++) {
      await call(server, 'PUT', `/items/_doc/dur${index}`, { json: { views: index, count: index } });
      expected.set(`dur${index}`, { views: index, count: index });
    }
    for (let round = 0; round < 3; round++) {
      for (const [id, value] of expected) {
        const response = await call(server, 'POST', `/items/_update/${id}`, {
          json: { ops: [{ op: 'incr', field: 'views', value: 100 }, { op: 'incr', field: 'count', value: 1 }] },
        });
        assert.equal(response.status, 200, response.text);
        value.views += 100;
        value.count += 1;
      }
    }
    const verify = async (when: string) => {
      for (const [id, value] of expected) {
        const doc = await call(server, 'GET', `/items/_doc/${id}`);
        assert.deepEqual(doc.body._source, value, `${id} ${when}`);
      }
      const sum = await call(server, 'POST', '/items/_search', {
        json: { size: 0, query: { ids: { values: [...expected.keys()] } }, aggs: { views: { sum: { field: 'views' } } } },
      });
      const total = [...expected.values()].reduce((acc, value) => acc + value.views, 0);
      assert.equal(sum.status, 200, sum.text);
      assert.equal(sum.body.hits.total.value, expected.size, `hits ${when}`);
      assert.equal(sum.body.aggregations.views.value, total, `sum of inplace values ${when}`);
    };
    await verify('before the crash');
    await server.kill('SIGKILL');
    await server.restart();
    await verify('after kill -9');
    await server.kill('SIGTERM');
    await server.restart();
    await verify('after a clean restart');
  });
});
