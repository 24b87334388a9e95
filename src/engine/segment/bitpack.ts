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

/** Whether a Uint32Array's words lie in memory as packed bytes do (least significant byte first). */
const LITTLE_ENDIAN = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;

/** Words packed before they are appended to the sink at once. */
const PACK_WORDS = 1024;
const packWords = new Int32Array(PACK_WORDS);
const packBytes = new Uint8Array(packWords.buffer);
/** Views of the first n bytes of packBytes, by n, so that appending them allocates nothing. */
const packViews: Uint8Array[] = [];

/** Appends `values[0..count)` packed at `width` bits (each value must fit). */
export function packInto(sink: ByteSink, values: ArrayLike<number>, count: number, width: number): void {
  if (width === 0) return;
  if (!LITTLE_ENDIAN) {
    packBytewise(sink, values, count, width);
    return;
  }
  // 32 bits at a time: a value's bits that do not fit in the current word start the next one.
  const words = packWords;
  let word = 0;
  let bits = 0;
  let filled = 0;
  for (let i = 0; i < count; i++) {
    const value = values[i]!;
    word |= value << bits;
    bits += width;
    if (bits >= 32) {
      words[filled++] = word;
      bits -= 32;
      word = bits === 0 ? 0 : value >>> (width - bits);
      if (filled === PACK_WORDS) {
        sink.writeBytes(packBytes);
        filled = 0;
      }
    }
  }
  if (bits > 0) words[filled] = word;
  const length = filled * 4 + ((bits + 7) >>> 3);
  if (length > 0) sink.writeBytes((packViews[length] ??= packBytes.subarray(0, length)));
}

/** `packInto` byte by byte, for big-endian hosts. */
function packBytewise(sink: ByteSink, values: ArrayLike<number>, count: number, width: number): void {
  let accumulator = 0;
  let accumulated = 0;
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
  if (width <= PACKED_VALUE_MAX_WIDTH) {
    // Each value is read from the 4 bytes at its first one (25 bits past any bit offset): four at a
    // time up to 6 bits wide, two up to 12.
    const mask = (1 << width) - 1;
    const wordsUpTo = data.length - 4;
    let at = offset;
    let shift = 0;
    let i = 0;
    if (width <= 6) {
      const step = 4 * width;
      for (; i + 3 < count && at <= wordsUpTo; i += 4) {
        const word = (data[at]! | (data[at + 1]! << 8) | (data[at + 2]! << 16) | (data[at + 3]! << 24)) >>> shift;
        out[i] = word & mask;
        out[i + 1] = (word >>> width) & mask;
        out[i + 2] = (word >>> (2 * width)) & mask;
        out[i + 3] = (word >>> (3 * width)) & mask;
        shift += step;
        at += shift >>> 3;
        shift &= 7;
      }
    }
    if (width <= 12) {
      const step = 2 * width;
      for (; i + 1 < count && at <= wordsUpTo; i += 2) {
        const word = (data[at]! | (data[at + 1]! << 8) | (data[at + 2]! << 16) | (data[at + 3]! << 24)) >>> shift;
        out[i] = word & mask;
        out[i + 1] = (word >>> width) & mask;
        shift += step;
        at += shift >>> 3;
        shift &= 7;
      }
    }
    for (; i < count && at <= wordsUpTo; i++) {
      out[i] = ((data[at]! | (data[at + 1]! << 8) | (data[at + 2]! << 16) | (data[at + 3]! << 24)) >>> shift) & mask;
      shift += width;
      at += shift >>> 3;
      shift &= 7;
    }
    // The last values, within 3 bytes of the data's end: bytes past it read as 0.
    for (; i < count; i++) {
      const word = data[at]! | ((at + 1 < data.length ? data[at + 1]! : 0) << 8) | ((at + 2 < data.length ? data[at + 2]! : 0) << 16);
      out[i] = (word >>> shift) & mask;
      shift += width;
      at += shift >>> 3;
      shift &= 7;
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
