import { test } from 'node:test';
import assert from 'node:assert/strict';
import { EngineError } from '../errors.ts';
import { executeQuery } from './execute.ts';
import { buildLeaf, fieldsOf, hitIds, type CorpusDoc } from './test-corpus.fixture.ts';

const fields = fieldsOf({
  properties: { title: { type: 'text' }, body: { type: 'text' }, tag: { type: 'keyword' }, year: { type: 'integer' }, published: { type: 'date' } },
});
const docs: CorpusDoc[] = [
  { id: '1', source: { title: 'The quick brown fox', body: 'jumps over the lazy dog', tag: 'animal', year: 2001, published: '2001-05-01' } },
  { id: '2', source: { title: 'Quick brown dogs', body: 'sleep all day', tag: 'animal', year: 2010, published: '2010-01-01' } },
  { id: '3', source: { title: 'Lazy afternoon', body: 'the fox is quick', tag: 'time', year: 2020 } },
  { id: '4', source: { title: 'Testing text', body: 'a test of tests', tag: 'C:\\path' } },
  { id: '5', source: { title: 'Brown paper', tag: 'paper' } },
];
const leaves = [buildLeaf(docs.slice(0, 3), fields, 0), buildLeaf(docs.slice(3), fields, 1)];

function ids(query: string, options: Record<string, unknown> = {}): string[] {
  const result = executeQuery(leaves, fields, { query: { query_string: { query, ...options } }, from: 0, size: 20 });
  return hitIds(leaves, result.hits).sort();
}

function ordered(query: string, options: Record<string, unknown> = {}): string[] {
  return hitIds(leaves, executeQuery(leaves, fields, { query: { query_string: { query, ...options } }, from: 0, size: 20 }).hits);
}

function fails(query: string, code: string, pattern: RegExp, options: Record<string, unknown> = {}): void {
  assert.throws(
    () => executeQuery(leaves, fields, { query: { query_string: { query, ...options } }, from: 0, size: 1 }),
    (error: unknown) => error instanceof EngineError && error.code === code && pattern.test(error.message),
    query,
  );
}

test('terms, default fields, default_operator and boolean operators', () => {
  assert.deepEqual(ids('quick'), ['1', '2', '3']);
  assert.deepEqual(ids('quick fox'), ['1', '2', '3']);
  assert.deepEqual(ids('quick fox', { default_operator: 'AND' }), ['1', '3']);
  assert.deepEqual(ids('quick AND fox'), ['1', '3']);
  assert.deepEqual(ids('quick && lazy'), ['1', '3']);
  assert.deepEqual(ids('quick AND NOT lazy'), ['2']);
  assert.deepEqual(ids('+quick -fox'), ['2']);
  assert.deepEqual(ids('!quick'), ['4', '5']);
  assert.deepEqual(ids('NOT quick'), ['4', '5']);
  assert.deepEqual(ids('paper OR afternoon'), ['3', '5']);
  assert.deepEqual(ids('paper || afternoon'), ['3', '5']);
  // Lucene's rule: with AND as default, `OR` makes the clause before it optional: +quick fox paper.
  assert.deepEqual(ids('quick fox OR paper', { default_operator: 'and' }), ['1', '2', '3']);
  assert.deepEqual(ids('(quick OR paper) AND brown'), ['1', '2', '5']);
  assert.deepEqual(ids('ANDROID'), []);
});

test('fields: field:value, field:(a b), patterns, boosts, _exists_', () => {
  assert.deepEqual(ids('title:quick'), ['1', '2']);
  assert.deepEqual(ids('body:(quick lazy)'), ['1', '3']);
  assert.deepEqual(ids('body:(+quick +fox)'), ['3']);
  assert.deepEqual(ids('tag:animal'), ['1', '2']);
  assert.deepEqual(ids('t*:lazy'), ['3']);
  assert.deepEqual(ids('quick', { fields: ['body'] }), ['3']);
  assert.deepEqual(ids('quick', { default_field: 'title' }), ['1', '2']);
  assert.deepEqual(ordered('title:lazy OR body:lazy^5'), ['1', '3']);
  assert.deepEqual(ordered('title:lazy^5 OR body:lazy'), ['3', '1']);
  assert.deepEqual(ordered('lazy', { fields: ['title^10', 'body'] }), ['3', '1']);
  assert.deepEqual(ids('_exists_:year'), ['1', '2', '3']);
  assert.deepEqual(ids('tag:*'), ['1', '2', '3', '4', '5']);
  assert.deepEqual(ids('*:*'), ['1', '2', '3', '4', '5']);
  assert.deepEqual(ids('nosuch:quick'), []);
  assert.deepEqual(ids('year:2010'), ['2']);
});

test('phrases with slop, wildcards, regexps, fuzzy terms, escapes', () => {
  assert.deepEqual(ids('"quick brown"'), ['1', '2']);
  assert.deepEqual(ids('"quick fox"'), []);
  assert.deepEqual(ids('"quick fox"~1'), ['1']);
  assert.deepEqual(ids('"quick fox"', { phrase_slop: 1 }), ['1']);
  assert.deepEqual(ids('te?t*'), ['4']);
  assert.deepEqual(ids('title:Qui*'), ['1', '2']);
  assert.deepEqual(ids('*own'), ['1', '2', '5']);
  assert.deepEqual(ids('/te.t/'), ['4']);
  assert.deepEqual(ids('tag:/an.*/'), ['1', '2']);
  assert.deepEqual(ids('quikc~'), ['1', '2', '3']);
  assert.deepEqual(ids('title:quikc~1'), ['1', '2']);
  assert.deepEqual(ids('title:quack~1', { fuzzy_transpositions: false }), ['1', '2']);
  assert.deepEqual(ids('tag:C\\:\\\\path'), ['4']);
  fails('*own', 'query_shard', /not allowed as first character/, { allow_leading_wildcard: false });
});

test('analyze_wildcard splits a prefix into its tokens', () => {
  assert.deepEqual(ids('title:"quick brown"'), ['1', '2']);
  assert.deepEqual(ids('title:quick-bro*', { analyze_wildcard: true, default_operator: 'and' }), ['1', '2']);
});

test('ranges: [a TO b], {a TO b}, mixed, open ends and comparisons', () => {
  assert.deepEqual(ids('year:[2001 TO 2010]'), ['1', '2']);
  assert.deepEqual(ids('year:{2001 TO 2010]'), ['2']);
  assert.deepEqual(ids('year:{2001 TO *}'), ['2', '3']);
  assert.deepEqual(ids('year:>=2010'), ['2', '3']);
  assert.deepEqual(ids('year:>2010'), ['3']);
  assert.deepEqual(ids('year:<2010'), ['1']);
  assert.deepEqual(ids('year:<=2010'), ['1', '2']);
  assert.deepEqual(ids('published:[2001-01-01 TO 2005-01-01]'), ['1']);
  assert.deepEqual(ids('tag:[a TO q]'), ['1', '2', '5']);
});

test('boosts and minimum_should_match', () => {
  assert.deepEqual(ordered('title:paper OR title:afternoon^4'), ['3', '5']);
  assert.deepEqual(ordered('(title:paper)^4 OR title:afternoon'), ['5', '3']);
  assert.deepEqual(ids('quick lazy paper', { minimum_should_match: 2 }), ['1', '3']);
});

test('lenient: values that do not fit a field (lenient by default when the default field is *, as ES)', () => {
  fails('year:abc', 'parsing', /failed to parse/, { default_field: 'title' });
  fails('year:abc', 'parsing', /failed to parse/, { lenient: false });
  assert.deepEqual(ids('year:abc'), []);
  assert.deepEqual(ids('year:abc', { lenient: true, default_field: 'title' }), []);
  fails('year:abc~1', 'parsing', /Can only use fuzzy queries/, { lenient: false });
  assert.deepEqual(ids('abc'), []);
});

test('syntax errors are query_shard errors; nesting is bounded', () => {
  for (const bad of ['quick AND', 'AND quick', '(quick', 'quick)', '"quick', 'year:[1 TO', 'year:[1 2]', 'title:', 'a OR OR b', 'quick^', 'quick\\']) {
    fails(bad, 'query_shard', /^Failed to parse query \[/);
  }
  fails(`${'('.repeat(100)}a${')'.repeat(100)}`, 'parsing', /nested deeper than 64/);
  fails('a', 'parsing', /cannot use \[fields\] parameter in conjunction with \[default_field\]/, { fields: ['title'], default_field: 'body' });
  fails('a', 'parsing', /\[type\] \[phrase\] is not supported/, { type: 'phrase' });
  assert.deepEqual(ids(''), []);
  const long = Array.from({ length: 2000 }, (_, index) => `w${index}`).join(' ');
  assert.throws(() => executeQuery(leaves, fields, { query: { query_string: { query: long, fields: ['title'] } }, from: 0, size: 1 }), /too many clauses/);
});
