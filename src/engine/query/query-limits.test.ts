import { test } from 'node:test';
import assert from 'node:assert/strict';
import { EngineError } from '../errors.ts';
import { highlight } from './highlight.ts';
import { parseQuery } from './parse-query.ts';
import { MAX_CLAUSE_COUNT, MAX_QUERY_DEPTH } from './query-limits.ts';
import { MAX_TERMS_COUNT } from './parse-term-level.ts';
import { fieldsOf } from './test-corpus.fixture.ts';

const LONG_NAME = 'a'.repeat(5000);
const fields = fieldsOf({
  properties: { title: { type: 'text' }, body: { type: 'text' }, tag: { type: 'keyword' }, n: { type: 'long' }, [LONG_NAME]: { type: 'text' } },
});

function refused(dsl: unknown, code: string, pattern: RegExp): void {
  assert.throws(
    () => parseQuery(dsl, fields),
    (error: unknown) => error instanceof EngineError && error.code === code && pattern.test(error.message),
    `should fail with ${code} ${pattern}`,
  );
}

function words(count: number, prefix = 'w'): string {
  return Array.from({ length: count }, (_, index) => `${prefix}${index}`).join(' ');
}

function termClauses(count: number): unknown[] {
  return Array.from({ length: count }, (_, index) => ({ term: { tag: `t${index}` } }));
}

test('simple_query_string nested deeper than MAX_QUERY_DEPTH is a parsing error, not a stack overflow', () => {
  const tooDeep = /^\[simple_query_string\] query is nested deeper than 64 levels$/;
  refused({ simple_query_string: { query: '(a|'.repeat(25_000) } }, 'parsing', tooDeep);
  refused({ simple_query_string: { query: '('.repeat(100_000) } }, 'parsing', tooDeep);
  refused({ simple_query_string: { query: `${'a | b + '.repeat(200)}c` } }, 'parsing', tooDeep);
  refused({ simple_query_string: { query: `${'('.repeat(MAX_QUERY_DEPTH + 1)}a` } }, 'parsing', tooDeep);
  parseQuery({ simple_query_string: { query: `${'('.repeat(MAX_QUERY_DEPTH - 1)}a | b` } }, fields);
  parseQuery({ simple_query_string: { query: `${'(a | '.repeat(30)}b` } }, fields);
  parseQuery({ simple_query_string: { query: 'a b +c d -e | f "g h"~2 i*' } }, fields);
});

test('compound DSL queries nested deeper than MAX_QUERY_DEPTH are a parsing error', () => {
  for (const wrap of [(inner: unknown) => ({ bool: { filter: [inner] } }), (inner: unknown) => ({ constant_score: { filter: inner } }), (inner: unknown) => ({ dis_max: { queries: [inner] } })]) {
    let dsl: unknown = { match_all: {} };
    for (let level = 0; level < 10_000; level++) dsl = wrap(dsl);
    refused(dsl, 'parsing', /^query is nested deeper than 64 levels$/);
  }
});

test('a query holds at most MAX_CLAUSE_COUNT leaf clauses, counted through nesting and term expansion', () => {
  const tooMany = /^Query contains too many clauses: more than \[1024\].*\[indices\.query\.bool\.max_clause_count\]/;
  refused({ bool: { should: termClauses(10_000) } }, 'illegal_argument', tooMany);
  refused({ bool: { should: termClauses(MAX_CLAUSE_COUNT + 1) } }, 'illegal_argument', tooMany);
  parseQuery({ bool: { should: termClauses(MAX_CLAUSE_COUNT) } }, fields);
  refused({ bool: { must: { bool: { should: termClauses(600) } }, must_not: { bool: { filter: termClauses(600) } } } }, 'illegal_argument', tooMany);
  refused({ match: { title: words(20_000) } }, 'illegal_argument', tooMany);
  refused({ match: { title: words(MAX_CLAUSE_COUNT + 1) } }, 'illegal_argument', tooMany);
  parseQuery({ match: { title: words(MAX_CLAUSE_COUNT) } }, fields);
  refused({ multi_match: { query: words(600), fields: ['title', 'body'] } }, 'illegal_argument', tooMany);
  refused({ simple_query_string: { query: words(1100), fields: ['title'] } }, 'illegal_argument', tooMany);
  refused({ simple_query_string: { query: 'a|'.repeat(25_000) } }, 'illegal_argument', tooMany);
  parseQuery({ bool: { should: [{ terms: { tag: words(MAX_TERMS_COUNT).split(' ') } }, ...termClauses(MAX_CLAUSE_COUNT - 1)] } }, fields);
});

test('terms and ids list at most MAX_TERMS_COUNT values (index.max_terms_count)', () => {
  const values = Array.from({ length: MAX_TERMS_COUNT + 1 }, (_, index) => index);
  refused({ terms: { tag: values } }, 'illegal_argument', /^\[terms\] The number of terms \[65537\] .* maximum of \[65536\] .*\[index\.max_terms_count\]/);
  refused({ terms: { n: values } }, 'illegal_argument', /\[index\.max_terms_count\]/);
  refused({ ids: { values: values.map(String) } }, 'illegal_argument', /^\[ids\] The number of terms \[65537\]/);
});

test('pathological input costs linear time: wildcard field patterns and trailing stars', () => {
  const started = performance.now();
  const pattern = '*a*a*a*a*a*a*a*b';
  assert.equal(parseQuery({ multi_match: { query: 'x', fields: [pattern] } }, fields).constructor.name, 'MatchNoneQuery');
  assert.equal(parseQuery({ simple_query_string: { query: 'x', fields: [pattern, `${pattern}^2`] } }, fields).constructor.name, 'MatchNoneQuery');
  assert.deepEqual(highlight({ [LONG_NAME]: 'x' }, { fields: { [pattern]: {} } }, { match_all: {} }, fields), {});
  parseQuery({ simple_query_string: { query: `${'*'.repeat(200_000)}x*` } }, fields);
  assert.ok(performance.now() - started < 2000, `took ${performance.now() - started} ms`);
});
