/**
 * Range field types through real HTTP on a one-shard and a three-shard collection holding the
 * same documents: `integer_range`, `long_range`, `float_range`, `double_range`, `date_range`
 * (with `format`) and `ip_range` (with CIDR values); open ends and arrays of ranges; `range`
 * queries with each `relation`, `term` (a point inside), `terms`, `exists`; `_source` as sent;
 * GET _mapping and _field_caps; the mapper_parsing refusals in OpenSearch's words; everything
 * again after a merge into segments and a restart.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { call, startServer, type TroveServer } from './harness.ts';
import { loadKeyedCollections, sameAnswerOn } from './sharded-collections.ts';

let server: TroveServer;

const MAPPINGS = {
  properties: {
    ages: { type: 'integer_range' },
    big: { type: 'long_range' },
    ratio: { type: 'float_range' },
    score: { type: 'double_range' },
    period: { type: 'date_range', format: 'yyyy-MM-dd||epoch_millis' },
    net: { type: 'ip_range' },
  },
};

const DOCS: Record<string, Record<string, unknown>> = {
  a: { ages: { gte: 10, lte: 20 }, big: { gte: 1, lt: 5 }, ratio: { gte: 0.5, lte: 1.5 }, score: { gt: 1, lt: 2 }, period: { gte: '2024-01-01', lte: '2024-01-31' }, net: '10.0.0.0/8' },
  b: { ages: { gt: 20, lt: 30 }, big: { gte: 9007199254740000 }, period: { gte: '2024-02-01' }, net: { gte: '192.168.0.1', lte: '192.168.0.255' } },
  c: { ages: [{ gte: 0, lte: 5 }, { gte: 40, lte: 50 }], ratio: { lte: 0 }, net: { gte: '2001:db8::', lt: '2001:db9::' } },
  d: { ages: { lte: 3 }, score: [{ gte: -1, lte: 0 }, { gte: 100, lte: 200 }], period: { lt: 1704067200000 } },
  e: { ages: null, note: 'no ranges' },
};

const COLLECTIONS = ['ranges1', 'ranges3'];

before(async () => {
  server = await startServer();
  await loadKeyedCollections(server, [['ranges1', 1], ['ranges3', 3]], MAPPINGS, DOCS);
});

after(async () => {
  await server?.cleanup();
});

/** Sorted ids matching a query, checked equal on one and three shards. */
async function ids(query: unknown): Promise<string[]> {
  const answer = await sameAnswerOn(server, COLLECTIONS, { size: 20, query });
  return answer.hits.hits.map((hit: { _id: string }) => hit._id).sort();
}

async function indexError(doc: unknown): Promise<{ status: number; type: string; reason: string }> {
  const response = await call(server, 'PUT', '/ranges1/_doc/bad', { json: doc });
  return { status: response.status, type: response.body.error?.type, reason: response.body.error?.reason };
}

/** The queries every check runs, with the ids each must match. */
async function checkQueries(): Promise<void> {
  // intersects (the default): any overlap, bounds inclusive; gt/lt are exclusive on both sides.
  assert.deepEqual(await ids({ range: { ages: { gte: 20, lte: 21 } } }), ['a', 'b']);
  assert.deepEqual(await ids({ range: { ages: { gt: 20, lte: 21 } } }), ['b']);
  assert.deepEqual(await ids({ range: { ages: { gte: 45 } } }), ['c']);
  assert.deepEqual(await ids({ range: { ages: { lt: 1 } } }), ['c', 'd']);
  // within: the document's range lies inside the query's (an open end never does).
  assert.deepEqual(await ids({ range: { ages: { gte: 5, lte: 25, relation: 'within' } } }), ['a']);
  assert.deepEqual(await ids({ range: { ages: { gte: 0, lte: 60, relation: 'within' } } }), ['a', 'b', 'c']);
  // contains: the document's range holds the query's.
  assert.deepEqual(await ids({ range: { ages: { gte: 12, lte: 18, relation: 'contains' } } }), ['a']);
  assert.deepEqual(await ids({ range: { ages: { gte: 1, lte: 4, relation: 'contains' } } }), ['c']);
  assert.deepEqual(await ids({ range: { ages: { gte: -100, lte: 2, relation: 'contains' } } }), ['d']);
  // term: a point inside a range; terms: any of the points.
  assert.deepEqual(await ids({ term: { ages: 20 } }), ['a']);
  assert.deepEqual(await ids({ term: { ages: 21 } }), ['b']);
  assert.deepEqual(await ids({ term: { ages: { value: 3 } } }), ['c', 'd']);
  assert.deepEqual(await ids({ terms: { ages: [30, 45] } }), ['c']);
  assert.deepEqual(await ids({ term: { big: 5 } }), []);
  assert.deepEqual(await ids({ term: { big: 4 } }), ['a']);
  assert.deepEqual(await ids({ term: { big: 9007199254740991 } }), ['b']);
  // float and double: gt/lt exclude the bound itself.
  assert.deepEqual(await ids({ term: { score: 1 } }), []);
  assert.deepEqual(await ids({ term: { score: 1.5 } }), ['a']);
  assert.deepEqual(await ids({ term: { score: 150 } }), ['d']);
  assert.deepEqual(await ids({ range: { ratio: { lte: 0.5 } } }), ['a', 'c']);
  assert.deepEqual(await ids({ range: { score: { gte: -0.5, lte: 150, relation: 'within' } } }), ['a']);
  // date_range: the field's format, date math and the query's own format.
  assert.deepEqual(await ids({ term: { period: '2024-01-15' } }), ['a']);
  assert.deepEqual(await ids({ range: { period: { gte: '2024-01-31', lte: '2024-02-01' } } }), ['a', 'b']);
  assert.deepEqual(await ids({ range: { period: { gte: '2023-12-01', lt: '2024-01-01' } } }), ['d']);
  assert.deepEqual(await ids({ range: { period: { gte: '01/15/2024', lte: '01/16/2024', format: 'MM/dd/yyyy' } } }), ['a']);
  assert.deepEqual(await ids({ range: { period: { gte: '2024-01-01||-1d', lte: '2024-01-01||+1M', relation: 'within' } } }), ['a']);
  assert.deepEqual(await ids({ range: { period: { gte: '2030-01-01' } } }), ['b']);
  // ip_range: addresses, CIDR values in documents and in term queries, IPv6.
  assert.deepEqual(await ids({ term: { net: '10.1.2.3' } }), ['a']);
  assert.deepEqual(await ids({ term: { net: '192.168.0.0' } }), []);
  assert.deepEqual(await ids({ term: { net: '192.168.0.0/24' } }), ['b']);
  assert.deepEqual(await ids({ term: { net: '2001:db8::42' } }), ['c']);
  assert.deepEqual(await ids({ range: { net: { gte: '9.0.0.0', lte: '192.168.0.1' } } }), ['a', 'b']);
  assert.deepEqual(await ids({ range: { net: { gte: '10.0.0.0', lte: '10.255.255.255', relation: 'within' } } }), ['a']);
  assert.deepEqual(await ids({ range: { net: { gte: '10.0.0.0', lte: '10.255.255.255', relation: 'contains' } } }), ['a']);
  // exists: any range, including open ones.
  assert.deepEqual(await ids({ exists: { field: 'ages' } }), ['a', 'b', 'c', 'd']);
  assert.deepEqual(await ids({ exists: { field: 'period' } }), ['a', 'b', 'd']);
  assert.deepEqual(await ids({ exists: { field: 'net' } }), ['a', 'b', 'c']);
  // match and query_string read a value like term.
  assert.deepEqual(await ids({ match: { ages: 42 } }), ['c']);
  assert.deepEqual(await ids({ match: { net: '192.168.0.7' } }), ['b']);
  assert.deepEqual(await ids({ query_string: { query: 'ages:25' } }), ['b']);
  assert.deepEqual(await ids({ match: { ages: { query: 'not a number', lenient: true } } }), []);
  // In a bool with other clauses.
  assert.deepEqual(await ids({ bool: { filter: [{ term: { ages: 3 } }], must_not: [{ exists: { field: 'score' } }] } }), ['c']);
}

test('range fields answer range, term, terms and exists queries with each relation', async () => {
  await checkQueries();
});

test('_source comes back as sent, and GET _mapping and _field_caps show the range types', async () => {
  const got = await call(server, 'GET', '/ranges3/_doc/c');
  assert.deepEqual(got.body._source, DOCS.c);
  const searched = await call(server, 'POST', '/ranges1/_search', { json: { query: { ids: { values: ['b'] } } } });
  assert.deepEqual(searched.body.hits.hits[0]._source, DOCS.b);
  const mapping = await call(server, 'GET', '/ranges1/_mapping');
  const { note, ...mapped } = mapping.body.ranges1.mappings.properties;
  assert.deepEqual(mapped, MAPPINGS.properties);
  assert.equal(note.type, 'text');
  const caps = await call(server, 'GET', '/ranges1/_field_caps?fields=ages,period,net');
  assert.equal(caps.status, 200, caps.text);
  assert.deepEqual(caps.body.fields.ages.integer_range, { type: 'integer_range', searchable: true, aggregatable: false });
  assert.equal(caps.body.fields.period.date_range.type, 'date_range');
  assert.equal(caps.body.fields.net.ip_range.searchable, true);
});

test('malformed ranges are refused in OpenSearch words', async () => {
  let error = await indexError({ ages: { gte: 10, lte: 5 } });
  assert.equal(error.status, 400);
  assert.equal(error.type, 'mapper_parsing_exception');
  assert.match(error.reason, /min value \(10\) is greater than max value \(5\)/);
  error = await indexError({ ages: { gt: 5, lt: 6 } });
  assert.match(error.reason, /min value \(6\) is greater than max value \(5\)/);
  error = await indexError({ ages: 5 });
  assert.equal(error.type, 'mapper_parsing_exception');
  assert.match(error.reason, /error parsing field \[ages\], expected an object/);
  error = await indexError({ ages: { from: 1 } });
  assert.match(error.reason, /error parsing field \[ages\], with unknown parameter \[from\]/);
  error = await indexError({ period: { gte: 'not a date' } });
  assert.equal(error.type, 'mapper_parsing_exception');
  error = await indexError({ net: '10.0.0.0/33' });
  assert.equal(error.type, 'mapper_parsing_exception');
  const bad = await call(server, 'PUT', '/ranges_bad', { json: { mappings: { properties: { r: { type: 'integer_range', null_value: 1 } } } } });
  assert.equal(bad.status, 400);
  const query = await call(server, 'POST', '/ranges1/_search', { json: { query: { range: { ages: { gte: 1, relation: 'overlaps' } } } } });
  assert.equal(query.status, 400);
  const sort = await call(server, 'POST', '/ranges1/_search', { json: { sort: ['ages'] } });
  assert.equal(sort.status, 400);
});

test('after a merge into segments and a restart the ranges still answer', async () => {
  for (const name of COLLECTIONS) {
    const merged = await call(server, 'POST', `/${name}/_forcemerge`);
    assert.equal(merged.status, 200, merged.text);
  }
  await checkQueries();
  await server.restart();
  await checkQueries();
});
