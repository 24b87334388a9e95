import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ByteReader, ByteSink } from './byte-io.ts';

test('varints, words, strings and arrays round-trip across chunk boundaries', () => {
  const sink = new ByteSink(16);
  const varints = [0, 1, 127, 128, 300, 16_383, 16_384, 2 ** 28 - 1, 2 ** 28, 2 ** 31 - 1, 2 ** 31, 2 ** 32 + 5, 2 ** 53 - 1];
  for (const value of varints) sink.writeVarint(value);
  sink.writeU32(0xdeadbeef);
  sink.writeF64(-1.5);
  sink.writeString('héllo 😀');
  sink.alignTo(8);
  const floats = Float64Array.from([1.25, NaN, -0, 1e300]);
  sink.writeFloat64Array(floats);
  sink.writeUint32Array(Uint32Array.from([1, 2, 0xffffffff]));
  sink.writeBytes(new Uint8Array(40).fill(9));
  const bytes = sink.toBytes();
  assert.equal(bytes.length, sink.length);

  const reader = new ByteReader(bytes);
  for (const value of varints) assert.equal(reader.readVarint(), value);
  assert.equal(reader.readU32(), 0xdeadbeef);
  assert.equal(reader.readF64(), -1.5);
  assert.equal(reader.readString(), 'héllo 😀');
  reader.alignTo(8);
  assert.deepEqual(Array.from(reader.readFloat64Array(4)), Array.from(floats));
  assert.deepEqual(Array.from(reader.readUint32Array(3)), [1, 2, 0xffffffff]);
  assert.deepEqual(Array.from(reader.readBytes(40)), new Array(40).fill(9));
  assert.equal(reader.pos, bytes.length);
  assert.throws(() => reader.readByte(), RangeError);
});

test('takeChunks hands over finished bytes and keeps the total length', () => {
  const sink = new ByteSink(8);
  for (let i = 0; i < 30; i++) sink.writeByte(i);
  const early = sink.takeChunks(false);
  sink.writeByte(30);
  const rest = sink.takeChunks(true);
  const all = Buffer.concat([...early, ...rest].map((part) => Buffer.from(part)));
  assert.deepEqual(Array.from(all), Array.from({ length: 31 }, (_, i) => i));
  assert.equal(sink.length, 31);
});

test('a truncated varint is reported', () => {
  assert.throws(() => new ByteReader(Uint8Array.from([0x80, 0x80])).readVarint(), RangeError);
});

test('writeRange appends byte ranges, short and long, empty and across chunk boundaries', () => {
  const source = Uint8Array.from({ length: 600 }, (_, i) => (i * 7 + 3) & 0xff);
  const ranges: [number, number][] = [[0, 0], [5, 6], [10, 42], [42, 75], [75, 75], [0, 200], [100, 131], [3, 20], [10, 250], [0, 600], [150, 407]];
  for (const chunkBytes of [16, 300, 4096]) {
    const sink = new ByteSink(chunkBytes);
    const expected: number[] = [];
    for (const [start, end] of ranges) {
      sink.writeByte(0xaa);
      expected.push(0xaa);
      sink.writeRange(source, start, end);
      expected.push(...source.subarray(start, end));
    }
    assert.equal(sink.length, expected.length);
    assert.deepEqual(Array.from(sink.toBytes()), expected, `chunks of ${chunkBytes}`);
    const copy = new ByteSink(chunkBytes);
    copy.writeByte(1);
    copy.writeSink(sink);
    assert.deepEqual(Array.from(copy.toBytes()), [1, ...expected], `a sink appended whole, chunks of ${chunkBytes}`);
  }
});
