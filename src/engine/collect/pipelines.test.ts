import { test } from 'node:test';
import assert from 'node:assert/strict';
import { EngineError } from '../errors.ts';
import { executeQuery } from '../query/execute.ts';
import { buildLeaves, fieldsOf, type CorpusDoc } from '../query/test-corpus.fixture.ts';
import { parseAggregations } from './aggregation-spec.ts';
import { renderAggregations } from './merge.ts';

const fields = fieldsOf({ properties: { shop: { type: 'keyword' }, price: { type: 'double' }, sold: { type: 'date' } } });

/** Sales in Jan, Feb and Apr 2024 (none in March): price n, shop a or b. */
const docs: CorpusDoc[] = [
  ...[1, 2, 3].map((n) => ({ id: `j${n}`, source: { shop: n % 2 ? 'a' : 'b', price: n, sold: Date.UTC(2024, 0, n) } })),
  ...[10, 20].map((n) => ({ id: `f${n}`, source: { shop: 'a', price: n, sold: Date.UTC(2024, 1, 3) } })),
  ...[5].map((n) => ({ id: `a${n}`, source: { shop: 'b', price: n, sold: Date.UTC(2024, 3, 9) } })),
];
const leaves = buildLeaves(docs, fields, 2);

function aggregate(aggs: unknown, typedKeys = false): any {
  const result = executeQuery(leaves, fields, { from: 0, size: 0, aggs });
  return renderAggregations(result.aggs!, aggs, { typedKeys });
}

const monthly = (aggs: Record<string, unknown>) => ({ months: { date_histogram: { field: 'sold', calendar_interval: 'month' }, aggs: { sales: { sum: { field: 'price' } }, ...aggs } } });

test('derivative and cumulative_sum over a date histogram, with gap policies', () => {
  const { months } = aggregate(
    monthly({
      delta: { derivative: { buckets_path: 'sales' } },
      zeros: { derivative: { buckets_path: 'sales', gap_policy: 'insert_zeros' } },
      perDay: { derivative: { buckets_path: '_count', unit: 'day' } },
      total: { cumulative_sum: { buckets_path: 'sales' } },
    }),
  );
  assert.deepEqual(months.buckets.map((bucket: any) => bucket.sales.value), [6, 30, 0, 5]);
  assert.equal(months.buckets[0].delta, undefined, 'no derivative on the first bucket');
  // March is empty: skipped, so March and April have no value; with insert_zeros it is 0.
  assert.deepEqual(months.buckets.slice(1).map((bucket: any) => bucket.delta.value), [24, null, null]);
  assert.deepEqual(months.buckets.slice(1).map((bucket: any) => bucket.zeros.value), [24, -30, 5]);
  assert.deepEqual(months.buckets.map((bucket: any) => bucket.total.value), [6, 36, 36, 41]);
  // _count is never a gap: 3 → 2 over January's 31 days.
  assert.deepEqual(months.buckets[1].perDay, { value: -1, normalized_value: -1 / 31 });
});

test('sibling bucket metrics and bucket_sort', () => {
  const result = aggregate({
    ...monthly({ top: { bucket_sort: { sort: [{ sales: { order: 'desc' } }], size: 2 } } }),
    best: { max_bucket: { buckets_path: 'months>sales' } },
    worst: { min_bucket: { buckets_path: 'months>sales' } },
    mean: { avg_bucket: { buckets_path: 'months>sales' } },
    all: { sum_bucket: { buckets_path: 'months>_count' } },
    shops: { terms: { field: 'shop' }, aggs: { stats: { stats: { field: 'price' } }, cheap: { bucket_sort: { sort: ['stats.avg'] } } } },
    dearest: { max_bucket: { buckets_path: 'shops>stats.max' } },
  });
  // bucket_sort cuts the months before the sibling pipelines read them (as ES: parents reduce first).
  assert.deepEqual(result.months.buckets.map((bucket: any) => bucket.key_as_string), ['2024-02-01T00:00:00.000Z', '2024-01-01T00:00:00.000Z']);
  assert.deepEqual(result.best, { value: 30, keys: ['2024-02-01T00:00:00.000Z'] });
  assert.deepEqual(result.worst, { value: 6, keys: ['2024-01-01T00:00:00.000Z'] });
  assert.equal(result.mean.value, 18);
  assert.equal(result.all.value, 5);
  assert.deepEqual(result.shops.buckets.map((bucket: any) => bucket.key), ['b', 'a']);
  assert.deepEqual(result.dearest, { value: 20, keys: ['a'] });
});

test('typed_keys names pipeline outputs by their result type', () => {
  const result = aggregate({ ...monthly({ delta: { derivative: { buckets_path: 'sales' } } }), best: { max_bucket: { buckets_path: 'months>sales' } } }, true);
  assert.ok(result['bucket_metric_value#best']);
  assert.ok(result['date_histogram#months'].buckets[1]['derivative#delta']);
});

test('bad pipelines are request validation failures', () => {
  for (const [aggs, message] of [
    [{ best: { max_bucket: { buckets_path: 'nope>sales' } } }, /No aggregation found for path \[nope>sales\]/],
    [{ ...monthly({}), best: { max_bucket: { buckets_path: 'months>nope' } } }, /No aggregation found/],
    [{ ...monthly({}), best: { max_bucket: { buckets_path: 'months' } } }, /number value or a single value numeric metric/],
    [{ s: { sum: { field: 'price' } }, best: { max_bucket: { buckets_path: 's' } } }, /must be a multi-bucket aggregation/],
    [{ shops: { terms: { field: 'shop' }, aggs: { d: { derivative: { buckets_path: '_count' } } } } }, /must have a histogram/],
    [{ d: { derivative: { buckets_path: '_count' } } }, /must have a histogram/],
    [{ ...monthly({ s: { stats: { field: 'price' } }, d: { derivative: { buckets_path: 's' } } }) }, /multi-value/],
  ] as const) {
    assert.throws(
      () => parseAggregations(aggs, fields),
      (error: unknown) => error instanceof EngineError && error.code === 'action_request_validation' && message.test(error.message),
      JSON.stringify(aggs),
    );
  }
  assert.throws(() => parseAggregations({ ...monthly({ d: { derivative: { buckets_path: 'sales', gap_policy: 'sometimes' } } }) }, fields), EngineError);
  assert.throws(() => parseAggregations({ ...monthly({ d: { derivative: {} } }) }, fields), /Required \[buckets_path\]/);
});
