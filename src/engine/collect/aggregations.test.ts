import { test } from 'node:test';
import assert from 'node:assert/strict';
import { EngineError } from '../errors.ts';
import { seededRandom } from '../segment/reference-leaf.fixture.ts';
import { executeQuery } from '../query/execute.ts';
import type { LeafReader } from '../segment/leaf-reader.ts';
import { buildLeaf, buildLeaves, dealDocs, fieldsOf, type CorpusDoc } from '../query/test-corpus.fixture.ts';
import { EXACT_CARDINALITY_LIMIT, mergeAggregations, type AggregationPartials, type CardinalityPartial } from './aggregation-partials.ts';
import { HyperLogLog } from './hyperloglog.ts';
import { renderAggregations } from './merge.ts';

const fields = fieldsOf({
  properties: {
    title: { type: 'text' },
    color: { type: 'keyword' },
    size: { type: 'integer' },
    price: { type: 'double' },
    sold: { type: 'date' },
    promo: { type: 'boolean' },
  },
});

const COLORS = ['red', 'green', 'blue', 'black', 'white', 'pink'];

function corpus(count: number, seed: number): CorpusDoc[] {
  const random = seededRandom(seed);
  return Array.from({ length: count }, (_, n) => {
    const source: Record<string, unknown> = { title: n % 3 === 0 ? 'shirt' : 'shoe' };
    if (random() < 0.9) source.color = random() < 0.15 ? [COLORS[n % 6], COLORS[(n + 2) % 6]] : COLORS[Math.floor(random() ** 2 * 6)];
    if (random() < 0.85) source.size = Math.floor(random() * 12);
    if (random() < 0.8) source.price = Math.floor(random() * 400) / 4;
    if (random() < 0.9) source.sold = Date.UTC(2023, Math.floor(random() * 12), 1 + Math.floor(random() * 28), Math.floor(random() * 24));
    if (random() < 0.7) source.promo = random() < 0.4;
    return { id: `p${n}`, source };
  });
}

const docs = corpus(600, 3);
const leaves = buildLeaves(docs, fields, 2);

function aggregate(aggs: unknown, target: readonly LeafReader[] = leaves, query?: unknown): Record<string, unknown> {
  const result = executeQuery(target, fields, { query, from: 0, size: 0, aggs });
  return renderAggregations(result.aggs!, aggs);
}

function asArray(value: unknown): unknown[] {
  return value === undefined ? [] : Array.isArray(value) ? value : [value];
}

function countBy(key: (source: Record<string, unknown>) => unknown[], subset = docs): Map<unknown, number> {
  const counts = new Map<unknown, number>();
  for (const doc of subset) for (const value of new Set(key(doc.source))) counts.set(value, (counts.get(value) ?? 0) + 1);
  return counts;
}

test('terms counts docs per value, ordered by count then key', () => {
  const rendered = aggregate({ colors: { terms: { field: 'color', size: 4 } } }) as { colors: { buckets: { key: string; doc_count: number }[]; sum_other_doc_count: number } };
  const expected = [...countBy((source) => asArray(source.color))].sort((a, b) => b[1] - a[1] || String(a[0]).localeCompare(String(b[0])));
  assert.deepEqual(rendered.colors.buckets.map((bucket) => [bucket.key, bucket.doc_count]), expected.slice(0, 4));
  assert.equal(rendered.colors.sum_other_doc_count, expected.slice(4).reduce((sum, [, count]) => sum + count, 0));
  const byKey = aggregate({ colors: { terms: { field: 'color', order: { _key: 'desc' }, min_doc_count: 60 } } }) as { colors: { buckets: { key: string; doc_count: number }[] } };
  assert.deepEqual(
    byKey.colors.buckets.map((bucket) => bucket.key),
    expected.filter(([, count]) => count >= 60).map(([key]) => key).sort().reverse(),
  );
});

test('terms on numbers, booleans and dates, with missing values', () => {
  const rendered = aggregate({
    sizes: { terms: { field: 'size', size: 3, order: { _key: 'asc' } } },
    promos: { terms: { field: 'promo', missing: false } },
    none: { terms: { field: 'color', missing: 'none', order: { _count: 'asc' }, size: 1 } },
  }) as Record<string, { buckets: Record<string, unknown>[] }>;
  const sizes = countBy((source) => asArray(source.size));
  assert.deepEqual(rendered.sizes!.buckets, [0, 1, 2].map((size) => ({ key: size, doc_count: sizes.get(size) })));
  const promoTrue = docs.filter((doc) => doc.source.promo === true).length;
  assert.deepEqual(rendered.promos!.buckets, [
    { key: 0, key_as_string: 'false', doc_count: docs.length - promoTrue },
    { key: 1, key_as_string: 'true', doc_count: promoTrue },
  ]);
  assert.deepEqual(rendered.none!.buckets, [{ key: 'none', doc_count: docs.filter((doc) => doc.source.color === undefined).length }]);
  const dates = aggregate({ days: { terms: { field: 'sold', size: 1, order: { _key: 'asc' } } } }) as { days: { buckets: Record<string, unknown>[] } };
  const first = Math.min(...docs.flatMap((doc) => asArray(doc.source.sold) as number[]));
  assert.equal(dates.days.buckets[0]!.key, first);
  assert.equal(dates.days.buckets[0]!.key_as_string, new Date(first).toISOString());
});

test('metric aggregations over all matching docs, not just the top hits', () => {
  const query = { match: { title: 'shirt' } };
  const subset = docs.filter((doc) => doc.source.title === 'shirt');
  const prices = subset.flatMap((doc) => asArray(doc.source.price) as number[]);
  const rendered = aggregate(
    {
      low: { min: { field: 'price' } },
      high: { max: { field: 'price' } },
      total: { sum: { field: 'price' } },
      mean: { avg: { field: 'price' } },
      all: { stats: { field: 'price' } },
      priced: { value_count: { field: 'price' } },
      colors: { value_count: { field: 'color' } },
      distinct: { cardinality: { field: 'color' } },
      distinctSizes: { cardinality: { field: 'size' } },
      first: { min: { field: 'sold' } },
      none: { avg: { field: 'missing_field' } },
    },
    leaves,
    query,
  );
  const sum = prices.reduce((total, price) => total + price, 0);
  assert.deepEqual(rendered.low, { value: Math.min(...prices) });
  assert.deepEqual(rendered.high, { value: Math.max(...prices) });
  assert.deepEqual(rendered.total, { value: sum });
  assert.deepEqual(rendered.mean, { value: sum / prices.length });
  assert.deepEqual(rendered.all, { count: prices.length, min: Math.min(...prices), max: Math.max(...prices), avg: sum / prices.length, sum });
  assert.deepEqual(rendered.priced, { value: prices.length });
  assert.deepEqual(rendered.colors, { value: subset.reduce((count, doc) => count + asArray(doc.source.color).length, 0) });
  assert.deepEqual(rendered.distinct, { value: new Set(subset.flatMap((doc) => asArray(doc.source.color))).size });
  assert.deepEqual(rendered.distinctSizes, { value: new Set(subset.flatMap((doc) => asArray(doc.source.size))).size });
  const firstSold = Math.min(...subset.flatMap((doc) => asArray(doc.source.sold) as number[]));
  assert.deepEqual(rendered.first, { value: firstSold, value_as_string: new Date(firstSold).toISOString() });
  assert.deepEqual(rendered.none, { value: null });
  const empty = aggregate({ all: { stats: { field: 'price' } }, total: { sum: { field: 'price' } } }, leaves, { term: { color: 'nope' } });
  assert.deepEqual(empty, { all: { count: 0, min: null, max: null, avg: null, sum: 0 }, total: { value: 0 } });
});

test('range and date_range buckets', () => {
  const rendered = aggregate({
    prices: { range: { field: 'price', ranges: [{ to: 20 }, { from: 20, to: 50 }, { key: 'expensive', from: 50 }] } },
    keyed: { range: { field: 'size', keyed: true, ranges: [{ from: 2, to: 4 }] } },
    months: { date_range: { field: 'sold', ranges: [{ to: '2023-03-01' }, { from: '2023-03-01', to: '2023-03-01||+1M' }] } },
  }) as Record<string, { buckets: unknown }>;
  const inRange = (from: number, to: number, field: string): number =>
    docs.filter((doc) => asArray(doc.source[field]).some((value) => (value as number) >= from && (value as number) < to)).length;
  assert.deepEqual(rendered.prices!.buckets, [
    { key: '*-20.0', to: 20, doc_count: inRange(-Infinity, 20, 'price') },
    { key: '20.0-50.0', from: 20, to: 50, doc_count: inRange(20, 50, 'price') },
    { key: 'expensive', from: 50, doc_count: inRange(50, Infinity, 'price') },
  ]);
  assert.deepEqual(rendered.keyed!.buckets, { '2.0-4.0': { from: 2, to: 4, doc_count: inRange(2, 4, 'size') } });
  const march = Date.UTC(2023, 2, 1);
  const april = Date.UTC(2023, 3, 1);
  assert.deepEqual(rendered.months!.buckets, [
    { key: '*-2023-03-01T00:00:00.000Z', to: march, to_as_string: '2023-03-01T00:00:00.000Z', doc_count: inRange(-Infinity, march, 'sold') },
    {
      key: '2023-03-01T00:00:00.000Z-2023-04-01T00:00:00.000Z',
      from: march,
      from_as_string: '2023-03-01T00:00:00.000Z',
      to: april,
      to_as_string: '2023-04-01T00:00:00.000Z',
      doc_count: inRange(march, april, 'sold'),
    },
  ]);
});

test('histograms fill empty buckets within the (extended) bounds', () => {
  const few = [
    { id: 'a', source: { price: 3, sold: '2023-01-10T05:00:00Z' } },
    { id: 'b', source: { price: 17.5, sold: '2023-03-02T00:00:00Z' } },
    { id: 'c', source: { price: 9, sold: '2023-03-31T23:59:59Z' } },
  ];
  const small = [buildLeaf(few, fields)];
  const rendered = aggregate(
    {
      prices: { histogram: { field: 'price', interval: 5 } },
      sparse: { histogram: { field: 'price', interval: 5, min_doc_count: 1, offset: 1 } },
      wide: { histogram: { field: 'price', interval: 10, extended_bounds: { min: -10, max: 30 } } },
      months: { date_histogram: { field: 'sold', calendar_interval: 'month' } },
      quarters: { date_histogram: { field: 'sold', calendar_interval: '1q', min_doc_count: 1 } },
      halfDays: { date_histogram: { field: 'sold', fixed_interval: '12h', min_doc_count: 1, keyed: true } },
    },
    small,
  ) as Record<string, { buckets: unknown }>;
  assert.deepEqual(rendered.prices!.buckets, [
    { key: 0, doc_count: 1 },
    { key: 5, doc_count: 1 },
    { key: 10, doc_count: 0 },
    { key: 15, doc_count: 1 },
  ]);
  assert.deepEqual(rendered.sparse!.buckets, [
    { key: 1, doc_count: 1 },
    { key: 6, doc_count: 1 },
    { key: 16, doc_count: 1 },
  ]);
  assert.deepEqual((rendered.wide!.buckets as { key: number }[]).map((bucket) => bucket.key), [-10, 0, 10, 20, 30]);
  assert.deepEqual(rendered.months!.buckets, [
    { key_as_string: '2023-01-01T00:00:00.000Z', key: Date.UTC(2023, 0, 1), doc_count: 1 },
    { key_as_string: '2023-02-01T00:00:00.000Z', key: Date.UTC(2023, 1, 1), doc_count: 0 },
    { key_as_string: '2023-03-01T00:00:00.000Z', key: Date.UTC(2023, 2, 1), doc_count: 2 },
  ]);
  assert.deepEqual(rendered.quarters!.buckets, [{ key_as_string: '2023-01-01T00:00:00.000Z', key: Date.UTC(2023, 0, 1), doc_count: 3 }]);
  assert.deepEqual(Object.keys(rendered.halfDays!.buckets as object), ['2023-01-10T00:00:00.000Z', '2023-03-02T00:00:00.000Z', '2023-03-31T12:00:00.000Z']);
});

test('sub-aggregations and ordering by a metric', () => {
  const aggs = {
    colors: {
      terms: { field: 'color', order: { avg_price: 'desc' } },
      aggs: { avg_price: { avg: { field: 'price' } }, sizes: { terms: { field: 'size', size: 2 } }, cheap: { range: { field: 'price', ranges: [{ to: 10 }] } } },
    },
    monthly: { date_histogram: { field: 'sold', calendar_interval: 'month' }, aggs: { stats: { stats: { field: 'size' } } } },
  };
  const rendered = aggregate(aggs) as { colors: { buckets: Record<string, unknown>[] }; monthly: { buckets: Record<string, unknown>[] } };
  const averages = rendered.colors.buckets.map((bucket) => (bucket.avg_price as { value: number }).value);
  assert.deepEqual(averages, [...averages].sort((a, b) => b - a));
  for (const bucket of rendered.colors.buckets) {
    const inBucket = docs.filter((doc) => asArray(doc.source.color).includes(bucket.key));
    const prices = inBucket.flatMap((doc) => asArray(doc.source.price) as number[]);
    assert.equal((bucket.avg_price as { value: number }).value, prices.reduce((sum, price) => sum + price, 0) / prices.length);
    const cheap = (bucket.cheap as { buckets: { doc_count: number }[] }).buckets[0]!.doc_count;
    assert.equal(cheap, prices.filter((price) => price < 10).length);
    const sizeCounts = countBy((source) => asArray(source.size), inBucket);
    const topSize = (bucket.sizes as { buckets: { key: number; doc_count: number }[] }).buckets[0]!;
    assert.equal(topSize.doc_count, Math.max(...sizeCounts.values()));
  }
  assert.equal(rendered.monthly.buckets.length, 12);
  const january = docs.filter((doc) => doc.source.sold !== undefined && new Date(doc.source.sold as number).getUTCMonth() === 0);
  assert.equal((rendered.monthly.buckets[0]!.stats as { count: number }).count, january.filter((doc) => doc.source.size !== undefined).length);
});

test('aggregations merged across shards equal the single-shard result', () => {
  const aggs = {
    colors: { terms: { field: 'color', size: 10 }, aggs: { price: { stats: { field: 'price' } }, sizes: { cardinality: { field: 'size' } } } },
    sizes: { terms: { field: 'size', size: 20, order: { _key: 'asc' } } },
    prices: { histogram: { field: 'price', interval: 10 }, aggs: { promo: { terms: { field: 'promo' } } } },
    months: { date_histogram: { field: 'sold', calendar_interval: 'week' }, aggs: { total: { sum: { field: 'size' } } } },
    bands: { range: { field: 'price', ranges: [{ to: 25 }, { from: 25 }] }, aggs: { colors: { value_count: { field: 'color' } } } },
    everything: { stats: { field: 'size' } },
    distinct: { cardinality: { field: 'color' } },
  };
  const query = { bool: { must_not: { term: { color: 'pink' } } } };
  const single = aggregate(aggs, [buildLeaf(docs, fields)], query);
  const shards = dealDocs(docs, 3).map((group, index) => buildLeaves(group, fields, 1 + index));
  const partials = shards.map((shard) => executeQuery(shard, fields, { query, from: 0, size: 0, aggs }).aggs!);
  const merged = renderAggregations(mergeAggregations(JSON.parse(JSON.stringify(partials)) as AggregationPartials[]), aggs);
  assert.deepEqual(merged, single);
  assert.deepEqual(aggregate(aggs, leaves, query), single, 'several leaves in one shard');
});

test('terms beyond shard_size report their error bound and the rest', () => {
  const many = Array.from({ length: 400 }, (_, n) => ({ id: `k${n}`, source: { color: `c${Math.floor(n / 2) % 40}` } }));
  const shards = dealDocs(many, 2).map((group, index) => [buildLeaf(group, fields, index)]);
  const aggs = { colors: { terms: { field: 'color', size: 2, shard_size: 3 } } };
  const merged = renderAggregations(
    mergeAggregations(shards.map((shard) => executeQuery(shard, fields, { from: 0, size: 0, aggs }).aggs!)),
    aggs,
  ) as { colors: { doc_count_error_upper_bound: number; sum_other_doc_count: number; buckets: { doc_count: number }[] } };
  assert.equal(merged.colors.buckets.length, 2);
  assert.equal(merged.colors.doc_count_error_upper_bound, 10, 'each shard left out terms with up to 5 docs');
  assert.equal(merged.colors.sum_other_doc_count + merged.colors.buckets.reduce((sum, bucket) => sum + bucket.doc_count, 0), 400);
  const deleted = [buildLeaf(many.slice(0, 100), fields, 0, ['k0', 'k1', 'k80'])];
  const counted = aggregate({ colors: { terms: { field: 'color', size: 1, order: { _key: 'asc' } } } }, deleted) as { colors: { buckets: unknown[] } };
  assert.deepEqual(counted.colors.buckets, [{ key: 'c0', doc_count: 1 }], 'deleted docs are not aggregated');
});

test('cardinality switches to a mergeable sketch past the exact limit', () => {
  const left: CardinalityPartial = { type: 'cardinality', values: Array.from({ length: 30_000 }, (_, n) => n), sketch: null };
  const right: CardinalityPartial = { type: 'cardinality', values: Array.from({ length: 30_000 }, (_, n) => n + 15_000), sketch: null };
  const merged = mergeAggregations([{ distinct: left }, { distinct: right }]).distinct as CardinalityPartial;
  assert.equal(merged.values, null);
  assert.ok(merged.sketch !== null);
  const estimate = (renderAggregations({ distinct: merged }, { distinct: { cardinality: { field: 'size' } } }).distinct as { value: number }).value;
  assert.ok(Math.abs(estimate - 45_000) < 45_000 * 0.03, `estimate ${estimate}`);
  const small = mergeAggregations([{ distinct: { type: 'cardinality', values: ['a', 'b'], sketch: null } }, { distinct: { type: 'cardinality', values: ['b', 'c'], sketch: null } }]);
  assert.deepEqual(small.distinct, { type: 'cardinality', values: ['a', 'b', 'c'], sketch: null });
  const sketch = new HyperLogLog();
  for (let n = 0; n < EXACT_CARDINALITY_LIMIT * 5; n++) sketch.add(`value-${n}`);
  assert.ok(Math.abs(sketch.estimate() - EXACT_CARDINALITY_LIMIT * 5) < EXACT_CARDINALITY_LIMIT * 5 * 0.03);
  assert.equal(HyperLogLog.fromBase64(sketch.toBase64()).estimate(), sketch.estimate());
});

test('invalid aggregation requests are rejected', () => {
  const invalid: [unknown, RegExp][] = [
    [{ a: { terms: { field: 'title' } } }, /Text fields are not optimised/],
    [{ a: { avg: { field: 'color' } } }, /Field \[color\] of type \[keyword\] is not supported for aggregation \[avg\]/],
    [{ a: { avg: { field: 'price' }, aggs: { b: { max: { field: 'price' } } } } }, /cannot accept sub-aggregations/],
    [{ a: { terms: { field: 'color' }, max: { field: 'price' } } }, /Found two aggregation type definitions/],
    [{ a: { terms: { field: 'color', size: 0 } } }, /\[size\] must be an integer between 1/],
    [{ a: { terms: { field: 'color', order: { nope: 'asc' } } } }, /Invalid aggregation order path \[nope\]/],
    [{ a: { histogram: { field: 'price', interval: 0 } } }, /\[interval\] must be >0/],
    [{ a: { date_histogram: { field: 'sold', calendar_interval: '2d' } } }, /could not be parsed as a calendar interval/],
    [{ a: { date_histogram: { field: 'sold' } } }, /Required one of fields \[fixed_interval, calendar_interval\]/],
    [{ a: { date_histogram: { field: 'price', fixed_interval: '1d' } } }, /not supported for aggregation \[date_histogram\]/],
    [{ a: { range: { field: 'price', ranges: [] } } }, /\[ranges\] must be a non-empty array/],
    [{ 'a[0]': { max: { field: 'price' } } }, /Invalid aggregation name/],
    [{ a: {} }, /Missing definition for aggregation \[a\]/],
    [{ a: { terms: {} } }, /Required one of fields \[field, script\]/],
  ];
  for (const [aggs, pattern] of invalid) {
    assert.throws(
      () => executeQuery(leaves, fields, { from: 0, size: 0, aggs }),
      (error: unknown) => error instanceof EngineError && pattern.test(error.message),
      JSON.stringify(aggs),
    );
  }
  assert.throws(() => aggregate({ a: { histogram: { field: 'price', interval: 0.0001 } } }), /Trying to create too many buckets/);
});

test('aggregations named like Object.prototype members (or __proto__) are ordinary names', () => {
  const names = ['constructor', 'toString', 'valueOf', 'hasOwnProperty', 'isPrototypeOf', '__proto__'];
  const aggs: Record<string, unknown> = {};
  for (const name of names) {
    const body = { terms: { field: 'color', order: Object.fromEntries([[name, 'desc']]) }, aggs: Object.fromEntries([[name, { max: { field: 'price' } }]]) };
    Object.defineProperty(aggs, name, { value: body, enumerable: true, configurable: true, writable: true });
  }
  const expected = aggregate({ colors: { terms: { field: 'color', order: { top: 'desc' } }, aggs: { top: { max: { field: 'price' } } } } }) as {
    colors: { buckets: Array<{ key: string; doc_count: number; top: { value: number } }> };
  };
  const rows = expected.colors.buckets.map((bucket) => [bucket.key, bucket.doc_count, bucket.top.value]);
  const check = (rendered: Record<string, unknown>, label: string): void => {
    assert.deepEqual(Object.keys(rendered), names, label);
    for (const name of names) {
      const { buckets } = Object.getOwnPropertyDescriptor(rendered, name)!.value as { buckets: Array<Record<string, unknown>> };
      assert.deepEqual(buckets.map((bucket) => [bucket.key, bucket.doc_count, (Object.getOwnPropertyDescriptor(bucket, name)!.value as { value: number }).value]), rows, `${label}: ${name}`);
    }
  };
  check(aggregate(aggs), 'one shard');
  const shards = dealDocs(docs, 2).map((group, index) => buildLeaves(group, fields, 1 + index));
  const partials = shards.map((shard) => executeQuery(shard, fields, { from: 0, size: 0, aggs }).aggs!);
  check(renderAggregations(mergeAggregations(partials), aggs), 'merged');
  check(renderAggregations(mergeAggregations(JSON.parse(JSON.stringify(partials)) as AggregationPartials[]), aggs), 'merged after JSON');
  const none = aggregate({ toString: { max: { field: 'price' } }, constructor: { value_count: { field: 'color' } } }, leaves, { term: { color: 'none' } });
  assert.deepEqual(none, { toString: { value: null }, constructor: { value: 0 } }, 'no partial: the empty rendering');
  assert.equal(Object.getPrototypeOf({}), Object.prototype);
});

test('a calendar_interval named like an Object.prototype member is a parsing error', () => {
  for (const interval of ['constructor', 'toString', '__proto__', 'hasOwnProperty']) {
    assert.throws(
      () => executeQuery(leaves, fields, { from: 0, size: 0, aggs: { a: { date_histogram: { field: 'sold', calendar_interval: interval } } } }),
      (error: unknown) => error instanceof EngineError && error.code === 'parsing' && /could not be parsed as a calendar interval/.test(error.message),
      interval,
    );
  }
});
