import assert from 'node:assert/strict';
import { test } from 'node:test';
import { compareExactAware, compareNumberToExact, exactDigits, exactSearchAfter, exactString, isExactString } from './exact-sort-values.ts';

const values = [-(2n ** 63n), -(2n ** 53n) - 1n, -(2n ** 53n), 2n ** 53n, 2n ** 53n + 1n, 2n ** 63n - 2n, 2n ** 63n - 1n, 2n ** 64n - 1n];

test('exact strings round-trip and order as their integers', () => {
  for (const value of values) {
    const text = exactString(value);
    assert.ok(isExactString(text));
    assert.equal(exactDigits(text), value.toString());
  }
  const texts = values.map(exactString);
  assert.deepEqual([...texts].sort(), texts);
  for (let i = 0; i + 1 < texts.length; i++) assert.equal(compareExactAware(texts[i]!, texts[i + 1]!), -1);
});

test('numbers compare with exact strings exactly, also where they round alike', () => {
  assert.equal(compareNumberToExact(9007199254740991, exactString(2n ** 53n)), -1);
  assert.equal(compareNumberToExact(2 ** 53, exactString(2n ** 53n)), 0);
  assert.equal(compareNumberToExact(2 ** 53, exactString(2n ** 53n + 1n)), -1, '2^53 + 1 rounds to 2^53 yet is larger');
  assert.equal(compareNumberToExact(2 ** 63, exactString(2n ** 63n - 1n)), 1);
  assert.equal(compareNumberToExact(-1.5, exactString(-(2n ** 60n))), 1);
  assert.equal(compareExactAware(exactString(5n * 2n ** 60n), 3), 1);
  assert.equal(compareExactAware('abc', 3), null, 'other strings are not numeric');
  assert.equal(compareExactAware('abc', 'abd'), null);
});

test('search_after values: integer strings beyond 2^53 become exact, others take the number path', () => {
  assert.equal(exactSearchAfter('9223372036854775807'), exactString(2n ** 63n - 1n));
  assert.equal(exactSearchAfter(' -9007199254740993 '), exactString(-(2n ** 53n) - 1n));
  assert.equal(exactSearchAfter('12'), null);
  assert.equal(exactSearchAfter(12), null);
  assert.equal(exactSearchAfter('1e30'), null);
  const exact = exactString(7n);
  assert.equal(exactSearchAfter(exact), exact);
});
