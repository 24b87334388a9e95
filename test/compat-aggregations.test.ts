/**
 * The aggregations added for compatibility (extended_stats, filter, filters, missing, percentiles,
 * percentile_ranks, date_range with format, terms include/exclude, top_hits, composite, the
 * pipelines, time zones) through real HTTP: exact values on a small corpus, and the same answers
 * from a 3-shard and a 1-shard collection of the same data; some through the OpenSearch client.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { Client } from '@opensearch-project/opensearch';
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

/** Creates `name` with its shard count and mapping and loads the documents (ids `e0`, `e1`, ...). */
async function load(name: string, shards: number, mappings: unknown, sources: readonly Record<string, unknown>[]): Promise<void> {
  const created = await call(server, 'PUT', `/${name}`, { json: { settings: { number_of_shards: shards }, mappings } });
  assert.equal(created.status, 200, created.text);
  const lines = sources.flatMap((source, n) => [{ index: { _id: `e${n}` } }, source]);
  const loaded = await call(server, 'POST', `/${name}/_bulk?refresh=true`, { body: ndjson(lines), headers: { 'content-type': 'application/x-ndjson' } });
  assert.equal(loaded.body.errors, false, loaded.text);
}

/** Runs the aggregations on both collections, checks they agree, and returns the 3-shard answer. */
async function aggregate(aggs: unknown, query?: unknown): Promise<any> {
  const body = { size: 0, aggs, ...(query === undefined ? {} : { query }) };
  const [one, three] = await Promise.all([call(server, 'POST', '/one/_search', { json: body }), call(server, 'POST', '/three/_search', { json: body })]);
  assert.equal(one.status, 200, one.text);
  assert.equal(three.status, 200, three.text);
  assert.equal(three.body._shards.total, 3);
  // top_hits name the collection of each hit: the only part that may differ.
  const oneAnswer = JSON.parse(JSON.stringify(one.body.aggregations).replaceAll('"_index":"one"', '"_index":"three"'));
  assert.deepEqual(three.body.aggregations, oneAnswer, '3 shards answer as 1');
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
  for (const path of ['long', 'long.doc_count', 'long._count']) {
    const ordered = await aggregate({ genres: { terms: { field: 'genre', order: { [path]: 'desc' } }, aggs: { long: { filter: { range: { pages: { gte: 300 } } } } } } });
    const counts = ordered.genres.buckets.map((bucket: any) => bucket.long.doc_count);
    assert.deepEqual(counts, [...counts].sort((a: number, b: number) => b - a), `ordered by the filter's doc count (${path})`);
  }
  const byTime = await aggregate({ years: { date_histogram: { field: 'published', calendar_interval: 'year', order: { _time: 'desc' } } } });
  const keys = byTime.years.buckets.map((bucket: any) => bucket.key);
  assert.deepEqual(keys, [...keys].sort((a: number, b: number) => b - a), '_time is the older name of _key');
});

test('percentiles and percentile_ranks', async () => {
  const result = await aggregate({
    p: { percentiles: { field: 'pages' } },
    some: { percentiles: { field: 'pages', percents: [50], keyed: false } },
    ranks: { percentile_ranks: { field: 'pages', values: [295, 1000] } },
  });
  // 40 values, 100..490 by 10: every centroid is one value, read as Elasticsearch's t-digest reads them
  // (rank q·n, each value owning half a unit either side): the value at sorted index ⌊q·n⌋, the maximum past n − 1.
  const expected: Record<string, number> = { '1.0': 100, '5.0': 120, '25.0': 200, '50.0': 300, '75.0': 400, '95.0': 480, '99.0': 490 };
  assert.deepEqual(result.p.values, expected);
  assert.deepEqual(result.some.values, [{ key: 50, value: result.p.values['50.0'] }]);
  assert.ok(Math.abs(result.ranks.values['295.0'] - 50) <= 1);
  assert.equal(result.ranks.values['1000.0'], 100);
});

test('percentiles and percentile_ranks with the hdr method: OpenSearch\'s values, the same on 1 and 3 shards', async () => {
  const result = await aggregate({
    p: { percentiles: { field: 'pages', percents: [25, 50, 100], hdr: { number_of_significant_value_digits: 3 } } },
    r: { percentile_ranks: { field: 'pages', values: [195, 490], hdr: {}, keyed: false } },
  });
  // 100..490 by 10: the highest value of the bucket of the value at or above each rank (width 2^m / 1024
  // for 2^m <= v < 2^(m+1)), to the unit of the smallest value's binary order (64 / 1024), as a DoubleHistogram reads it.
  assert.deepEqual(result.p.values, { '25.0': 190 + 1 / 8 - 1 / 16, '50.0': 290 + 1 / 4 - 1 / 16, '100.0': 490 + 1 / 4 - 1 / 16 });
  assert.deepEqual(result.r.values, [{ key: 195, value: 25 }, { key: 490, value: 100 }]);
  const typed = await call(server, 'POST', '/three/_search?typed_keys', { json: { size: 0, aggs: { p: { percentiles: { field: 'pages', hdr: {} } } } } });
  assert.ok(typed.body.aggregations['hdr_percentiles#p'], typed.text);
  // Fractions are counted too (negative values are refused: test/compat-hdr.test.ts).
  const fractional = await call(server, 'POST', '/three/_search', { json: { size: 0, aggs: { p: { percentiles: { field: 'rating', hdr: {} } } } } });
  assert.equal(fractional.status, 200, fractional.text);
  assert.equal(typeof fractional.body.aggregations.p.values['50.0'], 'number');
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
  // Worded as Elasticsearch words them, where clients and tests match the text.
  for (const [aggs, reason] of [
    [{ c: { cardinality: { field: 'pages', precision_threshold: -1 } } }, /\[precisionThreshold\] must be greater than or equal to 0\. Found \[-1\] in \[c\]/],
    [{ p: { percentiles: { field: 'pages', tdigest: { compression: -1 } } } }, /\[compression\] must be greater than or equal to 0\. Found \[-1\.0\]/],
    [{ p: { percentiles: { field: 'pages', hdr: { number_of_significant_value_digits: -1 } } } }, /\[numberOfSignificantValueDigits\] must be between 0 and 5/],
  ] as const) {
    const response = await call(server, 'POST', '/three/_search', { json: { size: 0, aggs } });
    assert.equal(response.status, 400, response.text);
    assert.match(response.body.error.reason, reason);
  }
});

test('typed_keys names the new result types', async () => {
  const response = await call(server, 'POST', '/three/_search?typed_keys', {
    json: { size: 0, aggs: { e: { extended_stats: { field: 'pages' } }, p: { percentiles: { field: 'pages' } }, f: { filter: { match_all: {} } }, m: { missing: { field: 'rating' } } } },
  });
  assert.equal(response.status, 200, response.text);
  assert.deepEqual(Object.keys(response.body.aggregations).sort(), ['extended_stats#e', 'filter#f', 'missing#m', 'tdigest_percentiles#p']);
});

test('top_hits under terms and date_histogram buckets, merged across shards', async () => {
  const result = await aggregate({
    genres: {
      terms: { field: 'genre', order: { _key: 'asc' } },
      aggs: { longest: { top_hits: { sort: [{ pages: { order: 'desc' } }], from: 1, size: 2, _source: { includes: ['pages'] }, version: true } } },
    },
    years: { date_histogram: { field: 'published', calendar_interval: 'quarter' }, aggs: { first: { top_hits: { sort: ['published'], size: 1, _source: false } } } },
  });
  for (const bucket of result.genres.buckets) {
    const books = BOOKS.filter((book) => book.source.genre === bucket.key).sort((a, b) => (b.source.pages as number) - (a.source.pages as number));
    const { hits } = bucket.longest;
    assert.deepEqual(hits.total, { value: books.length, relation: 'eq' });
    assert.equal(hits.max_score, null);
    assert.deepEqual(
      hits.hits,
      books.slice(1, 3).map((book) => ({ _index: 'three', _id: book.id, _score: null, _version: 1, _source: { pages: book.source.pages }, sort: [book.source.pages] })),
    );
  }
  for (const bucket of result.years.buckets) {
    const [hit] = bucket.first.hits.hits;
    assert.equal(hit._source, undefined);
    assert.ok(hit.sort[0] >= bucket.key && hit.sort[0] === Math.min(...BOOKS.map((book) => book.source.published as number).filter((at) => at >= bucket.key)));
  }
  // docvalue_fields, fields and stored_fields in top_hits, as in a search's hits.
  const withFields = await aggregate({
    genres: {
      terms: { field: 'genre', order: { _key: 'asc' } },
      aggs: {
        longest: { top_hits: { sort: [{ pages: { order: 'desc' } }], size: 1, _source: false, docvalue_fields: ['pages', { field: 'published', format: 'yyyy' }], fields: ['genre'] } },
        bare: { top_hits: { sort: [{ pages: { order: 'desc' } }], size: 1, stored_fields: '_none_' } },
      },
    },
  });
  for (const bucket of withFields.genres.buckets) {
    const book = BOOKS.filter((candidate) => candidate.source.genre === bucket.key).sort((a, b) => (b.source.pages as number) - (a.source.pages as number))[0]!;
    const [hit] = bucket.longest.hits.hits;
    assert.equal(hit._id, book.id);
    assert.equal(hit._source, undefined);
    assert.deepEqual(hit.fields, { pages: [book.source.pages], published: [String(new Date(book.source.published as number).getUTCFullYear())], genre: [bucket.key] });
    const [bare] = bucket.bare.hits.hits;
    assert.deepEqual([bare._id, bare._source, bare.fields], [undefined, undefined, undefined]);
  }
  // explain: each top hit says how the search's query scored it.
  const explained = await call(server, 'POST', '/three/_search', {
    json: { size: 0, query: { bool: { should: [{ term: { genre: 'novel' } }, { range: { pages: { gte: 300 } } }] } }, aggs: { best: { top_hits: { size: 5, explain: true } } } },
  });
  assert.equal(explained.status, 200, explained.text);
  const explainedHits = explained.body.aggregations.best.hits.hits;
  assert.equal(explainedHits.length, 5);
  for (const hit of explainedHits) {
    assert.ok(Math.abs(hit._explanation.value - hit._score) < 1e-9, JSON.stringify(hit));
    assert.equal(hit._explanation.description, 'sum of:');
  }
});

test('composite pages through every bucket once on 1 and 3 shards', async () => {
  const seen = new Map<string, number>();
  let after: unknown;
  for (let page = 0; page < 100; page++) {
    const sources = [{ genre: { terms: { field: 'genre', missing_bucket: true } } }, { hundreds: { histogram: { field: 'pages', interval: 100, order: 'desc' } } }];
    const { pairs } = await aggregate({ pairs: { composite: { size: 3, sources, ...(after === undefined ? {} : { after }) }, aggs: { avg_pages: { avg: { field: 'pages' } } } } });
    if (pairs.buckets.length === 0) break;
    for (const bucket of pairs.buckets) {
      const key = JSON.stringify(bucket.key);
      assert.ok(!seen.has(key), `${key} twice`);
      seen.set(key, bucket.doc_count);
    }
    assert.deepEqual(pairs.after_key, pairs.buckets[pairs.buckets.length - 1].key);
    after = pairs.after_key;
  }
  const expected = new Map<string, number>();
  for (const book of BOOKS) {
    const key = JSON.stringify({ genre: book.source.genre ?? null, hundreds: Math.floor((book.source.pages as number) / 100) * 100 });
    expected.set(key, (expected.get(key) ?? 0) + 1);
  }
  assert.deepEqual(seen, expected);
});

test('pipelines: derivative, cumulative_sum, bucket_sort and bucket metrics after the merge', async () => {
  const result = await aggregate({
    months: {
      date_histogram: { field: 'published', calendar_interval: 'month' },
      aggs: {
        pages: { sum: { field: 'pages' } },
        change: { derivative: { buckets_path: 'pages' } },
        running: { cumulative_sum: { buckets_path: 'pages' } },
      },
    },
    busiest: { max_bucket: { buckets_path: 'months>pages' } },
    quietest: { min_bucket: { buckets_path: 'months>_count' } },
    average: { avg_bucket: { buckets_path: 'months>pages' } },
    total: { sum_bucket: { buckets_path: 'months>pages' } },
    genres: { terms: { field: 'genre' }, aggs: { pages: { stats: { field: 'pages' } }, top: { bucket_sort: { sort: [{ 'pages.avg': 'desc' }], size: 2 } } } },
  });
  const perMonth = Array.from({ length: 12 }, (_, month) => BOOKS.filter((book) => new Date(book.source.published as number).getUTCMonth() === month));
  const sums = perMonth.map((books) => books.reduce((sum, book) => sum + (book.source.pages as number), 0));
  assert.deepEqual(result.months.buckets.map((bucket: any) => bucket.pages.value), sums);
  assert.deepEqual(result.months.buckets.slice(1).map((bucket: any) => bucket.change.value), sums.slice(1).map((sum, i) => sum - sums[i]!));
  assert.deepEqual(result.months.buckets.map((bucket: any) => bucket.running.value), sums.map((_, i) => sums.slice(0, i + 1).reduce((a, b) => a + b, 0)));
  const best = Math.max(...sums);
  assert.deepEqual(result.busiest, { value: best, keys: sums.flatMap((sum, month) => (sum === best ? [new Date(Date.UTC(2020, month, 1)).toISOString()] : [])) });
  assert.equal(result.quietest.value, Math.min(...perMonth.map((books) => books.length)));
  assert.equal(result.total.value, sums.reduce((a, b) => a + b, 0));
  assert.equal(result.average.value, result.total.value / 12);
  const averages = ['novel', 'poetry', 'essay', 'drama'].map((genre) => {
    const books = BOOKS.filter((book) => book.source.genre === genre);
    return [genre, books.reduce((sum, book) => sum + (book.source.pages as number), 0) / books.length] as const;
  });
  averages.sort((a, b) => b[1] - a[1]);
  assert.deepEqual(result.genres.buckets.map((bucket: any) => bucket.key), averages.slice(0, 2).map(([genre]) => genre));
});

test('time zones: date_histogram across DST, range queries and date_range', async () => {
  // Every 5 hours from 2024-11-01 to 2024-11-05 UTC; New York leaves summer time on 2024-11-03 at 06:00Z.
  const instants = Array.from({ length: 20 }, (_, n) => Date.UTC(2024, 10, 1) + n * 5 * 3_600_000);
  const events = instants.map((at, n) => ({ at: new Date(at).toISOString(), title: n % 2 ? 'quiet morning' : 'loud evening' }));
  const mappings = { properties: { at: { type: 'date' }, title: { type: 'text' } } };
  await load('events1', 1, mappings, events);
  await load('events3', 3, mappings, events);
  const zone = 'America/New_York';
  const localDay = (at: number): string => new Intl.DateTimeFormat('en-CA', { timeZone: zone }).format(at);
  const body = {
    size: 0,
    // Highlights in top_hits mark the terms of the search's query, as in ES.
    query: { bool: { filter: { range: { at: { gte: '2024-11-02', lt: '2024-11-04', time_zone: zone } } }, should: { match: { title: 'loud' } } } },
    aggs: {
      days: { date_histogram: { field: 'at', calendar_interval: 'day', time_zone: zone } },
      halves: { date_histogram: { field: 'at', fixed_interval: '12h', time_zone: '+05:30' } },
      local: {
        date_histogram: { field: 'at', calendar_interval: 'day', time_zone: zone, format: 'yyyy-MM-dd', keyed: true, min_doc_count: 0, extended_bounds: { min: '2024-11-01', max: '2024-11-04' } },
      },
      spans: { date_range: { field: 'at', time_zone: zone, ranges: [{ to: '2024-11-03' }, { from: '2024-11-03' }] } },
      today: { date_range: { field: 'at', time_zone: zone, ranges: [{ from: 'now/d' }] } },
      loud: { filter: { match: { title: 'loud' } }, aggs: { latest: { top_hits: { size: 1, sort: [{ at: 'desc' }], highlight: { fields: { title: {} } } } } } },
    },
  };
  const [one, three] = await Promise.all([call(server, 'POST', '/events1/_search', { json: body }), call(server, 'POST', '/events3/_search', { json: body })]);
  assert.equal(one.status, 200, one.text);
  const { _index: _ignored, ...oneHit } = one.body.aggregations.loud.latest.hits.hits[0];
  const { _index: _ignoredToo, ...threeHit } = three.body.aggregations.loud.latest.hits.hits[0];
  assert.deepEqual(threeHit, oneHit);
  delete one.body.aggregations.loud.latest.hits.hits;
  delete three.body.aggregations.loud.latest.hits.hits;
  assert.deepEqual(three.body.aggregations, one.body.aggregations, '3 shards answer as 1');
  const inRange = instants.filter((at) => localDay(at) >= '2024-11-02' && localDay(at) < '2024-11-04');
  assert.equal(one.body.hits.total.value, inRange.length);
  const { days, halves, spans } = one.body.aggregations;
  assert.deepEqual(
    days.buckets.map((bucket: any) => [bucket.key_as_string, bucket.key, bucket.doc_count]),
    [
      ['2024-11-02T00:00:00.000-04:00', Date.UTC(2024, 10, 2, 4), inRange.filter((at) => localDay(at) === '2024-11-02').length],
      // The 25-hour day: midnight is still in summer time, the next one in winter time.
      ['2024-11-03T00:00:00.000-04:00', Date.UTC(2024, 10, 3, 4), inRange.filter((at) => localDay(at) === '2024-11-03').length],
    ],
  );
  assert.ok(halves.buckets.every((bucket: any) => /T(00|12):00:00\.000\+05:30$/.test(bucket.key_as_string)));
  // format prints keys on the local clock and reads extended_bounds the same way (empty days filled).
  assert.deepEqual(
    Object.entries(one.body.aggregations.local.buckets).map(([key, bucket]: [string, any]) => [key, bucket.doc_count]),
    ['2024-11-01', '2024-11-02', '2024-11-03', '2024-11-04'].map((day) => [day, inRange.filter((at) => localDay(at) === day).length]),
  );
  const cut = Date.UTC(2024, 10, 3, 4);
  assert.deepEqual(
    spans.buckets.map((bucket: any) => [bucket.to_as_string ?? bucket.from_as_string, bucket.doc_count]),
    [['2024-11-03T00:00:00.000-04:00', inRange.filter((at) => at < cut).length], ['2024-11-03T00:00:00.000-04:00', inRange.filter((at) => at >= cut).length]],
  );
  // Date math rounds on the zone's clock: now/d is today's local midnight.
  const [today] = one.body.aggregations.today.buckets;
  assert.match(today.from_as_string, /^\d{4}-\d{2}-\d{2}T00:00:00\.000-0[45]:00$/);
  assert.equal(today.from_as_string.slice(0, 10), localDay(today.from));
  assert.ok(Date.now() - today.from >= 0 && Date.now() - today.from < 25 * 3_600_000);
  const latest = one.body.aggregations.loud.latest;
  assert.deepEqual(oneHit.highlight, { title: ['<em>loud</em> evening'] });
  assert.equal(latest.hits.total.value, inRange.filter((at) => instants.indexOf(at) % 2 === 0).length);
});

test('significant_terms against the whole collection, and ip_range on ip and keyword fields', async () => {
  const significant = { size: 0, query: { range: { pages: { gte: 300 } } }, aggs: { unusual: { significant_terms: { field: 'genre', min_doc_count: 1 } } } };
  const foreground = BOOKS.filter((book) => (book.source.pages as number) >= 300);
  for (const name of ['one', 'three']) {
    const response = await call(server, 'POST', `/${name}/_search`, { json: significant });
    assert.equal(response.status, 200, response.text);
    const { unusual } = response.body.aggregations;
    assert.equal(unusual.doc_count, foreground.length);
    assert.equal(unusual.bg_count, BOOKS.length);
    assert.ok(unusual.buckets.length > 0);
    for (const bucket of unusual.buckets) {
      assert.equal(bucket.doc_count, foreground.filter((book) => book.source.genre === bucket.key).length);
      const background = BOOKS.filter((book) => book.source.genre === bucket.key).length;
      // As in ES, a shard reports the background of the terms in its own foreground: exact on one shard, at most the truth on several.
      if (name === 'one') assert.equal(bucket.bg_count, background);
      else assert.ok(bucket.bg_count >= bucket.doc_count && bucket.bg_count <= background);
      const subset = bucket.doc_count / unusual.doc_count;
      const superset = bucket.bg_count / unusual.bg_count;
      assert.ok(Math.abs(bucket.score - (subset - superset) * (subset / superset)) < 1e-12);
    }
  }
  // The other heuristics: percentage is the share of the term's docs that are in the foreground.
  const percentage = await call(server, 'POST', '/one/_search', { json: { ...significant, aggs: { unusual: { significant_terms: { field: 'genre', min_doc_count: 1, percentage: {} } } } } });
  assert.equal(percentage.status, 200, percentage.text);
  for (const bucket of percentage.body.aggregations.unusual.buckets) assert.ok(Math.abs(bucket.score - bucket.doc_count / bucket.bg_count) < 1e-12);
  for (const heuristic of [{ chi_square: {} }, { mutual_information: { include_negatives: true } }, { gnd: { background_is_superset: false } }]) {
    const response = await call(server, 'POST', '/one/_search', { json: { ...significant, aggs: { unusual: { significant_terms: { field: 'genre', min_doc_count: 1, ...heuristic } } } } });
    assert.equal(response.status, 200, response.text);
    const scores = response.body.aggregations.unusual.buckets.map((bucket: { score: number }) => bucket.score);
    assert.ok(scores.length > 0 && scores.every((score: number, i: number) => score > 0 && (i === 0 || score <= scores[i - 1])), `${JSON.stringify(heuristic)}: ${scores}`);
  }
  const filtered = await call(server, 'POST', '/one/_search', { json: { ...significant, aggs: { unusual: { significant_terms: { field: 'genre', min_doc_count: 1, background_filter: { range: { pages: { lt: 300 } } } } } } } });
  assert.equal(filtered.status, 200, filtered.text);
  assert.equal(filtered.body.aggregations.unusual.bg_count, BOOKS.length - foreground.length);
  for (const bucket of filtered.body.aggregations.unusual.buckets) {
    assert.equal(bucket.bg_count, BOOKS.filter((book) => (book.source.pages as number) < 300 && book.source.genre === bucket.key).length);
  }
  const scripted = await call(server, 'POST', '/one/_search', { json: { ...significant, aggs: { unusual: { significant_terms: { field: 'genre', script_heuristic: { script: 'x' } } } } } });
  assert.deepEqual([scripted.status, scripted.body.error.type], [400, 'parsing_exception']);
  const addresses = ['10.1.0.1', '10.1.0.77', '10.1.3.4', '172.16.0.9', 'fe80::1', '2001:db8::5'];
  const mappings = { properties: { address: { type: 'ip' }, text: { type: 'keyword' } } };
  const hosts = addresses.map((address) => ({ address, text: address }));
  await load('hosts1', 1, mappings, hosts);
  await load('hosts3', 3, mappings, hosts);
  const ranges = [{ mask: '10.1.0.0/16' }, { from: '10.1.0.50', to: '172.16.0.9' }, { key: 'v6', from: '2000::' }];
  const body = { size: 0, aggs: { ip: { ip_range: { field: 'address', ranges } }, text: { ip_range: { field: 'text', ranges, keyed: true } } } };
  const [one, three] = await Promise.all([call(server, 'POST', '/hosts1/_search', { json: body }), call(server, 'POST', '/hosts3/_search', { json: body })]);
  assert.equal(three.status, 200, three.text);
  assert.deepEqual(three.body.aggregations, one.body.aggregations);
  assert.deepEqual(three.body.aggregations.ip.buckets, [
    { key: '10.1.0.0/16', from: '10.1.0.0', to: '10.2.0.0', doc_count: 3 },
    { key: '10.1.0.50-172.16.0.9', from: '10.1.0.50', to: '172.16.0.9', doc_count: 2 },
    { key: 'v6', from: '2000::', doc_count: 2 },
  ]);
  assert.deepEqual(Object.keys(three.body.aggregations.text.buckets), ['10.1.0.0/16', '10.1.0.50-172.16.0.9', 'v6']);
});

test('bad input to the new aggregations is a 400 with the ES error type', async () => {
  const cases: [unknown, string][] = [
    [{ best: { max_bucket: { buckets_path: 'nope>pages' } } }, 'action_request_validation_exception'],
    [{ m: { date_histogram: { field: 'published', calendar_interval: 'month' }, aggs: { d: { derivative: { buckets_path: 'missing_metric' } } } } }, 'action_request_validation_exception'],
    [{ g: { terms: { field: 'genre' }, aggs: { d: { cumulative_sum: { buckets_path: '_count' } } } } }, 'action_request_validation_exception'],
    [{ c: { composite: { sources: [{ g: { terms: { field: 'genre' } } }], after: { nope: 'x' } } } }, 'illegal_argument_exception'],
    [{ c: { composite: { sources: [{ p: { histogram: { field: 'pages', interval: 10 } } }], after: { p: 'many' } } } }, 'illegal_argument_exception'],
    [{ g: { terms: { field: 'genre' }, aggs: { c: { composite: { sources: [{ p: { terms: { field: 'pages' } } }] } } } } }, 'illegal_argument_exception'],
    [{ t: { top_hits: { size: 500 } } }, 'illegal_argument_exception'],
    [{ t: { top_hits: { docvalue_fields: 5 } } }, 'parsing_exception'],
    [{ t: { top_hits: { sort: [{ nope: { order: 'sideways' } }] } } }, 'parsing_exception'],
    [{ h: { date_histogram: { field: 'published', calendar_interval: 'day', time_zone: 'Mars/Olympus_Mons' } } }, 'parsing_exception'],
  ];
  for (const [aggs, type] of cases) {
    const response = await call(server, 'POST', '/three/_search', { json: { size: 0, aggs } });
    assert.equal(response.status, 400, `${JSON.stringify(aggs)}: ${response.text}`);
    assert.equal(response.body.error.type, type, JSON.stringify(aggs));
  }
  const badZone = await call(server, 'POST', '/three/_search', { json: { query: { range: { published: { gte: '2020-01-01', time_zone: 'Nowhere/Land' } } } } });
  assert.equal(badZone.status, 400, badZone.text);
});

test('the OpenSearch client pages a composite and reads top_hits and pipelines', async () => {
  const client = new Client({ node: server.url });
  try {
    const buckets: unknown[] = [];
    let after: Record<string, string> | undefined;
    for (let page = 0; page < 20; page++) {
      const response = await client.search({
        index: 'three',
        body: {
          size: 0,
          aggs: {
            genres: { composite: { size: 2, sources: [{ genre: { terms: { field: 'genre' } } }], ...(after ? { after } : {}) }, aggs: { top: { top_hits: { size: 1, sort: [{ pages: 'asc' }] } } } },
          },
        },
      });
      const genres = response.body.aggregations!.genres as any;
      if (genres.buckets.length === 0) break;
      buckets.push(...genres.buckets);
      after = genres.after_key;
    }
    assert.deepEqual(buckets.map((bucket: any) => bucket.key.genre), ['drama', 'essay', 'novel', 'poetry']);
    for (const bucket of buckets as any[]) {
      const thinnest = BOOKS.filter((book) => book.source.genre === bucket.key.genre).sort((a, b) => (a.source.pages as number) - (b.source.pages as number))[0]!;
      assert.equal(bucket.top.hits.hits[0]._id, thinnest.id);
    }
    const typed = await client.search({
      index: 'three',
      typed_keys: true,
      body: { size: 0, aggs: { m: { histogram: { field: 'pages', interval: 100 }, aggs: { d: { derivative: { buckets_path: '_count' } } } }, s: { sum_bucket: { buckets_path: 'm>_count' } } } },
    });
    const aggregations = typed.body.aggregations as any;
    assert.equal(aggregations['simple_value#s'].value, BOOKS.length);
    assert.ok(aggregations['histogram#m'].buckets[1]['derivative#d']);
  } finally {
    await client.close();
  }
});

test('meta is returned with each aggregation result as given, sub-aggregations and pipelines included', async () => {
  const meta = { owner: 'reports', tags: ['a', 1], nested: { deep: true } };
  const result = await aggregate({
    by_genre: { meta, terms: { field: 'genre' }, aggs: { longest: { meta: { unit: 'pages' }, max: { field: 'pages' } } } },
    total: { meta: { kind: 'sum' }, sum: { field: 'pages' } },
    most: { meta: { kind: 'pipeline' }, max_bucket: { buckets_path: 'by_genre>_count' } },
  });
  assert.deepEqual(result.by_genre.meta, meta);
  assert.ok(result.by_genre.buckets.length > 0);
  for (const bucket of result.by_genre.buckets) assert.deepEqual(bucket.longest.meta, { unit: 'pages' });
  assert.deepEqual(result.total.meta, { kind: 'sum' });
  assert.deepEqual(result.most.meta, { kind: 'pipeline' });
  const plain = await aggregate({ total: { sum: { field: 'pages' } } });
  assert.equal(plain.total.meta, undefined);
  const bad = await call(server, 'POST', '/one/_search', { json: { size: 0, aggs: { total: { meta: 'x', sum: { field: 'pages' } } } } });
  assert.equal(bad.status, 400);
});

test('range buckets come back ordered by from, then to, as Elasticsearch orders them', async () => {
  const result = await aggregate({
    r: { range: { field: 'pages', ranges: [{ key: 'big', from: 300 }, { key: 'mid', from: 200, to: 300 }, { key: 'small', to: 200 }, { key: 'mid-wide', from: 200, to: 400 }] } },
    k: { range: { field: 'pages', keyed: true, ranges: [{ key: 'b', from: 300 }, { key: 'a', to: 300 }] } },
  });
  assert.deepEqual(result.r.buckets.map((bucket: { key: string }) => bucket.key), ['small', 'mid', 'mid-wide', 'big']);
  const count = (low: number, high: number): number => pages.filter((value) => value >= low && value < high).length;
  assert.deepEqual(result.r.buckets.map((bucket: { doc_count: number }) => bucket.doc_count), [count(0, 200), count(200, 300), count(200, 400), count(300, Infinity)]);
  assert.deepEqual(Object.keys(result.k.buckets), ['a', 'b']);
});
