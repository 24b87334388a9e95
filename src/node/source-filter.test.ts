import { test } from 'node:test';
import assert from 'node:assert/strict';
import { EngineError } from '../engine/errors.ts';
import { applySourceFilter, MAX_SOURCE_PATTERN_LENGTH, MAX_SOURCE_PATTERNS, parseSourceFilter, type SourceOptions } from './source-filter.ts';

const DOC = {
  title: 'Dune',
  author: { name: 'Herbert', born: 1920, tags: ['sf'] },
  stats: { views: 10, likes: 2 },
  chapters: [{ name: 'one', pages: 10 }, { name: 'two', pages: 12 }],
};

function filter(source: unknown, includes?: string[], excludes?: string[]): unknown {
  return applySourceFilter(DOC, parseSourceFilter({ source, includes, excludes }));
}

test('true, absent and false', () => {
  assert.deepEqual(filter(undefined), DOC);
  assert.deepEqual(filter(true), DOC);
  assert.equal(filter(false), undefined);
  assert.equal(filter('false'), undefined);
});

test('includes: plain paths, objects, wildcards, arrays of objects', () => {
  assert.deepEqual(filter('title'), { title: 'Dune' });
  assert.deepEqual(filter(['author']), { author: DOC.author });
  assert.deepEqual(filter('author.name,stats.views'), { author: { name: 'Herbert' }, stats: { views: 10 } });
  assert.deepEqual(filter(['stats.*']), { stats: DOC.stats });
  assert.deepEqual(filter(['*.name']), { author: { name: 'Herbert' }, chapters: [{ name: 'one' }, { name: 'two' }] });
  assert.deepEqual(filter(['nothing']), {});
});

test('excludes, alone and with includes; query parameters override the body', () => {
  assert.deepEqual(filter({ excludes: ['author', 'chapters'] }), { title: 'Dune', stats: DOC.stats });
  assert.deepEqual(filter({ includes: ['author', 'stats'], excludes: ['*.born', 'stats.likes'] }), {
    author: { name: 'Herbert', tags: ['sf'] },
    stats: { views: 10 },
  });
  assert.deepEqual(filter({ include: 'title' }), { title: 'Dune' });
  assert.deepEqual(filter(undefined, ['title'], ['title']), {});
  assert.deepEqual(filter(['author'], ['title']), { title: 'Dune' });
});

test('malformed _source values are parsing errors', () => {
  assert.throws(() => parseSourceFilter({ source: { includes: [1] } }), /_source\.includes/);
  assert.throws(() => parseSourceFilter({ source: { other: [] } }), /unknown key \[other\]/);
  assert.throws(() => parseSourceFilter({ source: 12 }), /must be a string/);
});

test('source keys are copied as own keys: __proto__ and constructor stay ordinary fields', () => {
  const stored = JSON.parse('{"__proto__": {"polluted": 1}, "constructor": {"name": "x"}, "title": "t"}') as Record<string, unknown>;
  const kept = applySourceFilter(stored, parseSourceFilter({ source: { excludes: ['title'] } }))!;
  assert.equal(Object.getPrototypeOf(kept), Object.prototype);
  assert.deepEqual(Object.keys(kept), ['__proto__', 'constructor']);
  assert.deepEqual(Object.getOwnPropertyDescriptor(kept, '__proto__')?.value, { polluted: 1 });
  const included = applySourceFilter(stored, parseSourceFilter({ source: '__proto__.polluted' }))!;
  assert.deepEqual(Object.getOwnPropertyDescriptor(included, '__proto__')?.value, { polluted: 1 });
  assert.equal(({} as Record<string, unknown>).polluted, undefined);
});

test('only own includes/excludes keys of a _source object count', () => {
  const options = Object.create({ includes: ['title'] }) as Record<string, unknown>;
  assert.deepEqual(applySourceFilter(DOC, parseSourceFilter({ source: options })), DOC);
});

test('pathological wildcard patterns on a long field name answer at once (a backtracking regex took minutes)', () => {
  const longName = 'a'.repeat(5000);
  const stored = { [longName]: 1, title: 'x' };
  const started = performance.now();
  for (const pattern of ['*a*a*a*a*a*a*a*b', '*a*a*a*a*a*a*a*a*a*a*a*a*b.*']) {
    assert.deepEqual(applySourceFilter(stored, parseSourceFilter({ includes: [pattern] })), {});
    assert.deepEqual(applySourceFilter(stored, parseSourceFilter({ source: { excludes: [pattern] } })), stored);
  }
  assert.deepEqual(applySourceFilter(stored, parseSourceFilter({ source: '*a*a*a*a*a*a*a*a' })), { [longName]: 1 });
  assert.ok(performance.now() - started < 1000, `took ${performance.now() - started} ms`);
});

test('absurd pattern lists are refused with illegal_argument naming the parameter', () => {
  const long = 'x'.repeat(MAX_SOURCE_PATTERN_LENGTH + 1);
  const many = Array.from({ length: MAX_SOURCE_PATTERNS + 1 }, (_, index) => `f${index}`);
  const refused = (options: SourceOptions, name: RegExp): void => {
    assert.throws(() => parseSourceFilter(options), (error: unknown) => error instanceof EngineError && error.code === 'illegal_argument' && name.test(error.message));
  };
  refused({ source: 'x'.repeat(100_000) }, /^\[_source\] holds a pattern of 100000 characters, at most 4096/);
  refused({ source: [long] }, /^\[_source\] holds a pattern/);
  refused({ source: { includes: [long] } }, /^\[_source\.includes\]/);
  refused({ source: { exclude: long } }, /^\[_source\.excludes\]/);
  refused({ includes: [long] }, /^\[_source_includes\]/);
  refused({ excludes: [long] }, /^\[_source_excludes\]/);
  refused({ source: many.join(',') }, /^\[_source\] has 1025 patterns, at most 1024/);
  refused({ excludes: many }, /^\[_source_excludes\] has 1025 patterns/);
  refused({ includes: many.slice(0, 600), excludes: many.slice(600) }, /^\[_source\] has 1025 patterns/);
  assert.equal(parseSourceFilter({ source: ['y'.repeat(MAX_SOURCE_PATTERN_LENGTH), ...many.slice(1, MAX_SOURCE_PATTERNS)] }).kind, 'filter');
});
