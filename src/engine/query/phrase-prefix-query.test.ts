import { test } from 'node:test';
import assert from 'node:assert/strict';
import { EngineError } from '../errors.ts';
import { executeQuery, parseQuery } from './execute.ts';
import { buildLeaf, fieldsOf, hitIds, type CorpusDoc } from './test-corpus.fixture.ts';

const fields = fieldsOf({ properties: { title: { type: 'text' }, body: { type: 'text' }, author: { type: 'text', analyzer: 'whitespace' }, year: { type: 'integer' } } });
const docs: CorpusDoc[] = [
  { id: '1', source: { title: 'quick brown fox', body: 'a fox story', author: 'Ann Smith' } },
  { id: '2', source: { title: 'quick brownie recipe', body: 'baking', author: 'Bob Jones' } },
  { id: '3', source: { title: 'the brown quick fox', body: 'quick brown thoughts', author: 'Ann Jones' } },
  { id: '4', source: { title: 'slow blue whale', body: 'ocean quick', year: 2001 } },
];
const leaves = [buildLeaf(docs.slice(0, 2), fields, 0), buildLeaf(docs.slice(2), fields, 1)];

function run(query: unknown): Array<[string, number]> {
  const result = executeQuery(leaves, fields, { query, from: 0, size: 20 });
  return hitIds(leaves, result.hits).map((id, index) => [id, result.hits[index]!.score]);
}

function ids(query: unknown): string[] {
  return run(query).map(([id]) => id).sort();
}

test('match_phrase_prefix: a phrase whose last term is a prefix', () => {
  assert.deepEqual(ids({ match_phrase_prefix: { title: 'quick bro' } }), ['1', '2']);
  assert.deepEqual(ids({ match_phrase_prefix: { title: { query: 'quick bro', max_expansions: 1 } } }), ['1'], 'brown comes before brownie');
  assert.deepEqual(ids({ match_phrase_prefix: { title: { query: 'brown fo', slop: 2 } } }), ['1', '3']);
  assert.deepEqual(ids({ match_phrase_prefix: { title: 'bro' } }), ['1', '2', '3'], 'a prefix alone');
  assert.deepEqual(ids({ match_phrase_prefix: { title: 'quick zz' } }), []);
  const [[, phraseScore]] = run({ match_phrase_prefix: { title: { query: 'quick bro', max_expansions: 1 } } }) as [[string, number]];
  const [[, exact]] = run({ match_phrase: { title: 'quick brown' } }) as [[string, number]];
  assert.ok(Math.abs(phraseScore - exact) < 1e-9, 'one expansion scores like the full phrase');
});

test('match_bool_prefix: terms, then a prefix', () => {
  assert.deepEqual(ids({ match_bool_prefix: { title: 'fox qui' } }), ['1', '2', '3']);
  assert.deepEqual(ids({ match_bool_prefix: { title: { query: 'fox qui', operator: 'and' } } }), ['1', '3']);
  assert.deepEqual(ids({ match_bool_prefix: { title: { query: 'whale fox bro', minimum_should_match: 2 } } }), ['1', '3']);
  assert.deepEqual(ids({ match_bool_prefix: { title: 'brownie' } }), ['2']);
  const scored = new Map(run({ match_bool_prefix: { title: 'xyz bro' } }));
  assert.deepEqual([...new Set(scored.values())], [1], 'the prefix clause scores its boost');
});

test('multi_match types', () => {
  assert.deepEqual(ids({ multi_match: { query: 'quick', fields: ['title', 'body'], type: 'most_fields' } }), ['1', '2', '3', '4']);
  const most = new Map(run({ multi_match: { query: 'quick', fields: ['title', 'body'], type: 'most_fields' } }));
  const title = new Map(run({ match: { title: 'quick' } }));
  const body = new Map(run({ match: { body: 'quick' } }));
  assert.ok(Math.abs(most.get('3')! - (title.get('3')! + body.get('3')!)) < 1e-9, 'most_fields sums the fields');
  assert.deepEqual(ids({ multi_match: { query: 'quick bro', fields: ['title', 'body'], type: 'phrase_prefix' } }), ['1', '2', '3']);
  assert.deepEqual(ids({ multi_match: { query: 'ocean qu', fields: ['title', 'body'], type: 'bool_prefix', operator: 'and' } }), ['4']);
  assert.deepEqual(ids({ multi_match: { query: 'Ann Jones', fields: ['author'], type: 'cross_fields', operator: 'and' } }), ['3']);
  assert.deepEqual(ids({ multi_match: { query: 'fox baking', fields: ['title', 'body'], type: 'cross_fields', operator: 'and' } }), []);
  assert.deepEqual(ids({ multi_match: { query: 'fox story', fields: ['title', 'body'], type: 'cross_fields', operator: 'and' } }), ['1']);
  assert.deepEqual(ids({ multi_match: { query: 'brown ocean', fields: ['title^2', 'body'], type: 'cross_fields', minimum_should_match: '100%' } }), []);
  const blended = run({ multi_match: { query: 'fox', fields: ['title', 'body'], type: 'cross_fields' } });
  assert.deepEqual(blended.map(([id]) => id).sort(), ['1', '3']);
  assert.deepEqual(ids({ multi_match: { query: '2001', fields: ['author', 'year'], type: 'cross_fields' } }), ['4'], 'number fields are matched on their own');
  assert.deepEqual(ids({ multi_match: { query: 'Ann', fields: ['author', 'year'], type: 'cross_fields', lenient: true } }), ['1', '3']);
  assert.throws(() => parseQuery({ multi_match: { query: 'x', type: 'bool_prefix', slop: 1 } }, fields), (error: unknown) => error instanceof EngineError && error.code === 'parsing');
});
