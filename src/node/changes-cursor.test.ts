import { test } from 'node:test';
import assert from 'node:assert/strict';
import { decodeCursor, encodeCursor, shardSetFingerprint } from './changes-cursor.ts';
import { NodeError } from './node-error.ts';

const FINGERPRINT = shardSetFingerprint(['uuid-a', 'uuid-b', 'uuid-c']);

function problemOf(action: () => unknown): string {
  try {
    action();
  } catch (error) {
    assert.ok(error instanceof NodeError);
    assert.equal(error.code, 'invalid_cursor');
    return error.message;
  }
  assert.fail('expected invalid_cursor');
}

test('a cursor round-trips per-shard positions, large seqs included', () => {
  for (const positions of [[0, 0, 0], [1, 2, 3], [127, 128, 16_384], [2 ** 40 + 5, 0, Number.MAX_SAFE_INTEGER - 1e6]]) {
    const text = encodeCursor(FINGERPRINT, positions);
    assert.deepEqual(decodeCursor(text, FINGERPRINT, 3), positions);
  }
});

test('cursor text leads with the sum and never contains the characters CouchDB clients split on', () => {
  const text = encodeCursor(FINGERPRINT, [10, 20, 30]);
  assert.match(text, /^60-[A-Za-z0-9_-]+$/);
  assert.ok(!text.includes(',') && !text.includes('}') && !text.includes('"'));
});

test('the fingerprint depends on the shard UUIDs and their order', () => {
  assert.notEqual(shardSetFingerprint(['a', 'b']), shardSetFingerprint(['b', 'a']));
  assert.equal(shardSetFingerprint(['a', 'b']), shardSetFingerprint(['a', 'b']));
});

test('bad cursors are refused with the problem named', () => {
  const good = encodeCursor(FINGERPRINT, [5, 6, 7]);
  assert.match(problemOf(() => decodeCursor('banana', FINGERPRINT, 3)), /not a change-feed cursor/);
  assert.match(problemOf(() => decodeCursor('12', FINGERPRINT, 3)), /not a change-feed cursor/);
  const [sum, payload] = good.split('-') as [string, string];
  const flipped = payload.slice(0, 6) + (payload[6] === 'A' ? 'B' : 'A') + payload.slice(7);
  assert.match(problemOf(() => decodeCursor(`${sum}-${flipped}`, FINGERPRINT, 3)), /checksum/);
  assert.match(problemOf(() => decodeCursor(`${sum}-${payload.slice(0, 4)}`, FINGERPRINT, 3)), /truncated/);
  assert.match(problemOf(() => decodeCursor(good, shardSetFingerprint(['x']), 3)), /another collection/);
  const twoShards = encodeCursor(FINGERPRINT, [1, 2]);
  assert.match(problemOf(() => decodeCursor(twoShards, FINGERPRINT, 3)), /covers 2 shards, the collection has 3/);
  assert.match(problemOf(() => decodeCursor(`19-${payload}`, FINGERPRINT, 3)), /leading number/);
});
