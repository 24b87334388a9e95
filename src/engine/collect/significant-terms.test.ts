import { test } from 'node:test';
import assert from 'node:assert/strict';
import { EngineError } from '../errors.ts';
import { executeQuery } from '../query/execute.ts';
import { buildLeaves, fieldsOf, type CorpusDoc } from '../query/test-corpus.fixture.ts';
import { mergeAggregations } from './aggregation-partials.ts';
import { parseAggregations } from './aggregation-spec.ts';
import { renderAggregations } from './merge.ts';
import { jlhScore } from './significant-terms.ts';

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

test('significant_terms refuses what it does not support', () => {
  for (const aggs of [
    { s: { significant_terms: { field: 'crime', chi_square: {} } } },
    { s: { significant_terms: { field: 'crime', background_filter: { term: { force: 'city' } } } } },
    { s: { significant_terms: { field: 'crime', jlh: { x: 1 } } } },
    { s: { significant_terms: {} } },
  ]) {
    assert.throws(() => parseAggregations(aggs, fields), EngineError, JSON.stringify(aggs));
  }
});
