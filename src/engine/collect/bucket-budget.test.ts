import { test } from 'node:test';
import assert from 'node:assert/strict';
import { EngineError } from '../errors.ts';
import { executeQuery } from '../query/execute.ts';
import { buildLeaf, fieldsOf, type CorpusDoc } from '../query/test-corpus.fixture.ts';
import { MAX_AGGREGATION_RANGES } from './aggregation-spec.ts';
import { BucketBudget, MAX_BUCKETS } from './bucket-budget.ts';
import { renderAggregations } from './merge.ts';

const fields = fieldsOf({ properties: { n: { type: 'integer' }, color: { type: 'keyword' }, sold: { type: 'date' } } });
const docs: CorpusDoc[] = Array.from({ length: 400 }, (_, index) => ({
  id: String(index),
  source: { n: index, color: `c${index % 100}`, sold: Date.UTC(2000, 0, 1) + index * 86_400_000 },
}));
const leaves = [buildLeaf(docs, fields)];

function tooManyBuckets(error: unknown): boolean {
  return error instanceof EngineError && error.code === 'too_many_buckets' && /^Trying to create too many buckets\. Must be less than or equal to: \[65535\] but was \[\d+\]\..*\[search\.max_buckets\]/.test(error.message);
}

/** Runs the shard phase and renders, as the coordinating node does; returns the milliseconds taken. */
function aggregate(aggs: unknown): number {
  const started = performance.now();
  renderAggregations(executeQuery(leaves, fields, { from: 0, size: 0, aggs }).aggs!, aggs);
  return performance.now() - started;
}

test('the budget counts every bucket and refuses the first past the limit', () => {
  const budget = new BucketBudget();
  budget.consume(MAX_BUCKETS - 1);
  budget.consume(1);
  assert.throws(() => budget.consume(1), tooManyBuckets);
  assert.throws(() => new BucketBudget(10).consume(11), /Must be less than or equal to: \[10\] but was \[11\]/);
});

test('a range aggregation lists at most MAX_AGGREGATION_RANGES ranges', () => {
  const ranges = (count: number): unknown[] => Array.from({ length: count }, (_, index) => ({ from: index, to: index + 1 }));
  assert.throws(
    () => aggregate({ r: { range: { field: 'n', ranges: ranges(100_000) } } }),
    (error: unknown) => error instanceof EngineError && error.code === 'illegal_argument' && /^\[range\] \[ranges\] lists 100000 ranges, at most 1000 are allowed$/.test(error.message),
  );
  assert.throws(() => aggregate({ r: { date_range: { field: 'sold', ranges: ranges(MAX_AGGREGATION_RANGES + 1) } } }), /\[date_range\] \[ranges\] lists 1001 ranges/);
  aggregate({ r: { range: { field: 'n', ranges: ranges(MAX_AGGREGATION_RANGES) } } });
});

test('buckets nested on a shard are counted while the partial is built', () => {
  // 100 colors x 1000 ranges: every range is a bucket of every color, empty or not.
  const ranges = Array.from({ length: 1000 }, (_, index) => ({ from: index }));
  const aggs = { colors: { terms: { field: 'color', size: 100 }, aggs: { r: { range: { field: 'n', ranges } } } } };
  assert.throws(() => executeQuery(leaves, fields, { from: 0, size: 0, aggs }), tooManyBuckets);
  const fewer = { colors: { terms: { field: 'color', size: 60 }, aggs: { r: { range: { field: 'n', ranges } } } } };
  assert.throws(() => executeQuery(leaves, fields, { from: 0, size: 0, aggs: fewer }), tooManyBuckets, 'shard_size (100) colors are built');
  aggregate({ colors: { terms: { field: 'color', size: 10, shard_size: 10 }, aggs: { r: { range: { field: 'n', ranges } } } } });
});

test('the buckets of every aggregation of a request count together, empty histogram buckets included', () => {
  const monthly = (name: string): Record<string, unknown> => ({
    [name]: { date_histogram: { field: 'sold', calendar_interval: 'month', min_doc_count: 0, extended_bounds: { min: '0100-01-01', max: '3000-01-01' } } },
  });
  assert.ok(aggregate(monthly('one')) < 5000, 'one histogram of 34 800 monthly buckets is allowed');
  assert.throws(() => aggregate({ ...monthly('one'), ...monthly('two') }), tooManyBuckets, 'two of them are not');
  const nested = { days: { histogram: { field: 'n', interval: 1 }, aggs: { months: monthly('m').m } } };
  assert.throws(() => aggregate(nested), tooManyBuckets, 'nor 400 buckets with a filled histogram each');
});

test('gap filling stops at the limit instead of building every empty bucket', () => {
  const aggs = { ms: { date_histogram: { field: 'sold', fixed_interval: '1ms', min_doc_count: 0, extended_bounds: { min: '1900-01-01', max: '2100-01-01' } } } };
  const started = performance.now();
  assert.throws(() => aggregate(aggs), tooManyBuckets);
  assert.ok(performance.now() - started < 2000, `took ${performance.now() - started} ms`);
});
