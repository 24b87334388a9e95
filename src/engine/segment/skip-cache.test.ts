import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SkipCache } from './skip-cache.ts';

test('values are found by file and offset, each file apart', () => {
  const cache = new SkipCache<string>(100);
  const first = {};
  const second = {};
  cache.set(first, 10, 'a', 10);
  cache.set(second, 10, 'b', 10);
  cache.set(first, 20, 'c', 10);
  assert.equal(cache.get(first, 10), 'a');
  assert.equal(cache.get(second, 10), 'b');
  assert.equal(cache.get(first, 20), 'c');
  assert.equal(cache.get(second, 20), undefined);
  assert.equal(cache.size, 30);
});

test('beyond its bound the least recently used values go first', () => {
  const cache = new SkipCache<number>(30);
  const file = {};
  cache.set(file, 1, 1, 10);
  cache.set(file, 2, 2, 10);
  cache.set(file, 3, 3, 10);
  assert.equal(cache.get(file, 1), 1);
  cache.set(file, 4, 4, 10);
  assert.equal(cache.get(file, 2), undefined, 'the least recently used value is dropped');
  assert.deepEqual([1, 3, 4].map((offset) => cache.get(file, offset)), [1, 3, 4]);
  cache.set(file, 5, 5, 25);
  assert.equal(cache.size, 25);
  assert.deepEqual([1, 3, 4, 5].map((offset) => cache.get(file, offset)), [undefined, undefined, undefined, 5]);
});

test('a value larger than the bound is not kept, and setting an offset again replaces its value', () => {
  const cache = new SkipCache<string>(20);
  const file = {};
  cache.set(file, 1, 'small', 5);
  cache.set(file, 2, 'huge', 21);
  assert.equal(cache.get(file, 2), undefined);
  assert.equal(cache.get(file, 1), 'small');
  cache.set(file, 1, 'again', 8);
  assert.equal(cache.get(file, 1), 'again');
  assert.equal(cache.size, 8);
});
