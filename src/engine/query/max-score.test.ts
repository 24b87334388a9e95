import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { LeafReader } from '../segment/leaf-reader.ts';
import { TestLeaf, generateTestDocs, seededRandom } from '../segment/reference-leaf.fixture.ts';
import { executeQuery } from './execute.ts';
import { TEST_LEAF_FIELDS } from './test-corpus.fixture.ts';

/** Two fixture leaves (blocks of 128 postings with real block-max data), some docs deleted. */
function corpus(seed: number, deletedShare = 0.08): TestLeaf[] {
  const random = seededRandom(seed * 31 + 1);
  const docs = generateTestDocs(1600, seed).map((doc) => ({ ...doc, deleted: random() < deletedShare }));
  return [new TestLeaf(docs.slice(0, 1000), [], 'first'), new TestLeaf(docs.slice(1000), [], 'second')];
}

const QUERIES: unknown[] = [
  { match: { body: 'w0' } },
  { match: { body: 'w1 w0' } },
  { match: { body: 'w0 w1 w2 w7 w30' } },
  { match: { body: 'w3 w150 w299' } },
  { match: { title: 'w0 w2' } },
  { multi_match: { query: 'w2 w9', fields: ['body', 'title^3'], type: 'most_fields' } },
  { multi_match: { query: 'w2 w9', fields: ['body', 'title^3'], tie_breaker: 0.3 } },
  { bool: { must: [{ match: { body: 'w0' } }], should: [{ match: { body: 'w1' } }, { match: { title: 'w4' } }] } },
  { bool: { should: [{ match: { body: 'w5 w6' } }, { term: { tag: 'tag3' } }], filter: [{ range: { price: { gte: 20 } } }] } },
  { bool: { should: [{ match: { body: 'w0' } }, { match_phrase: { body: 'w0 w1' } }] } },
  { bool: { should: [{ match: { body: 'w4' } }, { constant_score: { filter: { term: { status: 's1' } }, boost: 0.7 } }] } },
  { match: { body: { query: 'w0 w1 w2', minimum_should_match: 2 } } },
  { match: { body: { query: 'w0 w1', operator: 'and' } } },
  { match_phrase: { body: { query: 'w0 w1', slop: 3 } } },
  { match_phrase: { body: 'w0 w1' } },
  { match_phrase: { body: 'w1 w0 w0' } },
  { match_phrase_prefix: { body: 'w0 w1' } },
];

test('pruned top-k equals exhaustive top-k on random corpora', () => {
  for (const seed of [1, 2, 3]) {
    // Seed 3 has no deletions, so single-term leaves are counted up front from docFreq.
    const leaves = corpus(seed, seed === 3 ? 0 : 0.08);
    for (const query of QUERIES) {
      const windows = seed === 1 ? [[0, 10], [0, 1], [5, 40]] : [[0, 10], [3, 25]];
      for (const [from, size] of windows as [number, number][]) {
        const exhaustive = executeQuery(leaves, TEST_LEAF_FIELDS, { query, from, size, trackTotalHits: true });
        const pruned = executeQuery(leaves, TEST_LEAF_FIELDS, { query, from, size, trackTotalHits: 50 });
        const label = `seed ${seed} ${JSON.stringify(query)} from ${from} size ${size}`;
        assert.deepEqual(pruned.hits, exhaustive.hits, label);
        assert.equal(pruned.maxScore, exhaustive.maxScore, label);
        if (exhaustive.total.value > 50) assert.deepEqual(pruned.total, { value: 50, relation: 'gte' }, label);
        else assert.deepEqual(pruned.total, exhaustive.total, label);
      }
    }
  }
});

test('scoring term-at-a-time and matching doc-at-a-time find the same docs', () => {
  const leaves = corpus(7);
  for (const query of QUERIES) {
    // Sorting by _doc needs no scores, so the weight's own scorer (doc-at-a-time) iterates.
    const byDoc = executeQuery(leaves, TEST_LEAF_FIELDS, { query, from: 0, size: 10_000, sort: '_doc' });
    const byScore = executeQuery(leaves, TEST_LEAF_FIELDS, { query, from: 0, size: 10_000, trackTotalHits: true });
    const key = (hit: { leaf: number; doc: number }): string => `${hit.leaf}:${hit.doc}`;
    assert.deepEqual(byDoc.hits.map(key), byScore.hits.map(key).sort((a, b) => {
      const [leafA, docA] = a.split(':').map(Number) as [number, number];
      const [leafB, docB] = b.split(':').map(Number) as [number, number];
      return leafA - leafB || docA - docB;
    }), JSON.stringify(query));
    assert.deepEqual(byDoc.total, byScore.total);
  }
});

test('min_score with pruning keeps exactly the docs at or above it', () => {
  const leaves = corpus(5);
  const query = { match: { body: 'w0 w1 w2' } };
  const all = executeQuery(leaves, TEST_LEAF_FIELDS, { query, from: 0, size: 10_000, trackTotalHits: true });
  const threshold = all.hits[200]!.score;
  const expected = all.hits.filter((hit) => hit.score >= threshold);
  const exact = executeQuery(leaves, TEST_LEAF_FIELDS, { query, from: 0, size: 10_000, trackTotalHits: true, minScore: threshold });
  assert.deepEqual(exact.hits, expected);
  assert.deepEqual(exact.total, { value: expected.length, relation: 'eq' });
  const pruned = executeQuery(leaves, TEST_LEAF_FIELDS, { query, from: 0, size: 10, trackTotalHits: 20, minScore: threshold });
  assert.deepEqual(pruned.hits, expected.slice(0, 10));
});

/** Counts how many docs get scored (a text term scorer reads one norm per scored doc). */
class CountingLeaf {
  normReads = 0;

  static wrap(leaf: LeafReader, counter: { normReads: number }): LeafReader {
    return new Proxy(leaf, {
      get(target, property, receiver) {
        if (property === 'norm') {
          return (field: string, doc: number) => {
            counter.normReads++;
            return target.norm(field, doc);
          };
        }
        const value = Reflect.get(target, property, receiver) as unknown;
        return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
      },
    });
  }
}

test('once the count is bounded, pruning skips scoring most docs', () => {
  const docs = generateTestDocs(5000, 9);
  const exhaustiveCounter = new CountingLeaf();
  const prunedCounter = new CountingLeaf();
  const query = { match: { body: 'w0 w250' } };
  const exhaustive = executeQuery([CountingLeaf.wrap(new TestLeaf(docs), exhaustiveCounter)], TEST_LEAF_FIELDS, {
    query,
    from: 0,
    size: 10,
    trackTotalHits: true,
  });
  const pruned = executeQuery([CountingLeaf.wrap(new TestLeaf(docs), prunedCounter)], TEST_LEAF_FIELDS, { query, from: 0, size: 10, trackTotalHits: 100 });
  assert.deepEqual(pruned.hits, exhaustive.hits);
  assert.ok(exhaustive.total.value > 2500, 'the query must match many docs');
  assert.ok(
    prunedCounter.normReads < exhaustiveCounter.normReads / 2,
    `pruned scored ${prunedCounter.normReads} docs, exhaustive ${exhaustiveCounter.normReads}`,
  );
});

test('size 0 with a bounded count stops early and reports a lower bound', () => {
  const leaves = corpus(6);
  const result = executeQuery(leaves, TEST_LEAF_FIELDS, { query: { match: { body: 'w0' } }, from: 0, size: 0, trackTotalHits: 10 });
  assert.deepEqual(result.total, { value: 10, relation: 'gte' });
  assert.deepEqual(result.hits, []);
  assert.equal(result.maxScore, null);
});
