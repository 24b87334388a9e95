import { test } from 'node:test';
import assert from 'node:assert/strict';
import { EngineError } from '../errors.ts';
import { countQuery, executeQuery, parseQuery } from './execute.ts';
import { buildLeaf, fieldsOf, hitIds, type CorpusDoc } from './test-corpus.fixture.ts';

const fields = fieldsOf({ properties: { title: { type: 'text' }, tag: { type: 'keyword' } } });
const docs: CorpusDoc[] = [
  { id: '1', source: { title: 'apple pie', tag: 'dessert' } },
  { id: '2', source: { title: 'apple computer', tag: 'tech' } },
  { id: '3', source: { title: 'apple apple tart', tag: 'dessert' } },
  { id: '4', source: { title: 'pear', tag: 'fruit' } },
];
const leaves = [buildLeaf(docs.slice(0, 2), fields, 0), buildLeaf(docs.slice(2), fields, 1)];

function scores(query: unknown): Map<string, number> {
  const result = executeQuery(leaves, fields, { query, from: 0, size: 20 });
  return new Map(hitIds(leaves, result.hits).map((id, index) => [id, result.hits[index]!.score]));
}

function parsingError(query: unknown, message: RegExp): void {
  assert.throws(() => parseQuery(query, fields), (error: unknown) => error instanceof EngineError && error.code === 'parsing' && message.test(error.message));
}

test('boosting demotes the positive docs that match negative', () => {
  const positive = scores({ match: { title: 'apple' } });
  const boosted = scores({ boosting: { positive: { match: { title: 'apple' } }, negative: { term: { tag: 'tech' } }, negative_boost: 0.2 } });
  assert.deepEqual([...boosted.keys()].sort(), ['1', '2', '3']);
  assert.ok(Math.abs(boosted.get('2')! - positive.get('2')! * 0.2) < 1e-12);
  assert.equal(boosted.get('1'), positive.get('1'));
  assert.equal([...boosted.keys()].at(-1), '2', 'the demoted doc ranks last');
  const outer = scores({ boosting: { positive: { match: { title: 'apple' } }, negative: { term: { tag: 'tech' } }, negative_boost: 0.5, boost: 2 } });
  assert.ok(Math.abs(outer.get('2')! - positive.get('2')!) < 1e-12);
  assert.equal(countQuery(leaves, fields, { bool: { filter: { boosting: { positive: { match: { title: 'apple' } }, negative: { term: { tag: 'tech' } }, negative_boost: 0.1 } } } }), 3);
});

test('boosting errors', () => {
  parsingError({ boosting: { negative: { match_all: {} }, negative_boost: 0.1 } }, /\[boosting\] query requires 'positive' query to be set/);
  parsingError({ boosting: { positive: { match_all: {} }, negative_boost: 0.1 } }, /\[boosting\] query requires 'negative' query to be set/);
  parsingError({ boosting: { positive: { match_all: {} }, negative: { match_all: {} } } }, /'negative_boost' to be set to be a positive value/);
  parsingError({ boosting: { positive: { match_all: {} }, negative: { match_all: {} }, negative_boost: -1 } }, /positive value/);
  parsingError({ boosting: { positive: { match_all: {} }, negative: { match_all: {} }, negative_boost: 1, other: 1 } }, /\[boosting\] unknown field \[other\]/);
});

test('dis_max takes the best clause plus tie_breaker times the others', () => {
  const title = scores({ match: { title: 'apple' } });
  const tag = scores({ term: { tag: 'dessert' } });
  const best = scores({ dis_max: { queries: [{ match: { title: 'apple' } }, { term: { tag: 'dessert' } }] } });
  assert.equal(best.get('1'), Math.max(title.get('1')!, tag.get('1')!));
  const tied = scores({ dis_max: { queries: [{ match: { title: 'apple' } }, { term: { tag: 'dessert' } }], tie_breaker: 0.7, boost: 2 } });
  const [high, low] = [Math.max(title.get('1')!, tag.get('1')!), Math.min(title.get('1')!, tag.get('1')!)];
  assert.ok(Math.abs(tied.get('1')! - 2 * (high + 0.7 * low)) < 1e-9);
  assert.deepEqual([...scores({ dis_max: { queries: { term: { tag: 'fruit' } } } }).keys()], ['4'], 'a single object is one clause');
  assert.equal(scores({ dis_max: { queries: [] } }).size, 0);
  parsingError({ dis_max: { queries: [{ match_all: {} }], tie_breaker: 1.5 } }, /\[tie_breaker\] must be in \[0, 1\]/);
  parsingError({ dis_max: { tie_breaker: 0.5 } }, /requires 'queries' field/);
});
