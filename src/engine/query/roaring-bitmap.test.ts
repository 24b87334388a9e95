import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MAX_BITMAP_VALUES, bitmapQueryValues, decodeRoaringBitmap } from './roaring-bitmap.ts';

function u16(...values: number[]): Buffer {
  const buffer = Buffer.alloc(values.length * 2);
  values.forEach((value, index) => buffer.writeUInt16LE(value, index * 2));
  return buffer;
}

function u32(...values: number[]): Buffer {
  const buffer = Buffer.alloc(values.length * 4);
  values.forEach((value, index) => buffer.writeUInt32LE(value, index * 4));
  return buffer;
}

test('array containers: the encodings OpenSearch documents', () => {
  assert.deepEqual(bitmapQueryValues('OjAAAAEAAAAAAAEAEAAAAG8A3gA=', 'f'), [111, 222]);
  assert.deepEqual(bitmapQueryValues(['OjAAAAEAAAAAAAAAEAAAAE0B'], 'f'), [333]);
  assert.deepEqual(bitmapQueryValues('OjAAAAEAAAAAAAEAEAAAAN4ATQE=', 'f'), [222, 333]);
});

test('run containers without offsets, bitmap containers, high keys as signed ints', () => {
  const runs = Buffer.concat([u32(12347), Buffer.from([0b01]), u16(0, 9), u16(1, 5, 9)]);
  assert.deepEqual(decodeRoaringBitmap(runs), [5, 6, 7, 8, 9, 10, 11, 12, 13, 14]);
  const bits = Buffer.alloc(8192);
  for (let value = 0; value < 5000; value++) bits[value >> 3] |= 1 << (value & 7);
  const bitmap = Buffer.concat([u32(12346, 2), u16(1, 4999, 0xffff, 0), u32(28, 28 + 8192), bits, u16(0xffff)]);
  const values = decodeRoaringBitmap(bitmap);
  assert.equal(values.length, 5001);
  assert.equal(values[0], 65_536);
  assert.equal(values[4999], 65_536 + 4999);
  assert.equal(values[5000], -1, '0xffffffff is the int -1');
});

test('malformed bitmaps are parsing errors; oversized ones are refused before decoding', () => {
  assert.throws(() => bitmapQueryValues('OjAAAAEAAAAAAAEAEAAAAG8A', 'f'), /truncated/);
  assert.throws(() => decodeRoaringBitmap(u32(1, 2)), /unknown cookie/);
  assert.throws(() => bitmapQueryValues(['a', 'b'], 'f'), /one base64-encoded roaring bitmap/);
  assert.throws(() => bitmapQueryValues(12, 'f'), /one base64-encoded roaring bitmap/);
  const headers: number[] = [];
  for (let key = 0; key < 17; key++) headers.push(key, 0xffff);
  const huge = Buffer.concat([u32(12347 | (16 << 16)), Buffer.from([0xff, 0xff, 0xff]), u16(...headers)]);
  assert.throws(() => decodeRoaringBitmap(huge), new RegExp(`more than the ${MAX_BITMAP_VALUES}`));
});
