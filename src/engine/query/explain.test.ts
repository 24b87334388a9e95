import { test } from 'node:test';
import assert from 'node:assert/strict';
import { executeQuery } from './execute.ts';
import { buildLeaf, fieldsOf, type CorpusDoc } from './test-corpus.fixture.ts';

const fields = fieldsOf({ properties: { title: { type: 'text' }, tag: { type: 'keyword' }, year: { type: 'integer' } } });
const docs: CorpusDoc[] = [
  { id: '1', source: { title: 'quick brown fox', tag: 'a', year: 1 } },
  { id: '2', source: { title: 'quick quick dog', tag: 'b', year: 2 } },
  { id: '3', source: { title: 'slow brown bear and a long title', tag: 'a', year: 3 } },
  { id: '4', source: { title: 'the quack', tag: 'c' } },
];
const leaves = [buildLeaf(docs.slice(0, 2), fields, 0), buildLeaf(docs.slice(2), fields, 1)];

test('explanations equal the scores the search gives, whatever the query', () => {
  const queries: unknown[] = [
    { match: { title: 'quick brown' } },
    { bool: { must: [{ match: { title: 'brown' } }], should: [{ term: { tag: 'a' } }], filter: [{ range: { year: { gte: 1 } } }], boost: 2 } },
    { dis_max: { queries: [{ match: { title: 'quick' } }, { match: { title: 'brown' } }], tie_breaker: 0.4 } },
    { match_phrase: { title: 'brown fox' } },
    { match_phrase: { title: { query: 'quick dog', slop: 2 } } },
    { bool: { should: [{ match_phrase: { title: 'quick dog' } }, { term: { tag: 'b' } }] } },
    { fuzzy: { title: { value: 'quick', fuzziness: 1 } } },
    { function_score: { query: { match: { title: 'quick' } }, field_value_factor: { field: 'year', missing: 1 } } },
    { constant_score: { filter: { term: { tag: 'a' } }, boost: 3 } },
    { query_string: { query: 'title:quick^2 OR tag:c' } },
  ];
  for (const query of queries) {
    const result = executeQuery(leaves, fields, { query, from: 0, size: 10, explain: true });
    assert.ok(result.hits.length > 0, JSON.stringify(query));
    for (const hit of result.hits) {
      assert.ok(hit.explanation !== undefined);
      assert.ok(Math.abs(hit.explanation.value - hit.score) < 1e-9, `${JSON.stringify(query)}: ${hit.explanation.value} vs ${hit.score}`);
    }
  }
});

test('a profile has the query tree with its timings and the collector time', () => {
  const result = executeQuery(leaves, fields, { query: { bool: { should: [{ term: { title: 'quick' } }, { term: { title: 'brown' } }] } }, from: 0, size: 10, profile: true });
  const profile = result.profile!;
  const [root] = profile.query;
  assert.equal(root!.type, 'BooleanQuery');
  assert.equal(root!.description, 'title:quick title:brown');
  assert.deepEqual(root!.children!.map((child) => child.description), ['title:quick', 'title:brown']);
  assert.ok(root!.breakdown.create_weight_count === 1 && root!.breakdown.build_scorer_count >= 2);
  assert.equal(root!.time_in_nanos, Object.entries(root!.breakdown).filter(([key]) => !key.endsWith('_count')).reduce((sum, [, value]) => sum + value, 0));
  assert.ok(profile.collector[0]!.time_in_nanos > 0);
  const plain = executeQuery(leaves, fields, { query: { bool: { should: [{ term: { title: 'quick' } }, { term: { title: 'brown' } }] } }, from: 0, size: 10 });
  assert.deepEqual(plain.hits.map((hit) => hit.score), result.hits.map((hit) => hit.score), 'profiling changes no score');
});

test('a phrase explains its frequency and the idf of each of its terms', () => {
  const [hit] = executeQuery(leaves, fields, { query: { match_phrase: { title: { query: 'quick dog', slop: 1 } } }, from: 0, size: 10, explain: true }).hits;
  const explanation = hit!.explanation!;
  assert.match(explanation.description, /^weight\(title:"quick dog"~1 in 1\)/);
  const [score] = explanation.details;
  const [boost, idf, tf] = score!.details;
  assert.equal(boost!.description, 'boost');
  assert.equal(idf!.description, 'idf, sum of:');
  assert.deepEqual(idf!.details.map((term) => term.details[0]!.description), ['n, number of documents containing term [quick]', 'n, number of documents containing term [dog]']);
  assert.ok(Math.abs(idf!.value - idf!.details[0]!.value - idf!.details[1]!.value) < 1e-12);
  // "quick quick dog": the exact phrase once (the second quick is next to dog).
  assert.equal(tf!.details[0]!.value, 1);
  assert.ok(Math.abs(boost!.value * idf!.value * tf!.value - explanation.value) < 1e-9);
});
