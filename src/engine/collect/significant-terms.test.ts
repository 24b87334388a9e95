import { test } from 'node:test';
import assert from 'node:assert/strict';
import { EngineError } from '../errors.ts';
import { executeQuery } from '../query/execute.ts';
import { buildLeaves, fieldsOf, type CorpusDoc } from '../query/test-corpus.fixture.ts';
import { mergeAggregations } from './aggregation-partials.ts';
import { parseAggregations } from './aggregation-spec.ts';
import { renderAggregations } from './merge.ts';
import { jlhScore, significanceScore } from './significance-heuristics.ts';

const fields = fieldsOf({ properties: { force: { type: 'keyword' }, crime: { type: 'keyword' }, year: { type: 'integer' } } });
/** Every shard holds the same mix: bike theft is common in the transport force only. */
function shardDocs(shard: number): CorpusDoc[] {
  const docs: CorpusDoc[] = [];
  const add = (force: string, crime: string, count: number): void => {
    for (let i = 0; i < count; i++) docs.push({ id: `s${shard}-${docs.length}`, source: { force, crime, year: 2020 + (i % 3) } });
  };
  add('transport', 'bike theft', 6);
  add('transport', 'assault', 2);
  add('city', 'bike theft', 2);
  add('city', 'assault', 20);
  add('city', 'burglary', 10);
  return docs;
}
const three = [0, 1, 2].map((shard) => buildLeaves(shardDocs(shard), fields, 2));
const one = [buildLeaves([0, 1, 2].flatMap(shardDocs), fields, 3)];

function aggregate(shards: typeof one, aggs: unknown, query?: unknown): any {
  return renderAggregations(mergeAggregations(shards.map((leaves) => executeQuery(leaves, fields, { query, from: 0, size: 0, aggs }).aggs!)), aggs);
}

test('significant_terms scores the foreground against the whole collection with JLH', () => {
  const aggs = { forces: { terms: { field: 'force' }, aggs: { unusual: { significant_terms: { field: 'crime' } } } } };
  const single = aggregate(one, aggs);
  assert.deepEqual(aggregate(three, aggs), single, '3 shards answer as 1');
  const transport = single.forces.buckets.find((bucket: any) => bucket.key === 'transport');
  // Foreground 24 docs (18 bike thefts), background 120 docs (24 bike thefts); assault is less frequent than overall.
  assert.deepEqual(transport.unusual, {
    doc_count: 24,
    bg_count: 120,
    buckets: [{ key: 'bike theft', doc_count: 18, score: jlhScore(18, 24, 24, 120), bg_count: 24 }],
  });
  const city = single.forces.buckets.find((bucket: any) => bucket.key === 'city');
  assert.deepEqual(city.unusual.buckets.map((bucket: any) => bucket.key), ['assault', 'burglary']);
  // With a query the foreground is its matches; min_doc_count drops rare terms.
  const queried = aggregate(one, { unusual: { significant_terms: { field: 'crime', min_doc_count: 40 } } }, { term: { force: 'city' } });
  assert.deepEqual(queried.unusual.buckets.map((bucket: any) => bucket.key), ['assault']);
  const numeric = aggregate(one, { years: { significant_terms: { field: 'year', min_doc_count: 1 } } }, { term: { crime: 'burglary' } });
  assert.ok(numeric.years.buckets.every((bucket: any) => typeof bucket.key === 'number' && bucket.score > 0));
});

test('significant_terms scores with each heuristic, on one shard as on three', () => {
  // Transport: 18 of its 24 docs are bike thefts, against 24 of the 120 docs of the collection.
  // Expected values computed by hand from the 2x2 table (18, 6 | 6, 90) over the 96 docs outside the foreground.
  const expected: Array<[string, unknown, number]> = [
    ['percentage', {}, 0.75],
    ['chi_square', {}, 56.71875],
    ['mutual_information', {}, 0.2898404167019246],
    ['gnd', {}, 0.8363175264674338],
  ];
  for (const [name, options, score] of expected) {
    const aggs = { unusual: { significant_terms: { field: 'crime', [name]: options } } };
    const single = aggregate(one, aggs, { term: { force: 'transport' } });
    assert.deepEqual(aggregate(three, aggs, { term: { force: 'transport' } }), single, `${name}: 3 shards answer as 1`);
    const [top, ...rest] = single.unusual.buckets;
    assert.equal(top.key, 'bike theft', name);
    assert.ok(Math.abs(top.score - score) < 1e-9, `${name}: ${top.score} vs ${score}`);
    if (name === 'chi_square' || name === 'mutual_information') assert.deepEqual(rest, [], `${name}: assault, rarer in the foreground, scores nothing`);
  }
  // include_negatives keeps a term that is rarer in the foreground; background_is_superset false reads the background as the docs outside it.
  const negatives = aggregate(one, { unusual: { significant_terms: { field: 'crime', mutual_information: { include_negatives: true } } } }, { term: { force: 'transport' } });
  assert.deepEqual(negatives.unusual.buckets.map((bucket: any) => bucket.key), ['bike theft', 'assault']);
  const disjoint = aggregate(one, { unusual: { significant_terms: { field: 'crime', chi_square: { background_is_superset: false } } } }, { term: { force: 'transport' } });
  assert.ok(Math.abs(disjoint.unusual.buckets[0].score - significanceScore({ kind: 'chi_square', includeNegatives: false, backgroundIsSuperset: true }, 18, 24, 42, 144)) < 1e-9);
  assert.equal(significanceScore({ kind: 'jlh' }, 18, 24, 24, 120), jlhScore(18, 24, 24, 120));
});

test('significant_terms with a background_filter compares against the docs it matches', () => {
  const aggs = { unusual: { significant_terms: { field: 'crime', background_filter: { term: { force: 'city' } } } } };
  const single = aggregate(one, aggs, { term: { force: 'transport' } });
  assert.deepEqual(aggregate(three, aggs, { term: { force: 'transport' } }), single, '3 shards answer as 1');
  // Background: the 96 city docs, 6 of them bike thefts; foreground: 24 transport docs, 18 bike thefts.
  assert.deepEqual(single.unusual, { doc_count: 24, bg_count: 96, buckets: [{ key: 'bike theft', doc_count: 18, score: jlhScore(18, 24, 6, 96), bg_count: 6 }] });
  const numeric = aggregate(one, { years: { significant_terms: { field: 'year', min_doc_count: 1, background_filter: { range: { year: { lte: 2021 } } } } } });
  // Per shard 11 of the 40 docs are of 2022 (every third doc of each group, from its third).
  assert.equal(numeric.years.bg_count, 87, 'the background counts the docs of 2020 and 2021 only');
});

test('significant_terms refuses what it does not support', () => {
  for (const aggs of [
    { s: { significant_terms: { field: 'crime', chi_square: {}, gnd: {} } } },
    { s: { significant_terms: { field: 'crime', chi_square: { include_negatives: 'yes' } } } },
    { s: { significant_terms: { field: 'crime', gnd: { include_negatives: true } } } },
    { s: { significant_terms: { field: 'crime', script_heuristic: { script: 'x' } } } },
    { s: { significant_terms: { field: 'crime', background_filter: { nope: {} } } } },
    { s: { significant_terms: { field: 'crime', jlh: { x: 1 } } } },
    { s: { significant_terms: {} } },
  ]) {
    assert.throws(() => parseAggregations(aggs, fields), EngineError, JSON.stringify(aggs));
  }
});
