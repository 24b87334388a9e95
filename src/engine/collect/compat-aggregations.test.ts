/**
 * extended_stats, filter / filters, missing, percentiles / percentile_ranks: parsing, per-shard
 * collection against brute force over the corpus, and the merge of shard partials (after a JSON
 * round trip, as they cross nodes) against the single-shard result.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { EngineError } from '../errors.ts';
import { seededRandom } from '../segment/reference-leaf.fixture.ts';
import { executeQuery } from '../query/execute.ts';
import type { LeafReader } from '../segment/leaf-reader.ts';
import { buildLeaf, buildLeaves, dealDocs, fieldsOf, type CorpusDoc } from '../query/test-corpus.fixture.ts';
import { mergeAggregations, type AggregationPartials, type DigestPartial } from './aggregation-partials.ts';
import { parseAggregations } from './aggregation-spec.ts';
import { renderAggregations } from './merge.ts';

const fields = fieldsOf({
  properties: { color: { type: 'keyword' }, size: { type: 'integer' }, price: { type: 'double' }, sold: { type: 'date' } },
});

function corpus(count: number, seed: number): CorpusDoc[] {
  const random = seededRandom(seed);
  return Array.from({ length: count }, (_, n) => {
    const source: Record<string, unknown> = {};
    if (random() < 0.9) source.color = ['red', 'green', 'blue'][n % 3];
    if (random() < 0.85) source.size = Math.floor(random() * 12);
    if (random() < 0.8) source.price = Math.floor(random() * 400) / 4;
    if (random() < 0.9) source.sold = Date.UTC(2023, Math.floor(random() * 12), 1 + Math.floor(random() * 28));
    return { id: `p${n}`, source };
  });
}

const docs = corpus(300, 11);
const leaves = buildLeaves(docs, fields, 2);

function aggregate(aggs: unknown, target: readonly LeafReader[] = leaves, query?: unknown): any {
  const result = executeQuery(target, fields, { query, from: 0, size: 0, aggs });
  return renderAggregations(result.aggs!, aggs);
}

function sizes(subset = docs): number[] {
  return subset.filter((doc) => doc.source.size !== undefined).map((doc) => doc.source.size as number);
}

test('extended_stats computes the population and sampling statistics and the bounds', () => {
  const values = sizes();
  const n = values.length;
  const sum = values.reduce((a, b) => a + b, 0);
  const squares = values.reduce((a, b) => a + b * b, 0);
  const avg = sum / n;
  const population = squares / n - avg * avg;
  const sampling = (squares - (sum * sum) / n) / (n - 1);
  const rendered = aggregate({ ext: { extended_stats: { field: 'size', sigma: 3 } } }).ext;
  assert.equal(rendered.count, n);
  assert.equal(rendered.sum, sum);
  assert.equal(rendered.sum_of_squares, squares);
  assert.equal(rendered.min, Math.min(...values));
  assert.equal(rendered.max, Math.max(...values));
  assert.ok(Math.abs(rendered.variance - population) < 1e-9);
  assert.ok(Math.abs(rendered.variance_sampling - sampling) < 1e-9);
  assert.ok(Math.abs(rendered.std_deviation_sampling - Math.sqrt(sampling)) < 1e-9);
  assert.ok(Math.abs(rendered.std_deviation_bounds.upper - (avg + 3 * Math.sqrt(population))) < 1e-9);
  assert.ok(Math.abs(rendered.std_deviation_bounds.lower_sampling - (avg - 3 * Math.sqrt(sampling))) < 1e-9);
  const empty = aggregate({ ext: { extended_stats: { field: 'nope' } } }).ext;
  assert.equal(empty.count, 0);
  assert.equal(empty.variance, null);
  assert.deepEqual(Object.values(empty.std_deviation_bounds), [null, null, null, null, null, null]);
  assert.throws(() => parseAggregations({ ext: { extended_stats: { field: 'size', sigma: -1 } } }, fields), EngineError);
});

test('terms order by an extended_stats stat', () => {
  const rendered = aggregate({ colors: { terms: { field: 'color', order: { 'ext.variance': 'desc' } }, aggs: { ext: { extended_stats: { field: 'size' } } } } });
  const variances = rendered.colors.buckets.map((bucket: any) => bucket.ext.variance);
  assert.deepEqual(variances, [...variances].sort((a: number, b: number) => b - a));
  assert.throws(() => parseAggregations({ c: { terms: { field: 'color', order: { 'ext.bogus': 'desc' } }, aggs: { ext: { extended_stats: { field: 'size' } } } } }, fields));
});

test('filter, filters and missing count the docs they select, with sub-aggregations', () => {
  const red = docs.filter((doc) => doc.source.color === 'red');
  const big = docs.filter((doc) => (doc.source.size as number) >= 6);
  const rendered = aggregate({
    red: { filter: { term: { color: 'red' } }, aggs: { size: { sum: { field: 'size' } } } },
    named: { filters: { filters: { red: { term: { color: 'red' } }, big: { range: { size: { gte: 6 } } } }, other_bucket_key: 'rest' } },
    anonymous: { filters: { filters: [{ term: { color: 'red' } }, { range: { size: { gte: 6 } } }], other_bucket: true } },
    list: { filters: { filters: { red: { term: { color: 'red' } } }, keyed: false } },
    nosize: { missing: { field: 'size' }, aggs: { colors: { terms: { field: 'color' } } } },
    unmapped: { missing: { field: 'nope' } },
  });
  assert.deepEqual(rendered.red, { doc_count: red.length, size: { value: sizes(red).reduce((a, b) => a + b, 0) } });
  const neither = docs.filter((doc) => doc.source.color !== 'red' && !((doc.source.size as number) >= 6)).length;
  assert.deepEqual(Object.keys(rendered.named.buckets), ['big', 'red', 'rest']);
  assert.deepEqual(rendered.named.buckets, { big: { doc_count: big.length }, red: { doc_count: red.length }, rest: { doc_count: neither } });
  assert.deepEqual(rendered.anonymous.buckets, [{ doc_count: red.length }, { doc_count: big.length }, { doc_count: neither }]);
  assert.deepEqual(rendered.list.buckets, [{ key: 'red', doc_count: red.length }]);
  const withoutSize = docs.filter((doc) => doc.source.size === undefined);
  assert.equal(rendered.nosize.doc_count, withoutSize.length);
  const colorCount = rendered.nosize.colors.buckets.reduce((sum: number, bucket: any) => sum + bucket.doc_count, 0);
  assert.equal(colorCount, withoutSize.filter((doc) => doc.source.color !== undefined).length);
  assert.equal(rendered.unmapped.doc_count, docs.length);
});

test('filters nested under terms see each bucket`s docs', () => {
  const rendered = aggregate({ colors: { terms: { field: 'color' }, aggs: { big: { filter: { range: { size: { gte: 6 } } } } } } });
  for (const bucket of rendered.colors.buckets) {
    const expected = docs.filter((doc) => doc.source.color === bucket.key && (doc.source.size as number) >= 6).length;
    assert.equal(bucket.big.doc_count, expected, bucket.key);
  }
});

test('bad filter and filters requests are parse errors', () => {
  assert.throws(() => parseAggregations({ f: { filter: { bogus: {} } } }, fields), EngineError);
  assert.throws(() => parseAggregations({ f: { filters: { filters: [] } } }, fields), EngineError);
  assert.throws(() => parseAggregations({ f: { filters: { filters: 'x' } } }, fields), EngineError);
  assert.throws(() => parseAggregations({ f: { filters: { filters: [{ match_all: {} }], bogus: 1 } } }, fields), EngineError);
  assert.throws(() => parseAggregations({ m: { missing: {} } }, fields), EngineError);
});

test('percentiles read the digest as Elasticsearch does and percentile_ranks invert them', () => {
  const values = Array.from({ length: 5 }, (_, n) => ({ id: `v${n}`, source: { size: n + 1 } }));
  const leaf = [buildLeaf(values, fields)];
  const rendered = aggregate({ p: { percentiles: { field: 'size', percents: [0, 25, 50, 100] } }, r: { percentile_ranks: { field: 'size', values: [3, 10] } } }, leaf);
  // Rank 0.25 × 5 = 1.25 lies within the half unit the value 2 owns (Elasticsearch's MergingDigest answers 2).
  assert.deepEqual(rendered.p, { values: { '0.0': 1, '25.0': 2, '50.0': 3, '100.0': 5 } });
  const sparse = [{ id: 'a', source: { size: 0 } }, { id: 'b', source: { size: 10 } }];
  const between = aggregate({ p: { percentiles: { field: 'size', percents: [50] } } }, [buildLeaf(sparse, fields)]);
  assert.deepEqual(between.p, { values: { '50.0': 10 } }, 'rank 1 of 2 belongs to the second value');
  assert.deepEqual(rendered.r, { values: { '3.0': 50, '10.0': 100 } });
  const list = aggregate({ p: { percentiles: { field: 'size', percents: [50], keyed: false } } }, leaf);
  assert.deepEqual(list.p, { values: [{ key: 50, value: 3 }] });
  const defaults = aggregate({ p: { percentiles: { field: 'nope' } } }, leaf);
  assert.deepEqual(Object.keys(defaults.p.values), ['1.0', '5.0', '25.0', '50.0', '75.0', '95.0', '99.0']);
  assert.equal(defaults.p.values['50.0'], null);
  assert.throws(() => parseAggregations({ p: { percentiles: { field: 'size', percents: [101] } } }, fields), EngineError);
  assert.throws(() => parseAggregations({ p: { percentile_ranks: { field: 'size' } } }, fields), EngineError);
  assert.throws(() => parseAggregations({ p: { percentiles: { field: 'color' } } }, fields), EngineError);
  assert.throws(() => parseAggregations({ p: { percentiles: { field: 'size', hdr: { number_of_significant_value_digits: 9 } } } }, fields), EngineError);
});

test('percentiles of a large merged digest stay close to the exact quantiles', () => {
  const many = Array.from({ length: 20_000 }, (_, n) => ({ id: `m${n}`, source: { price: (n * 7919) % 20_000 } }));
  const shards = dealDocs(many, 3).map((group, index) => [buildLeaf(group, fields, index)]);
  const aggs = { p: { percentiles: { field: 'price', percents: [1, 50, 99] } } };
  const partials = shards.map((shard) => executeQuery(shard, fields, { from: 0, size: 0, aggs }).aggs!);
  const merged = mergeAggregations(JSON.parse(JSON.stringify(partials)) as AggregationPartials[]);
  assert.ok((merged.p as DigestPartial).means.length < 5_000, 'the digest is compressed');
  const values = renderAggregations(merged, aggs).p as { values: Record<string, number> };
  for (const [percent, exact] of [['1.0', 200], ['50.0', 10_000], ['99.0', 19_800]] as const) {
    assert.ok(Math.abs(values.values[percent]! - exact) < 20_000 * 0.01, `${percent}: ${values.values[percent]}`);
  }
});

test('the new aggregations merged across shards equal the single-shard result', () => {
  const aggs = {
    ext: { extended_stats: { field: 'size' } },
    red: { filter: { term: { color: 'red' } }, aggs: { ext: { extended_stats: { field: 'price' } }, p: { percentiles: { field: 'size' } } } },
    named: { filters: { filters: { red: { term: { color: 'red' } }, big: { range: { size: { gte: 6 } } } }, other_bucket: true }, aggs: { avg: { avg: { field: 'size' } } } },
    nosize: { missing: { field: 'size' }, aggs: { colors: { terms: { field: 'color' } } } },
    colors: { terms: { field: 'color' }, aggs: { nosize: { missing: { field: 'price' } }, r: { percentile_ranks: { field: 'size', values: [2, 8] } } } },
  };
  const query = { bool: { must_not: { term: { color: 'blue' } } } };
  const single = aggregate(aggs, [buildLeaf(docs, fields)], query);
  const shards = dealDocs(docs, 3).map((group, index) => buildLeaves(group, fields, 1 + index));
  const partials = shards.map((shard) => executeQuery(shard, fields, { query, from: 0, size: 0, aggs }).aggs!);
  const merged = renderAggregations(mergeAggregations(JSON.parse(JSON.stringify(partials)) as AggregationPartials[]), aggs);
  assert.deepEqual(merged, single);
  assert.deepEqual(renderAggregations(mergeAggregations(partials), aggs, { typedKeys: true })['tdigest_percentiles#p'], undefined);
  const typed = renderAggregations(mergeAggregations(partials), aggs, { typedKeys: true }) as any;
  assert.ok(typed['filter#red']['tdigest_percentiles#p']);
  assert.ok(typed['extended_stats#ext']);
  assert.ok(typed['filters#named'] && typed['missing#nosize']);
});

test('terms include and exclude arrays keep or drop exact values; the regex and partition forms are 400s', () => {
  const rendered = aggregate({
    kept: { terms: { field: 'color', include: ['red', 'blue', 'nope'], exclude: ['blue'] } },
    dropped: { terms: { field: 'color', exclude: ['red'], min_doc_count: 0 } },
    sizes: { terms: { field: 'size', include: [1, '2'], order: { _key: 'asc' } } },
  });
  const count = (predicate: (doc: CorpusDoc) => boolean): number => docs.filter(predicate).length;
  assert.deepEqual(rendered.kept.buckets, [{ key: 'red', doc_count: count((doc) => doc.source.color === 'red') }]);
  assert.deepEqual(rendered.dropped.buckets.map((bucket: any) => bucket.key).sort(), ['blue', 'green']);
  assert.deepEqual(rendered.sizes.buckets, [
    { key: 1, doc_count: count((doc) => doc.source.size === 1) },
    { key: 2, doc_count: count((doc) => doc.source.size === 2) },
  ]);
  const regex = aggregate({ t: { terms: { field: 'color', include: '(re|gr).*', exclude: 'g[a-z]+n' } }, u: { terms: { field: 'color', include: ['blue'], exclude: 'bl.e' } } });
  assert.deepEqual(regex.t.buckets, [{ key: 'red', doc_count: count((doc) => doc.source.color === 'red') }]);
  assert.deepEqual(regex.u.buckets, []);
  for (const options of [{ include: 'a'.repeat(1001) }, { include: '(a|b' }, { include: { partition: 0, num_partitions: 2 } }]) {
    assert.throws(() => parseAggregations({ t: { terms: { field: 'color', ...options } } }, fields), EngineError);
  }
  assert.throws(() => parseAggregations({ t: { terms: { field: 'size', include: '1.*' } } }, fields), /only be applied to string fields/);
  assert.throws(() => parseAggregations({ t: { terms: { field: 'color', include: [{}] } } }, fields), EngineError);
});

test('date_range formats keys and bounds with `format`, parses bounds in it, and counts `missing`', () => {
  const aggs = {
    months: {
      date_range: {
        field: 'sold',
        format: 'MM-yyyy',
        missing: '01-2023',
        ranges: [{ to: '07-2023' }, { from: '07-2023', to: '2024-01-01' }, { key: 'recent', from: 'now-1d/d' }],
      },
    },
  };
  const rendered = aggregate(aggs).months;
  const july = Date.UTC(2023, 6, 1);
  const sold = (doc: CorpusDoc): number => (doc.source.sold as number | undefined) ?? Date.UTC(2023, 0, 1);
  assert.deepEqual(rendered.buckets[0], { key: '*-07-2023', to: july, to_as_string: '07-2023', doc_count: docs.filter((doc) => sold(doc) < july).length });
  assert.equal(rendered.buckets[1].key, '07-2023-01-2024');
  assert.equal(rendered.buckets[1].doc_count, docs.filter((doc) => sold(doc) >= july).length);
  assert.equal(rendered.buckets[2].key, 'recent');
  assert.equal(rendered.buckets[2].doc_count, 0);
  assert.throws(() => parseAggregations({ d: { date_range: { field: 'sold', format: 'yyyy-QQ', ranges: [{ to: 'now' }] } } }, fields), EngineError);
});
