import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ByteSink } from './byte-io.ts';
import { PACKED_VALUE_MAX_WIDTH, bitsRequired, bitsRequiredFor, packInto, packedBytes, packedIntAt, packedValueAt, unpackFrom } from './bitpack.ts';
import { seededRandom } from './reference-leaf.fixture.ts';

test('bitsRequired', () => {
  assert.deepEqual([0, 1, 2, 3, 255, 256, 2 ** 31 - 1].map(bitsRequired), [0, 1, 2, 2, 8, 9, 31]);
  assert.equal(bitsRequiredFor([1, 8, 3], 3), 4);
  assert.equal(bitsRequiredFor([1, 8, 300], 2), 4);
});

test('every width from 0 to 31 round-trips, with odd counts and offsets', () => {
  const random = seededRandom(3);
  for (let width = 0; width <= 31; width++) {
    for (const count of [1, 7, 128, 333]) {
      const values = Int32Array.from({ length: count }, () => (width === 0 ? 0 : Math.floor(random() * 2 ** width)));
      values[0] = width === 0 ? 0 : 2 ** width - 1;
      const sink = new ByteSink(64);
      sink.writeByte(0xaa);
      packInto(sink, values, count, width);
      sink.writeByte(0x55);
      const bytes = sink.toBytes();
      assert.equal(bytes.length, 2 + packedBytes(count, width));
      const out = new Int32Array(count);
      const end = unpackFrom(bytes, 1, count, width, out);
      assert.equal(end, 1 + packedBytes(count, width));
      assert.equal(bytes[end], 0x55);
      assert.deepEqual(out, values, `width ${width}, count ${count}`);
    }
  }
});

test('unpacking past the end of the data throws', () => {
  assert.throws(() => unpackFrom(new Uint8Array(3), 0, 10, 8, new Int32Array(10)), RangeError);
});

test('packedValueAt reads any single value for every width up to PACKED_VALUE_MAX_WIDTH', () => {
  const random = seededRandom(8);
  for (let width = 0; width <= PACKED_VALUE_MAX_WIDTH; width++) {
    for (const count of [1, 5, 128]) {
      const values = Int32Array.from({ length: count }, () => Math.floor(random() * 2 ** width));
      values[count - 1] = 2 ** width - 1;
      const sink = new ByteSink(64);
      sink.writeByte(0xff);
      packInto(sink, values, count, width);
      // Bytes past the area (a footer in segment files) must not leak into the values.
      for (let i = 0; i < 3; i++) sink.writeByte(0xff);
      const bytes = sink.toBytes();
      const read = Array.from({ length: count }, (_, index) => packedValueAt(bytes, 1, width, index));
      assert.deepEqual(read, Array.from(values), `width ${width}, count ${count}`);
    }
  }
});

test('packedIntAt reads single values at every width below 32 bits', () => {
  for (let width = 0; width < 32; width++) {
    const values = Array.from({ length: 37 }, (_, i) => (width === 0 ? 0 : Math.floor(((i * 2654435761) % 2 ** 32) / 2 ** (32 - width))));
    values[3] = width === 0 ? 0 : 2 ** width - 1;
    const sink = new ByteSink();
    sink.writeByte(0xaa);
    packInto(sink, values, values.length, width);
    const data = Buffer.concat(sink.takeChunks(true));
    for (let i = 0; i < values.length; i++) assert.equal(packedIntAt(data, 1, width, i), values[i], `width ${width} value ${i}`);
  }
});

/** Packs bit by bit, least significant first: the layout packInto must produce. */
function referencePack(values: ArrayLike<number>, count: number, width: number): Uint8Array {
  const bytes = new Uint8Array(packedBytes(count, width));
  for (let i = 0; i < count; i++) {
    for (let bit = 0; bit < width; bit++) {
      if (Math.floor(values[i]! / 2 ** bit) % 2 === 1) bytes[(i * width + bit) >>> 3]! |= 1 << ((i * width + bit) & 7);
    }
  }
  return bytes;
}

test('packInto writes the bit layout for long runs too, and unpackFrom reads values that end at the last byte of the data', () => {
  const random = seededRandom(21);
  for (const width of [1, 3, 7, 8, 12, 13, 16, 24, 25, 31]) {
    for (const count of [2, 3, 129, 4096, 9000]) {
      const values = Int32Array.from({ length: count }, () => Math.floor(random() * 2 ** width));
      const sink = new ByteSink(256);
      sink.writeByte(0xaa);
      packInto(sink, values, count, width);
      const bytes = sink.toBytes();
      assert.deepEqual(bytes.subarray(1), referencePack(values, count, width), `width ${width}, count ${count}`);
      const out = new Int32Array(count);
      assert.equal(unpackFrom(bytes, 1, count, width, out), bytes.length);
      assert.deepEqual(out, values, `width ${width}, count ${count}`);
    }
  }
});
