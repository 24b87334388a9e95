import { test } from 'node:test';
import assert from 'node:assert/strict';
import { EngineError } from '../errors.ts';
import { executeQuery } from '../query/execute.ts';
import { buildLeaves, dealDocs, fieldsOf, type CorpusDoc } from '../query/test-corpus.fixture.ts';
import { mergeAggregations } from './aggregation-partials.ts';
import { parseAggregations } from './aggregation-spec.ts';
import { renderAggregations } from './merge.ts';

const fields = fieldsOf({ properties: { latency: { type: 'long' }, ratio: { type: 'double' }, kind: { type: 'keyword' } } });
/** Latencies 1..1000 ms, one each; ratio has fractions. */
const docs: CorpusDoc[] = Array.from({ length: 1000 }, (_, n) => ({ id: `r${n}`, source: { latency: n + 1, ratio: (n % 7) / 2 - 1, kind: n % 2 ? 'odd' : 'even' } }));
const single = [buildLeaves(docs, fields, 2)];
const sharded = dealDocs(docs, 3).map((part) => buildLeaves(part, fields, 2));

function aggregate(shards: typeof single, aggs: unknown, typedKeys = false): any {
  return renderAggregations(mergeAggregations(shards.map((leaves) => executeQuery(leaves, fields, { from: 0, size: 0, aggs }).aggs!)), aggs, { typedKeys });
}

test('hdr percentiles and ranks: the values of a double HDR histogram, the same on 1 and 3 shards', () => {
  const aggs = {
    p: { percentiles: { field: 'latency', percents: [50, 99, 100], hdr: { number_of_significant_value_digits: 3 } } },
    coarse: { percentiles: { field: 'latency', percents: [50], hdr: { number_of_significant_value_digits: 1 } } },
    r: { percentile_ranks: { field: 'latency', values: [250, 1000, 5000], hdr: {} } },
    kinds: { terms: { field: 'kind' }, aggs: { p: { percentiles: { field: 'latency', percents: [50], hdr: {} } } } },
  };
  const one = aggregate(single, aggs);
  assert.deepEqual(aggregate(sharded, aggs), one);
  // The highest value of each value's bucket (width 2^m / 1024 for 2^m <= v < 2^(m+1)), to the unit of the smallest value (1 / 1024).
  assert.deepEqual(one.p.values, { '50.0': 500 + 0.25 - 1 / 1024, '99.0': 990 + 0.5 - 1 / 1024, '100.0': 1000 + 0.5 - 1 / 1024 });
  assert.ok(Math.abs(one.coarse.values['50.0'] - 500) / 500 < 0.1, 'one digit: within 10 %');
  assert.deepEqual(one.r.values, { '250.0': 25, '1000.0': 100, '5000.0': 100 });
  assert.ok(one.kinds.buckets.every((bucket: any) => Math.abs(bucket.p.values['50.0'] - 500) <= 1));
  assert.ok(aggregate(single, { p: aggs.p }, true)['hdr_percentiles#p']);
});

test('hdr answers what OpenSearch answers for 1, 51, 101, 151, and takes fractions', () => {
  const small = [buildLeaves([1, 51, 101, 151].map((latency, n) => ({ id: `s${n}`, source: { latency, ratio: latency / 4 } })), fields, 1)];
  const { p, q, r } = aggregate(small, {
    p: { percentiles: { field: 'latency', percents: [0, 1, 25, 50, 75, 95, 99, 100], hdr: { number_of_significant_value_digits: 3 } } },
    q: { percentiles: { field: 'ratio', percents: [50], hdr: {} } },
    r: { percentile_ranks: { field: 'latency', values: [0.5, 51, 52, 151.1, 1000], hdr: {} } },
  });
  assert.deepEqual(p.values, { '0.0': 1, '1.0': 1, '25.0': 1, '50.0': 51.0302734375, '75.0': 101.0615234375, '95.0': 151.1240234375, '99.0': 151.1240234375, '100.0': 151.1240234375 });
  // 12.75 is in the bucket of width 8 / 1024 from 12.75; the unit is that of 0.25 (0.25 / 1024).
  assert.equal(q.values['50.0'], 12.75 + 8 / 1024 - 0.25 / 1024);
  assert.deepEqual(r.values, { '0.5': 0, '51.0': 50, '52.0': 50, '151.1': 100, '1000.0': 100 });
});

test('hdr refuses negative values, and bad options', () => {
  assert.throws(
    () => aggregate(single, { p: { percentiles: { field: 'ratio', hdr: {} } } }),
    (error: unknown) => error instanceof EngineError && error.code === 'illegal_argument' && error.message === 'Negative values are not supported by HDR aggregation',
  );
  for (const aggs of [
    { p: { percentiles: { field: 'latency', hdr: { number_of_significant_value_digits: 6 } } } },
    { p: { percentiles: { field: 'latency', hdr: { digits: 2 } } } },
    { p: { percentiles: { field: 'latency', hdr: {}, tdigest: {} } } },
  ]) {
    assert.throws(() => parseAggregations(aggs, fields), EngineError, JSON.stringify(aggs));
  }
});
