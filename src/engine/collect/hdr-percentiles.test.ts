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

test('hdr percentiles and ranks: exact to the significant digits, the same on 1 and 3 shards', () => {
  const aggs = {
    p: { percentiles: { field: 'latency', percents: [50, 99, 100], hdr: { number_of_significant_value_digits: 3 } } },
    coarse: { percentiles: { field: 'latency', percents: [50], hdr: { number_of_significant_value_digits: 1 } } },
    r: { percentile_ranks: { field: 'latency', values: [250, 1000, 5000], hdr: {} } },
    kinds: { terms: { field: 'kind' }, aggs: { p: { percentiles: { field: 'latency', percents: [50], hdr: {} } } } },
  };
  const one = aggregate(single, aggs);
  assert.deepEqual(aggregate(sharded, aggs), one);
  // Below 2048, three significant digits keep every whole number apart.
  assert.deepEqual(one.p.values, { '50.0': 500, '99.0': 990, '100.0': 1000 });
  assert.ok(Math.abs(one.coarse.values['50.0'] - 500) / 500 < 0.1, 'one digit: within 10 %');
  assert.deepEqual(one.r.values, { '250.0': 25, '1000.0': 100, '5000.0': 100 });
  assert.ok(one.kinds.buckets.every((bucket: any) => Math.abs(bucket.p.values['50.0'] - 500) <= 1));
  assert.ok(aggregate(single, { p: aggs.p }, true)['hdr_percentiles#p']);
});

test('hdr refuses what it cannot count, and bad options', () => {
  assert.throws(() => aggregate(single, { p: { percentiles: { field: 'ratio', hdr: {} } } }), (error: unknown) => error instanceof EngineError && error.code === 'illegal_argument');
  for (const aggs of [
    { p: { percentiles: { field: 'latency', hdr: { number_of_significant_value_digits: 6 } } } },
    { p: { percentiles: { field: 'latency', hdr: { digits: 2 } } } },
    { p: { percentiles: { field: 'latency', hdr: {}, tdigest: {} } } },
  ]) {
    assert.throws(() => parseAggregations(aggs, fields), EngineError, JSON.stringify(aggs));
  }
});
