/**
 * The field types and mapping parameters of the search-compatibility issue through real HTTP, on
 * a one-shard and a three-shard collection holding the same documents: byte, short, half_float,
 * scaled_float, unsigned_long, ip, binary, date_nanos, date formats, match_only_text, wildcard,
 * flattened / flat_object; index: false, doc_values: false, null_value, copy_to, multi-fields,
 * ignore_above, meta, store, root _source; term, terms, range, exists, sort, aggregations and
 * source of each; bad values (400 mapper_parsing naming the field, nothing written); mapping
 * updates; and everything again after a restart.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { call, ndjson, startServer, type TroveServer } from './harness.ts';

let server: TroveServer;

const MAPPINGS = {
  properties: {
    tiny: { type: 'byte' },
    small: { type: 'short' },
    half: { type: 'half_float' },
    price: { type: 'scaled_float', scaling_factor: 100 },
    counter: { type: 'unsigned_long' },
    addr: { type: 'ip' },
    blob: { type: 'binary' },
    at: { type: 'date_nanos' },
    day: { type: 'date', format: 'yyyy/MM/dd||epoch_second' },
    body: { type: 'match_only_text' },
    path: { type: 'wildcard' },
    labels: { type: 'flattened' },
    attrs: { type: 'flat_object' },
    status: { type: 'keyword', null_value: 'unknown' },
    first: { type: 'text', copy_to: 'full' },
    last: { type: 'text', copy_to: ['full'] },
    full: { type: 'text', fields: { raw: { type: 'keyword' } } },
    title: { type: 'text', fields: { raw: { type: 'keyword' } } },
    hidden: { type: 'long', index: false },
    opaque: { type: 'long', index: false, doc_values: false },
    unsorted: { type: 'keyword', doc_values: false, store: true, meta: { owner: 'search team' } },
    code: { type: 'keyword', ignore_above: 5 },
  },
};

const DOCS: Record<string, Record<string, unknown>> = {
  d1: {
    tiny: 1, small: 300, half: 1.5, price: 9.99, counter: 5, addr: '10.0.0.2', blob: 'aGVsbG8=',
    at: '2024-01-01T00:00:00.001000001Z', day: '2024/01/02', body: 'the quick brown fox', path: '/usr/local/bin/node',
    labels: { color: 'red', size: 'L' }, attrs: { os: { name: 'linux' } }, status: null, first: 'Ada', last: 'Lovelace',
    title: 'Alpha Book', hidden: 10, unsorted: 'x', code: 'abc',
  },
  d2: {
    tiny: -5, small: -2, half: 0.1, price: 100, counter: 9007199254740991, addr: '10.0.0.10',
    at: '2024-01-01T00:00:00.002000002Z', day: 1704240000, body: 'lazy dog sleeps', path: '/usr/bin/env',
    labels: { color: 'blue', nested: { deep: 'x' } }, status: 'ok', first: 'Grace', last: 'Hopper', title: 'Beta Book',
    hidden: 20, unsorted: 'y', code: 'much too long',
  },
  d3: { tiny: 127, price: 0.015, addr: '2001:db8::1', labels: { color: 'red' }, body: 'brown dog', title: 'Gamma', hidden: 5 },
  d4: { addr: '192.168.1.1', status: 'ok', title: 'Delta', 'labels.color': 'green' },
};

const COLLECTIONS = ['types1', 'types3'];

before(async () => {
  server = await startServer();
  for (const [name, shards] of [['types1', 1], ['types3', 3]] as const) {
    const created = await call(server, 'PUT', `/${name}`, { json: { settings: { number_of_shards: shards }, mappings: MAPPINGS } });
    assert.equal(created.status, 200, created.text);
    const body = ndjson(Object.entries(DOCS).flatMap(([id, doc]) => [{ index: { _id: id } }, doc]));
    const loaded = await call(server, 'POST', `/${name}/_bulk?refresh=true`, { body, headers: { 'content-type': 'application/x-ndjson' } });
    assert.equal(loaded.body.errors, false, loaded.text);
  }
});

after(async () => {
  await server?.cleanup();
});

async function searchBoth(body: Record<string, unknown>): Promise<any> {
  const answers = [];
  for (const name of COLLECTIONS) {
    const response = await call(server, 'POST', `/${name}/_search`, { json: { size: 20, ...body } });
    assert.equal(response.status, 200, `${name}: ${response.text}`);
    answers.push(response.body);
  }
  return answers;
}

/** Sorted ids matching a query, checked equal on one and three shards. */
async function ids(query: unknown): Promise<string[]> {
  const [one, three] = await searchBoth({ query });
  const sorted = (answer: any): string[] => answer.hits.hits.map((hit: any) => hit._id).sort();
  assert.deepEqual(sorted(three), sorted(one), `three shards: ${JSON.stringify(query)}`);
  return sorted(one);
}

/** Ids and sort values in sort order, checked equal on one and three shards. */
async function sorted(sort: unknown, extra: Record<string, unknown> = {}): Promise<{ ids: string[]; values: unknown[] }> {
  const [one, three] = await searchBoth({ sort, ...extra });
  const shape = (answer: any) => ({ ids: answer.hits.hits.map((hit: any) => hit._id), values: answer.hits.hits.map((hit: any) => hit.sort) });
  assert.deepEqual(shape(three), shape(one), `three shards: ${JSON.stringify(sort)}`);
  return shape(one);
}

async function termsKeys(field: string, extra: Record<string, unknown> = {}): Promise<unknown[]> {
  const [one, three] = await searchBoth({ size: 0, aggs: { keys: { terms: { field, order: { _key: 'asc' }, ...extra } } } });
  const keys = (answer: any) => answer.aggregations.keys.buckets.map((bucket: any) => [bucket.key, bucket.doc_count]);
  assert.deepEqual(keys(three), keys(one));
  return keys(one);
}

async function searchError(body: Record<string, unknown>, collection = 'types1'): Promise<{ status: number; type: string; reason: string }> {
  const response = await call(server, 'POST', `/${collection}/_search`, { json: body });
  return { status: response.status, type: response.body.error?.type, reason: response.body.error?.reason };
}

async function metric(aggregation: Record<string, unknown>): Promise<unknown> {
  const [one, three] = await searchBoth({ size: 0, aggs: { m: aggregation } });
  assert.deepEqual(three.aggregations.m, one.aggregations.m);
  return one.aggregations.m.value;
}

test('byte and short: ranges, terms, sort and aggregations', async () => {
  assert.deepEqual(await ids({ term: { tiny: 127 } }), ['d3']);
  assert.deepEqual(await ids({ range: { tiny: { gte: 0 } } }), ['d1', 'd3']);
  assert.deepEqual(await ids({ range: { small: { lt: 0 } } }), ['d2']);
  assert.deepEqual(await ids({ exists: { field: 'small' } }), ['d1', 'd2']);
  assert.deepEqual((await sorted([{ tiny: 'asc' }])).ids, ['d2', 'd1', 'd3', 'd4']);
  assert.deepEqual(await termsKeys('tiny'), [[-5, 1], [1, 1], [127, 1]]);
  assert.equal(await metric({ sum: { field: 'small' } }), 298);
});

test('half_float and scaled_float compare as the column holds them; the source keeps the value sent', async () => {
  assert.deepEqual(await ids({ term: { half: 0.1 } }), ['d2']);
  assert.deepEqual(await ids({ range: { half: { gt: 1 } } }), ['d1']);
  assert.deepEqual(await ids({ term: { price: 0.02 } }), ['d3'], '0.015 is held as 0.02 with scaling_factor 100');
  assert.deepEqual(await ids({ range: { price: { gte: 10 } } }), ['d2']);
  assert.equal(await metric({ max: { field: 'price' } }), 100);
  const got = await call(server, 'GET', '/types1/_doc/d3');
  assert.equal(got.body._source.price, 0.015);
});

test('unsigned_long: exact up to 2^64 - 1, negative values refused', async () => {
  assert.deepEqual(await ids({ term: { counter: 9007199254740991 } }), ['d2']);
  assert.deepEqual((await sorted([{ counter: 'desc' }])).values.slice(0, 2), [[9007199254740991], [5]]);
  const refused = await call(server, 'PUT', '/types1/_doc/big', { json: { counter: -1 } });
  assert.equal(refused.status, 400);
  assert.equal(refused.body.error.type, 'mapper_parsing_exception');
  assert.match(refused.body.error.reason, /\[counter\]/);
  const created = await call(server, 'PUT', '/counters', { json: { settings: { number_of_shards: 2 }, mappings: { properties: { c: { type: 'unsigned_long' } } } } });
  assert.equal(created.status, 200, created.text);
  for (const [id, literal] of [['top', '18446744073709551615'], ['below', '18446744073709551614'], ['low', '7']]) {
    const written = await call(server, 'PUT', `/counters/_doc/${id}?refresh=true`, { body: `{"c": ${literal}}`, headers: { 'content-type': 'application/json' } });
    assert.equal(written.status, 201, written.text);
  }
  const find = async (query: unknown): Promise<string[]> =>
    (await call(server, 'POST', '/counters/_search', { json: { query } })).body.hits.hits.map((hit: any) => hit._id).sort();
  assert.deepEqual(await find({ term: { c: '18446744073709551615' } }), ['top']);
  assert.deepEqual(await find({ range: { c: { gt: '9223372036854775808' } } }), ['below', 'top']);
  assert.deepEqual(await find({ range: { c: { lt: '18446744073709551615' } } }), ['below', 'low']);
  const over = await call(server, 'PUT', '/counters/_doc/over', { body: '{"c": 18446744073709551616}', headers: { 'content-type': 'application/json' } });
  assert.equal(over.status, 400);
  assert.match(over.body.error.reason, /\[c\].*out of range for an unsigned_long/);
});

test('ip: exact addresses, CIDR blocks, ranges in address order, sort values and keys as addresses', async () => {
  assert.deepEqual(await ids({ term: { addr: '10.0.0.10' } }), ['d2']);
  assert.deepEqual(await ids({ term: { addr: '10.0.0.0/8' } }), ['d1', 'd2']);
  assert.deepEqual(await ids({ term: { addr: '2001:db8::/32' } }), ['d3']);
  assert.deepEqual(await ids({ term: { addr: '2001:0db8:0:0:0:0:0:1' } }), ['d3']);
  assert.deepEqual(await ids({ terms: { addr: ['192.168.0.0/16', '10.0.0.2'] } }), ['d1', 'd4']);
  assert.deepEqual(await ids({ range: { addr: { gte: '10.0.0.5', lte: '10.0.0.255' } } }), ['d2'], 'by address, not by text');
  assert.deepEqual(await ids({ match: { addr: '192.168.1.1' } }), ['d4']);
  const order = await sorted([{ addr: 'asc' }]);
  assert.deepEqual(order.ids, ['d1', 'd2', 'd4', 'd3']);
  assert.deepEqual(order.values, [['10.0.0.2'], ['10.0.0.10'], ['192.168.1.1'], ['2001:db8::1']]);
  const after = await sorted([{ addr: 'asc' }], { search_after: ['10.0.0.10'] });
  assert.deepEqual(after.ids, ['d4', 'd3']);
  assert.deepEqual(await termsKeys('addr'), [['10.0.0.2', 1], ['10.0.0.10', 1], ['192.168.1.1', 1], ['2001:db8::1', 1]]);
  const bad = await searchError({ query: { term: { addr: '10.0.0.300' } } });
  assert.equal(bad.status, 400);
  assert.match(bad.reason, /is not an IP string literal/);
  const prefix = await searchError({ query: { prefix: { addr: '10.' } } });
  assert.equal(prefix.status, 400);
});

test('binary: kept in the source, not searchable', async () => {
  const got = await call(server, 'GET', '/types3/_doc/d1');
  assert.equal(got.body._source.blob, 'aGVsbG8=');
  const refused = await searchError({ query: { term: { blob: 'aGVsbG8=' } } });
  assert.equal(refused.status, 400);
  assert.match(refused.reason, /Binary fields do not support searching/);
  const sort = await searchError({ sort: [{ blob: 'asc' }] });
  assert.equal(sort.status, 400);
});

test('date_nanos and date formats', async () => {
  const got = await call(server, 'GET', '/types1/_doc/d1');
  assert.equal(got.body._source.at, '2024-01-01T00:00:00.001000001Z', 'nanoseconds kept in the source');
  assert.deepEqual(await ids({ range: { at: { gte: '2024-01-01T00:00:00.002Z' } } }), ['d2']);
  assert.deepEqual((await sorted([{ at: 'desc' }])).ids.slice(0, 2), ['d2', 'd1']);
  assert.deepEqual(await ids({ term: { day: '2024/01/02' } }), ['d1']);
  assert.deepEqual(await ids({ range: { day: { gt: '2024/01/02' } } }), ['d2'], 'epoch_second 1704240000 is 2024-01-03');
  assert.deepEqual(await ids({ range: { day: { gte: 1704240000 } } }), ['d2']);
  const [one] = await searchBoth({ size: 0, aggs: { days: { date_histogram: { field: 'day', calendar_interval: 'day' } } } });
  assert.deepEqual(one.aggregations.days.buckets.map((bucket: any) => bucket.key_as_string), ['2024-01-02T00:00:00.000Z', '2024-01-03T00:00:00.000Z']);
});

test('match_only_text: matches and phrases; wildcard: patterns', async () => {
  assert.deepEqual(await ids({ match: { body: 'brown' } }), ['d1', 'd3']);
  assert.deepEqual(await ids({ match_phrase: { body: 'brown fox' } }), ['d1']);
  assert.deepEqual(await ids({ match_phrase: { body: 'fox brown' } }), []);
  const [marked] = await searchBoth({ query: { match: { body: 'fox' } }, highlight: { fields: { body: {} } } });
  assert.deepEqual(marked.hits.hits[0].highlight, { body: ['the quick brown <em>fox</em>'] });
  assert.deepEqual(await ids({ wildcard: { path: '/usr/*/node' } }), ['d1']);
  assert.deepEqual(await ids({ regexp: { path: '/usr/bin/e.v' } }), ['d2']);
  assert.deepEqual(await ids({ term: { path: '/usr/bin/env' } }), ['d2']);
  assert.deepEqual((await sorted([{ path: 'asc' }])).ids.slice(0, 2), ['d2', 'd1']);
  const text = await searchError({ sort: [{ body: 'asc' }] });
  assert.equal(text.status, 400);
});

test('flattened and flat_object: the whole field and its keys', async () => {
  assert.deepEqual(await ids({ term: { 'labels.color': 'red' } }), ['d1', 'd3']);
  assert.deepEqual(await ids({ term: { labels: 'red' } }), ['d1', 'd3']);
  assert.deepEqual(await ids({ term: { labels: 'x' } }), ['d2']);
  assert.deepEqual(await ids({ term: { 'labels.nested.deep': 'x' } }), ['d2']);
  assert.deepEqual(await ids({ term: { 'labels.color': 'L' } }), []);
  assert.deepEqual(await ids({ term: { 'labels.color': 'green' } }), ['d4'], 'a dotted document key reaches the same key');
  assert.deepEqual(await ids({ terms: { 'labels.color': ['blue', 'green'] } }), ['d2', 'd4']);
  assert.deepEqual(await ids({ exists: { field: 'labels.size' } }), ['d1']);
  assert.deepEqual(await ids({ exists: { field: 'labels' } }), ['d1', 'd2', 'd3', 'd4']);
  assert.deepEqual(await ids({ range: { 'labels.color': { gte: 'c' } } }), ['d1', 'd3', 'd4']);
  assert.deepEqual(await ids({ prefix: { 'labels.color': 'gr' } }), ['d4']);
  assert.deepEqual(await ids({ match: { 'attrs.os.name': 'linux' } }), ['d1']);
  assert.deepEqual(await termsKeys('labels'), [['L', 1], ['blue', 1], ['green', 1], ['red', 2], ['x', 1]]);
  const keySort = await searchError({ sort: [{ 'labels.color': 'asc' }] });
  assert.equal(keySort.status, 400);
  assert.match(keySort.reason, /key of a flattened field/);
});

test('null_value, copy_to, multi-fields and ignore_above', async () => {
  assert.deepEqual(await ids({ term: { status: 'unknown' } }), ['d1']);
  assert.deepEqual(await ids({ exists: { field: 'status' } }), ['d1', 'd2', 'd4']);
  const got = await call(server, 'GET', '/types1/_doc/d1');
  assert.equal(got.body._source.status, null, 'the source keeps the null');
  assert.deepEqual(await ids({ match: { full: 'ada' } }), ['d1']);
  assert.deepEqual(await ids({ match: { full: 'hopper' } }), ['d2']);
  assert.deepEqual(await ids({ term: { 'full.raw': 'Lovelace' } }), ['d1']);
  assert.equal(got.body._source.full, undefined, 'copy_to does not change the source');
  assert.deepEqual(await ids({ term: { 'title.raw': 'Alpha Book' } }), ['d1']);
  assert.deepEqual((await sorted([{ 'title.raw': 'desc' }])).ids, ['d3', 'd4', 'd2', 'd1']);
  assert.deepEqual(await ids({ exists: { field: 'code' } }), ['d1'], 'a value past ignore_above is not indexed');
  assert.deepEqual(await ids({ term: { code: 'much too long' } }), []);
  const long = await call(server, 'GET', '/types1/_doc/d2');
  assert.equal(long.body._source.code, 'much too long');
});

test('index: false numbers are searched through their doc values, sortable and aggregatable; doc_values: false the other way round', async () => {
  assert.deepEqual(await ids({ term: { hidden: 10 } }), ['d1']);
  assert.deepEqual(await ids({ range: { hidden: { gte: 6 } } }), ['d1', 'd2']);
  const query = await searchError({ query: { term: { opaque: 10 } } });
  assert.equal(query.status, 400);
  assert.equal(query.type, 'illegal_argument_exception');
  assert.equal(query.reason, 'Cannot search on field [opaque] since it is not indexed.');
  const range = await searchError({ query: { range: { opaque: { gte: 1 } } } });
  assert.equal(range.status, 400);
  assert.deepEqual((await sorted([{ hidden: 'asc' }])).ids, ['d3', 'd1', 'd2', 'd4']);
  assert.equal(await metric({ max: { field: 'hidden' } }), 20);
  assert.deepEqual(await ids({ term: { unsorted: 'x' } }), ['d1']);
  const sort = await searchError({ sort: [{ unsorted: 'asc' }] });
  assert.equal(sort.status, 400);
  assert.equal(sort.type, 'illegal_argument_exception');
  assert.match(sort.reason, /Can't load fielddata on \[unsorted\]/);
  const agg = await searchError({ aggs: { t: { terms: { field: 'unsorted' } } } });
  assert.equal(agg.status, 400);
});

test('the mapping comes back with every parameter; updates add fields and refuse changes', async () => {
  const mapping = await call(server, 'GET', '/types3/_mapping');
  const properties = mapping.body.types3.mappings.properties;
  assert.deepEqual(properties.unsorted, { type: 'keyword', doc_values: false, store: true, meta: { owner: 'search team' } });
  assert.deepEqual(properties.price, { type: 'scaled_float', scaling_factor: 100 });
  assert.deepEqual(properties.first.copy_to, ['full']);
  const changed = await call(server, 'PUT', '/types3/_mapping', { json: { properties: { hidden: { type: 'long' } } } });
  assert.equal(changed.status, 400);
  assert.equal(changed.body.error.type, 'illegal_argument_exception');
  assert.match(changed.body.error.reason, /cannot change parameter \[index\] from \[false\] to \[true\]/);
  const retyped = await call(server, 'PUT', '/types3/_mapping', { json: { properties: { addr: { type: 'keyword' } } } });
  assert.equal(retyped.status, 400);
  const added = await call(server, 'PUT', '/types3/_mapping', { json: { properties: { gateway: { type: 'ip' } } } });
  assert.equal(added.status, 200, added.text);
  const bad = await call(server, 'PUT', '/types3/_mapping', { json: { properties: { ratio: { type: 'scaled_float' } } } });
  assert.equal(bad.status, 400);
  assert.equal(bad.body.error.type, 'mapper_parsing_exception');
});

test('a bad value of each type is a 400 naming the field, and writes nothing', async () => {
  const bad: Record<string, unknown>[] = [
    { tiny: 200 },
    { small: 'many' },
    { half: 1e6 },
    { price: 'cheap' },
    { counter: -3 },
    { addr: 'localhost' },
    { blob: '%%%' },
    { at: '1960-01-01' },
    { day: '2024-01-02' },
    { hidden: 'lots' },
  ];
  for (const document of bad) {
    const field = Object.keys(document)[0]!;
    const response = await call(server, 'PUT', '/types3/_doc/bad', { json: { title: 'bad', ...document } });
    assert.equal(response.status, 400, `${field}: ${response.text}`);
    assert.equal(response.body.error.type, 'mapper_parsing_exception', field);
    assert.match(response.body.error.reason, new RegExp(`\\[${field}\\]`), field);
  }
  const missing = await call(server, 'GET', '/types3/_doc/bad');
  assert.equal(missing.status, 404);
  assert.deepEqual(await ids({ term: { 'title.raw': 'bad' } }), []);
});

test('root _source: excludes and includes hide fields from reads; enabled: false returns none', async () => {
  const filtered = await call(server, 'PUT', '/hidden_src', {
    json: { settings: { number_of_shards: 2 }, mappings: { _source: { excludes: ['secret', 'meta.*'] }, properties: { secret: { type: 'keyword' }, name: { type: 'keyword' } } } },
  });
  assert.equal(filtered.status, 200, filtered.text);
  const off = await call(server, 'PUT', '/no_src', { json: { mappings: { _source: { enabled: false }, properties: { name: { type: 'keyword' } } } } });
  assert.equal(off.status, 200, off.text);
  await call(server, 'PUT', '/hidden_src/_doc/1?refresh=true', { json: { name: 'n', secret: 's3cr3t', meta: { a: 1 }, other: 2 } });
  await call(server, 'PUT', '/no_src/_doc/1?refresh=true', { json: { name: 'n' } });
  const got = await call(server, 'GET', '/hidden_src/_doc/1');
  assert.deepEqual(got.body._source, { name: 'n', meta: {}, other: 2 });
  const found = await call(server, 'POST', '/hidden_src/_search', { json: { query: { term: { secret: 's3cr3t' } } } });
  assert.equal(found.body.hits.total.value, 1, 'an excluded field is still indexed');
  assert.deepEqual(found.body.hits.hits[0]._source, { name: 'n', meta: {}, other: 2 });
  const highlighted = await call(server, 'POST', '/hidden_src/_search', { json: { query: { term: { secret: 's3cr3t' } }, highlight: { fields: { '*': {} } } } });
  assert.equal(highlighted.body.hits.hits[0].highlight, undefined, 'highlighting does not show an excluded field');
  const none = await call(server, 'GET', '/no_src/_doc/1');
  assert.equal(none.body.found, true);
  assert.equal(none.body._source, undefined);
  const sourceOnly = await call(server, 'GET', '/no_src/_source/1');
  assert.equal(sourceOnly.status, 404, 'GET _source of a collection without _source');
  assert.match(sourceOnly.body.error.reason, /Source not found \[no_src\]\/\[1\]/);
  const hits = await call(server, 'POST', '/no_src/_search', { json: { query: { term: { name: 'n' } } } });
  assert.equal(hits.body.hits.hits.length, 1);
  assert.equal(hits.body.hits.hits[0]._source, undefined);
  const mapping = await call(server, 'GET', '/no_src/_mapping');
  assert.deepEqual(mapping.body.no_src.mappings._source, { enabled: false });
});

test('long: exact beyond 2^53 in term, terms and range queries, sort values, search_after and terms keys', async () => {
  const created = await call(server, 'PUT', '/longs', { json: { settings: { number_of_shards: 3 }, mappings: { properties: { id: { type: 'long' }, small: { type: 'long' } } } } });
  assert.equal(created.status, 200, created.text);
  const lines = [
    '{"index": {"_id": "max"}}', '{"id": 9223372036854775807, "small": 1}',
    '{"index": {"_id": "max1"}}', '{"id": 9223372036854775806, "small": 2}',
    '{"index": {"_id": "min"}}', '{"id": -9223372036854775808, "small": 3}',
    '{"index": {"_id": "edge"}}', '{"id": "9007199254740993", "small": 4}',
    '{"index": {"_id": "edge0"}}', '{"id": 9007199254740992, "small": 5}',
    '{"index": {"_id": "safe"}}', '{"id": 9007199254740991, "small": 6}',
    '{"index": {"_id": "zero"}}', '{"id": 0, "small": 7}',
  ].join('\n') + '\n';
  const loaded = await call(server, 'POST', '/longs/_bulk?refresh=true', { body: lines, headers: { 'content-type': 'application/x-ndjson' } });
  assert.equal(loaded.body.errors, false, loaded.text);
  const find = async (query: unknown): Promise<string[]> => {
    const response = await call(server, 'POST', '/longs/_search', { json: { query, size: 20 } });
    assert.equal(response.status, 200, response.text);
    return response.body.hits.hits.map((hit: any) => hit._id).sort();
  };
  assert.deepEqual(await find({ term: { id: '9223372036854775807' } }), ['max']);
  assert.deepEqual(await find({ term: { id: '9223372036854775806' } }), ['max1'], 'neighbours a float64 cannot tell apart');
  assert.deepEqual(await find({ term: { id: '9007199254740993' } }), ['edge']);
  assert.deepEqual(await find({ term: { id: 9007199254740992 } }), ['edge0']);
  assert.deepEqual(await find({ term: { id: 9007199254740991 } }), ['safe']);
  assert.deepEqual(await find({ match: { id: '-9223372036854775808' } }), ['min']);
  assert.deepEqual(await find({ terms: { id: ['9223372036854775806', '0', '9007199254740993'] } }), ['edge', 'max1', 'zero']);
  assert.deepEqual(await find({ range: { id: { gt: '9223372036854775806' } } }), ['max']);
  assert.deepEqual(await find({ range: { id: { gte: '9007199254740992', lt: '9223372036854775807' } } }), ['edge', 'edge0', 'max1']);
  assert.deepEqual(await find({ range: { id: { gte: 1, lte: '9007199254740992' } } }), ['edge0', 'safe']);
  assert.deepEqual(await find({ range: { id: { lt: '-9007199254740991' } } }), ['min']);
  assert.deepEqual(await find({ range: { id: { gte: 0 } } }), ['edge', 'edge0', 'max', 'max1', 'safe', 'zero'], 'safe bounds stay on the column');
  const got = await call(server, 'GET', '/longs/_doc/max');
  assert.ok(got.text.includes('9223372036854775807') || got.body._source.id === 9223372036854775807);
  const outOfRange = await call(server, 'PUT', '/longs/_doc/over', { body: '{"id": 9223372036854775808}', headers: { 'content-type': 'application/json' } });
  assert.equal(outOfRange.status, 400);
  assert.equal(outOfRange.body.error.type, 'mapper_parsing_exception');
  assert.match(outOfRange.body.error.reason, /\[id\].*out of range for a long/);
  // Sorting and terms keys read the exact values: the raw answer carries every digit.
  const sorted = async (body: string): Promise<{ ids: string[]; text: string }> => {
    const response = await call(server, 'POST', '/longs/_search', { body, headers: { 'content-type': 'application/json' } });
    assert.equal(response.status, 200, response.text);
    return { ids: response.body.hits.hits.map((hit: any) => hit._id), text: response.text };
  };
  const ascending = ['min', 'zero', 'safe', 'edge0', 'edge', 'max1', 'max'];
  const asc = await sorted('{"size": 20, "_source": false, "sort": [{"id": "asc"}]}');
  assert.deepEqual(asc.ids, ascending);
  for (const digits of ['-9223372036854775808', '9007199254740993', '9223372036854775806', '9223372036854775807']) {
    assert.ok(asc.text.includes(`"sort":[${digits}]`), `sort value ${digits} as sent: ${asc.text}`);
  }
  assert.deepEqual((await sorted('{"size": 20, "sort": [{"id": "desc"}]}')).ids, [...ascending].reverse());
  assert.deepEqual((await sorted('{"size": 20, "sort": [{"id": "desc"}], "search_after": [9223372036854775807]}')).ids, ['max1', 'edge', 'edge0', 'safe', 'zero', 'min'], 'a search_after number keeps its digits');
  assert.deepEqual((await sorted('{"size": 20, "sort": [{"id": "asc"}], "search_after": ["9007199254740992"]}')).ids, ['edge', 'max1', 'max'], 'a search_after string is exact');
  assert.deepEqual((await sorted('{"size": 2, "sort": [{"id": {"order": "asc", "mode": "max"}}], "search_after": [9007199254740991]}')).ids, ['edge0', 'edge']);
  const averaged = await call(server, 'POST', '/longs/_search', { json: { sort: [{ id: { mode: 'avg' } }] } });
  assert.equal(averaged.status, 400, 'an average would round them');
  assert.match(averaged.body.error.reason, /Sorting with mode \[avg\] on long field \[id\] is not supported while it holds values beyond/);
  const keys = await call(server, 'POST', '/longs/_search', { json: { size: 0, aggs: { ids: { terms: { field: 'id', size: 20, order: { _key: 'asc' } } } } } });
  assert.equal(keys.status, 200, keys.text);
  const keyTexts = [...keys.text.matchAll(/"key":(-?\d+)/g)].map((match) => match[1]);
  assert.deepEqual(keyTexts, ['-9223372036854775808', '0', '9007199254740991', '9007199254740992', '9007199254740993', '9223372036854775806', '9223372036854775807']);
  const byCount = await call(server, 'POST', '/longs/_search', { json: { size: 0, aggs: { ids: { terms: { field: 'id', size: 2, order: { _key: 'desc' } } } } } });
  assert.deepEqual([...byCount.text.matchAll(/"key":(-?\d+)/g)].map((match) => match[1]), ['9223372036854775807', '9223372036854775806']);
  const stats = await call(server, 'POST', '/longs/_search', { json: { size: 0, aggs: { top: { max: { field: 'id' } } } } });
  assert.equal(stats.status, 200, 'statistics stay float64, as in ES');
  const fine = await call(server, 'POST', '/longs/_search', { json: { sort: [{ small: 'desc' }], size: 1 } });
  assert.equal(fine.body.hits.hits[0]._id, 'zero', 'other long fields sort as before');
});

test('index settings: max_result_window, max_docvalue_fields_search and max_script_fields (dynamic), number_of_routing_shards (static)', async () => {
  const created = await call(server, 'PUT', '/limited', {
    json: { settings: { index: { number_of_shards: 3, number_of_routing_shards: 6, max_result_window: 5, max_docvalue_fields_search: 1 } } },
  });
  assert.equal(created.status, 200, created.text);
  const body = ndjson(Array.from({ length: 8 }, (_, index) => [{ index: { _id: `l${index}` } }, { n: index }]).flat());
  await call(server, 'POST', '/limited/_bulk?refresh=true', { body, headers: { 'content-type': 'application/x-ndjson' } });
  const settings = await call(server, 'GET', '/limited/_settings');
  const index = settings.body.limited.settings.index;
  assert.equal(index.max_result_window, '5');
  assert.equal(index.number_of_routing_shards, '6');
  assert.equal(index.max_docvalue_fields_search, '1');
  const tooFar = await searchError({ from: 3, size: 3 }, 'limited');
  assert.equal(tooFar.status, 400);
  assert.equal(tooFar.type, 'illegal_argument_exception');
  assert.match(tooFar.reason, /Result window is too large, from \+ size must be less than or equal to: \[5\] but was \[6\]/);
  const within = await call(server, 'POST', '/limited/_search', { json: { from: 2, size: 3, sort: ['n'] } });
  assert.equal(within.status, 200, within.text);
  assert.deepEqual(within.body.hits.hits.map((hit: any) => hit._id), ['l2', 'l3', 'l4']);
  const both = await searchError({ size: 6 }, 'limited,types1');
  assert.equal(both.status, 400, 'the smallest window of the targets applies');
  const docvalues = await searchError({ size: 1, docvalue_fields: ['n', '_id'] }, 'limited');
  assert.equal(docvalues.status, 400);
  assert.match(docvalues.reason, /too many docvalue_fields.*\[1\] but was \[2\]/);
  const raised = await call(server, 'PUT', '/limited/_settings', { json: { index: { max_result_window: 20 } } });
  assert.equal(raised.status, 200, raised.text);
  const deep = await call(server, 'POST', '/limited/_search', { json: { from: 6, size: 10, sort: ['n'] } });
  assert.equal(deep.status, 200, deep.text);
  assert.deepEqual(deep.body.hits.hits.map((hit: any) => hit._id), ['l6', 'l7']);
  const staticChange = await call(server, 'PUT', '/limited/_settings', { json: { index: { number_of_routing_shards: 12 } } });
  assert.equal(staticChange.status, 400);
  assert.match(staticChange.body.error.reason, /Can't update non dynamic settings \[\[index.number_of_routing_shards\]\]/);
  const badFactor = await call(server, 'PUT', '/badrouting', { json: { settings: { number_of_shards: 3, number_of_routing_shards: 4 } } });
  assert.equal(badFactor.status, 400);
  const badWindow = await call(server, 'PUT', '/limited/_settings', { json: { index: { max_result_window: 0 } } });
  assert.equal(badWindow.status, 400);
  const many = await call(server, 'PUT', '/limited/_settings', { json: { index: { max_docvalue_fields_search: 150 } } });
  assert.equal(many.status, 200, many.text);
  const wide = await call(server, 'POST', '/limited/_search', { json: { size: 1, docvalue_fields: Array.from({ length: 120 }, () => 'n') } });
  assert.equal(wide.status, 200, `a raised limit admits more than the default 100: ${wide.text.slice(0, 300)}`);
  const reset = await call(server, 'PUT', '/limited/_settings', { json: { index: { max_docvalue_fields_search: null } } });
  assert.equal(reset.status, 200, reset.text);
  const after = await call(server, 'GET', '/limited/_settings');
  assert.equal(after.body.limited.settings.index.max_docvalue_fields_search, undefined);
  assert.equal(after.body.limited.settings.index.max_result_window, '20');
  // index.max_script_fields: kept, shown and counted; script_fields itself is refused (no scripts).
  const scripts = { a: { script: '1' }, b: { script: '1' }, c: { script: '1' } };
  await call(server, 'PUT', '/limited/_settings', { json: { 'index.max_script_fields': 2 } });
  assert.equal((await call(server, 'GET', '/limited/_settings')).body.limited.settings.index.max_script_fields, '2');
  const tooMany = await searchError({ script_fields: scripts }, 'limited');
  assert.equal(tooMany.status, 400);
  assert.match(tooMany.reason, /Trying to retrieve too many script_fields\. Must be less than or equal to: \[2\] but was \[3\]\. This limit can be set by changing the \[index\.max_script_fields\] index level setting\./);
  const one = await searchError({ script_fields: { a: { script: '1' } } }, 'limited');
  assert.equal(one.status, 400);
  assert.match(one.reason, /script_fields\] are not supported/);
});

test('after a merge into segments and a restart the mapping, its parameters and the indexed values are all still there', async () => {
  for (const name of [...COLLECTIONS, 'longs']) {
    const merged = await call(server, 'POST', `/${name}/_forcemerge`);
    assert.equal(merged.status, 200, merged.text);
  }
  const segments = await call(server, 'GET', '/_cat/segments/types3?format=json');
  assert.ok(segments.body.length > 0, 'the documents are in on-disk segments');
  assert.deepEqual(await ids({ term: { 'labels.color': 'red' } }), ['d1', 'd3'], 'flattened keys from segments');
  assert.deepEqual(await ids({ range: { addr: { gte: '10.0.0.5', lte: '10.0.0.255' } } }), ['d2'], 'ip ranges from segments');
  await server.restart();
  assert.deepEqual(await ids({ term: { addr: '10.0.0.0/8' } }), ['d1', 'd2']);
  assert.deepEqual(await ids({ term: { 'labels.color': 'red' } }), ['d1', 'd3']);
  assert.deepEqual(await ids({ term: { day: '2024/01/02' } }), ['d1']);
  assert.deepEqual(await ids({ term: { status: 'unknown' } }), ['d1']);
  assert.deepEqual(await ids({ match: { full: 'ada' } }), ['d1']);
  assert.deepEqual(await ids({ term: { price: 0.02 } }), ['d3']);
  const exact = await call(server, 'POST', '/longs/_search', { json: { query: { range: { id: { gte: '9223372036854775806', lt: '9223372036854775807' } } } } });
  assert.deepEqual(exact.body.hits.hits.map((hit: any) => hit._id), ['max1'], 'exact long values after the restart');
  assert.deepEqual((await sorted([{ addr: 'desc' }])).values[0], ['2001:db8::1']);
  assert.equal((await searchError({ query: { term: { opaque: 10 } } })).status, 400);
  assert.equal((await searchError({ sort: [{ unsorted: 'asc' }] })).status, 400);
  const none = await call(server, 'GET', '/no_src/_doc/1');
  assert.equal(none.body._source, undefined);
  const window = await call(server, 'GET', '/limited/_settings');
  assert.equal(window.body.limited.settings.index.max_result_window, '20');
  assert.equal((await searchError({ from: 15, size: 10 }, 'limited')).status, 400);
  const more = await call(server, 'PUT', '/types3/_doc/d5?refresh=true', { json: { addr: '10.9.9.9', gateway: '10.0.0.1' } });
  assert.equal(more.status, 201, more.text);
  const gateways = await call(server, 'POST', '/types3/_search', { json: { query: { term: { gateway: '10.0.0.0/24' } } } });
  assert.deepEqual(gateways.body.hits.hits.map((hit: any) => hit._id), ['d5']);
});
