/**
 * Fixed-width bit packing of non-negative integers (below 2^31), least significant bit first:
 * value i occupies bits [i*width, (i+1)*width) of the packed bytes. Used for postings blocks,
 * keyword ordinals and doc meta.
 */
import type { ByteSink } from './byte-io.ts';

/** Number of bits needed to represent `value` (0 for 0). */
export function bitsRequired(value: number): number {
  return value === 0 ? 0 : 32 - Math.clz32(value);
}

/** Bits needed for the largest of `values[0..count)`. */
export function bitsRequiredFor(values: ArrayLike<number>, count: number): number {
  let union = 0;
  for (let i = 0; i < count; i++) union |= values[i]!;
  return bitsRequired(union);
}

/** Bytes taken by `count` values packed at `width` bits. */
export function packedBytes(count: number, width: number): number {
  return Math.ceil((count * width) / 8);
}

/** Appends `values[0..count)` packed at `width` bits (each value must fit). */
export function packInto(sink: ByteSink, values: ArrayLike<number>, count: number, width: number): void {
  if (width === 0) return;
  let accumulator = 0;
  let accumulated = 0;
  if (width <= 24) {
    for (let i = 0; i < count; i++) {
      accumulator |= values[i]! << accumulated;
      accumulated += width;
      while (accumulated >= 8) {
        sink.writeByte(accumulator & 0xff);
        accumulator >>>= 8;
        accumulated -= 8;
      }
    }
    if (accumulated > 0) sink.writeByte(accumulator);
    return;
  }
  for (let i = 0; i < count; i++) {
    let value = values[i]!;
    let remaining = width;
    while (remaining > 0) {
      const take = Math.min(remaining, 8 - accumulated);
      accumulator |= (value & ((1 << take) - 1)) << accumulated;
      accumulated += take;
      value >>>= take;
      remaining -= take;
      if (accumulated === 8) {
        sink.writeByte(accumulator);
        accumulator = 0;
        accumulated = 0;
      }
    }
  }
  if (accumulated > 0) sink.writeByte(accumulator);
}

/** Widest values `packedValueAt` reads. */
export const PACKED_VALUE_MAX_WIDTH = 24;

/**
 * Value `index` of values packed at `width` <= PACKED_VALUE_MAX_WIDTH bits from `data[offset]`,
 * without unpacking the others. It reads 4 bytes from the value's first byte, so the caller makes
 * sure that 3 bytes past the packed area are readable.
 */
export function packedValueAt(data: Uint8Array, offset: number, width: number, index: number): number {
  const bit = index * width;
  const at = offset + (bit >>> 3);
  const word = data[at]! | (data[at + 1]! << 8) | (data[at + 2]! << 16) | (data[at + 3]! << 24);
  return (word >>> (bit & 7)) & ((1 << width) - 1);
}

/** Value `index` of values packed at `width` < 32 bits from `data[offset]` (bytes past the data read as 0). */
export function packedIntAt(data: Uint8Array, offset: number, width: number, index: number): number {
  if (width <= PACKED_VALUE_MAX_WIDTH) return width === 0 ? 0 : packedValueAt(data, offset, width, index);
  const bit = index * width;
  const at = offset + Math.floor(bit / 8);
  const shift = bit & 7;
  const low = (data[at]! | (data[at + 1]! << 8) | (data[at + 2]! << 16) | (data[at + 3]! << 24)) >>> shift;
  const high = shift === 0 ? 0 : (data[at + 4]! | 0) * 2 ** (32 - shift);
  return (low + high) % 2 ** width;
}

/**
 * Decodes `count` values of `width` bits starting at `data[offset]` into `out[0..count)` and
 * returns the offset just past the packed bytes.
 */
export function unpackFrom(data: Uint8Array, offset: number, count: number, width: number, out: Int32Array): number {
  if (width === 0) {
    out.fill(0, 0, count);
    return offset;
  }
  const end = offset + packedBytes(count, width);
  if (end > data.length) throw new RangeError('packed block past end of data');
  if (width <= 24) {
    // The accumulator never holds more than width-1+8 <= 31 bits, so int32 arithmetic is exact.
    const mask = (1 << width) - 1;
    let accumulator = 0;
    let accumulated = 0;
    let position = offset;
    for (let i = 0; i < count; i++) {
      while (accumulated < width) {
        accumulator |= data[position++]! << accumulated;
        accumulated += 8;
      }
      out[i] = accumulator & mask;
      accumulator >>>= width;
      accumulated -= width;
    }
    return end;
  }
  let bitPosition = offset * 8;
  for (let i = 0; i < count; i++) {
    let value = 0;
    let got = 0;
    while (got < width) {
      const byteIndex = bitPosition >>> 3;
      const bitInByte = bitPosition & 7;
      const take = Math.min(width - got, 8 - bitInByte);
      value |= ((data[byteIndex]! >>> bitInByte) & ((1 << take) - 1)) << got;
      got += take;
      bitPosition += take;
    }
    out[i] = value;
  }
  return end;
}
