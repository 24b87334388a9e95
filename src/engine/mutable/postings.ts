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
import { CHUNK_BITS, CHUNK_MASK, IntSlicePool, SliceReader, SliceStreams } from './int-slices.ts';
import { TermTable } from './term-table.ts';

/** Scratch of `addTokens`: the distinct terms of the document being added. */
let touched = new Int32Array(1024);

/** See the module comment. */
export class FieldPostings {
  readonly table = new TermTable();
  readonly norms = new ByteVector(64);
  readonly stats: FieldStats = { docCount: 0, sumTotalTermFreq: 0 };
  /** Doc stream entries: (doc, freq, position index) with positions, (doc) without. */
  readonly docStreams: SliceStreams;
  readonly positionStreams: SliceStreams | null;
  docFreqs = new Int32Array(0);
  maxFreqs = new Int32Array(0);
  minNorms = new Uint8Array(0);
  /** Last doc holding each term (-1: none yet). */
  lastDocs = new Int32Array(0);
  /** Positions each term has so far (the next posting's first position index). */
  private positionCounts = new Int32Array(0);
  /** Freq of each term in the document being added. */
  private docTermFreqs = new Int32Array(0);
  /** Term ids in term order, rebuilt lazily after new terms arrive. */
  private sorted: Int32Array | null = null;

  constructor(
    readonly pool: IntSlicePool,
    /** Whether the field indexes positions. */
    readonly positions: boolean,
  ) {
    this.docStreams = new SliceStreams(pool, positions ? 3 : 1);
    this.positionStreams = positions ? new SliceStreams(pool, 1) : null;
  }

  /** Number of distinct terms. */
  get termCount(): number {
    return this.table.size;
  }

  /** Id of a term, adding it when new (call `fitTerms` before postings of new ids are added). */
  intern(term: string): number {
    return this.table.intern(term);
  }

  /** Grows the per-term arrays to cover every interned term. */
  fitTerms(): void {
    const count = this.table.size;
    if (count <= this.docFreqs.length) return;
    let capacity = Math.max(64, this.docFreqs.length * 2);
    while (capacity < count) capacity *= 2;
    this.docFreqs = growInts(this.docFreqs, capacity, 0);
    this.maxFreqs = growInts(this.maxFreqs, capacity, 0);
    this.lastDocs = growInts(this.lastDocs, capacity, -1);
    this.positionCounts = growInts(this.positionCounts, capacity, 0);
    this.docTermFreqs = growInts(this.docTermFreqs, capacity, 0);
    const minNorms = new Uint8Array(capacity).fill(255);
    minNorms.set(this.minNorms);
    this.minNorms = minNorms;
    this.docStreams.ensure(capacity);
    this.positionStreams?.ensure(capacity);
  }

  /**
   * Adds one document's tokens (term ids and ascending positions, `count` of them, ids from
   * `intern` and `fitTerms` called since) with the doc's norm. Docs arrive in increasing order,
   * each once per field. Returns the number of postings added.
   */
  addTokens(doc: number, ids: Int32Array, positions: Int32Array | null, count: number, norm: number): number {
    const lastDocs = this.lastDocs;
    const docTermFreqs = this.docTermFreqs;
    if (touched.length < count) touched = new Int32Array(Math.max(count, touched.length * 2));
    const distinct = touched;
    let distinctCount = 0;
    for (let index = 0; index < count; index++) {
      const id = ids[index]!;
      if (lastDocs[id] !== doc) {
        lastDocs[id] = doc;
        docTermFreqs[id] = 1;
        distinct[distinctCount++] = id;
      } else {
        docTermFreqs[id]!++;
      }
    }
    const streams = this.docStreams;
    const chunks = this.pool.chunks;
    const withPositions = this.positions;
    for (let index = 0; index < distinctCount; index++) {
      const id = distinct[index]!;
      const freq = withPositions ? docTermFreqs[id]! : 1;
      const address = streams.reserve(id);
      const chunk = chunks[address >>> CHUNK_BITS]!;
      const offset = address & CHUNK_MASK;
      chunk[offset] = doc;
      if (withPositions) {
        chunk[offset + 1] = freq;
        chunk[offset + 2] = this.positionCounts[id]!;
        this.positionCounts[id]! += freq;
      }
      streams.tails[id] = address + streams.width;
      this.docFreqs[id]!++;
      if (freq > this.maxFreqs[id]!) this.maxFreqs[id] = freq;
      if (norm < this.minNorms[id]!) this.minNorms[id] = norm;
    }
    if (withPositions) {
      const positionStreams = this.positionStreams!;
      for (let index = 0; index < count; index++) {
        const id = ids[index]!;
        const address = positionStreams.reserve(id);
        chunks[address >>> CHUNK_BITS]![address & CHUNK_MASK] = positions![index]!;
        positionStreams.tails[id] = address + 1;
      }
    }
    return distinctCount;
  }

  /** Document frequency of a term id. */
  docFreq(id: number): number {
    return this.docFreqs[id]!;
  }

  /** A cursor over the postings of a term id present now (later appends are not seen). */
  cursor(id: number): PostingsCursor {
    return new MutablePostingsCursor(this, id);
  }

  /** Term ids in term order (UTF-16 code unit order). */
  sortedIds(): Int32Array {
    if (this.sorted !== null && this.sorted.length === this.table.size) return this.sorted;
    const terms = this.table.terms;
    const ordered = terms.slice().sort();
    const ids = new Int32Array(ordered.length);
    for (let index = 0; index < ordered.length; index++) ids[index] = this.table.lookup(ordered[index]!);
    this.sorted = ids;
    return ids;
  }
}

function growInts(array: Int32Array, capacity: number, fill: number): Int32Array<ArrayBuffer> {
  const next = new Int32Array(capacity);
  if (fill !== 0) next.fill(fill, array.length);
  next.set(array);
  return next;
}

/** Positions views of these lengths are cached per cursor (positions() then allocates nothing). */
const CACHED_VIEW_LENGTHS = 32;

/** Cursor over the postings of one term as they were at creation; the whole list is one block for block-max purposes. */
class MutablePostingsCursor implements PostingsCursor {
  doc = -1;
  readonly docFreq: number;
  readonly maxFreq: number;
  readonly minNorm: number;
  private index = -1;
  private readonly head: number;
  private readonly lastDoc: number;
  private readonly reader: SliceReader;
  private readonly withPositions: boolean;
  private positionReader: SliceReader | null = null;
  /** Index, in the term's position stream, of the entry the position reader is on. */
  private positionIndex = 0;
  private positionBuffer: Int32Array | null = null;
  private views: (Int32Array | undefined)[] = [];

  constructor(
    private readonly field: FieldPostings,
    private readonly id: number,
  ) {
    this.docFreq = field.docFreqs[id]!;
    this.maxFreq = field.maxFreqs[id]!;
    this.minNorm = field.minNorms[id]!;
    this.head = field.docStreams.heads[id]!;
    this.lastDoc = this.docFreq > 0 ? field.lastDocs[id]! : NO_MORE_DOCS;
    this.withPositions = field.positions;
    this.reader = new SliceReader(field.pool, field.docStreams.width);
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
    const reader = new SliceReader(this.field.pool, this.field.docStreams.width);
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
    const start = this.reader.value(2);
    let positions = this.positionReader;
    if (positions === null) {
      positions = this.positionReader = new SliceReader(this.field.pool, 1);
      positions.start(this.field.positionStreams!.heads[this.id]!);
      this.positionIndex = 0;
    }
    if (start < this.positionIndex) {
      positions.start(this.field.positionStreams!.heads[this.id]!);
      this.positionIndex = 0;
    }
    positions.skip(start - this.positionIndex);
    let buffer = this.positionBuffer;
    if (buffer === null || buffer.length < freq) {
      buffer = this.positionBuffer = new Int32Array(Math.max(16, freq * 2));
      this.views = [];
    }
    for (let index = 0; index < freq; index++) {
      positions.settle();
      buffer[index] = positions.value(0);
      positions.address += 1;
    }
    this.positionIndex = start + freq;
    if (freq > CACHED_VIEW_LENGTHS) return buffer.subarray(0, freq);
    let view = this.views[freq];
    if (view === undefined) view = this.views[freq] = buffer.subarray(0, freq);
    return view;
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
