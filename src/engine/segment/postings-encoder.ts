/**
 * Encodes one term's postings at a time into the `postings.doc` and `postings.pos` streams
 * (layout in docs/formats/segment.md): bit-packed blocks of POSTINGS_BLOCK_SIZE doc deltas and
 * freqs (and, for positional fields, each doc's byte length in `postings.pos`) preceded by skip
 * data with each block's competitive (freq, norm) pairs (block-impacts.ts), positions as delta
 * varints. A term with a single doc writes no doc bytes at all: its doc and freq live in the term
 * dictionary. A merge may end a block short before one it copies as stored (format 8 on).
 */
import { POSTINGS_BLOCK_SIZE } from './leaf-reader.ts';
import type { StoredBlockSink } from './postings-cursor.ts';
import { ByteSink } from './byte-io.ts';
import { bitsRequired, packInto } from './bitpack.ts';
import { ImpactList, ImpactsBuilder, writeImpacts } from './block-impacts.ts';

/** What the term dictionary records about an encoded term (a reused object: copy what you keep). */
export interface EncodedTerm {
  docFreq: number;
  maxFreq: number;
  minNorm: number;
  /** The only doc when docFreq is 1, else -1. */
  singletonDoc: number;
  /** Its freq when docFreq is 1. */
  singletonFreq: number;
  /** Bytes appended to postings.doc for this term (0 for a singleton). */
  docBytes: number;
  /** Bytes appended to postings.pos for this term. */
  posBytes: number;
}

/** Streams (doc, freq, positions) of one term after another into the postings sinks. */
export class PostingsEncoder implements StoredBlockSink {
  private readonly blockDocs = new Int32Array(POSTINGS_BLOCK_SIZE);
  private readonly blockFreqs = new Int32Array(POSTINGS_BLOCK_SIZE);
  private readonly deltaScratch = new Int32Array(POSTINGS_BLOCK_SIZE);
  private readonly freqScratch = new Int32Array(POSTINGS_BLOCK_SIZE);
  /** Bytes each doc of the block takes in postings.pos. */
  private readonly blockPositionBytes = new Int32Array(POSTINGS_BLOCK_SIZE);
  private readonly blockBytes = new ByteSink(64 * 1024);
  private skipLastDocs = new Int32Array(64);
  private skipCounts = new Int32Array(64);
  private skipDocBytes = new Float64Array(64);
  private skipPosBytes = new Float64Array(64);
  /** Where each block's pairs start in `impacts` (they end where the next block's start). */
  private skipImpactStarts = new Int32Array(65);
  private readonly impacts = new ImpactList();
  private readonly impactsBuilder = new ImpactsBuilder();
  private skipCount = 0;
  private readonly result: EncodedTerm = {
    docFreq: 0,
    maxFreq: 0,
    minNorm: 0,
    singletonDoc: -1,
    singletonFreq: 0,
    docBytes: 0,
    posBytes: 0,
  };
  private norms: Uint8Array | null = null;
  private withPositions = false;
  private blockCount = 0;
  private docFreq = 0;
  private lastDoc = -1;
  private blockPrevDoc = -1;
  private termPosStart = 0;
  private blockPosStart = 0;

  constructor(
    private readonly docSink: ByteSink,
    private readonly posSink: ByteSink,
  ) {}

  /** Sets the field of the following terms: its norms (for block impacts) and positions flag. */
  setField(norms: Uint8Array | null, withPositions: boolean): void {
    this.norms = norms;
    this.withPositions = withPositions;
  }

  /** Starts a new term. */
  startTerm(): void {
    this.blockBytes.reset();
    this.skipCount = 0;
    this.blockCount = 0;
    this.docFreq = 0;
    this.lastDoc = -1;
    this.blockPrevDoc = -1;
    this.termPosStart = this.posSink.length;
    this.blockPosStart = this.termPosStart;
    this.impacts.size = 0;
  }

  /** Adds a doc (strictly increasing within the term) with its freq and, for positional fields, positions. */
  addDoc(doc: number, freq: number, positions: ArrayLike<number> | null): void {
    if (doc <= this.lastDoc) throw new RangeError(`postings out of order: doc ${doc} after ${this.lastDoc}`);
    if (freq < 1) throw new RangeError(`invalid freq ${freq} for doc ${doc}`);
    this.lastDoc = doc;
    this.blockDocs[this.blockCount] = doc;
    this.blockFreqs[this.blockCount] = freq;
    this.blockCount++;
    this.docFreq++;
    if (this.withPositions) {
      if (positions === null || positions.length !== freq) {
        throw new RangeError(`doc ${doc} has freq ${freq} but ${positions?.length ?? 0} positions`);
      }
      const sink = this.posSink;
      const start = sink.length;
      let previous = 0;
      for (let i = 0; i < freq; i++) {
        const position = positions[i]!;
        if (position < previous) throw new RangeError(`positions of doc ${doc} are not ascending`);
        sink.writeVarint(position - previous);
        previous = position;
      }
      this.blockPositionBytes[this.blockCount - 1] = sink.length - start;
    }
    if (this.blockCount === POSTINGS_BLOCK_SIZE) this.flushBlock();
  }

  /**
   * Adds docs `from .. to - 1` of a source block, their ids mapped through `docMap` (all kept),
   * with their freqs and, for positional fields, their positions already encoded: doc i's delta
   * varints take `lengths[i]` bytes of `bytes`, doc after doc from `byteStart`. They are copied as
   * they are. Returns the position bytes consumed.
   */
  addEncodedDocs(
    docMap: Int32Array,
    docs: Int32Array,
    freqs: Int32Array,
    lengths: Int32Array | null,
    from: number,
    to: number,
    bytes: Uint8Array | null,
    byteStart: number,
  ): number {
    const withPositions = this.withPositions;
    if (withPositions && (lengths === null || bytes === null)) throw new RangeError('positional field without encoded positions');
    let pointer = byteStart;
    let i = from;
    while (i < to) {
      const runStart = pointer;
      const stop = Math.min(to, i + POSTINGS_BLOCK_SIZE - this.blockCount);
      const blockDocs = this.blockDocs;
      const blockFreqs = this.blockFreqs;
      const positionBytes = this.blockPositionBytes;
      let blockCount = this.blockCount;
      let lastDoc = this.lastDoc;
      for (; i < stop; i++) {
        const doc = docMap[docs[i]!]!;
        if (doc <= lastDoc) throw new RangeError(`postings out of order: doc ${doc} after ${lastDoc}`);
        const freq = freqs[i]!;
        if (freq < 1) throw new RangeError(`invalid freq ${freq} for doc ${doc}`);
        lastDoc = doc;
        blockDocs[blockCount] = doc;
        blockFreqs[blockCount] = freq;
        if (withPositions) {
          const length = lengths![i]!;
          positionBytes[blockCount] = length;
          pointer += length;
        }
        blockCount++;
      }
      this.docFreq += blockCount - this.blockCount;
      this.blockCount = blockCount;
      this.lastDoc = lastDoc;
      if (withPositions) this.posSink.writeRange(bytes!, runStart, pointer);
      if (blockCount === POSTINGS_BLOCK_SIZE) this.flushBlock();
    }
    return pointer - byteStart;
  }

  /** Whether the term's next doc starts a block. */
  get atBlockStart(): boolean {
    return this.blockCount === 0;
  }

  /** Ends the term's current block here, short of POSTINGS_BLOCK_SIZE docs, so that a stored block can follow. */
  endBlockEarly(): void {
    if (this.blockCount > 0) this.flushBlock();
  }

  /** The term's last doc so far (-1 before its first). */
  get termLastDoc(): number {
    return this.lastDoc;
  }

  /**
   * Appends a full block as another segment stored it (call at a block start): its docs keep their
   * distances, and the first follows the term's last doc by `firstDelta` + 1, written over the
   * stored delta (it must fit the block's delta width); its competitive pairs `impactFreqs` /
   * `impactNorms` `[impactStart, impactEnd)`, its bytes `docs[docStart, docEnd)` and positions
   * `positions[posStart, posEnd)` as they are.
   */
  addStoredBlock(
    lastDoc: number,
    firstDelta: number,
    impactFreqs: Int32Array,
    impactNorms: Uint8Array,
    impactStart: number,
    impactEnd: number,
    docs: Uint8Array,
    docStart: number,
    docEnd: number,
    positions: Uint8Array,
    posStart: number,
    posEnd: number,
  ): void {
    if (this.blockCount !== 0) throw new RangeError('a stored block must start a block');
    if (lastDoc < this.lastDoc + POSTINGS_BLOCK_SIZE) {
      throw new RangeError(`postings out of order: a block ending at ${lastDoc} after ${this.lastDoc}`);
    }
    this.writeStoredDocs(docs, docStart, docEnd, firstDelta);
    if (this.withPositions) this.posSink.writeRange(positions, posStart, posEnd);
    if (this.skipCount === this.skipLastDocs.length) this.growSkipArrays();
    const entry = this.skipCount++;
    this.skipLastDocs[entry] = lastDoc;
    this.skipCounts[entry] = POSTINGS_BLOCK_SIZE;
    this.skipDocBytes[entry] = docEnd - docStart;
    this.skipPosBytes[entry] = this.posSink.length - this.blockPosStart;
    for (let i = impactStart; i < impactEnd; i++) this.impacts.push(impactFreqs[i]!, impactNorms[i]!);
    this.skipImpactStarts[entry + 1] = this.impacts.size;
    this.docFreq += POSTINGS_BLOCK_SIZE;
    this.lastDoc = lastDoc;
    this.blockPrevDoc = lastDoc;
    this.blockPosStart = this.posSink.length;
  }

  /** Appends a stored block's bytes with its first doc delta (the low bits of its packed deltas, after the two widths) replaced. */
  private writeStoredDocs(docs: Uint8Array, docStart: number, docEnd: number, firstDelta: number): void {
    const width = docs[docStart]!;
    if (firstDelta < 0 || bitsRequired(firstDelta) > width) throw new RangeError(`a first doc delta of ${firstDelta} does not fit ${width} bits`);
    const sink = this.blockBytes;
    const deltasStart = docStart + 2;
    const firstBytes = Math.ceil(width / 8);
    sink.writeRange(docs, docStart, deltasStart);
    let word = 0;
    for (let i = 0; i < firstBytes; i++) word |= docs[deltasStart + i]! << (8 * i);
    word = width === 32 ? firstDelta : (word & ~((1 << width) - 1)) | firstDelta;
    for (let i = 0; i < firstBytes; i++) sink.writeByte((word >>> (8 * i)) & 0xff);
    sink.writeRange(docs, deltasStart + firstBytes, docEnd);
  }

  /** Ends the term: writes skip data and blocks, returns what the term dictionary needs. */
  finishTerm(): EncodedTerm {
    const result = this.result;
    result.docFreq = this.docFreq;
    result.posBytes = this.posSink.length - this.termPosStart;
    if (this.docFreq === 0) {
      result.docBytes = 0;
      return result;
    }
    if (this.docFreq === 1) {
      result.singletonDoc = this.blockDocs[0]!;
      result.singletonFreq = this.blockFreqs[0]!;
      result.maxFreq = result.singletonFreq;
      result.minNorm = this.norms === null ? 0 : this.norms[result.singletonDoc]!;
      result.docBytes = 0;
      return result;
    }
    if (this.blockCount > 0) this.flushBlock();
    const docStart = this.docSink.length;
    const blocks = this.skipCount;
    // Readers take a term of at most a block's docs for a single block.
    if (blocks > 1 && this.docFreq <= POSTINGS_BLOCK_SIZE) throw new RangeError(`a term of ${this.docFreq} docs in ${blocks} blocks`);
    const { freqs, norms } = this.impacts;
    let maxFreq = 0;
    let minNorm = 255;
    for (let b = 0; b < blocks; b++) {
      const blockMaxFreq = freqs[this.skipImpactStarts[b + 1]! - 1]!;
      if (blockMaxFreq > maxFreq) maxFreq = blockMaxFreq;
      if (norms[this.skipImpactStarts[b]!]! < minNorm) minNorm = norms[this.skipImpactStarts[b]!]!;
    }
    this.writeSkipData(blocks);
    this.docSink.writeSink(this.blockBytes);
    result.singletonDoc = -1;
    result.singletonFreq = 0;
    result.maxFreq = maxFreq;
    result.minNorm = minNorm;
    result.docBytes = this.docSink.length - docStart;
    return result;
  }

  private writeSkipData(blocks: number): void {
    const sink = this.docSink;
    const { freqs, norms } = this.impacts;
    const starts = this.skipImpactStarts;
    if (blocks === 1) {
      sink.writeVarint(this.skipLastDocs[0]!);
      writeImpacts(sink, freqs, norms, 0, starts[1]!);
      return;
    }
    sink.writeVarint(blocks);
    let previousLastDoc = -1;
    for (let b = 0; b < blocks; b++) {
      sink.writeVarint(this.skipLastDocs[b]! - previousLastDoc - 1);
      previousLastDoc = this.skipLastDocs[b]!;
      sink.writeVarint(POSTINGS_BLOCK_SIZE - this.skipCounts[b]!);
      sink.writeVarint(this.skipDocBytes[b]!);
      if (this.withPositions) sink.writeVarint(this.skipPosBytes[b]!);
      const start = starts[b]!;
      const end = starts[b + 1]!;
      sink.writeVarint(freqs[end - 1]! - 1);
      sink.writeByte(norms[start]!);
      writeImpacts(sink, freqs, norms, start, end - start);
    }
  }

  private flushBlock(): void {
    const count = this.blockCount;
    const docs = this.blockDocs;
    const freqs = this.blockFreqs;
    const positionBytes = this.blockPositionBytes;
    const deltas = this.deltaScratch;
    const freqsMinusOne = this.freqScratch;
    const withPositions = this.withPositions;
    let previous = this.blockPrevDoc;
    let deltaUnion = 0;
    let freqUnion = 0;
    let positionUnion = 0;
    for (let i = 0; i < count; i++) {
      const doc = docs[i]!;
      const delta = doc - previous - 1;
      const freq = freqs[i]! - 1;
      deltas[i] = delta;
      freqsMinusOne[i] = freq;
      deltaUnion |= delta;
      freqUnion |= freq;
      if (withPositions) positionUnion |= positionBytes[i]!;
      previous = doc;
    }
    const sink = this.blockBytes;
    const start = sink.length;
    const docBits = bitsRequired(deltaUnion);
    const freqBits = bitsRequired(freqUnion);
    sink.writeByte(docBits);
    sink.writeByte(freqBits);
    packInto(sink, deltas, count, docBits);
    packInto(sink, freqsMinusOne, count, freqBits);
    if (withPositions) {
      const positionBits = bitsRequired(positionUnion);
      sink.writeByte(positionBits);
      packInto(sink, positionBytes, count, positionBits);
    }

    if (this.skipCount === this.skipLastDocs.length) this.growSkipArrays();
    const entry = this.skipCount++;
    this.skipLastDocs[entry] = previous;
    this.skipCounts[entry] = count;
    this.skipDocBytes[entry] = sink.length - start;
    this.skipPosBytes[entry] = this.posSink.length - this.blockPosStart;
    const builder = this.impactsBuilder;
    const pairs = builder.compute(this.blockDocs, this.blockFreqs, count, this.norms);
    for (let i = 0; i < pairs; i++) this.impacts.push(builder.freqs[i]!, builder.norms[i]!);
    this.skipImpactStarts[entry + 1] = this.impacts.size;
    this.blockPrevDoc = previous;
    this.blockPosStart = this.posSink.length;
    this.blockCount = 0;
  }

  private growSkipArrays(): void {
    const size = this.skipLastDocs.length * 2;
    this.skipLastDocs = grown(this.skipLastDocs, size);
    this.skipCounts = grown(this.skipCounts, size);
    this.skipDocBytes = grown(this.skipDocBytes, size);
    this.skipPosBytes = grown(this.skipPosBytes, size);
    this.skipImpactStarts = grown(this.skipImpactStarts, size + 1);
  }
}

/** A copy of a typed array in a larger one of the same kind. */
function grown<T extends Int32Array | Float64Array | Uint8Array>(array: T, size: number): T {
  const created = new (array.constructor as new (length: number) => T)(size);
  created.set(array);
  return created;
}
