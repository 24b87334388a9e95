/**
 * The inverted index of one field of the mutable layer. Terms are interned to dense ids
 * (term-table.ts); per-term state lives in typed arrays indexed by id, and postings in shared
 * slice streams (int-slices.ts): per term one doc stream of (doc, freq, first position index)
 * entries, or just docs for fields without positions, and one position stream. A document's
 * tokens arrive as (term id, position) pairs and are grouped per term once: no object, map or
 * array is allocated per token or per posting.
 */
import { NO_MORE_DOCS, type FieldStats, type PostingsCursor } from '../segment/leaf-reader.ts';
import { ByteVector } from './growable.ts';
import {
  CHUNK_BITS,
  CHUNK_MASK,
  IntSlicePool,
  SliceReader,
  STREAM_END,
  STREAM_HEAD,
  STREAM_TAIL,
  emptyStream,
  openSlice,
  sliceEntries,
} from './int-slices.ts';
import { TermTable } from './term-table.ts';

/**
 * Per-term state, STRIDE ints per term in one array (the ints a token touches share a cache line
 * or two): the last doc holding the term, its freq there, document frequency, largest freq,
 * positions so far (the next posting's first position index), smallest norm, then the write
 * state of the doc stream and of the position stream (int-slices.ts).
 */
const LAST_DOC = 0;
const FREQ_IN_DOC = 1;
const DOC_FREQ = 2;
const MAX_FREQ = 3;
const POSITION_COUNT = 4;
const MIN_NORM = 5;
const DOC_STREAM = 8;
const POSITION_STREAM = 12;
const STRIDE_BITS = 4;

/** Scratch of `addTokens`: the distinct terms of the document being added. */
let touched = new Int32Array(1024);

/** Receives one posting from `copyTo`. */
export type PostingsVisitor = (doc: number, freq: number, positions: Int32Array | null) => void;

/** Scratch of `copyTo`, with a view per length (copyTo then allocates nothing per posting). */
let scratch = new Int32Array(1024);
let scratchViews: (Int32Array | undefined)[] = [];

/** See the module comment. */
export class FieldPostings {
  readonly table = new TermTable();
  readonly norms = new ByteVector(64);
  readonly stats: FieldStats = { docCount: 0, sumTotalTermFreq: 0 };
  /** Ints per doc stream entry: (doc, freq, position index) with positions, (doc) without. */
  readonly docWidth: number;
  /** Per-term state (see LAST_DOC …), for `capacity` terms. */
  private state = new Int32Array(0);
  private capacity = 0;
  /** Term ids in term order, rebuilt lazily after new terms arrive. */
  private sorted: Int32Array | null = null;

  constructor(
    readonly pool: IntSlicePool,
    /** Whether the field indexes positions. */
    readonly positions: boolean,
  ) {
    this.docWidth = positions ? 3 : 1;
  }

  /** Number of distinct terms. */
  get termCount(): number {
    return this.table.size;
  }

  /** Id of a term, adding it when new (call `fitTerms` before postings of new ids are added). */
  intern(term: string): number {
    return this.table.intern(term);
  }

  /** Grows the per-term state to cover every interned term. */
  fitTerms(): void {
    const count = this.table.size;
    if (count <= this.capacity) return;
    let capacity = Math.max(64, this.capacity * 2);
    while (capacity < count) capacity *= 2;
    const state = new Int32Array(capacity << STRIDE_BITS);
    state.set(this.state);
    for (let id = this.capacity; id < capacity; id++) {
      const at = id << STRIDE_BITS;
      state[at + LAST_DOC] = -1;
      state[at + MIN_NORM] = 255;
      emptyStream(state, at + DOC_STREAM);
      emptyStream(state, at + POSITION_STREAM);
    }
    this.state = state;
    this.capacity = capacity;
  }

  /**
   * Adds one document's tokens (term ids and ascending positions, `count` of them, ids from
   * `intern` and `fitTerms` called since) with the doc's norm. Docs arrive in increasing order,
   * each once per field.
   */
  addTokens(doc: number, ids: Int32Array, positions: Int32Array | null, count: number, norm: number): void {
    const state = this.state;
    const pool = this.pool;
    const chunks = pool.chunks;
    if (touched.length < count) touched = new Int32Array(Math.max(count, touched.length * 2));
    const distinct = touched;
    let distinctCount = 0;
    const withPositions = this.positions;
    for (let index = 0; index < count; index++) {
      const id = ids[index]!;
      const at = id << STRIDE_BITS;
      if (state[at + LAST_DOC] !== doc) {
        state[at + LAST_DOC] = doc;
        state[at + FREQ_IN_DOC] = 1;
        distinct[distinctCount++] = id;
      } else {
        state[at + FREQ_IN_DOC]!++;
      }
      if (withPositions) {
        const stream = at + POSITION_STREAM;
        let tail = state[stream + STREAM_TAIL]!;
        if (tail === state[stream + STREAM_END]!) tail = openSlice(pool, state, stream, 1);
        chunks[tail >>> CHUNK_BITS]![tail & CHUNK_MASK] = positions![index]!;
        state[stream + STREAM_TAIL] = tail + 1;
      }
    }
    const width = this.docWidth;
    for (let index = 0; index < distinctCount; index++) {
      const at = distinct[index]! << STRIDE_BITS;
      const freq = withPositions ? state[at + FREQ_IN_DOC]! : 1;
      const stream = at + DOC_STREAM;
      let tail = state[stream + STREAM_TAIL]!;
      if (tail === state[stream + STREAM_END]!) tail = openSlice(pool, state, stream, width);
      const chunk = chunks[tail >>> CHUNK_BITS]!;
      const offset = tail & CHUNK_MASK;
      chunk[offset] = doc;
      if (withPositions) {
        chunk[offset + 1] = freq;
        chunk[offset + 2] = state[at + POSITION_COUNT]!;
        state[at + POSITION_COUNT]! += freq;
      }
      state[stream + STREAM_TAIL] = tail + width;
      state[at + DOC_FREQ]!++;
      if (freq > state[at + MAX_FREQ]!) state[at + MAX_FREQ] = freq;
      if (norm < state[at + MIN_NORM]!) state[at + MIN_NORM] = norm;
    }
  }

  /** Document frequency of a term id. */
  docFreq(id: number): number {
    return this.state[(id << STRIDE_BITS) + DOC_FREQ]!;
  }

  /** A cursor over the postings of a term id present now (later appends are not seen). */
  cursor(id: number): MutablePostingsCursor {
    const at = id << STRIDE_BITS;
    const state = this.state;
    const docFreq = state[at + DOC_FREQ]!;
    return new MutablePostingsCursor(
      this.pool,
      this.docWidth,
      docFreq,
      state[at + MAX_FREQ]!,
      state[at + MIN_NORM]!,
      docFreq > 0 ? state[at + LAST_DOC]! : NO_MORE_DOCS,
      state[at + DOC_STREAM + STREAM_HEAD]!,
      this.positions ? state[at + POSITION_STREAM + STREAM_HEAD]! : -1,
    );
  }

  /** Term ids in term order (UTF-16 code unit order). */
  sortedIds(): Int32Array {
    if (this.sorted !== null && this.sorted.length === this.table.size) return this.sorted;
    return (this.sorted = this.table.sortedIds());
  }
}

/** Cursor over the postings of one term as they were at creation; the whole list is one block for block-max purposes. */
export class MutablePostingsCursor implements PostingsCursor {
  doc = -1;
  private index = -1;
  private readonly reader: SliceReader;
  private readonly withPositions: boolean;
  private positionReader: SliceReader | null = null;
  /** Index, in the term's position stream, of the entry the position reader is on. */
  private positionIndex = 0;
  private readonly positionBuffer: number[] = [];

  constructor(
    private readonly pool: IntSlicePool,
    width: number,
    readonly docFreq: number,
    readonly maxFreq: number,
    readonly minNorm: number,
    private readonly lastDoc: number,
    private readonly head: number,
    /** Head of the position stream, -1 for a field without positions. */
    private readonly positionHead: number,
  ) {
    this.withPositions = width === 3;
    this.reader = new SliceReader(pool, width);
  }

  next(): number {
    const index = ++this.index;
    if (index >= this.docFreq) return (this.doc = NO_MORE_DOCS);
    const reader = this.reader;
    if (index === 0) reader.start(this.head);
    else reader.address += reader.width;
    reader.settle();
    return (this.doc = reader.value(0));
  }

  advance(target: number): number {
    if (this.next() >= target) return this.doc;
    const reader = this.reader;
    for (;;) {
      // The reader is settled on entry `index`, whose doc is below target.
      const left = Math.min(reader.leftInSlice(), this.docFreq - this.index);
      const last = reader.valueAhead(left - 1, 0);
      if (last < target) {
        this.index += left;
        if (this.index >= this.docFreq) return (this.doc = NO_MORE_DOCS);
        reader.skip(left);
        reader.settle();
        const doc = reader.value(0);
        if (doc >= target) return (this.doc = doc);
        continue;
      }
      // The first doc >= target lies among entries 1 .. left-1 of this run.
      let low = 1;
      let high = left - 1;
      while (low < high) {
        const mid = (low + high) >>> 1;
        if (reader.valueAhead(mid, 0) < target) low = mid + 1;
        else high = mid;
      }
      this.index += low;
      reader.address += low * reader.width;
      return (this.doc = reader.value(0));
    }
  }

  freq(): number {
    return this.withPositions ? this.reader.value(1) : 1;
  }

  countBelow(doc: number): number {
    if (this.docFreq === 0) return 0;
    const reader = new SliceReader(this.pool, this.reader.width);
    reader.start(this.head);
    let counted = 0;
    for (;;) {
      const left = Math.min(reader.leftInSlice(), this.docFreq - counted);
      if (reader.valueAhead(left - 1, 0) < doc) {
        counted += left;
        if (counted >= this.docFreq) return counted;
        reader.skip(left);
        reader.settle();
        continue;
      }
      let low = 0;
      let high = left - 1;
      while (low < high) {
        const mid = (low + high) >>> 1;
        if (reader.valueAhead(mid, 0) < doc) low = mid + 1;
        else high = mid;
      }
      return counted + low;
    }
  }

  positions(): ArrayLike<number> {
    if (!this.withPositions) return [];
    const freq = this.reader.value(1);
    // One array per cursor, refilled by every call (a typed array and views per cursor would cost
    // more to allocate than the copy).
    const buffer = this.positionBuffer;
    if (buffer.length > freq) buffer.length = freq;
    this.fillPositions(this.reader.value(2), freq, buffer);
    return buffer;
  }

  /**
   * Streams up to `limit` of the remaining postings to `visit`, for an epoch copying them into a
   * segment: the positions array is shared scratch, valid only during the call. True once the
   * cursor is exhausted.
   */
  copyTo(visit: PostingsVisitor, limit: number): boolean {
    if (!this.withPositions) {
      for (let copied = 0; copied < limit; copied++) {
        const doc = this.next();
        if (doc === NO_MORE_DOCS) return true;
        visit(doc, 1, null);
      }
      return false;
    }
    if (this.next() === NO_MORE_DOCS) return true;
    // The docs' entries and their positions are read in one pass with the two readers' state in
    // locals: a doc's positions follow the previous doc's in the position stream.
    const reader = this.reader;
    const positions = this.positionReaderAt(reader.value(2));
    const chunks = this.pool.chunks;
    const width = reader.width;
    const last = Math.min(this.docFreq, this.index + limit) - 1;
    let address = reader.address;
    let sliceEnd = reader.sliceEnd;
    let level = reader.level;
    let positionAddress = positions.address;
    let positionEnd = positions.sliceEnd;
    let positionLevel = positions.level;
    let index = this.index;
    let doc = -1;
    let positionIndex = this.positionIndex;
    for (;;) {
      const chunk = chunks[address >>> CHUNK_BITS]!;
      const offset = address & CHUNK_MASK;
      doc = chunk[offset]!;
      const freq = chunk[offset + 1]!;
      if (scratch.length < freq) {
        scratch = new Int32Array(freq * 2);
        scratchViews = [];
      }
      const into = scratch;
      for (let copied = 0; copied < freq; copied++) {
        if (positionAddress === positionEnd) {
          positionAddress = chunks[positionEnd >>> CHUNK_BITS]![positionEnd & CHUNK_MASK]!;
          positionLevel++;
          positionEnd = positionAddress + sliceEntries(positionLevel);
        }
        into[copied] = chunks[positionAddress >>> CHUNK_BITS]![positionAddress & CHUNK_MASK]!;
        positionAddress++;
      }
      positionIndex += freq;
      let view = scratchViews[freq];
      if (view === undefined) view = scratchViews[freq] = into.subarray(0, freq);
      visit(doc, freq, view);
      if (index === last) break;
      index++;
      address += width;
      if (address === sliceEnd) {
        address = chunks[sliceEnd >>> CHUNK_BITS]![sliceEnd & CHUNK_MASK]!;
        level++;
        sliceEnd = address + sliceEntries(level) * width;
      }
    }
    reader.address = address;
    reader.sliceEnd = sliceEnd;
    reader.level = level;
    positions.address = positionAddress;
    positions.sliceEnd = positionEnd;
    positions.level = positionLevel;
    this.positionIndex = positionIndex;
    if (index === this.docFreq - 1) {
      this.index = this.docFreq;
      this.doc = NO_MORE_DOCS;
      return true;
    }
    this.index = index;
    this.doc = doc;
    return false;
  }

  /** The position reader, moved to index `start` of the term's position stream (it may rest on a link). */
  private positionReaderAt(start: number): SliceReader {
    let positions = this.positionReader;
    if (positions === null || start < this.positionIndex) {
      positions ??= this.positionReader = new SliceReader(this.pool, 1);
      positions.start(this.positionHead);
      this.positionIndex = 0;
    }
    // Sequential reads (every doc's positions, as an epoch reads them) skip nothing.
    if (start !== this.positionIndex) positions.skip(start - this.positionIndex);
    this.positionIndex = start;
    return positions;
  }

  /** Copies `freq` positions from index `start` of the term's position stream into `into`. */
  private fillPositions(start: number, freq: number, into: Int32Array | number[]): void {
    const positions = this.positionReaderAt(start);
    const chunks = this.pool.chunks;
    for (let copied = 0; copied < freq; ) {
      positions.settle();
      const address = positions.address;
      // Entries are one int wide: what is left of the slice is its end minus the address.
      const run = Math.min(freq - copied, positions.sliceEnd - address);
      const chunk = chunks[address >>> CHUNK_BITS]!;
      const offset = (address & CHUNK_MASK) - copied;
      for (let index = copied; index < copied + run; index++) into[index] = chunk[offset + index]!;
      positions.address = address + run;
      copied += run;
    }
    this.positionIndex = start + freq;
  }

  shallowAdvance(target: number): number {
    return target > this.lastDoc ? NO_MORE_DOCS : this.lastDoc;
  }

  blockMaxFreq(): number {
    return this.maxFreq;
  }

  blockMinNorm(): number {
    return this.minNorm;
  }
}
