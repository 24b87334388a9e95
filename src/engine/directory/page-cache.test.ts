import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PageCache, type CachedPage, type PageOwner } from './page-cache.ts';

/** A file of the test: its resident pages by index, as a paged file keeps them. */
class TestOwner implements PageOwner {
  readonly resident = new Map<number, CachedPage>();
  constructor(private readonly cache: PageCache) {}
  load(index: number, bytes: number): CachedPage {
    const cached = this.resident.get(index);
    if (cached) {
      this.cache.touch(cached);
      return cached;
    }
    const page = this.cache.add(this, index, new Uint8Array(bytes).fill(index & 0xff));
    if (page.cached) this.resident.set(index, page);
    return page;
  }
  evicted(index: number): void {
    this.resident.delete(index);
  }
}

test('the cache holds at most its capacity in bytes and drops the least recently used pages first', () => {
  const cache = new PageCache(3000);
  const file = new TestOwner(cache);
  for (const index of [1, 2, 3]) file.load(index, 1000);
  file.load(1, 1000);
  assert.equal(cache.stats().hits, 1, 'page 1 is now the most recently used');
  file.load(4, 1000);
  assert.deepEqual([...file.resident.keys()].sort(), [1, 3, 4], 'page 2 was the least recently used');
  for (let index = 10; index < 200; index++) {
    file.load(index, 700);
    assert.ok(cache.stats().bytes <= 3000, `after page ${index}: ${cache.stats().bytes} bytes`);
    assert.equal(file.resident.size, cache.stats().pages, 'the owner forgets exactly the evicted pages');
  }
  const stats = cache.stats();
  assert.equal(stats.pages, 4);
  assert.equal(stats.bytes, 2800);
  assert.ok(stats.evictions >= 190);
  cache.resize(1500);
  assert.equal(cache.stats().pages, 2);
  assert.deepEqual([...file.resident.keys()].sort(), [198, 199]);
  const big = file.load(500, 4000);
  assert.equal(big.cached, false, 'a page larger than the cache is not kept');
  assert.equal(file.resident.has(500), false);
  assert.ok(cache.stats().bytes <= 1500);
});

test('removing the pages of one file leaves the others, in their order', () => {
  const cache = new PageCache(1 << 20);
  const files = [new TestOwner(cache), new TestOwner(cache), new TestOwner(cache)];
  for (let index = 0; index < 5; index++) for (const file of files) file.load(index, 100);
  for (const page of files[1]!.resident.values()) cache.remove(page);
  assert.equal(cache.stats().pages, 10);
  assert.equal(cache.stats().bytes, 1000);
  cache.resize(500);
  // Use order, oldest first: 0 of file 0, 0 of file 2, 1 of file 0, 1 of file 2, 2 of file 0, ... : the first five go.
  assert.deepEqual([...files[0]!.resident.keys()].sort(), [3, 4]);
  assert.deepEqual([...files[2]!.resident.keys()].sort(), [2, 3, 4]);
  assert.equal(cache.stats().pages, 5);
});
