/**
 * Append-only int streams in one shared pool, for the mutable layer's postings: no object or
 * typed array per stream. The pool is a list of fixed-size chunks (never copied when it grows);
 * a stream is a chain of slices whose capacity doubles from one slice to the next up to a cap,
 * each slice ending in one link slot that holds the address of the next slice. An address is
 * `chunk << CHUNK_BITS | offset`. Streams hold fixed-width entries (1..n ints) and an entry never
 * straddles two slices, so a reader can look at the last entry of a slice to skip it whole.
 */

/** Bits of the offset inside a chunk. */
export const CHUNK_BITS = 16;
/** Ints per chunk. */
export const CHUNK_SIZE = 1 << CHUNK_BITS;
/** Mask of the offset inside a chunk. */
export const CHUNK_MASK = CHUNK_SIZE - 1;

/** Entries in the first slice of a stream and the most any slice holds. */
const FIRST_SLICE_ENTRIES = 2;
const MAX_SLICE_ENTRIES = 512;

/** Entries the slice at `level` (0 = first) of a stream holds. */
export function sliceEntries(level: number): number {
  return level >= 8 ? MAX_SLICE_ENTRIES : FIRST_SLICE_ENTRIES << level;
}

/** The chunks of int streams; see the module comment. */
export class IntSlicePool {
  readonly chunks: Int32Array[] = [];
  private used = CHUNK_SIZE;

  /** Ints allocated so far (for memory accounting). */
  get allocatedInts(): number {
    return this.chunks.length * CHUNK_SIZE;
  }

  /** Allocates `size` contiguous ints and returns the address of the first. */
  allocate(size: number): number {
    if (size > CHUNK_SIZE) throw new RangeError(`slice of ${size} ints exceeds the chunk size`);
    if (this.used + size > CHUNK_SIZE) {
      this.chunks.push(new Int32Array(CHUNK_SIZE));
      this.used = 0;
    }
    const address = ((this.chunks.length - 1) << CHUNK_BITS) | this.used;
    this.used += size;
    return address;
  }

  /** The int at an address. */
  get(address: number): number {
    return this.chunks[address >>> CHUNK_BITS]![address & CHUNK_MASK]!;
  }

  /** Writes the int at an address. */
  set(address: number, value: number): void {
    this.chunks[address >>> CHUNK_BITS]![address & CHUNK_MASK] = value;
  }
}

/** Where a stream's write state sits in a state array: four ints from `at`. */
export const STREAM_HEAD = 0;
/** Address the next entry goes to (-1 before the first slice). */
export const STREAM_TAIL = 1;
/** Address of the current slice's link slot (its end; -1 before the first slice). */
export const STREAM_END = 2;
/** Level of the current slice. */
export const STREAM_LEVEL = 3;

/** Writes the state of an empty stream (no slice yet) at state[at..at+3]. */
export function emptyStream(state: Int32Array, at: number): void {
  state[at + STREAM_HEAD] = -1;
  state[at + STREAM_TAIL] = -1;
  state[at + STREAM_END] = -1;
  state[at + STREAM_LEVEL] = 0;
}

/**
 * Opens the next slice of the stream whose write state sits at state[at..at+3] (its current slice
 * is full, or it has none) and returns the new tail. Appending an entry of `width` ints is then:
 * write at the tail, add `width` to the tail; a full slice shows as tail === end.
 */
export function openSlice(pool: IntSlicePool, state: Int32Array, at: number, width: number): number {
  const tail = state[at + STREAM_TAIL]!;
  if (tail < 0) {
    const first = pool.allocate(sliceEntries(0) * width + 1);
    state[at + STREAM_HEAD] = first;
    state[at + STREAM_TAIL] = first;
    state[at + STREAM_END] = first + sliceEntries(0) * width;
    state[at + STREAM_LEVEL] = 0;
    return first;
  }
  const level = state[at + STREAM_LEVEL]! + 1;
  const next = pool.allocate(sliceEntries(level) * width + 1);
  pool.set(tail, next);
  state[at + STREAM_TAIL] = next;
  state[at + STREAM_END] = next + sliceEntries(level) * width;
  state[at + STREAM_LEVEL] = level;
  return next;
}

/**
 * Sequential reader of one stream (entries of `width` ints). `address` is the current entry; it
 * may rest on a slice's link slot, which is followed only when an entry is read, so a reader
 * never looks past the entries that existed when its caller counted them.
 */
export class SliceReader {
  address = -1;
  sliceEnd = -1;
  level = 0;

  constructor(
    readonly pool: IntSlicePool,
    readonly width: number,
  ) {}

  /** Positions the reader on the first entry of a stream starting at `head`. */
  start(head: number): void {
    this.address = head;
    this.level = 0;
    this.sliceEnd = head + sliceEntries(0) * this.width;
  }

  /** Moves `count` entries on. */
  skip(count: number): void {
    for (;;) {
      const left = (this.sliceEnd - this.address) / this.width;
      if (count <= left) {
        this.address += count * this.width;
        return;
      }
      count -= left;
      this.address = this.sliceEnd;
      this.nextSlice();
    }
  }

  /** Makes the current entry readable: follows the link when the reader rests on one. */
  settle(): void {
    if (this.address === this.sliceEnd) this.nextSlice();
  }

  /** Entries from the current one to the end of its slice (after `settle`). */
  leftInSlice(): number {
    return (this.sliceEnd - this.address) / this.width;
  }

  /** Moves to the first entry of the next slice. */
  private nextSlice(): void {
    const next = this.pool.get(this.sliceEnd);
    this.level++;
    this.address = next;
    this.sliceEnd = next + sliceEntries(this.level) * this.width;
  }

  /** The `field`-th int of the entry `ahead` entries on in the current slice (after `settle`; it must be there). */
  valueAhead(ahead: number, field: number): number {
    const address = this.address + ahead * this.width + field;
    return this.pool.chunks[address >>> CHUNK_BITS]![address & CHUNK_MASK]!;
  }

  /** The `field`-th int of the current entry (after `settle`). */
  value(field: number): number {
    const address = this.address + field;
    return this.pool.chunks[address >>> CHUNK_BITS]![address & CHUNK_MASK]!;
  }
}
