import { test } from 'node:test';
import assert from 'node:assert/strict';
import { EngineError } from '../errors.ts';
import { executeQuery } from '../query/execute.ts';
import { seededRandom } from '../segment/reference-leaf.fixture.ts';
import { buildLeaves, dealDocs, fieldsOf, type CorpusDoc } from '../query/test-corpus.fixture.ts';
import { mergeAggregations } from './aggregation-partials.ts';
import { parseAggregations } from './aggregation-spec.ts';
import { renderAggregations } from './merge.ts';

const fields = fieldsOf({ properties: { color: { type: 'keyword' }, size: { type: 'integer' }, sold: { type: 'date' } } });
const COLORS = ['red', 'green', 'blue', 'black'];
const random = seededRandom(11);
const docs: CorpusDoc[] = Array.from({ length: 300 }, (_, n) => {
  const source: Record<string, unknown> = {};
  if (random() < 0.85) source.color = random() < 0.1 ? [COLORS[n % 4], COLORS[(n + 1) % 4]] : COLORS[Math.floor(random() * 4)];
  if (random() < 0.9) source.size = Math.floor(random() * 20);
  source.sold = Date.UTC(2024, Math.floor(random() * 6), 1 + Math.floor(random() * 28));
  return { id: `d${n}`, source };
});
const single = [buildLeaves(docs, fields, 2)];
const sharded = dealDocs(docs, 3).map((part) => buildLeaves(part, fields, 1));

function aggregate(shards: typeof single, aggs: unknown): any {
  const partials = shards.map((leaves) => executeQuery(leaves, fields, { from: 0, size: 0, aggs }).aggs!);
  return renderAggregations(mergeAggregations(partials), aggs);
}

/** Every bucket by paging with after_key, checked to be the same on 1 and 3 shards. */
function pageAll(composite: Record<string, unknown>): { key: Record<string, unknown>; doc_count: number }[] {
  const all: { key: Record<string, unknown>; doc_count: number }[] = [];
  let after: unknown;
  for (let page = 0; page < 1000; page++) {
    const aggs = { c: { composite: { ...composite, ...(after === undefined ? {} : { after }) } } };
    const one = aggregate(single, aggs);
    assert.deepEqual(aggregate(sharded, aggs), one, '3 shards answer as 1');
    if (one.c.buckets.length === 0) return all;
    all.push(...one.c.buckets);
    after = one.c.after_key;
  }
  throw new Error('paging did not end');
}

test('composite pages through every combination once, in source order', () => {
  const buckets = pageAll({ size: 7, sources: [{ color: { terms: { field: 'color', missing_bucket: true } } }, { size: { histogram: { field: 'size', interval: 5, order: 'desc' } } }] });
  const expected = new Map<string, number>();
  for (const doc of docs) {
    if (doc.source.size === undefined) continue;
    const colors = doc.source.color === undefined ? [null] : [...new Set([doc.source.color].flat())];
    for (const color of colors) {
      const key = JSON.stringify({ color, size: Math.floor((doc.source.size as number) / 5) * 5 });
      expected.set(key, (expected.get(key) ?? 0) + 1);
    }
  }
  assert.deepEqual(new Map(buckets.map((bucket) => [JSON.stringify(bucket.key), bucket.doc_count])), expected);
  assert.equal(buckets.length, expected.size, 'no bucket twice');
  assert.deepEqual(
    buckets.slice(0, 5).map((bucket) => [bucket.key.color, bucket.key.size]),
    [[null, 15], [null, 10], [null, 5], [null, 0], ['black', 15]],
    'the missing bucket first, sizes descending within a color',
  );
});

test('missing_order puts the null key first or last whatever the order', () => {
  const last = pageAll({ size: 50, sources: [{ color: { terms: { field: 'color', missing_bucket: true, missing_order: 'last' } } }] });
  assert.deepEqual(last.map((bucket) => bucket.key.color), ['black', 'blue', 'green', 'red', null]);
  const first = pageAll({ size: 2, sources: [{ color: { terms: { field: 'color', missing_bucket: true, missing_order: 'first', order: 'desc' } } }] });
  assert.deepEqual(first.map((bucket) => bucket.key.color), [null, 'red', 'green', 'blue', 'black']);
  assert.throws(() => parseAggregations({ c: { composite: { sources: [{ c: { terms: { field: 'color', missing_order: 'last' } } }] } } }, fields), EngineError);
});

test('composite date_histogram source with a time zone and format, and sub-aggregations', () => {
  const buckets = pageAll({ size: 4, sources: [{ month: { date_histogram: { field: 'sold', calendar_interval: 'month', time_zone: '-05:00', format: 'yyyy-MM' } } }] });
  assert.equal(buckets.reduce((sum, bucket) => sum + bucket.doc_count, 0), docs.length);
  assert.equal(buckets[0]!.key.month, '2023-12', 'the first of January at midnight UTC is still December at -05:00');
  const withSubs = aggregate(sharded, { c: { composite: { sources: [{ color: { terms: { field: 'color' } } }] }, aggs: { sizes: { max: { field: 'size' } } } } });
  assert.deepEqual(withSubs.c.buckets.map((bucket: any) => bucket.key.color), ['black', 'blue', 'green', 'red']);
  assert.ok(withSubs.c.buckets.every((bucket: any) => typeof bucket.sizes.value === 'number'));
  assert.deepEqual(withSubs.c.after_key, { color: 'red' });
});

test('bad composite requests are 400s', () => {
  const sources = [{ color: { terms: { field: 'color' } } }];
  for (const aggs of [
    { c: { composite: { sources, after: { color: 'red', other: 1 } } } },
    { c: { composite: { sources, after: { colour: 'red' } } } },
    { c: { composite: { sources, after: { color: null } } } },
    { c: { composite: { sources: [{ s: { histogram: { field: 'size', interval: 5 } } }], after: { s: 'big' } } } },
    { c: { composite: { sources: [{ a: { terms: { field: 'color' } } }, { a: { terms: { field: 'size' } } }] } } },
    { c: { composite: { sources: [{ a: { avg: { field: 'size' } } }] } } },
    { c: { composite: { sources: [] } } },
    { t: { terms: { field: 'color' }, aggs: { c: { composite: { sources } } } } },
  ]) {
    assert.throws(() => parseAggregations(aggs, fields), EngineError, JSON.stringify(aggs));
  }
});

test('a document with more key combinations than the bound is a 400, not a silent cut', () => {
  const wide = [{ id: 'w', source: { color: Array.from({ length: 101 }, (_, n) => `c${n}`), size: Array.from({ length: 100 }, (_, n) => n) } }];
  const leaves = buildLeaves(wide, fields, 1);
  const aggs = { c: { composite: { sources: [{ color: { terms: { field: 'color' } } }, { size: { terms: { field: 'size' } } }] } } };
  assert.throws(() => executeQuery(leaves, fields, { from: 0, size: 0, aggs }), (error: unknown) => error instanceof EngineError && /10100 keys/.test(error.message));
});
