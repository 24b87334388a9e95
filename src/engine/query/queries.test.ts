import { test } from 'node:test';
import assert from 'node:assert/strict';
import { countQuery, executeQuery } from './execute.ts';
import { buildLeaf, fieldsOf, hitIds, type CorpusDoc } from './test-corpus.fixture.ts';

const fields = fieldsOf({
  properties: {
    title: { type: 'text', fields: { keyword: { type: 'keyword' } } },
    body: { type: 'text', analyzer: 'english' },
    tag: { type: 'keyword' },
    price: { type: 'double' },
    count: { type: 'integer' },
    published: { type: 'date' },
    active: { type: 'boolean' },
    popularity: { type: 'long', inplace: true },
    user: { type: 'object', properties: { name: { type: 'keyword' }, age: { type: 'integer' } } },
  },
});

const DAY = 86_400_000;
const now = Date.now();
const docs: CorpusDoc[] = [
  { id: '1', source: { title: 'The quick brown fox', body: 'The foxes are jumping', tag: ['animal', 'fast'], price: 10, count: 3, published: '2020-01-15', active: true, popularity: 100, user: { name: 'ann', age: 30 } } },
  { id: '2', source: { title: 'Lazy brown dog', body: 'Dogs sleep all day', tag: 'animal', price: 25.5, count: 1, published: '2020-02-01T10:00:00Z', active: false, popularity: 10 } },
  { id: '3', source: { title: 'Quick quick quick', body: 'Speed matters', tag: 'fast', price: 99, published: new Date(now - DAY / 2).toISOString(), active: true, user: { name: 'bob' } } },
  { id: '4', source: { title: 'Brown paper bag', tag: ['paper'], count: 7, published: '2019-12-31T23:59:59Z', popularity: 1 } },
  { id: '5', source: { title: ['red fox', 'brown bear'], body: 'Two values', price: 5, active: false, user: { age: 41 } } },
  { id: '6', source: { title: 'Deleted quick fox', tag: 'animal', price: 1 } },
  { id: '7', source: { body: 'no title here', tag: 'Zebra', price: 50, popularity: 1000 } },
];
const leaves = [buildLeaf(docs.slice(0, 4), fields, 0), buildLeaf(docs.slice(4), fields, 1, ['6'])];

function ids(query: unknown, extra: Record<string, unknown> = {}): string[] {
  const result = executeQuery(leaves, fields, { query, from: 0, size: 20, ...extra });
  return hitIds(leaves, result.hits);
}

function sortedIds(query: unknown): string[] {
  return ids(query).sort();
}

function scores(query: unknown): Map<string, number> {
  const result = executeQuery(leaves, fields, { query, from: 0, size: 20 });
  return new Map(hitIds(leaves, result.hits).map((id, index) => [id, result.hits[index]!.score]));
}

test('match_all matches every live doc with the boost as score', () => {
  assert.deepEqual(sortedIds({ match_all: {} }), ['1', '2', '3', '4', '5', '7']);
  assert.deepEqual([...new Set(scores({ match_all: { boost: 2 } }).values())], [2]);
  assert.deepEqual(sortedIds(undefined), ['1', '2', '3', '4', '5', '7']);
});

test('match supports operators, minimum_should_match and analysis', () => {
  assert.deepEqual(sortedIds({ match: { title: 'quick fox' } }), ['1', '3', '5']);
  assert.deepEqual(sortedIds({ match: { title: { query: 'quick fox', operator: 'and' } } }), ['1']);
  assert.deepEqual(sortedIds({ match: { title: { query: 'quick brown fox', minimum_should_match: 2 } } }), ['1', '5']);
  assert.deepEqual(sortedIds({ match: { title: { query: 'quick brown fox', minimum_should_match: '-1' } } }), ['1', '5']);
  assert.deepEqual(sortedIds({ match: { title: { query: 'quick brown fox dog', minimum_should_match: '75%' } } }), ['1']);
  assert.deepEqual(sortedIds({ match: { body: 'fox jumps' } }), ['1'], 'english analyzer stems both sides');
  assert.deepEqual(sortedIds({ match: { body: 'the' } }), [], 'stop words analyse to nothing');
  assert.deepEqual(sortedIds({ match: { body: { query: 'the', zero_terms_query: 'all' } } }).length, 6);
  assert.equal(ids({ match: { title: 'quick' } })[0], '3', 'higher tf scores higher');
});

test('match on keyword, numeric, date and boolean fields compares values', () => {
  assert.deepEqual(sortedIds({ match: { tag: 'animal' } }), ['1', '2']);
  assert.deepEqual(sortedIds({ match: { 'title.keyword': 'Lazy brown dog' } }), ['2']);
  assert.deepEqual(sortedIds({ match: { price: '25.5' } }), ['2']);
  assert.deepEqual(sortedIds({ match: { published: '2020-01-15' } }), ['1']);
  assert.deepEqual(sortedIds({ match: { active: true } }), ['1', '3']);
  assert.deepEqual(sortedIds({ match: { price: { query: 'cheap', lenient: true } } }), []);
  assert.throws(() => ids({ match: { price: 'cheap' } }), /failed to parse \[cheap\]/);
});

test('unknown fields match nothing', () => {
  assert.deepEqual(ids({ match: { nope: 'quick' } }), []);
  assert.deepEqual(ids({ term: { nope: 'x' } }), []);
  assert.deepEqual(ids({ range: { nope: { gte: 1 } } }), []);
  assert.deepEqual(ids({ exists: { field: 'nope' } }), []);
});

test('match_phrase checks positions, slop, and does not cross array values', () => {
  assert.deepEqual(sortedIds({ match_phrase: { title: 'quick brown' } }), ['1']);
  assert.deepEqual(sortedIds({ match_phrase: { title: 'quick fox' } }), []);
  assert.deepEqual(sortedIds({ match_phrase: { title: { query: 'quick fox', slop: 1 } } }), ['1']);
  assert.deepEqual(sortedIds({ match_phrase: { title: { query: 'fox quick', slop: 2 } } }), []);
  assert.deepEqual(sortedIds({ match_phrase: { title: { query: 'fox brown', slop: 3 } } }), ['1']);
  assert.deepEqual(sortedIds({ match_phrase: { title: 'quick quick' } }), ['3']);
  assert.deepEqual(sortedIds({ match_phrase: { title: 'the quick brown fox' } }), ['1']);
  assert.deepEqual(sortedIds({ match_phrase: { title: 'quick brown fox' } }), ['1']);
  assert.deepEqual(sortedIds({ match_phrase: { title: 'quick fox brown' } }), []);
  assert.deepEqual(sortedIds({ match_phrase: { title: 'quick quick quick' } }), ['3']);
  assert.deepEqual(sortedIds({ match_phrase: { title: { query: 'quick quick', slop: 2 } } }), ['3'], 'a repeated term needs two occurrences');
  assert.deepEqual(sortedIds({ match_phrase: { title: 'fox brown' } }), [], 'values of an array are far apart');
  assert.deepEqual(sortedIds({ match_phrase: { title: 'brown bear' } }), ['5']);
  const exact = scores({ match_phrase: { title: 'quick brown' } }).get('1')!;
  const sloppy = scores({ match_phrase: { title: { query: 'quick brown', slop: 2 } } }).get('1')!;
  assert.equal(sloppy, exact, 'an exact occurrence weighs 1 under any slop');
  assert.deepEqual(sortedIds({ match_phrase: { body: 'foxes are jumping' } }), ['1'], 'stop word gaps are kept');
  assert.deepEqual(sortedIds({ match_phrase: { body: 'foxes jumping' } }), []);
});

test('multi_match best_fields takes the best field, most_fields sums, ^ boosts', () => {
  const best = scores({ multi_match: { query: 'brown', fields: ['title', 'body'] } });
  const most = scores({ multi_match: { query: 'fox', fields: ['title', 'body'], type: 'most_fields' } });
  const title = scores({ match: { title: 'fox' } });
  const body = scores({ match: { body: 'fox' } });
  assert.equal(most.get('1'), title.get('1')! + body.get('1')!);
  assert.equal(best.get('2'), scores({ match: { title: 'brown' } }).get('2'));
  const boosted = scores({ multi_match: { query: 'fox', fields: ['title^3', 'body'] } });
  assert.ok(Math.abs(boosted.get('5')! - 3 * title.get('5')!) < 1e-12);
  const tie = scores({ multi_match: { query: 'fox', fields: ['title', 'body'], tie_breaker: 0.5 } });
  const top = Math.max(title.get('1')!, body.get('1')!);
  const other = Math.min(title.get('1')!, body.get('1')!);
  assert.ok(Math.abs(tie.get('1')! - (top + 0.5 * other)) < 1e-12);
  assert.deepEqual(sortedIds({ multi_match: { query: 'bag', fields: ['ti*'] } }), ['4']);
  assert.deepEqual(sortedIds({ multi_match: { query: 'quick brown', fields: ['title'], type: 'phrase' } }), ['1']);
});

test('simple_query_string operators, phrases, prefixes and groups', () => {
  assert.deepEqual(sortedIds({ simple_query_string: { query: 'quick fox', fields: ['title'] } }), ['1', '3', '5']);
  assert.deepEqual(sortedIds({ simple_query_string: { query: 'quick +fox', fields: ['title'] } }), ['1']);
  assert.deepEqual(sortedIds({ simple_query_string: { query: 'quick fox', fields: ['title'], default_operator: 'and' } }), ['1']);
  assert.deepEqual(sortedIds({ simple_query_string: { query: 'brown -fox', fields: ['title'], default_operator: 'and' } }), ['2', '4']);
  assert.deepEqual(sortedIds({ simple_query_string: { query: '"fox brown"', fields: ['title'] } }), []);
  assert.deepEqual(sortedIds({ simple_query_string: { query: '"fox brown"~3', fields: ['title'] } }), ['1']);
  assert.deepEqual(sortedIds({ simple_query_string: { query: '"quick brown"', fields: ['title'] } }), ['1']);
  assert.deepEqual(sortedIds({ simple_query_string: { query: 'pap*', fields: ['title'] } }), ['4']);
  assert.deepEqual(sortedIds({ simple_query_string: { query: '(lazy | paper) +brown', fields: ['title'] } }), ['2', '4']);
  assert.deepEqual(sortedIds({ simple_query_string: { query: 'dog', fields: ['title', 'body'] } }), ['2']);
  assert.deepEqual(sortedIds({ simple_query_string: { query: 'zebra', fields: ['tag'] } }), []);
  assert.deepEqual(sortedIds({ simple_query_string: { query: 'Zebra' } }), ['7'], 'default fields are all text and keyword fields');
  assert.deepEqual(sortedIds({ simple_query_string: { query: '+-|()' } }), []);
});

test('term and terms match exact values on every field type', () => {
  assert.deepEqual(sortedIds({ term: { title: 'quick' } }), ['1', '3']);
  assert.deepEqual(sortedIds({ term: { title: 'Quick' } }), [], 'term queries are not analysed');
  assert.deepEqual(sortedIds({ term: { tag: { value: 'fast', boost: 2 } } }), ['1', '3']);
  assert.deepEqual(sortedIds({ term: { count: 7 } }), ['4']);
  assert.deepEqual(sortedIds({ term: { published: '2020-02-01T10:00:00Z' } }), ['2']);
  assert.deepEqual(sortedIds({ term: { active: 'false' } }), ['2', '5']);
  assert.deepEqual(sortedIds({ term: { 'user.name': 'bob' } }), ['3']);
  assert.deepEqual(sortedIds({ terms: { tag: ['paper', 'Zebra', 'none'] } }), ['4', '7']);
  assert.deepEqual(sortedIds({ terms: { price: [10, '99', 3] } }), ['1', '3']);
  assert.deepEqual([...new Set(scores({ terms: { tag: ['fast'], boost: 3 } }).values())], [3]);
});

test('range on numbers, dates with date math, keywords and text', () => {
  assert.deepEqual(sortedIds({ range: { price: { gt: 5, lte: 50 } } }), ['1', '2', '7']);
  assert.deepEqual(sortedIds({ range: { price: { gte: 5, lt: 25.5 } } }), ['1', '5']);
  assert.deepEqual(sortedIds({ range: { count: { from: 1, to: 3, include_upper: false } } }), ['2']);
  assert.deepEqual(sortedIds({ range: { published: { gte: '2020-01-01', lt: '2020-02-01' } } }), ['1']);
  assert.deepEqual(sortedIds({ range: { published: { lte: '2020-02-01' } } }), ['1', '2', '4'], 'lte rounds a date up to its end');
  assert.deepEqual(sortedIds({ range: { published: { gt: '2020-01-15' } } }), ['2', '3'], 'gt rounds a date up to its end');
  assert.deepEqual(sortedIds({ range: { published: { gte: 'now-1d' } } }), ['3']);
  assert.deepEqual(sortedIds({ range: { published: { lt: '2020-01-01||+1M/M' } } }), ['1', '4']);
  assert.deepEqual(sortedIds({ range: { published: { gte: 1577836800000 } } }), ['1', '2', '3']);
  assert.deepEqual(sortedIds({ range: { tag: { gte: 'b', lt: 'paper' } } }), ['1', '3']);
  assert.deepEqual(sortedIds({ range: { tag: { gt: 'animal', lte: 'paper' } } }), ['1', '3', '4']);
  assert.deepEqual(sortedIds({ range: { title: { gte: 'r', lt: 's' } } }), ['5']);
  assert.deepEqual(sortedIds({ range: { active: { gte: true } } }), ['1', '3']);
});

test('exists, ids and prefix', () => {
  assert.deepEqual(sortedIds({ exists: { field: 'title' } }), ['1', '2', '3', '4', '5']);
  assert.deepEqual(sortedIds({ exists: { field: 'count' } }), ['1', '2', '4']);
  assert.deepEqual(sortedIds({ exists: { field: 'tag' } }), ['1', '2', '3', '4', '7']);
  assert.deepEqual(sortedIds({ exists: { field: 'user' } }), ['1', '3', '5']);
  assert.deepEqual(sortedIds({ ids: { values: ['3', '6', '7', 'missing'] } }), ['3', '7']);
  assert.deepEqual(sortedIds({ prefix: { title: 'qui' } }), ['1', '3']);
  assert.deepEqual(sortedIds({ prefix: { title: 'QUI' } }), ['1', '3'], 'text prefixes are normalised');
  assert.deepEqual(sortedIds({ prefix: { tag: { value: 'an' } } }), ['1', '2']);
  assert.deepEqual(sortedIds({ prefix: { tag: 'z' } }), [], 'keyword prefixes are case sensitive');
});

test('bool combines clauses with ES semantics', () => {
  const all = ['1', '2', '3', '4', '5', '7'];
  assert.deepEqual(sortedIds({ bool: {} }), all);
  assert.deepEqual([...new Set(scores({ bool: {} }).values())], [1]);
  assert.deepEqual(sortedIds({ bool: { must_not: { term: { tag: 'animal' } } } }), ['3', '4', '5', '7']);
  assert.deepEqual([...new Set(scores({ bool: { must_not: { term: { tag: 'animal' } } } }).values())], [0]);
  assert.deepEqual(sortedIds({ bool: { should: [{ term: { tag: 'fast' } }, { term: { tag: 'paper' } }] } }), ['1', '3', '4']);
  assert.deepEqual(sortedIds({ bool: { filter: { term: { tag: 'fast' } }, should: { term: { title: 'fox' } } } }), ['1', '3']);
  const filtered = scores({ bool: { filter: { term: { tag: 'fast' } }, should: { term: { title: 'fox' } } } });
  assert.equal(filtered.get('3'), 0, 'filter clauses do not score');
  assert.ok(filtered.get('1')! > 0);
  assert.deepEqual(
    sortedIds({ bool: { should: [{ term: { tag: 'fast' } }, { term: { tag: 'animal' } }, { term: { title: 'fox' } }], minimum_should_match: 2 } }),
    ['1'],
  );
  assert.deepEqual(sortedIds({ bool: { must: { match: { title: 'brown' } }, must_not: [{ term: { tag: 'paper' } }, { term: { price: 5 } }] } }), ['1', '2']);
  assert.deepEqual(sortedIds({ bool: { should: [{ term: { tag: 'x' } }], minimum_should_match: 2 } }), []);
  const mustScore = scores({ bool: { must: { term: { title: 'fox' } }, should: { term: { tag: 'fast' } } } });
  const foxOnly = scores({ term: { title: 'fox' } });
  const fastOnly = scores({ term: { tag: 'fast' } });
  assert.equal(mustScore.get('1'), foxOnly.get('1')! + fastOnly.get('1')!);
  assert.equal(mustScore.get('5'), foxOnly.get('5'));
});

test('constant_score and dis_max', () => {
  assert.deepEqual([...scores({ constant_score: { filter: { match: { title: 'brown' } }, boost: 1.5 } }).values()], [1.5, 1.5, 1.5, 1.5]);
  const disMax = scores({ dis_max: { queries: [{ term: { title: 'fox' } }, { term: { tag: 'fast' } }], tie_breaker: 0.1 } });
  const fox = scores({ term: { title: 'fox' } }).get('1')!;
  const fast = scores({ term: { tag: 'fast' } }).get('1')!;
  assert.ok(Math.abs(disMax.get('1')! - (Math.max(fox, fast) + 0.1 * Math.min(fox, fast))) < 1e-12);
});

test('function_score with field_value_factor, weights, filters and modes', () => {
  const factor = scores({ function_score: { field_value_factor: { field: 'popularity', modifier: 'log1p', missing: 0 }, boost_mode: 'replace' } });
  assert.ok(Math.abs(factor.get('7')! - Math.log10(1001)) < 1e-12);
  assert.equal(factor.get('3'), 0, 'missing popularity counts as 0');
  assert.equal(ids({ function_score: { field_value_factor: { field: 'popularity', missing: 0 }, boost_mode: 'replace' } })[0], '7');
  const multiplied = scores({ function_score: { query: { term: { title: 'brown' } }, field_value_factor: { field: 'popularity', factor: 2, missing: 1 } } });
  const brown = scores({ term: { title: 'brown' } });
  assert.ok(Math.abs(multiplied.get('1')! - brown.get('1')! * 200) < 1e-9);
  assert.throws(() => ids({ function_score: { field_value_factor: { field: 'popularity' } } }), /Missing value for field \[popularity\]/);
  const functions = scores({
    function_score: {
      query: { match_all: {} },
      functions: [
        { filter: { term: { tag: 'animal' } }, weight: 3 },
        { filter: { term: { tag: 'fast' } }, weight: 5 },
      ],
      score_mode: 'sum',
      boost_mode: 'replace',
      min_score: 2,
    },
  });
  assert.deepEqual(new Map([...functions].sort()), new Map([['1', 8], ['2', 3], ['3', 5]]));
  const averaged = scores({
    function_score: {
      functions: [{ weight: 2 }, { filter: { term: { tag: 'fast' } }, field_value_factor: { field: 'price' }, weight: 4 }],
      score_mode: 'avg',
      boost_mode: 'sum',
      max_boost: 100,
      boost: 2,
    },
  });
  // avg is weighted: sum of weighted values / sum of weights, so a lone weight averages to 1.
  assert.equal(averaged.get('4'), (1 + 1) * 2);
  assert.equal(averaged.get('1'), (1 + Math.min(100, (2 + 10 * 4) / 6)) * 2);
});

test('count matches the search total, skipping deleted docs', () => {
  for (const query of [undefined, { match: { title: 'quick fox' } }, { range: { price: { gte: 1 } } }, { bool: { must_not: { term: { tag: 'x' } } } }]) {
    const search = executeQuery(leaves, fields, { query, from: 0, size: 0, trackTotalHits: true });
    assert.equal(countQuery(leaves, fields, query), search.total.value);
  }
  assert.equal(countQuery(leaves, fields, { term: { tag: 'animal' } }), 2);
});

test('inplace column updates are visible to the next search', () => {
  const local = [buildLeaf(docs, fields)];
  const query = { range: { popularity: { gte: 500 } } };
  assert.deepEqual(hitIds(local, executeQuery(local, fields, { query, from: 0, size: 10 }).hits), ['7']);
  local[0]!.inplaceColumn('popularity')!.set(local[0]!.lookupId('4'), 600);
  assert.deepEqual(hitIds(local, executeQuery(local, fields, { query, from: 0, size: 10 }).hits).sort(), ['4', '7']);
});

test('a timeout stops collection and flags the result', () => {
  const many = Array.from({ length: 3000 }, (_, n) => ({ id: `m${n}`, source: { title: `quick ${n}` } }));
  const local = [buildLeaf(many, fields)];
  // Two terms, so the leaf cannot be counted up front from docFreq.
  const query = { match: { title: 'quick fox' } };
  const result = executeQuery(local, fields, { query, from: 0, size: 5, timeoutMs: -1, trackTotalHits: true });
  assert.equal(result.timedOut, true);
  assert.ok(result.total.value < 3000);
  const full = executeQuery(local, fields, { query, from: 0, size: 5, trackTotalHits: true });
  assert.equal(full.timedOut, false);
  assert.equal(full.total.value, 3000);
});
