import assert from 'node:assert/strict';
import { afterEach, test } from 'node:test';
import { flatField, type FlatField } from '../mapping/mapping.ts';
import type { LeafReader } from '../segment/leaf-reader.ts';
import { readSource, readSourceAndText } from './source-overlay.ts';

/** A one-doc leaf: the stored source text and the inplace column values by field path (NaN: no value). */
function leafOf(sourceText: string, columns: Record<string, number>): LeafReader {
  return {
    source: () => Buffer.from(sourceText, 'utf8'),
    inplaceColumn: (path: string) => (Object.hasOwn(columns, path) ? { get: () => columns[path]! } : null),
  } as unknown as LeafReader;
}

function inplace(path: string, type: FlatField['type']): FlatField {
  return flatField(path, { type, inplace: true });
}

const PROTOTYPE_NAMES = Object.getOwnPropertyNames(Object.prototype);

afterEach(() => {
  assert.deepEqual(Object.getOwnPropertyNames(Object.prototype), PROTOTYPE_NAMES, 'Object.prototype is untouched');
  assert.equal(typeof Object.prototype.hasOwnProperty, 'function');
});

test('overlays column values on the stored source: nested, created, removed', () => {
  const fields = [inplace('stats.views', 'long'), inplace('flag', 'boolean'), inplace('gone', 'long'), inplace('fresh.count', 'long')];
  const leaf = leafOf('{"stats": {"views": 1}, "flag": false, "gone": 3}', { 'stats.views': 7, flag: 1, gone: NaN, 'fresh.count': 2 });
  assert.deepEqual(readSource(leaf, 0, fields), { stats: { views: 7 }, flag: true, fresh: { count: 2 } });
});

test('a date keeps its stored spelling when the column holds the same instant', () => {
  const fields = [inplace('seen', 'date'), inplace('moved', 'date')];
  const leaf = leafOf('{"seen": "2024-05-06", "moved": "2024-05-06"}', { seen: Date.UTC(2024, 4, 6), moved: Date.UTC(2024, 4, 7) });
  assert.deepEqual(readSource(leaf, 0, fields), { seen: '2024-05-06', moved: '2024-05-07T00:00:00.000Z' });
});

test('a literal dotted key is overlaid in place, as update operators read it', () => {
  const leaf = leafOf('{"stats.views": 1}', { 'stats.views': 9 });
  assert.deepEqual(readSource(leaf, 0, [inplace('stats.views', 'long')]), { 'stats.views': 9 });
});

test('a null object on the way is replaced; a scalar or an array on the way stops the overlay', () => {
  const fields = [inplace('a.b', 'long'), inplace('s.b', 'long'), inplace('l.b', 'long')];
  const leaf = leafOf('{"a": null, "s": "text", "l": [1]}', { 'a.b': 1, 's.b': 2, 'l.b': 3 });
  assert.deepEqual(readSource(leaf, 0, fields), { a: { b: 1 }, s: 'text', l: [1] });
});

test('issue 12: a __proto__ path (mapped before such names were refused) never reaches Object.prototype', () => {
  const fields = [inplace('__proto__.unknown', 'boolean'), inplace('__proto__.hasOwnProperty', 'long'), inplace('constructor.prototype.polluted', 'long')];
  const columns = { '__proto__.unknown': 1, '__proto__.hasOwnProperty': 5, 'constructor.prototype.polluted': 6 };
  for (const stored of ['{"__proto__.unknown": false}', '{}', '{"x": 1}']) {
    const source = readSource(leafOf(stored, columns), 0, fields);
    assert.equal(Object.getPrototypeOf(source), Object.prototype, stored);
    assert.equal(({} as Record<string, unknown>).unknown, undefined, stored);
    assert.equal(({} as Record<string, unknown>).polluted, undefined, stored);
  }
  assert.deepEqual(readSource(leafOf('{"__proto__.unknown": false}', columns), 0, fields), { '__proto__.unknown': true });
});

test('an own __proto__ object in the stored source is an ordinary object', () => {
  const source = readSource(leafOf('{"__proto__": {"hasOwnProperty": 1}}', { '__proto__.hasOwnProperty': 4 }), 0, [inplace('__proto__.hasOwnProperty', 'long')]);
  assert.ok(Object.hasOwn(source, '__proto__'));
  assert.deepEqual(Object.getOwnPropertyDescriptor(source, '__proto__')?.value, { hasOwnProperty: 4 });
});

test('the text keeps the stored bytes and replaces only the top-level fields whose overlaid value moved on', () => {
  const fields = [inplace('stats.views', 'long'), inplace('rating', 'double'), inplace('fresh.count', 'long'), inplace('gone', 'long')];
  const stored = '{ "n": 9223372036854775807, "stats": {"views": 1, "x": 1.0}, "rating": 2.50, "gone": 3 }';
  const moved = readSourceAndText(leafOf(stored, { 'stats.views': 7, rating: 2.5, 'fresh.count': 2, gone: NaN }), 0, fields);
  assert.equal(moved.text, '{ "n": 9223372036854775807, "stats": {"views":7,"x":1}, "rating": 2.50,"fresh":{"count":2}}');
  assert.deepEqual(JSON.parse(moved.text), moved.source);
  const same = readSourceAndText(leafOf(stored, { 'stats.views': 1, rating: 2.5, gone: 3 }), 0, fields);
  assert.equal(same.text, stored);
  assert.equal(readSourceAndText(leafOf(stored, {}), 0, []).text, stored);
});
