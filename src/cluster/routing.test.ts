import { test } from 'node:test';
import assert from 'node:assert/strict';
import { shardFor } from './routing.ts';

test('shardFor is deterministic, in range, and non-negative', () => {
  for (const shards of [1, 2, 3, 5, 16]) {
    for (let index = 0; index < 200; index++) {
      const shard = shardFor(`doc-${index}`, shards);
      assert.ok(Number.isInteger(shard) && shard >= 0 && shard < shards);
      assert.equal(shardFor(`doc-${index}`, shards), shard);
    }
  }
  assert.equal(shardFor('anything', 1), 0);
});

test('shardFor matches murmur3 x86_32 (seed 0) over UTF-8 bytes', () => {
  // Reference values of MurmurHash3_x86_32 with seed 0.
  assert.equal(shardFor('hello', 2 ** 31), 0x248bfa47 % 2 ** 31);
  assert.equal(shardFor('', 7), 0);
  // Non-ASCII ids hash their UTF-8 bytes, so ids that differ only beyond ASCII still differ.
  assert.notEqual(shardFor('é', 2 ** 31), shardFor('e', 2 ** 31));
});

test('ids spread evenly over shards', () => {
  const shards = 8;
  const total = 40_000;
  const counts = new Array<number>(shards).fill(0);
  for (let index = 0; index < total; index++) counts[shardFor(`user-${index}`, shards)]++;
  const expected = total / shards;
  for (const count of counts) assert.ok(Math.abs(count - expected) < expected * 0.05, `uneven: ${counts.join(',')}`);
});
