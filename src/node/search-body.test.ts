import { test } from 'node:test';
import assert from 'node:assert/strict';
import { EngineError } from '../engine/errors.ts';
import { parseCount, parseSearch, parseTimeValue } from './search-body.ts';

function code(expected: string): (error: unknown) => boolean {
  return (error) => error instanceof EngineError && error.code === expected;
}

test('defaults and query-string overrides', () => {
  const parsed = parseSearch(undefined, {}, 0);
  assert.equal(parsed.from, 0);
  assert.equal(parsed.size, 10);
  assert.equal(parsed.timeoutMs, undefined);
  assert.deepEqual(parsed.source, { kind: 'all' });
  const overridden = parseSearch({ size: 5, from: 1, query: { match_all: {} } }, { size: 7, sort: 'year:desc,_id', q: 'dune', timeout: '2s' }, 500);
  assert.equal(overridden.size, 7);
  assert.equal(overridden.from, 1);
  assert.deepEqual(overridden.sort, ['year:desc', '_id']);
  assert.deepEqual(overridden.query, { query_string: { query: 'dune' } });
  const withOptions = parseSearch({}, { q: 'title:dune', qOptions: { df: 'title', defaultOperator: 'AND', lenient: true, analyzeWildcard: true } }, 0);
  assert.deepEqual(withOptions.query, { query_string: { query: 'title:dune', default_field: 'title', default_operator: 'AND', lenient: true, analyze_wildcard: true } });
  assert.equal(overridden.timeoutMs, 2000);
  assert.equal(parseSearch({}, {}, 500).timeoutMs, 500, 'the node default applies');
});

test('result window, negative values and search_after rules', () => {
  assert.throws(() => parseSearch({ from: 9995, size: 10 }, {}, 0), (error: unknown) => code('illegal_argument')(error) && /Result window is too large.*\[10005\]/.test((error as Error).message));
  assert.doesNotThrow(() => parseSearch({ from: 9990, size: 10 }, {}, 0));
  assert.throws(() => parseSearch({ size: -1 }, {}, 0), code('illegal_argument'));
  assert.throws(() => parseSearch({ size: 'ten' }, {}, 0), code('parsing'));
  assert.throws(() => parseSearch({ search_after: [1] }, {}, 0), /requires a \[sort\]/);
  assert.throws(() => parseSearch({ search_after: [1], sort: ['a'], from: 1 }, {}, 0), /must be set to 0/);
  assert.throws(() => parseSearch({ unknown: 1 }, {}, 0), code('parsing'));
  assert.throws(() => parseSearch([], {}, 0), code('parsing'));
  assert.throws(() => parseSearch({ track_total_hits: 'yes' }, {}, 0), code('parsing'));
  assert.equal(parseSearch({ track_total_hits: 100 }, {}, 0).trackTotalHits, 100);
});

test('time values and count bodies', () => {
  assert.equal(parseTimeValue('250ms', 'timeout'), 250);
  assert.equal(parseTimeValue('1m', 'timeout'), 60_000);
  assert.equal(parseTimeValue(40, 'timeout'), 40);
  assert.equal(parseTimeValue('-1', 'timeout'), undefined);
  assert.throws(() => parseTimeValue('soon', 'timeout'), code('parsing'));
  assert.deepEqual(parseCount({ query: { term: { a: 1 } } }, {}), { term: { a: 1 } });
  assert.equal(parseCount(undefined, {}), undefined);
  assert.throws(() => parseCount({ size: 1 }, {}), code('parsing'));
});

test('a time value padded with blanks is parsed in linear time (two \\s* around the unit backtracked quadratically)', () => {
  assert.equal(parseTimeValue('  2 s  ', 'timeout'), 2000);
  const started = performance.now();
  assert.throws(() => parseTimeValue(`1${' '.repeat(200_000)}x`, 'timeout'), code('parsing'));
  assert.throws(() => parseSearch({ timeout: `1${' '.repeat(200_000)}x` }, {}, 0), /failed to parse setting \[timeout\]/);
  assert.ok(performance.now() - started < 1000, `took ${performance.now() - started} ms`);
});

test('_source patterns of the body and of the query string are bounded, naming the parameter', () => {
  assert.throws(() => parseSearch({ _source: 'x'.repeat(100_000) }, {}, 0), (error: unknown) => code('illegal_argument')(error) && /^\[_source\] holds a pattern of 100000 characters/.test((error as Error).message));
  assert.throws(() => parseSearch({}, { sourceIncludes: ['x'.repeat(5000)] }, 0), /\[_source_includes\] holds a pattern/);
  assert.throws(() => parseSearch({}, { source: Array.from({ length: 2000 }, (_, index) => `f${index}`).join(',') }, 0), /\[_source\] has 2000 patterns/);
  assert.deepEqual(parseSearch({ _source: ['*a*a*a*a*a*a*a*b'] }, {}, 0).source, { kind: 'filter', includes: ['*a*a*a*a*a*a*a*b'], excludes: [] });
});
