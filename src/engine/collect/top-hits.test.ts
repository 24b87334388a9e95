import { test } from 'node:test';
import assert from 'node:assert/strict';
import { EngineError } from '../errors.ts';
import { executeQuery } from '../query/execute.ts';
import { buildLeaves, dealDocs, fieldsOf, type CorpusDoc } from '../query/test-corpus.fixture.ts';
import { mergeAggregations } from './aggregation-partials.ts';
import { parseAggregations } from './aggregation-spec.ts';
import { renderAggregations } from './merge.ts';

const fields = fieldsOf({ properties: { title: { type: 'text' }, genre: { type: 'keyword' }, pages: { type: 'integer' } } });
const docs: CorpusDoc[] = Array.from({ length: 60 }, (_, n) => ({
  id: `b${n}`,
  source: { title: n % 3 === 0 ? 'red fox red' : n % 3 === 1 ? 'red dog' : 'blue cat', genre: ['novel', 'poetry', 'essay'][n % 3 === 0 ? n % 2 : 2], pages: 1000 - n * 7 },
}));
const single = [buildLeaves(docs, fields, 2)];
const sharded = dealDocs(docs, 3).map((part) => buildLeaves(part, fields, 2));

function aggregate(shards: typeof single, aggs: unknown, query?: unknown): any {
  const partials = shards.map((leaves) => executeQuery(leaves, fields, { query, from: 0, size: 0, aggs }).aggs!);
  return renderAggregations(mergeAggregations(partials), aggs);
}

test('top_hits by a sort under terms: the same page from one shard and three', () => {
  const aggs = { genres: { terms: { field: 'genre', order: { _key: 'asc' } }, aggs: { thickest: { top_hits: { sort: [{ pages: 'desc' }], size: 2, from: 1, _source: ['pages'] } } } } };
  const one = aggregate(single, aggs);
  assert.deepEqual(aggregate(sharded, aggs), one);
  for (const bucket of one.genres.buckets) {
    const inGenre = docs.filter((doc) => doc.source.genre === bucket.key).sort((a, b) => (b.source.pages as number) - (a.source.pages as number));
    assert.equal(bucket.thickest.hits.total.value, inGenre.length);
    assert.equal(bucket.thickest.hits.max_score, null, 'no scores when sorted by a field');
    assert.deepEqual(bucket.thickest.hits.hits.map((hit: any) => [hit._id, hit.sort]), inGenre.slice(1, 3).map((doc) => [doc.id, [doc.source.pages]]));
  }
});

test('top_hits by score follows the query', () => {
  const aggs = { best: { top_hits: { size: 3 } } };
  const query = { match: { title: 'red fox' } };
  const one = aggregate(single, aggs, query);
  const three = aggregate(sharded, aggs, query);
  assert.equal(one.best.hits.total.value, 40);
  assert.ok(one.best.hits.max_score > 0);
  assert.ok(one.best.hits.hits.every((hit: any) => hit._source.title === 'red fox red' && hit._score === one.best.hits.max_score));
  // Shards score with their own term statistics (query_then_fetch): the best docs still lead, best first.
  assert.equal(three.best.hits.max_score, Math.max(...three.best.hits.hits.map((hit: any) => hit._score)));
  assert.ok(three.best.hits.hits.every((hit: any) => hit._source.title === 'red fox red'));
  const explicit = aggregate(single, { best: { top_hits: { size: 1, sort: ['_score'] } } }, query);
  assert.deepEqual(explicit.best.hits.hits[0].sort, [explicit.best.hits.max_score]);
});

test('bad top_hits requests are 400s', () => {
  for (const aggs of [
    { t: { top_hits: { size: 101 } } },
    { t: { top_hits: { from: 90, size: 20 } } },
    { t: { top_hits: { sort: [{ title: 'asc' }] } } },
    { t: { top_hits: { script_fields: {} } } },
    { t: { top_hits: {}, aggs: { x: { max: { field: 'pages' } } } } },
    { g: { terms: { field: 'genre', order: { t: 'desc' } }, aggs: { t: { top_hits: {} } } } },
  ]) {
    assert.throws(() => parseAggregations(aggs, fields), EngineError, JSON.stringify(aggs));
  }
});
