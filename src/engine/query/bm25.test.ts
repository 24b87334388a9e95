import { test } from 'node:test';
import assert from 'node:assert/strict';
import { executeQuery } from './execute.ts';
import { buildLeaf, fieldsOf, hitIds } from './test-corpus.fixture.ts';

const fields = fieldsOf({ properties: { body: { type: 'text' }, tag: { type: 'keyword' } } });
const docs = [
  { id: 'd1', source: { body: 'apple banana', tag: 'red' } },
  { id: 'd2', source: { body: 'apple apple cherry', tag: 'red' } },
  { id: 'd3', source: { body: 'banana cherry cherry date', tag: 'green' } },
];

/** BM25 as ES computes it, written out independently of the implementation. */
function expectedScore(tf: number, docFreq: number, docCount: number, fieldLength: number, avgFieldLength: number, boost = 1): number {
  const idf = Math.log(1 + (docCount - docFreq + 0.5) / (docFreq + 0.5));
  return (boost * idf * 2.2 * tf) / (tf + 1.2 * (1 - 0.75 + (0.75 * fieldLength) / avgFieldLength));
}

function scoresById(leaves: ReturnType<typeof buildLeaf>[], query: unknown): Map<string, number> {
  const result = executeQuery(leaves, fields, { query, from: 0, size: 10 });
  const ids = hitIds(leaves, result.hits);
  return new Map(ids.map((id, index) => [id, result.hits[index]!.score]));
}

function assertClose(actual: number | undefined, expected: number): void {
  assert.ok(actual !== undefined, 'hit missing');
  assert.ok(Math.abs(actual - expected) < 1e-12 * expected, `${actual} != ${expected}`);
}

test('term scores follow the BM25 formula with shard statistics', () => {
  const scores = scoresById([buildLeaf(docs, fields)], { match: { body: 'apple' } });
  // N = 3 docs with the field, 9 tokens, avgdl = 3; "apple" is in 2 docs.
  assertClose(scores.get('d1'), expectedScore(1, 2, 3, 2, 3));
  assertClose(scores.get('d2'), expectedScore(2, 2, 3, 3, 3));
  assert.equal(scores.size, 2);
  // ln(1.6) · 2.2 · 2 / (2 + 1.2) computed by hand.
  assert.ok(Math.abs(scores.get('d2')! - 0.6462549902128865) < 1e-12);
});

test('a disjunction sums its clauses and boosts multiply', () => {
  const scores = scoresById([buildLeaf(docs, fields)], { match: { body: { query: 'apple cherry', boost: 2 } } });
  assertClose(scores.get('d1'), expectedScore(1, 2, 3, 2, 3, 2));
  assertClose(scores.get('d2'), expectedScore(2, 2, 3, 3, 3, 2) + expectedScore(1, 2, 3, 3, 3, 2));
  assertClose(scores.get('d3'), expectedScore(2, 2, 3, 4, 3, 2));
});

test('statistics are summed over leaves and include deleted docs', () => {
  const single = scoresById([buildLeaf(docs, fields)], { match: { body: 'banana cherry' } });
  const split = scoresById([buildLeaf(docs.slice(0, 1), fields, 0), buildLeaf(docs.slice(1), fields, 1)], { match: { body: 'banana cherry' } });
  assert.deepEqual(split, single);
  const withDeleted = scoresById([buildLeaf(docs, fields, 0, ['d2'])], { match: { body: 'apple' } });
  assert.equal(withDeleted.has('d2'), false);
  assertClose(withDeleted.get('d1'), expectedScore(1, 2, 3, 2, 3));
});

test('keyword terms are not length-normalised', () => {
  const scores = scoresById([buildLeaf(docs, fields)], { term: { tag: 'red' } });
  // Keyword: dl = 1; avgdl = 1 (one value per doc).
  assertClose(scores.get('d1'), expectedScore(1, 2, 3, 1, 1));
  assert.equal(scores.get('d1'), scores.get('d2'));
});

test('phrase scores use the phrase frequency and the summed idf', () => {
  const scores = scoresById([buildLeaf(docs, fields)], { match_phrase: { body: 'cherry date' } });
  const idf = Math.log(1 + (3 - 2 + 0.5) / 2.5) + Math.log(1 + (3 - 1 + 0.5) / 1.5);
  const expected = (idf * 2.2 * 1) / (1 + 1.2 * (0.25 + (0.75 * 4) / 3));
  assertClose(scores.get('d3'), expected);
  assert.equal(scores.size, 1);
});

test('scores are deterministic across runs', () => {
  const leaf = buildLeaf(docs, fields);
  const first = executeQuery([leaf], fields, { query: { match: { body: 'apple banana cherry date' } }, from: 0, size: 10 });
  const second = executeQuery([leaf], fields, { query: { match: { body: 'apple banana cherry date' } }, from: 0, size: 10 });
  assert.deepEqual(second, first);
});
