import assert from 'node:assert/strict';
import { test } from 'node:test';
import { decodeExact, encodeExact, exactCompanionPath, exactIntegerLiterals, integerOfText, isUnsafeLong, LONG_MAX, LONG_MIN } from './exact-long.ts';
import { flattenMapping } from './mapping.ts';
import { parseDocument } from './parse-document.ts';

const encodeLong = (value: bigint): string => encodeExact('long', value);
const decodeLong = (term: string): bigint => decodeExact('long', term);

test('long terms round-trip and sort like the numbers', () => {
  const values = [LONG_MIN, LONG_MIN + 1n, -(2n ** 53n) - 1n, -1n, 0n, 1n, 2n ** 53n + 1n, LONG_MAX - 1n, LONG_MAX];
  const terms = values.map(encodeLong);
  for (const [index, term] of terms.entries()) {
    assert.equal(term.length, 16);
    assert.equal(decodeLong(term), values[index]);
  }
  assert.deepEqual([...terms].sort(), terms);
  assert.equal(isUnsafeLong(9007199254740991n), false);
  assert.equal(isUnsafeLong(9007199254740992n), true);
  assert.equal(isUnsafeLong(-9007199254740992n), true);
  assert.equal(integerOfText('+9223372036854775807'), LONG_MAX);
  assert.equal(integerOfText('1.5'), null);
  assert.equal(integerOfText('1e3'), null);
});

test('the unsafe integer literals of a JSON text, by dotted path and in order', () => {
  const text = '{"a": 9223372036854775807, "b": {"c": [1, -9007199254740993, 9007199254740991, 12345678901234567.5]}, "d\\"x": 18446744073709551615, "s": "9223372036854775807", "e": [{"f": 9007199254740992}]}';
  const found = exactIntegerLiterals(text);
  assert.deepEqual([...found], [
    ['a', ['9223372036854775807']],
    ['b.c', ['-9007199254740993']],
    ['d"x', ['18446744073709551615']],
    ['e.f', ['9007199254740992']],
  ]);
  assert.equal(exactIntegerLiterals('{"n": 12, "m": [1e20, 3.0]}').size, 0);
});

const fields = flattenMapping({ properties: { id: { type: 'long' }, tag: { type: 'keyword' }, n: { type: 'long', fields: { k: { type: 'keyword' } } }, views: { type: 'long', inplace: true } } });

test('a long beyond 2^53 keeps its digits from the document text or a string', () => {
  const text = '{"id": 9223372036854775807, "n": [9007199254740993, 9007199254740992, 5]}';
  const parsed = parseDocument(JSON.parse(text), fields, { strictNumbers: true, sourceText: text });
  assert.deepEqual(parsed.numeric.get('id'), [9223372036854775807]);
  assert.deepEqual(parsed.keyword.get(exactCompanionPath('id')), [encodeLong(LONG_MAX)]);
  assert.deepEqual(parsed.keyword.get(exactCompanionPath('n'))?.map(decodeLong), [9007199254740993n, 9007199254740992n]);
  assert.deepEqual(parsed.keyword.get('n.k'), ['9007199254740993', '9007199254740992', '5'], 'multi-fields see the exact digits');
  const fromString = parseDocument({ id: '-9223372036854775808' }, fields, { strictNumbers: true });
  assert.deepEqual(fromString.keyword.get(exactCompanionPath('id'))?.map(decodeLong), [LONG_MIN]);
  assert.equal(parseDocument({ id: 42 }, fields, { strictNumbers: true }).keyword.has(exactCompanionPath('id')), false, 'safe values stay on the column alone');
});

test('without the digits, out of range, or inplace: refused', () => {
  const refused = (source: Record<string, unknown>, text: string | undefined, pattern: RegExp): void => {
    assert.throws(() => parseDocument(source, fields, { strictNumbers: true, sourceText: text }), (error: Error) => pattern.test(error.message), JSON.stringify(source));
  };
  refused({ id: 9007199254740993 }, undefined, /\[id\].*cannot be held exactly/);
  refused({ id: '9223372036854775808' }, undefined, /\[id\].*out of range for a long/);
  const big = '{"id": 9223372036854775808}';
  refused(JSON.parse(big), big, /\[id\].*out of range for a long/);
  const inplace = '{"views": 9007199254740993}';
  refused(JSON.parse(inplace), inplace, /\[views\].*cannot be held exactly/);
});

test('unsigned_long: exact terms from 2^53 to 2^64 - 1', () => {
  const values = [0n, 2n ** 53n, 2n ** 63n, 2n ** 64n - 1n];
  const terms = values.map((value) => encodeExact('unsigned_long', value));
  assert.deepEqual(terms.map((term) => decodeExact('unsigned_long', term)), values);
  assert.deepEqual([...terms].sort(), terms);
  const counters = flattenMapping({ properties: { c: { type: 'unsigned_long' } } });
  const text = '{"c": 18446744073709551615}';
  const parsed = parseDocument(JSON.parse(text), counters, { strictNumbers: true, sourceText: text });
  assert.deepEqual(parsed.keyword.get(exactCompanionPath('c'))?.map((term) => decodeExact('unsigned_long', term)), [2n ** 64n - 1n]);
  assert.throws(() => parseDocument({ c: '18446744073709551616' }, counters, { strictNumbers: true }), /out of range for an unsigned_long/);
  assert.throws(() => parseDocument({ c: '-9007199254740993' }, counters, { strictNumbers: true }), /out of range for an unsigned_long/);
});
