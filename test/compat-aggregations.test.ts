/**
 * The aggregations added for compatibility (extended_stats, filter, filters, missing, percentiles,
 * percentile_ranks, date_range with format, terms include/exclude) through real HTTP: exact values
 * on a small corpus, and the same answers from a 3-shard and a 1-shard collection of the same data.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { call, ndjson, startServer, type TroveServer } from './harness.ts';

let server: TroveServer;

const MAPPINGS = {
  properties: { genre: { type: 'keyword' }, pages: { type: 'integer' }, rating: { type: 'double' }, published: { type: 'date' } },
};

/** 40 books: pages 100..490 by 10, genre cycling over four, a rating on three in four, no genre on every seventh. */
const BOOKS = Array.from({ length: 40 }, (_, n) => {
  const source: Record<string, unknown> = { pages: 100 + n * 10, published: Date.UTC(2020, n % 12, 1 + (n % 28)) };
  if (n % 7 !== 3) source.genre = ['novel', 'poetry', 'essay', 'drama'][n % 4];
  if (n % 4 !== 0) source.rating = (n % 5) + 0.5;
  return { id: `b${n}`, source };
});

before(async () => {
  server = await startServer();
  const lines = BOOKS.flatMap((book) => [{ index: { _id: book.id } }, book.source]);
  for (const [name, shards] of [['one', 1], ['three', 3]] as const) {
    const created = await call(server, 'PUT', `/${name}`, { json: { settings: { number_of_shards: shards }, mappings: MAPPINGS } });
    assert.equal(created.status, 200, created.text);
    const loaded = await call(server, 'POST', `/${name}/_bulk?refresh=true`, { body: ndjson(lines), headers: { 'content-type': 'application/x-ndjson' } });
    assert.equal(loaded.body.errors, false, loaded.text);
  }
});

after(async () => {
  await server?.cleanup();
});

/** Runs the aggregations on both collections, checks they agree, and returns the 3-shard answer. */
async function aggregate(aggs: unknown, query?: unknown): Promise<any> {
  const body = { size: 0, aggs, ...(query === undefined ? {} : { query }) };
  const [one, three] = await Promise.all([call(server, 'POST', '/one/_search', { json: body }), call(server, 'POST', '/three/_search', { json: body })]);
  assert.equal(one.status, 200, one.text);
  assert.equal(three.status, 200, three.text);
  assert.equal(three.body._shards.total, 3);
  assert.deepEqual(three.body.aggregations, one.body.aggregations, '3 shards answer as 1');
  return three.body.aggregations;
}

const pages = BOOKS.map((book) => book.source.pages as number);

test('extended_stats', async () => {
  const { ext } = await aggregate({ ext: { extended_stats: { field: 'pages', sigma: 1 } } });
  const n = pages.length;
  const sum = pages.reduce((a, b) => a + b, 0);
  const squares = pages.reduce((a, b) => a + b * b, 0);
  const variance = squares / n - (sum / n) ** 2;
  assert.equal(ext.count, 40);
  assert.equal(ext.min, 100);
  assert.equal(ext.max, 490);
  assert.equal(ext.sum, sum);
  assert.equal(ext.sum_of_squares, squares);
  assert.equal(ext.avg, sum / n);
  assert.ok(Math.abs(ext.variance - variance) < 1e-6);
  assert.ok(Math.abs(ext.variance_sampling - (variance * n) / (n - 1)) < 1e-6);
  assert.ok(Math.abs(ext.std_deviation_bounds.upper - (sum / n + Math.sqrt(variance))) < 1e-6);
});

test('filter, filters and missing with sub-aggregations, also under terms', async () => {
  const aggs = {
    long: { filter: { range: { pages: { gte: 300 } } }, aggs: { genres: { terms: { field: 'genre' } } } },
    kinds: { filters: { filters: { novels: { term: { genre: 'novel' } }, short: { range: { pages: { lt: 200 } } } }, other_bucket_key: 'rest' } },
    anonymous: { filters: { filters: [{ term: { genre: 'poetry' } }] } },
    unrated: { missing: { field: 'rating' }, aggs: { pages: { sum: { field: 'pages' } } } },
    genres: { terms: { field: 'genre', order: { _key: 'asc' } }, aggs: { unrated: { missing: { field: 'rating' } } } },
  };
  const result = await aggregate(aggs);
  const long = BOOKS.filter((book) => (book.source.pages as number) >= 300);
  assert.equal(result.long.doc_count, long.length);
  assert.equal(result.long.genres.buckets.reduce((sum: number, bucket: any) => sum + bucket.doc_count, 0), long.filter((book) => book.source.genre).length);
  const novels = BOOKS.filter((book) => book.source.genre === 'novel').length;
  const short = BOOKS.filter((book) => (book.source.pages as number) < 200).length;
  const rest = BOOKS.filter((book) => book.source.genre !== 'novel' && (book.source.pages as number) >= 200).length;
  assert.deepEqual(result.kinds.buckets, { novels: { doc_count: novels }, short: { doc_count: short }, rest: { doc_count: rest } });
  assert.deepEqual(result.anonymous.buckets, [{ doc_count: BOOKS.filter((book) => book.source.genre === 'poetry').length }]);
  const unrated = BOOKS.filter((book) => book.source.rating === undefined);
  assert.deepEqual(result.unrated, { doc_count: unrated.length, pages: { value: unrated.reduce((sum, book) => sum + (book.source.pages as number), 0) } });
  for (const bucket of result.genres.buckets) {
    assert.equal(bucket.unrated.doc_count, unrated.filter((book) => book.source.genre === bucket.key).length, bucket.key);
  }
});

test('percentiles and percentile_ranks', async () => {
  const result = await aggregate({
    p: { percentiles: { field: 'pages' } },
    some: { percentiles: { field: 'pages', percents: [50], keyed: false } },
    ranks: { percentile_ranks: { field: 'pages', values: [295, 1000] } },
  });
  // Exact quantiles of 100..490 by 10 with the t-digest's interpolation between values (midpoint ranks); 1 % tolerance.
  // The value of rank h = n·p/100 sits at index h − 0.5 of the sorted values: 100 + (h − 0.5)·10, clamped to [100, 490].
  const expected: Record<string, number> = { '1.0': 100, '5.0': 115, '25.0': 195, '50.0': 295, '75.0': 395, '95.0': 475, '99.0': 490 };
  assert.deepEqual(Object.keys(result.p.values), Object.keys(expected));
  for (const [percent, value] of Object.entries(expected)) assert.ok(Math.abs(result.p.values[percent] - value) <= 4, `${percent}: ${result.p.values[percent]}`);
  assert.deepEqual(result.some.values, [{ key: 50, value: result.p.values['50.0'] }]);
  assert.ok(Math.abs(result.ranks.values['295.0'] - 50) <= 1);
  assert.equal(result.ranks.values['1000.0'], 100);
});

test('date_range with format and date math, keyed', async () => {
  const { spans } = await aggregate({
    spans: { date_range: { field: 'published', format: 'yyyy-MM', keyed: true, ranges: [{ to: '2020-07' }, { from: '2020-07' }, { key: 'future', from: 'now+1d/d' }] } },
  });
  const july = Date.UTC(2020, 6, 1);
  const before = BOOKS.filter((book) => (book.source.published as number) < july).length;
  assert.deepEqual(spans.buckets, {
    '*-2020-07': { to: july, to_as_string: '2020-07', doc_count: before },
    '2020-07-*': { from: july, from_as_string: '2020-07', doc_count: BOOKS.length - before },
    future: { from: spans.buckets.future.from, from_as_string: spans.buckets.future.from_as_string, doc_count: 0 },
  });
});

test('terms include and exclude', async () => {
  const { genres } = await aggregate({ genres: { terms: { field: 'genre', include: ['novel', 'drama', 'essay'], exclude: ['essay'], order: { _key: 'asc' } } } });
  assert.deepEqual(
    genres.buckets.map((bucket: any) => [bucket.key, bucket.doc_count]),
    ['drama', 'novel'].map((genre) => [genre, BOOKS.filter((book) => book.source.genre === genre).length]),
  );
  const { regex } = await aggregate({ regex: { terms: { field: 'genre', include: '.*o.*', exclude: 'po.*' } } });
  assert.deepEqual(regex.buckets.map((bucket: any) => bucket.key), ['novel']);
  const numeric = await call(server, 'POST', '/three/_search', { json: { size: 0, aggs: { g: { terms: { field: 'pages', include: '1.*' } } } } });
  assert.equal(numeric.status, 400, numeric.text);
  assert.equal(numeric.body.error.type, 'illegal_argument_exception');
});

test('bad requests of the new aggregations are 400s', async () => {
  for (const aggs of [
    { p: { percentiles: { field: 'pages', percents: [120] } } },
    { p: { percentile_ranks: { field: 'pages' } } },
    { f: { filters: { filters: {} } } },
    { f: { filter: { nope: {} } } },
    { e: { extended_stats: { field: 'pages', sigma: -2 } } },
    { d: { date_range: { field: 'published', format: 'yyyy-QQ', ranges: [{ to: 'now' }] } } },
  ]) {
    const response = await call(server, 'POST', '/three/_search', { json: { size: 0, aggs } });
    assert.equal(response.status, 400, `${JSON.stringify(aggs)}: ${response.text}`);
  }
});

test('typed_keys names the new result types', async () => {
  const response = await call(server, 'POST', '/three/_search?typed_keys', {
    json: { size: 0, aggs: { e: { extended_stats: { field: 'pages' } }, p: { percentiles: { field: 'pages' } }, f: { filter: { match_all: {} } }, m: { missing: { field: 'rating' } } } },
  });
  assert.equal(response.status, 200, response.text);
  assert.deepEqual(Object.keys(response.body.aggregations).sort(), ['extended_stats#e', 'filter#f', 'missing#m', 'tdigest_percentiles#p']);
});
