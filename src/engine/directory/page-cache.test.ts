import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PageCache, PAGES_PER_FILE } from './page-cache.ts';

const page = (bytes: number, fill: number): Uint8Array => new Uint8Array(bytes).fill(fill);

test('the cache holds at most its capacity in bytes and drops the least recently used pages first', () => {
  const cache = new PageCache(3000);
  cache.set(1, page(1000, 1));
  cache.set(2, page(1000, 2));
  cache.set(3, page(1000, 3));
  assert.equal(cache.get(1)?.[0], 1, 'page 1 is now the most recently used');
  cache.set(4, page(1000, 4));
  assert.equal(cache.get(2), undefined, 'page 2 was the least recently used');
  assert.deepEqual([1, 3, 4].map((key) => cache.get(key)?.[0]), [1, 3, 4]);
  for (let key = 10; key < 200; key++) {
    cache.set(key, page(700, key & 0xff));
    assert.ok(cache.stats().bytes <= 3000, `after page ${key}: ${cache.stats().bytes} bytes`);
  }
  const stats = cache.stats();
  assert.equal(stats.pages, 4);
  assert.equal(stats.bytes, 2800);
  assert.ok(stats.evictions >= 190);
  cache.resize(1500);
  assert.equal(cache.stats().pages, 2);
  assert.equal(cache.get(199)?.[0], 199);
});

test('dropFile removes exactly the pages of one file', () => {
  const cache = new PageCache(1 << 20);
  for (const file of [1, 2, 3]) for (let index = 0; index < 5; index++) cache.set(file * PAGES_PER_FILE + index, page(100, file));
  cache.dropFile(2);
  assert.equal(cache.stats().pages, 10);
  assert.equal(cache.stats().bytes, 1000);
  for (let index = 0; index < 5; index++) {
    assert.equal(cache.get(2 * PAGES_PER_FILE + index), undefined);
    assert.equal(cache.get(1 * PAGES_PER_FILE + index)?.[0], 1);
    assert.equal(cache.get(3 * PAGES_PER_FILE + index)?.[0], 3);
  }
});
