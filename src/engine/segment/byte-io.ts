/**
 * Binary encoding primitives of the segment formats: an append-only chunked byte sink for
 * writers and a positional reader for loaded files. Integers are unsigned LEB128 varints
 * (values up to 2^53) or little-endian fixed-width words.
 */

const DEFAULT_CHUNK_BYTES = 256 * 1024;
const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;
const utf8Encoder = new TextEncoder();

/** Offset just past the varint `readVarintAt` last read (hot readers avoid allocating a reader). */
export let varintEnd = 0;

/** Reads the unsigned LEB128 varint (at most 8 bytes) at `data[position]`; `varintEnd` then holds the offset past it. */
export function readVarintAt(data: Uint8Array, position: number): number {
  let byte = data[position++]!;
  let value = byte & 0x7f;
  for (let shift = 7; byte >= 0x80 && shift < 56; shift += 7) {
    byte = data[position++]!;
    value += (byte & 0x7f) * 2 ** shift;
  }
  varintEnd = position;
  return value;
}

/** Append-only byte buffer made of chunks; `takeChunks` hands finished bytes to a file writer. */
export class ByteSink {
  private chunk: Uint8Array;
  private view: DataView;
  private used = 0;
  private readonly finished: Uint8Array[] = [];
  private finishedBytes = 0;
  private takenBytes = 0;

  constructor(private readonly chunkBytes = DEFAULT_CHUNK_BYTES) {
    this.chunk = new Uint8Array(chunkBytes);
    this.view = new DataView(this.chunk.buffer);
  }

  /** Total bytes appended since creation (including bytes already taken). */
  get length(): number {
    return this.takenBytes + this.finishedBytes + this.used;
  }

  /** Appends one byte (0..255). */
  writeByte(value: number): void {
    if (this.used === this.chunk.length) this.grow(1);
    this.chunk[this.used++] = value;
  }

  /** Appends an unsigned varint (0 .. 2^53). */
  writeVarint(value: number): void {
    if (this.used + 8 > this.chunk.length) this.grow(8);
    const chunk = this.chunk;
    let used = this.used;
    while (value >= 0x80000000) {
      chunk[used++] = (value % 128) | 0x80;
      value = Math.floor(value / 128);
    }
    while (value >= 0x80) {
      chunk[used++] = (value & 0x7f) | 0x80;
      value >>>= 7;
    }
    chunk[used++] = value;
    this.used = used;
  }

  /** Appends a little-endian uint32. */
  writeU32(value: number): void {
    if (this.used + 4 > this.chunk.length) this.grow(4);
    this.view.setUint32(this.used, value >>> 0, true);
    this.used += 4;
  }

  /** Appends a little-endian float64. */
  writeF64(value: number): void {
    if (this.used + 8 > this.chunk.length) this.grow(8);
    this.view.setFloat64(this.used, value, true);
    this.used += 8;
  }

  /** Appends float64s in little-endian order. */
  writeFloat64Array(values: Float64Array): void {
    if (LITTLE_ENDIAN) {
      this.writeBytes(new Uint8Array(values.buffer, values.byteOffset, values.byteLength));
      return;
    }
    for (let i = 0; i < values.length; i++) this.writeF64(values[i]!);
  }

  /** Appends uint32s in little-endian order. */
  writeUint32Array(values: Uint32Array): void {
    if (LITTLE_ENDIAN) {
      this.writeBytes(new Uint8Array(values.buffer, values.byteOffset, values.byteLength));
      return;
    }
    for (let i = 0; i < values.length; i++) this.writeU32(values[i]!);
  }

  /** Appends raw bytes. */
  writeBytes(bytes: Uint8Array): void {
    if (bytes.length > this.chunk.length - this.used) {
      if (bytes.length >= this.chunkBytes) {
        this.closeChunk();
        this.finished.push(bytes.slice());
        this.finishedBytes += bytes.length;
        this.openChunk(this.chunkBytes);
        return;
      }
      this.grow(bytes.length);
    }
    this.chunk.set(bytes, this.used);
    this.used += bytes.length;
  }

  /** Appends `bytes[start, end)`: short ranges are copied byte by byte into the open chunk, sparing a view. */
  writeRange(bytes: Uint8Array, start: number, end: number): void {
    const length = end - start;
    if (length > 256 || length > this.chunk.length - this.used) {
      if (length > 0) this.writeBytes(bytes.subarray(start, end));
      return;
    }
    const chunk = this.chunk;
    let used = this.used;
    for (let i = start; i < end; i++) chunk[used++] = bytes[i]!;
    this.used = used;
  }

  /** Appends a string as varint byte length + UTF-8 bytes. */
  writeString(value: string): void {
    const bytes = utf8Encoder.encode(value);
    this.writeVarint(bytes.length);
    this.writeBytes(bytes);
  }

  /** Appends zero bytes until `length` is a multiple of `alignment`. */
  alignTo(alignment: number): void {
    while (this.length % alignment !== 0) this.writeByte(0);
  }

  /** Appends every byte of another sink (which must not have been taken from). */
  writeSink(other: ByteSink): void {
    const finished = other.finished;
    for (let i = 0; i < finished.length; i++) this.writeBytes(finished[i]!);
    this.writeRange(other.chunk, 0, other.used);
  }

  /** Forgets all content (only valid while nothing has been taken). */
  reset(): void {
    if (this.finished.length > 0) this.finished.length = 0;
    this.finishedBytes = 0;
    this.used = 0;
  }

  /** All bytes still held (finished chunks then the open chunk), without removing them. */
  parts(): Uint8Array[] {
    return this.used > 0 ? [...this.finished, this.chunk.subarray(0, this.used)] : [...this.finished];
  }

  /** Removes and returns the held bytes; with `all` false only full chunks are handed over. */
  takeChunks(all: boolean): Uint8Array[] {
    if (all) this.closeChunk();
    const taken = this.finished.splice(0, this.finished.length);
    this.takenBytes += this.finishedBytes;
    this.finishedBytes = 0;
    if (all) this.openChunk(this.chunkBytes);
    return taken;
  }

  /** Copies the whole content into one Uint8Array (for small sinks and tests). */
  toBytes(): Uint8Array {
    const out = new Uint8Array(this.finishedBytes + this.used);
    let offset = 0;
    for (const part of this.parts()) {
      out.set(part, offset);
      offset += part.length;
    }
    return out;
  }

  private grow(needed: number): void {
    this.closeChunk();
    this.openChunk(Math.max(this.chunkBytes, needed));
  }

  private closeChunk(): void {
    if (this.used === 0) return;
    this.finished.push(this.chunk.subarray(0, this.used));
    this.finishedBytes += this.used;
    this.used = 0;
  }

  private openChunk(size: number): void {
    this.chunk = new Uint8Array(size);
    this.view = new DataView(this.chunk.buffer);
    this.used = 0;
  }
}

/** Sequential reader over a byte array; `pos` is public so callers can seek. */
export class ByteReader {
  private readonly view: DataView;

  constructor(
    readonly data: Uint8Array,
    public pos = 0,
  ) {
    this.view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  }

  /** Reads one byte. */
  readByte(): number {
    if (this.pos >= this.data.length) throw new RangeError('read past end of data');
    return this.data[this.pos++]!;
  }

  /** Reads an unsigned varint (up to 2^53). */
  readVarint(): number {
    const data = this.data;
    let byte = data[this.pos++]!;
    if (byte < 0x80) return byte;
    let value = byte & 0x7f;
    let shift = 7;
    for (;;) {
      if (this.pos >= data.length) throw new RangeError('truncated varint');
      byte = data[this.pos++]!;
      if (shift < 28) value |= (byte & 0x7f) << shift;
      else value += (byte & 0x7f) * 2 ** shift;
      if (byte < 0x80) return value;
      shift += 7;
      if (shift > 56) throw new RangeError('varint too long');
    }
  }

  /** Reads a little-endian uint32. */
  readU32(): number {
    const value = this.view.getUint32(this.pos, true);
    this.pos += 4;
    return value;
  }

  /** Reads a little-endian float64. */
  readF64(): number {
    const value = this.view.getFloat64(this.pos, true);
    this.pos += 8;
    return value;
  }

  /** Returns a view of the next `length` bytes and skips them. */
  readBytes(length: number): Uint8Array {
    if (this.pos + length > this.data.length) throw new RangeError('read past end of data');
    const bytes = this.data.subarray(this.pos, this.pos + length);
    this.pos += length;
    return bytes;
  }

  /**
   * Reads `count` little-endian float64s: a zero-copy view when the platform is little-endian
   * and the data is aligned, otherwise a decoded copy.
   */
  readFloat64Array(count: number): Float64Array {
    const byteOffset = this.data.byteOffset + this.pos;
    if (this.pos + count * 8 > this.data.length) throw new RangeError('read past end of data');
    let values: Float64Array;
    if (LITTLE_ENDIAN && byteOffset % 8 === 0) {
      values = new Float64Array(this.data.buffer, byteOffset, count);
    } else {
      values = new Float64Array(count);
      for (let i = 0; i < count; i++) values[i] = this.view.getFloat64(this.pos + i * 8, true);
    }
    this.pos += count * 8;
    return values;
  }

  /** Reads `count` little-endian uint32s (a view when possible, like readFloat64Array). */
  readUint32Array(count: number): Uint32Array {
    const byteOffset = this.data.byteOffset + this.pos;
    if (this.pos + count * 4 > this.data.length) throw new RangeError('read past end of data');
    let values: Uint32Array;
    if (LITTLE_ENDIAN && byteOffset % 4 === 0) {
      values = new Uint32Array(this.data.buffer, byteOffset, count);
    } else {
      values = new Uint32Array(count);
      for (let i = 0; i < count; i++) values[i] = this.view.getUint32(this.pos + i * 4, true);
    }
    this.pos += count * 4;
    return values;
  }

  /** Reads a varint-length-prefixed UTF-8 string. */
  readString(): string {
    const length = this.readVarint();
    const bytes = this.readBytes(length);
    return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8');
  }

  /** Skips to the next multiple of `alignment` (relative to the start of `data`). */
  alignTo(alignment: number): void {
    const remainder = this.pos % alignment;
    if (remainder !== 0) this.pos += alignment - remainder;
  }
}
