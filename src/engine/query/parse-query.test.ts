import { test } from 'node:test';
import assert from 'node:assert/strict';
import { EngineError } from '../errors.ts';
import { executeQuery, parseQuery } from './execute.ts';
import { resolveMinimumShouldMatch } from './dsl-reader.ts';
import { buildLeaf, fieldsOf } from './test-corpus.fixture.ts';

const fields = fieldsOf({
  properties: { title: { type: 'text' }, tag: { type: 'keyword' }, price: { type: 'double' }, published: { type: 'date' } },
});

function parsingError(dsl: unknown, pattern: RegExp): void {
  assert.throws(
    () => parseQuery(dsl, fields),
    (error: unknown) => error instanceof EngineError && error.code === 'parsing' && pattern.test(error.message),
    `${JSON.stringify(dsl)} should fail with ${pattern}`,
  );
}

test('malformed queries are parsing errors naming the query and key', () => {
  parsingError({ bogus: {} }, /^unknown query \[bogus\]$/);
  parsingError({ match: { title: { query: 'x', bogus: 1 } } }, /^\[match\] unknown field \[bogus\]$/);
  parsingError({ match: { title: 'x', tag: 'y' } }, /\[match\] query doesn't support multiple fields, found \[title\] and \[tag\]/);
  parsingError({ match: {} }, /\[match\] requires exactly one key/);
  parsingError({ match: { title: {} } }, /\[match\] requires query value/);
  parsingError({ match: { title: { query: ['a'] } } }, /\[match\] \[query\] must be a string, number or boolean/);
  parsingError({ match: { title: { query: 'x', operator: 'xor' } } }, /\[match\] \[operator\] must be one of \[or, and\]/);
  parsingError({ match: { title: { query: 'x', fuzziness: 'MANY' } } }, /invalid fuzziness value: \[MANY\]/);
  parsingError({ match: { title: { query: 'x', minimum_should_match: '7x' } } }, /invalid \[minimum_should_match\]/);
  parsingError({ match: { title: { query: 'x', boost: -1 } } }, /negative \[boost\] are not allowed/);
  parsingError({ match_all: { boost: 'high' } }, /\[boost\] must be a number/);
  parsingError({ match_all: {}, term: {} }, /multiple fields/);
  parsingError('match_all', /\[query\] expected an object/);
  parsingError(null, /\[query\] expected an object, got null/);
  parsingError([], /expected an object, got an array/);
  parsingError({ bool: { must: [{ match_all: {} }, 'x'] } }, /expected an object/);
  parsingError({ bool: { shoud: [] } }, /\[bool\] unknown field \[shoud\]/);
  parsingError({ bool: { should: [{ term: { tag: 'a' } }], minimum_should_match: {} } }, /minimum_should_match/);
  parsingError({ term: { price: 'cheap' } }, /\[term\] failed to parse \[cheap\] as a \[double\] value for field \[price\]/);
  parsingError({ term: { tag: { value: { nested: true } } } }, /must be a string, number or boolean/);
  parsingError({ terms: { tag: 'a' } }, /must be an array/);
  parsingError({ terms: { tag: ['a'], other: ['b'] } }, /exactly one field/);
  parsingError({ range: { price: { gte: 'cheap' } } }, /\[range\] failed to parse \[cheap\]/);
  parsingError({ range: { published: { gte: 'yesterday' } } }, /\[range\] failed to parse \[yesterday\] as a \[date\]/);
  parsingError({ range: { published: { gte: 'now-1x' } } }, /failed to parse/);
  parsingError({ range: { price: { gte: 1, above: 2 } } }, /\[range\] unknown field \[above\]/);
  parsingError({ range: { published: { gte: 'now', time_zone: 'Europe/Atlantis' } } }, /unknown time zone \[Europe\/Atlantis\]/);
  parsingError({ exists: {} }, /\[exists\] must be provided with a \[field\]/);
  parsingError({ ids: { values: 'a' } }, /\[ids\] \[values\] must be an array/);
  parsingError({ prefix: { price: '1' } }, /Can only use prefix queries on keyword and text fields/);
  parsingError({ constant_score: {} }, /requires a 'filter' element/);
  parsingError({ function_score: { field_value_factor: { field: 'price', modifier: 'cube' } } }, /\[modifier\] must be one of/);
  parsingError({ function_score: { functions: [{ filter: { match_all: {} } }] } }, /needs \[field_value_factor\] or \[weight\]/);
  parsingError({ function_score: { boost_mode: 'divide' } }, /\[boost_mode\] must be one of/);
  parsingError({ multi_match: { query: 'x', type: 'bool_prefix', slop: 1 } }, /^\[multi_match\] \[slop\] not allowed for type \[bool_prefix\]$/);
  parsingError({ simple_query_string: { fields: ['title'] } }, /requires query value/);
  parsingError({ dis_max: {} }, /requires 'queries' field/);
});

test('random malformed requests fail only with engine errors', () => {
  const leaves = [buildLeaf([{ id: '1', source: { title: 'quick fox', tag: 'a', price: 3, published: '2020-01-01' } }], fields)];
  let state = 12345;
  const random = (): number => {
    state = (state * 1103515245 + 12345) >>> 0;
    return state / 4294967296;
  };
  const words = ['match', 'term', 'terms', 'range', 'bool', 'must', 'should', 'filter', 'must_not', 'title', 'tag', 'price', 'published', 'query', 'gte', 'lt', 'boost', 'order', 'field', 'terms', 'avg', 'histogram', 'interval', 'ranges', 'size', 'function_score', 'field_value_factor', 'multi_match', 'fields', 'simple_query_string', 'prefix', 'exists', 'ids', 'values', 'slop', 'match_phrase', 'minimum_should_match'];
  const value = (depth: number): unknown => {
    const choice = random();
    if (depth > 4 || choice < 0.3) {
      const scalars = [null, true, -1, 0, 2.5, 1e308, '', 'quick', '75%', 'now-1d', '2020-01-01', '*', '"quick fox"~2', 'asc', NaN];
      return scalars[Math.floor(random() * scalars.length)];
    }
    if (choice < 0.45) return Array.from({ length: Math.floor(random() * 3) }, () => value(depth + 1));
    const object: Record<string, unknown> = {};
    const keys = 1 + Math.floor(random() * 2);
    for (let i = 0; i < keys; i++) object[words[Math.floor(random() * words.length)]!] = value(depth + 1);
    return object;
  };
  const shapes = ['match', 'term', 'range', 'bool', 'function_score', 'multi_match', 'simple_query_string', 'prefix', 'terms', 'match_phrase'];
  let succeeded = 0;
  for (let i = 0; i < 3000; i++) {
    const shape = shapes[i % shapes.length]!;
    const query = random() < 0.8 ? { [shape]: value(1) } : value(0);
    const request = { query, from: 0, size: 5, sort: random() < 0.2 ? value(2) : undefined, aggs: random() < 0.2 ? value(1) : undefined };
    try {
      executeQuery(leaves, fields, request);
      succeeded++;
    } catch (error) {
      assert.ok(error instanceof EngineError, `${JSON.stringify(request)} threw ${String(error)}`);
    }
  }
  assert.ok(succeeded > 20, `only ${succeeded} random requests were valid`);
});

test('absurdly deep nesting is rejected, not a stack overflow', () => {
  let dsl: unknown = { match_all: {} };
  for (let i = 0; i < 200; i++) dsl = { bool: { must: dsl } };
  parsingError(dsl, /nested deeper than/);
});

test('search requests are validated', () => {
  const leaves = [buildLeaf([{ id: '1', source: { title: 'a' } }], fields)];
  const invalid: [Record<string, unknown>, RegExp][] = [
    [{ from: -1, size: 10 }, /\[from\] must be a non-negative integer/],
    [{ from: 0, size: 1.5 }, /\[size\] must be a non-negative integer/],
    [{ from: 9000, size: 2000 }, /Result window is too large/],
    [{ from: 0, size: 10, trackTotalHits: -5 }, /track_total_hits/],
    [{ from: 0, size: 10, sort: 'title' }, /Text fields are not optimised/],
    [{ from: 0, size: 10, sort: 'unknown' }, /No mapping found for \[unknown\] in order to sort on/],
    [{ from: 0, size: 10, sort: [{ price: 'sideways' }] }, /\[order\] must be one of/],
    [{ from: 0, size: 10, sort: ['price'], searchAfter: [1, 2] }, /search_after has 2 value\(s\) but sort has 1/],
    [{ from: 5, size: 10, sort: ['price'], searchAfter: [1] }, /`from` parameter must be set to 0/],
    [{ from: 0, size: 10, aggs: { a: { bogus: {} } } }, /Unknown aggregation type \[bogus\]/],
    [{ from: 0, size: 10, aggs: [], aggregations: {} }, /two aggregation definitions/],
  ];
  for (const [request, pattern] of invalid) {
    assert.throws(
      () => executeQuery(leaves, fields, request as never),
      (error: unknown) => error instanceof EngineError && pattern.test(error.message),
      JSON.stringify(request),
    );
  }
});

test('minimum_should_match specs resolve like Elasticsearch', () => {
  assert.equal(resolveMinimumShouldMatch(2, 5, 'x'), 2);
  assert.equal(resolveMinimumShouldMatch('-2', 5, 'x'), 3);
  assert.equal(resolveMinimumShouldMatch('75%', 3, 'x'), 2);
  assert.equal(resolveMinimumShouldMatch('-25%', 3, 'x'), 3);
  assert.equal(resolveMinimumShouldMatch('3<90%', 3, 'x'), 3);
  assert.equal(resolveMinimumShouldMatch('3<90%', 10, 'x'), 9);
  assert.equal(resolveMinimumShouldMatch('2<-25% 9<-3', 8, 'x'), 6);
  assert.equal(resolveMinimumShouldMatch('2<-25% 9<-3', 12, 'x'), 9);
  assert.equal(resolveMinimumShouldMatch(-10, 3, 'x'), 0);
});

test('the parsed query tree extracts highlight terms of positive clauses only', () => {
  const terms = { terms: new Map<string, Set<string>>(), prefixes: new Map<string, Set<string>>() };
  parseQuery({ bool: { must: { match: { title: 'Quick Foxes' } }, must_not: { term: { title: 'slow' } }, should: { prefix: { tag: 'ab' } } } }, fields).extractTerms(terms);
  assert.deepEqual([...terms.terms.get('title')!], ['quick', 'foxes']);
  assert.deepEqual([...terms.prefixes.get('tag')!], ['ab']);
});
