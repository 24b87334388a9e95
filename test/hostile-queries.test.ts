/**
 * Hostile searches and values through real HTTP (issue 12, items 3, 4, 10 and 13): wildcard
 * patterns that made a backtracking matcher run for minutes, absurd `_source` pattern lists,
 * query syntax nested until the stack overflowed, queries and aggregations past Elasticsearch's
 * limits (clauses, terms, ranges, buckets), and `long` values a float64 cannot hold exactly. Each
 * answer must be a quick 4xx naming the limit (or a correct 200), and the server keeps serving.
 */
import { after, afterEach, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { call, startServer, type CallOptions, type HttpResponse, type TroveServer } from './harness.ts';

let server: TroveServer;

/** A field name long enough that a backtracking `*a*a*a*a*a*a*a*b` never finishes on it. */
const LONG_NAME = 'a'.repeat(2000);

/** Most time one hostile request may take before the test calls it a stall. */
const STALL_MS = 10_000;

/** Sends a request, failing the test (instead of waiting forever) when no answer comes within STALL_MS. */
async function timed(method: string, path: string, options: CallOptions = {}): Promise<HttpResponse> {
  let timer: NodeJS.Timeout | undefined;
  const stalled = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${method} ${path.slice(0, 120)} stalled for ${STALL_MS} ms`)), STALL_MS);
  });
  try {
    return await Promise.race([call(server, method, path, options), stalled]);
  } finally {
    clearTimeout(timer);
  }
}

/** Sends a request that must be refused with `status` and ES error `type`; returns the reason. */
async function refused(method: string, path: string, options: CallOptions, status: number, type: string): Promise<string> {
  const response = await timed(method, path, options);
  const label = `${method} ${path.slice(0, 120)} -> ${response.status} ${response.text.slice(0, 300)}`;
  assert.equal(response.status, status, label);
  assert.equal(response.body.error?.type, type, label);
  assert.equal(response.body.error.root_cause[0].type, type, label);
  return response.body.error.reason as string;
}

/** Sends a request that must succeed with `status`; returns the body. */
async function answered(method: string, path: string, options: CallOptions = {}, status = 200): Promise<any> {
  const response = await timed(method, path, options);
  assert.equal(response.status, status, `${method} ${path.slice(0, 120)} -> ${response.status} ${response.text.slice(0, 300)}`);
  return response.body;
}

function termClauses(count: number): unknown[] {
  return Array.from({ length: count }, (_, index) => ({ term: { tag: `t${index}` } }));
}

function words(count: number): string {
  return Array.from({ length: count }, (_, index) => `w${index}`).join(' ');
}

before(async () => {
  server = await startServer();
  await answered('PUT', '/target', {
    json: { mappings: { properties: { title: { type: 'text' }, tag: { type: 'keyword' }, n: { type: 'long' }, views: { type: 'long', inplace: true }, sold: { type: 'date' } } } },
  });
  await answered('PUT', '/target/_doc/1', { json: { title: 'first', tag: 'a', n: 1, views: 1, sold: '2024-01-15', [LONG_NAME]: 'long field' } }, 201);
  await answered('PUT', '/target/_doc/2', { json: { title: 'second', tag: 'b', n: 2, views: 2, sold: '2024-03-01' } }, 201);
});

afterEach(async () => {
  const search = await timed('POST', '/target/_search', { json: { query: { match_all: {} } } });
  assert.equal(search.status, 200, `the server must keep serving: ${search.text.slice(0, 300)}\n${server.output()}`);
  assert.equal(search.body.hits.total.value, 2, 'no hostile request changed the documents');
});

after(async () => {
  await server?.cleanup();
});

describe('wildcard patterns (item 3)', () => {
  const PATTERN = '*a*a*a*a*a*a*a*b';

  test('a pathological _source pattern on a long field name answers at once, on every route that filters sources', async () => {
    const encoded = encodeURIComponent(PATTERN);
    assert.deepEqual(await answered('GET', `/target/_doc/1?_source_includes=${encoded}`).then((body) => body._source), {});
    assert.deepEqual(await answered('GET', `/target/_source/1?_source_excludes=${encoded}`).then((body) => Object.keys(body).length), 6);
    const search = await answered('POST', `/target/_search?_source_includes=${encoded}`, { json: { query: { ids: { values: ['1'] } } } });
    assert.deepEqual(search.hits.hits[0]._source, {});
    const body = await answered('POST', '/target/_search', { json: { query: { ids: { values: ['1'] } }, _source: { includes: ['title', PATTERN], excludes: [PATTERN] } } });
    assert.deepEqual(body.hits.hits[0]._source, { title: 'first' });
    const mget = await answered('POST', '/target/_mget', { json: { docs: [{ _id: '1', _source: [PATTERN, `${PATTERN}.*`] }] } });
    assert.deepEqual(mget.docs[0]._source, {});
  });

  test('field and highlight patterns are matched by the same linear matcher', async () => {
    const multiMatch = await answered('POST', '/target/_search', { json: { query: { multi_match: { query: 'long', fields: [PATTERN] } } } });
    assert.equal(multiMatch.hits.total.value, 0);
    const simple = await answered('POST', '/target/_search', { json: { query: { simple_query_string: { query: 'long', fields: ['title', `${PATTERN}^2`] } } } });
    assert.equal(simple.hits.total.value, 0);
    const highlighted = await answered('POST', '/target/_search', { json: { query: { match: { [LONG_NAME]: 'long' } }, highlight: { fields: { [PATTERN]: {}, '*a*a*a*a*a*a*a*a': {} } } } });
    assert.deepEqual(highlighted.hits.hits[0].highlight, { [LONG_NAME]: ['<em>long</em> field'] });
  });

  test('absurd _source patterns are a 400 naming the parameter, not a 500', async () => {
    const long = 'x'.repeat(100_000);
    assert.match(await refused('POST', '/target/_search', { json: { _source: long } }, 400, 'illegal_argument_exception'), /^\[_source\] holds a pattern of 100000 characters, at most 4096/);
    assert.match(await refused('POST', '/target/_search', { json: { _source: { excludes: [long] } } }, 400, 'illegal_argument_exception'), /^\[_source\.excludes\]/);
    const mget = await answered('POST', '/target/_mget', { json: { docs: [{ _id: '1', _source: [long] }, { _id: '2', _source: ['title'] }] } });
    assert.equal(mget.docs[0].error.type, 'illegal_argument_exception', 'mget fails the item, as ES does');
    assert.match(mget.docs[0].error.reason, /^\[_source\] holds a pattern/);
    assert.deepEqual(mget.docs[1]._source, { title: 'second' });
    const many = Array.from({ length: 1025 }, (_, index) => `f${index}`).join(',');
    assert.match(await refused('GET', `/target/_doc/1?_source_includes=${many}`, {}, 400, 'illegal_argument_exception'), /^\[_source_includes\] has 1025 patterns, at most 1024/);
    assert.match(await refused('POST', `/target/_search?_source_excludes=${many}`, { json: {} }, 400, 'illegal_argument_exception'), /^\[_source_excludes\] has 1025 patterns/);
  });
});

describe('query nesting (item 10)', () => {
  test('simple_query_string with 25 000 unclosed groups is a 400 parsing_exception, not a stack overflow', async () => {
    const reason = await refused('POST', '/target/_search', { json: { query: { simple_query_string: { query: '(a|'.repeat(25_000) } } } }, 400, 'parsing_exception');
    assert.equal(reason, '[simple_query_string] query is nested deeper than 64 levels');
    await refused('POST', '/target/_count', { json: { query: { simple_query_string: { query: `${'a | b + '.repeat(200)}c` } } } }, 400, 'parsing_exception');
    let nested: unknown = { match_all: {} };
    for (let level = 0; level < 500; level++) nested = { bool: { must: nested } };
    await refused('POST', '/target/_search', { json: { query: nested } }, 400, 'x_content_parse_exception');
  });
});

describe('query and aggregation limits (item 4)', () => {
  const tooManyClauses = /^Query contains too many clauses: more than \[1024\].*\[indices\.query\.bool\.max_clause_count\]/;

  test('more than 1024 clauses, counted through nesting and analysed terms, are a 400', async () => {
    assert.match(await refused('POST', '/target/_search', { json: { query: { bool: { should: termClauses(10_000) } } } }, 400, 'illegal_argument_exception'), tooManyClauses);
    assert.match(await refused('POST', '/target/_search', { json: { query: { match: { title: words(20_000) } } } }, 400, 'illegal_argument_exception'), tooManyClauses);
    const split = { bool: { must: [{ bool: { should: termClauses(600) } }, { bool: { filter: termClauses(600) } }] } };
    assert.match(await refused('POST', '/target/_count', { json: { query: split } }, 400, 'illegal_argument_exception'), tooManyClauses);
    assert.match(await refused('POST', '/target/_search?q=' + encodeURIComponent('a '.repeat(1100)), {}, 400, 'illegal_argument_exception'), tooManyClauses);
    const allowed = await answered('POST', '/target/_search', { json: { query: { bool: { should: [...termClauses(1023), { term: { tag: 'a' } }] } } } });
    assert.equal(allowed.hits.total.value, 1);
  });

  test('terms lists more than 65 536 values are a 400 naming index.max_terms_count', async () => {
    const values = Array.from({ length: 65_537 }, (_, index) => `v${index}`);
    assert.match(await refused('POST', '/target/_search', { json: { query: { terms: { tag: values } } } }, 400, 'illegal_argument_exception'), /\[65537\].*\[65536\].*\[index\.max_terms_count\]/);
    const allowed = await answered('POST', '/target/_search', { json: { query: { terms: { tag: [...values.slice(0, 65_535), 'b'] } } } });
    assert.equal(allowed.hits.total.value, 1);
  });

  test('a range aggregation of 100 000 ranges is a 400 at once', async () => {
    const ranges = Array.from({ length: 100_000 }, (_, index) => ({ from: index, to: index + 1 }));
    const started = Date.now();
    assert.match(await refused('POST', '/target/_search', { json: { size: 0, aggs: { r: { range: { field: 'n', ranges } } } } }, 400, 'illegal_argument_exception'), /^\[range\] \[ranges\] lists 100000 ranges, at most 1000/);
    assert.ok(Date.now() - started < 5000, `took ${Date.now() - started} ms`);
  });

  test('the buckets of a whole request, empty histogram buckets included, are at most 65 535', async () => {
    const tooManyBuckets = /^Trying to create too many buckets\. Must be less than or equal to: \[65535\].*\[search\.max_buckets\]/;
    const monthly = { date_histogram: { field: 'sold', calendar_interval: 'month', min_doc_count: 0, extended_bounds: { min: '0100-01-01', max: '3000-01-01' } } };
    const one = await answered('POST', '/target/_search', { json: { size: 0, aggs: { months: monthly } } });
    assert.equal(one.aggregations.months.buckets.length, 34_801);
    const two = { size: 0, aggs: { months: monthly, again: monthly } };
    assert.match(await refused('POST', '/target/_search', { json: two }, 400, 'too_many_buckets_exception'), tooManyBuckets);
    const millis = { size: 0, aggs: { ms: { date_histogram: { field: 'sold', fixed_interval: '1ms', min_doc_count: 0, extended_bounds: { min: '1900-01-01', max: '2100-01-01' } } } } };
    assert.match(await refused('POST', '/target/_search', { json: millis }, 400, 'too_many_buckets_exception'), tooManyBuckets);
    const ranges = Array.from({ length: 1000 }, (_, index) => ({ from: index }));
    const nested = { size: 0, aggs: { tags: { terms: { field: 'tag', min_doc_count: 0, size: 100 }, aggs: { byN: { histogram: { field: 'n', interval: 1, min_doc_count: 0, extended_bounds: { min: 0, max: 40_000 } } } } } } };
    assert.match(await refused('POST', '/target/_search', { json: nested }, 400, 'too_many_buckets_exception'), tooManyBuckets);
    const fine = await answered('POST', '/target/_search', { json: { size: 0, aggs: { tags: { terms: { field: 'tag' }, aggs: { r: { range: { field: 'n', ranges } } } } } } });
    assert.equal(fine.aggregations.tags.buckets.length, 2);
  });
});

describe('long values a float64 cannot hold exactly (item 13)', () => {
  const inexact = /^failed to parse field \[(n|views)\] of type \[long\]: value \[.*\] cannot be held exactly: beyond ±9007199254740991/;
  const outOfRange = /^failed to parse field \[n\] of type \[long\]: value \[.*\] is out of range for a long/;
  const jsonWith = (field: string, literal: string): CallOptions => ({ body: `{"${field}": ${literal}}`, headers: { 'content-type': 'application/json' } });

  test('new documents keep every digit of a long (exact-long), and one beyond the long range is refused naming the field', async () => {
    for (const [index, literal] of ['9007199254740993', '9223372036854775807', '-9007199254740993', '"9007199254740993"'].entries()) {
      await answered('PUT', '/target/_doc/big', jsonWith('n', literal), index === 0 ? 201 : 200);
      const found = await answered('POST', '/target/_search', { json: { query: { term: { n: literal.replaceAll('"', '') } } } });
      assert.deepEqual(found.hits.hits.map((hit: { _id: string }) => hit._id), ['big'], literal);
    }
    assert.match(await refused('PUT', '/target/_doc/big', jsonWith('n', '9223372036854775808'), 400, 'mapper_parsing_exception'), outOfRange);
    assert.match(await refused('PUT', '/target/_create/created', jsonWith('n', '-9223372036854775809'), 400, 'mapper_parsing_exception'), outOfRange);
    const bulk = await answered('POST', '/target/_bulk', {
      body: `${JSON.stringify({ index: { _id: 'big' } })}\n{"n": 9007199254740993}\n${JSON.stringify({ create: { _id: 'big2' } })}\n{"n": [1, 9223372036854775808]}\n`,
      headers: { 'content-type': 'application/x-ndjson' },
    });
    assert.equal(bulk.items[0].index.status, 200, JSON.stringify(bulk.items[0]));
    assert.equal(bulk.items[1].create.status, 400, JSON.stringify(bulk.items[1]));
    assert.match(bulk.items[1].create.error.reason, outOfRange);
    const exact = await answered('PUT', '/target/_doc/exact', jsonWith('n', '9007199254740991'), 201);
    assert.equal(exact.result, 'created');
    // The suite checks after each test that the collection holds its two documents again.
    for (const id of ['exact', 'big']) await answered('DELETE', `/target/_doc/${id}`);
  });

  test('updates, inplace ones included, are refused the same way and change nothing', async () => {
    assert.match(await refused('POST', '/target/_update/1', { body: '{"doc": {"n": 9007199254740993}}', headers: { 'content-type': 'application/json' } }, 400, 'mapper_parsing_exception'), inexact);
    assert.match(await refused('POST', '/target/_update/1', { body: '{"doc": {"views": 9223372036854775807}}', headers: { 'content-type': 'application/json' } }, 400, 'mapper_parsing_exception'), inexact);
    const document = await answered('GET', '/target/_doc/1');
    assert.equal(document._source.n, 1);
    assert.equal(document._source.views, 1);
  });
});
