import { test } from 'node:test';
import assert from 'node:assert/strict';
import { murmur3, sliceOfId } from './slice-query.ts';

test('murmur3 is MurmurHash3 x86 32-bit', () => {
  assert.equal(murmur3('', 0), 0);
  assert.equal(murmur3('', 1) >>> 0, 0x514e28b7);
  assert.equal(murmur3('hello', 0) >>> 0, 0x248bfa47);
  assert.equal(murmur3('The quick brown fox jumps over the lazy dog', 0) >>> 0, 0x2e4ff723);
});

test('sliceOfId puts every id in one slice in range, and spreads ids over all slices', () => {
  const counts = new Array<number>(7).fill(0);
  for (let i = 0; i < 7000; i++) {
    const slice = sliceOfId(`doc-${i}`, 7);
    assert.ok(Number.isInteger(slice) && slice >= 0 && slice < 7);
    counts[slice]!++;
  }
  assert.ok(counts.every((count) => count > 800 && count < 1200), JSON.stringify(counts));
});
