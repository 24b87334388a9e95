/**
 * Reader of the Roaring bitmap portable serialisation (the format RoaringBitmap for Java and
 * CRoaring share), for `terms` queries with `value_type: bitmap` (OpenSearch's bitmap filtering).
 * Only decoding is needed, into the 32-bit integers the bitmap holds. Layout: a cookie (12346, then
 * the container count; or 12347 with the count minus one in its high half and a bitset of run
 * containers), a key and cardinality-minus-one per container, an offset per container (absent
 * with runs and fewer than four containers), then each container: an array of 16-bit values
 * (cardinality <= 4096), a 65536-bit bitmap, or (run containers) a count of runs and (start,
 * length - 1) pairs. Every value is `key << 16 | low`.
 */
import { EngineError } from '../errors.ts';

const COOKIE_NO_RUNS = 12346;
const COOKIE_RUNS = 12347;
const NO_OFFSET_THRESHOLD = 4;
const ARRAY_MAX = 4096;
const BITMAP_BYTES = 8192;

/** Most values one bitmap of a query may hold once decoded. */
export const MAX_BITMAP_VALUES = 1 << 20;

function malformed(reason: string): EngineError {
  return new EngineError('parsing', `[terms] query with [value_type: bitmap]: the value is not a serialized roaring bitmap (${reason})`);
}

/** A bounds-checked little-endian reader over the bitmap's bytes. */
class Reader {
  offset = 0;
  constructor(private readonly bytes: Buffer) {}

  u16(): number {
    if (this.offset + 2 > this.bytes.length) throw malformed('truncated');
    const value = this.bytes.readUInt16LE(this.offset);
    this.offset += 2;
    return value;
  }

  u32(): number {
    if (this.offset + 4 > this.bytes.length) throw malformed('truncated');
    const value = this.bytes.readUInt32LE(this.offset);
    this.offset += 4;
    return value;
  }

  take(count: number): Buffer {
    if (this.offset + count > this.bytes.length) throw malformed('truncated');
    const slice = this.bytes.subarray(this.offset, this.offset + count);
    this.offset += count;
    return slice;
  }
}

/**
 * The values of a serialised bitmap, ascending as unsigned 32-bit integers and returned as Java's
 * signed ints (what an `integer` field holds). Throws a parsing error on anything malformed, and
 * an illegal_argument error past MAX_BITMAP_VALUES.
 */
export function decodeRoaringBitmap(bytes: Buffer): number[] {
  const reader = new Reader(bytes);
  const cookie = reader.u32();
  let size: number;
  let runFlags: Buffer | null = null;
  if ((cookie & 0xffff) === COOKIE_RUNS) {
    size = (cookie >>> 16) + 1;
    runFlags = reader.take(Math.ceil(size / 8));
  } else if (cookie === COOKIE_NO_RUNS) {
    size = reader.u32();
  } else {
    throw malformed('unknown cookie');
  }
  if (size > 65_536) throw malformed('too many containers');
  const keys: number[] = [];
  const cardinalities: number[] = [];
  let total = 0;
  for (let index = 0; index < size; index++) {
    keys.push(reader.u16());
    cardinalities.push(reader.u16() + 1);
    total += cardinalities[index]!;
  }
  if (total > MAX_BITMAP_VALUES) {
    throw new EngineError('illegal_argument', `[terms] query with [value_type: bitmap] holds ${total} values, more than the ${MAX_BITMAP_VALUES} allowed`);
  }
  if (runFlags === null || size >= NO_OFFSET_THRESHOLD) reader.take(4 * size);
  const values: number[] = [];
  for (let index = 0; index < size; index++) {
    const high = keys[index]! * 65_536;
    const cardinality = cardinalities[index]!;
    const isRun = runFlags !== null && (runFlags[index >> 3]! & (1 << (index & 7))) !== 0;
    if (isRun) {
      const runs = reader.u16();
      let seen = 0;
      for (let run = 0; run < runs; run++) {
        const start = reader.u16();
        const length = reader.u16() + 1;
        if (start + length > 65_536) throw malformed('run past its container');
        seen += length;
        if (seen > cardinality) throw malformed('runs exceed the cardinality');
        for (let low = start; low < start + length; low++) values.push((high + low) | 0);
      }
      if (seen !== cardinality) throw malformed('runs differ from the cardinality');
    } else if (cardinality <= ARRAY_MAX) {
      for (let position = 0; position < cardinality; position++) values.push((high + reader.u16()) | 0);
    } else {
      const words = reader.take(BITMAP_BYTES);
      let seen = 0;
      for (let byte = 0; byte < BITMAP_BYTES; byte++) {
        let bits = words[byte]!;
        while (bits !== 0) {
          const bit = 31 - Math.clz32(bits & -bits);
          values.push((high + byte * 8 + bit) | 0);
          bits &= bits - 1;
          seen++;
        }
      }
      if (seen !== cardinality) throw malformed('bitmap container differs from the cardinality');
    }
  }
  return values;
}

/** The bitmap a `terms` value gives: a base64 string, or a list of exactly one. */
export function bitmapQueryValues(value: unknown, path: string): number[] {
  const text = Array.isArray(value) && value.length === 1 ? value[0] : value;
  if (typeof text !== 'string' || !/^[A-Za-z0-9+/]*={0,2}$/.test(text)) {
    throw new EngineError('parsing', `[terms] query with [value_type: bitmap] on field [${path}] needs one base64-encoded roaring bitmap`);
  }
  return decodeRoaringBitmap(Buffer.from(text, 'base64'));
}
