/**
 * Reads one term's postings from the `postings.doc` / `postings.pos` files by byte ranges
 * (paged-file.ts: verified pages through the thread's page cache from format 6 on). Skip data is
 * read and decoded when the cursor is created (a long list's is then kept by the thread's skip
 * cache for the next cursors over it), except each block's competitive (freq, norm) pairs
 * (format 7 on, block-impacts.ts): those are only stepped over then, and decoded from the bytes
 * kept when the block's bound is asked for (or a merge copies the block). A block's bytes are
 * read only when the cursor enters it, its docs unpacked as far as next/advance need, its freqs
 * on the first `freq()` there, its positions only on `positions()`: from format 4 on, through the
 * block's per-doc position byte lengths, so the positions of the docs stepped over are never
 * decoded. Merges read whole blocks instead, their positions left encoded (`nextEncodedBlock`) or
 * the block as it is stored (`takeStoredBlock`).
 */
import { NO_MORE_DOCS, POSTINGS_BLOCK_SIZE, type ImpactBound, type PostingsCursor } from './leaf-reader.ts';
import { PACKED_VALUE_MAX_WIDTH, packedBytes, unpackFrom } from './bitpack.ts';
import { readVarintAt, varintEnd } from './byte-io.ts';
import { corruptFile } from './segment-file.ts';
import { READ_PADDING, type SegmentDataFile } from './paged-file.ts';
import { checkPositionLengths, measurePositionLengths, type EncodedPositions } from './encoded-positions.ts';
import { ImpactList, MAX_BLOCK_IMPACTS, MAX_IMPACTS_BYTES, readImpacts, skipImpacts } from './block-impacts.ts';
import { SKIP_CACHE_BYTES_PER_THREAD, SkipCache } from './skip-cache.ts';

/** First segment format whose positional blocks carry per-doc position byte lengths. */
export const POSITION_LENGTHS_FORMAT_VERSION = 4;

const SKIP_STRIDE = 7;
const LAST_DOC = 0;
const DOC_START = 1;
const POS_START = 2;
const MAX_FREQ = 3;
const MIN_NORM = 4;
/** Offset of the block's pairs in postings.doc (format 7 on). */
const IMPACTS_AT = 5;
/** The block's doc count. */
const COUNT = 6;

/** First segment format whose skip entries carry each block's competitive (freq, norm) pairs. */
export const BLOCK_IMPACTS_FORMAT_VERSION = 7;

/** First segment format whose skip data carries each block's doc count (blocks before a term's last may be short). */
export const BLOCK_COUNTS_FORMAT_VERSION = 8;

/** Upper bound of the bytes of one block's skip entry before its pairs (four varints of at most 8 bytes, a count of one, and a byte). */
const MAX_SKIP_ENTRY_BYTES = 34;

/** Bytes a skip entry with pairs usually takes at most: skip data is read in ranges of this many per block, and more when it runs longer. */
const TYPICAL_IMPACT_SKIP_ENTRY_BYTES = 20;

const EMPTY = new Uint8Array(8);
/** Widest packed values read two per 4-byte read (2 x 12 bits fit in the 25 past any bit offset). */
const PAIR_MAX_WIDTH = 12;
/** Widest doc deltas read three per 4-byte read when a block is decoded to its end. */
const TRIPLE_MAX_WIDTH = 8;
/** Packed values of these widths are summed a 4-byte read at a time, several in parallel (`sumPacked`). */
const SUM_MIN_WIDTH = 1;
const SUM_MAX_WIDTH = 8;
/** Values of 1 or 2 bits are summed as bit counts, 24 bits a read. */
const NARROW_MAX_WIDTH = 2;
/** Per width: how many values one read sums (as many as fit in the 25 bits past any bit offset), and the masks and multiplier doing it. */
const SUM_COUNT = new Int32Array(SUM_MAX_WIDTH + 1);
const SUM_FIELDS = new Int32Array(SUM_MAX_WIDTH + 1);
const SUM_EVEN = new Int32Array(SUM_MAX_WIDTH + 1);
const SUM_MULTIPLIER = new Int32Array(SUM_MAX_WIDTH + 1);
const SUM_SHIFT = new Int32Array(SUM_MAX_WIDTH + 1);
SUM_COUNT[1] = 24;
SUM_COUNT[2] = 12;
for (let width = NARROW_MAX_WIDTH + 1; width <= SUM_MAX_WIDTH; width++) {
  const count = Math.floor(25 / width);
  const lanes = Math.ceil(count / 2);
  SUM_COUNT[width] = count;
  SUM_FIELDS[width] = 2 ** (count * width) - 1;
  for (let field = 0; field < count; field += 2) SUM_EVEN[width]! |= ((1 << width) - 1) << (field * width);
  for (let lane = 0; lane < lanes; lane++) SUM_MULTIPLIER[width]! |= 1 << (lane * 2 * width);
  SUM_SHIFT[width] = (lanes - 1) * 2 * width;
}

/**
 * Sum of the first SUM_COUNT[width] values packed in `word` (width SUM_MIN_WIDTH..SUM_MAX_WIDTH):
 * from 3 bits on, pairs of neighbours are added in lanes of twice the width, and one
 * multiplication gathers the lanes into the top one (the sum fits there, so no lane carries into
 * the next).
 */
function sumPacked(word: number, width: number): number {
  if (width <= NARROW_MAX_WIDTH) return sumNarrow(word, width);
  const fields = word & SUM_FIELDS[width]!;
  const even = SUM_EVEN[width]!;
  const lanes = (fields & even) + ((fields >>> width) & even);
  return (Math.imul(lanes, SUM_MULTIPLIER[width]!) >>> SUM_SHIFT[width]!) & ((1 << (2 * width)) - 1);
}

/**
 * Sum of the first SUM_COUNT[width] values of 1 or 2 bits packed in `word`: 1-bit values are
 * first counted per pair of bits, then the 2-bit counts are added per 4 bits, per byte, and over
 * the three bytes by one multiplication.
 */
function sumNarrow(word: number, width: number): number {
  let bits = word & 0xffffff;
  if (width === 1) bits -= (bits >>> 1) & 0x555555;
  bits = (bits & 0x333333) + ((bits >>> 2) & 0x333333);
  bits = (bits + (bits >>> 4)) & 0x0f0f0f;
  return (Math.imul(bits, 0x010101) >>> 16) & 0xff;
}

/** Below any phrase start's target. */
const NO_POSITION_YET = -0x40000000;

/** `keepStartsAt` over decoded positions. */
function keepStartsIn(positions: ArrayLike<number>, starts: Int32Array, count: number, offset: number): number {
  const length = positions.length;
  let pointer = 0;
  let kept = 0;
  for (let j = 0; j < count; j++) {
    const start = starts[j]!;
    const target = start + offset;
    while (pointer < length && positions[pointer]! < target) pointer++;
    if (pointer === length) break;
    if (positions[pointer] === target) starts[kept++] = start;
  }
  return kept;
}

/** Above every position: `positionsUpTo` decodes all of them. */
const NO_MORE_POSITIONS = 0x7fffffff;
const NO_INTS = new Int32Array(0);
const NO_SKIP = new Float64Array(0);

/** Terms of at least this many blocks keep their decoded skip data in the thread's skip cache. */
const SKIP_CACHE_MIN_BLOCKS = 16;

/** Decoded skip data of a term, as its cursors share it through the skip cache (never changed once decoded). */
interface DecodedSkip {
  readonly skip: Float64Array;
  readonly ranges: SkipRange[] | null;
}

const skipCache = new SkipCache<DecodedSkip>(SKIP_CACHE_BYTES_PER_THREAD);

/** The skip data `[start, end)` of the file, held by `ranges`, copied into one range of its own (cached skip data pins no page). */
function compactSkipRange(ranges: readonly SkipRange[], start: number, end: number): SkipRange {
  const data = new Uint8Array(end - start + READ_PADDING);
  for (let i = 0; i < ranges.length; i++) {
    const range = ranges[i]!;
    const rangeEnd = i + 1 < ranges.length ? ranges[i + 1]!.start : end;
    data.set(range.data.subarray(range.start - range.base, rangeEnd - range.base), range.start - start);
  }
  return { data, base: start, start };
}

/** Block-sized buffers a merge lends the cursors it reads one after another (`nextEncodedBlock`). */
export interface BlockBuffers {
  docs: Int32Array;
  freqs: Int32Array;
  /** Each doc's position byte length, for positional fields. */
  positionLengths: Int32Array;
}

/** Buffers for `nextEncodedBlock`, each of a block's size. */
export function blockBuffers(): BlockBuffers {
  return {
    docs: new Int32Array(POSTINGS_BLOCK_SIZE),
    freqs: new Int32Array(POSTINGS_BLOCK_SIZE),
    positionLengths: new Int32Array(POSTINGS_BLOCK_SIZE),
  };
}


/** Skip data as read: file offset `base` at index 0, holding the entries from file offset `start` up to the next range's. */
interface SkipRange {
  data: Uint8Array;
  base: number;
  start: number;
}

/** Where a term's postings live, as decoded from the term dictionary. */
export interface TermPostingsPointer {
  docFreq: number;
  maxFreq: number;
  minNorm: number;
  /** The only doc when docFreq is 1 (no bytes in postings.doc), else -1. */
  singletonDoc: number;
  singletonFreq: number;
  /** Offset of the term's skip data in postings.doc. */
  docStart: number;
  /** Offset just past the term's bytes in postings.doc (docStart for a singleton). */
  docEnd: number;
  /** Offset of the term's first position in postings.pos. */
  posStart: number;
  /** Offset just past the term's positions in postings.pos (posStart without positions). */
  posEnd: number;
}

/** The postings files of a segment. */
export interface PostingsStreams {
  docs: SegmentDataFile;
  positions: SegmentDataFile;
  /** Whether blocks of positional fields carry each doc's position byte length (format 4 on). */
  positionLengths: boolean;
  /** Whether skip entries carry each block's competitive (freq, norm) pairs (format 7 on). */
  impacts: boolean;
  /** Whether the skip data of a term of several blocks carries their number and each one's doc count (format 8 on). */
  blockCounts: boolean;
}

/** Takes postings blocks as a segment stores them (PostingsEncoder). */
export interface StoredBlockSink {
  /**
   * A full block with its last doc, its first doc delta (written over the stored one), competitive
   * pairs `impactFreqs` / `impactNorms` `[impactStart, impactEnd)`, bytes `docs[docStart, docEnd)`
   * and positions `positions[posStart, posEnd)`.
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
  ): void;
}

/** PostingsCursor over a segment term. */
export class SegmentPostingsCursor implements PostingsCursor {
  doc = -1;
  docFreq = 0;
  maxFreq = 0;
  minNorm = 0;

  private docFile!: SegmentDataFile;
  private posFile: SegmentDataFile | null = null;
  /** Bytes of the current block (file offset `docBase` at index 0), from `docFile.read`. */
  private docData: Uint8Array = EMPTY;
  private docBase = 0;
  /** End of the current block in docData. */
  private blockEnd = 0;
  /** Bytes of the current block's positions (file offset `posBase` at index 0), null until read. */
  private posData: Uint8Array | null = null;
  /** The bytes posData was last read into (kept across blocks: the next block's positions may lie in them). */
  private lastPosData: Uint8Array | null = null;
  private posBase = 0;
  private posEnd = 0;
  /** Offsets just past the term's bytes in postings.doc and postings.pos. */
  private termDocEnd = 0;
  private termPosEnd = 0;
  /** Whether the blocks carry position byte lengths (read through positionLengthsOffset). */
  private hasPositionLengths = false;
  private blockCountTotal = 0;
  /**
   * Per block, SKIP_STRIDE numbers: last doc, start in postings.doc (-1 = singleton), start in
   * postings.pos, max freq, min norm, start of its pairs in postings.doc, doc count.
   */
  private skip: Float64Array = NO_SKIP;
  /** Skip data of terms too short for the skip cache, kept for the next term `reset` moves to. */
  private ownSkip: Float64Array = NO_SKIP;
  /**
   * The ranges the skip data was read in, which hold the blocks' pairs; null for singletons and
   * formats before 7 (one pair a block: max freq, min norm).
   */
  private skipRanges: SkipRange[] | null = null;
  /** The pairs of block `impactsBlock` (-1: none yet), decoded on demand. */
  private impacts: ImpactList | null = null;
  private impactsBlock = -1;
  /** The current block's docs and freqs: allocated when the first block is loaded (or lent by `nextEncodedBlock`). */
  private docs: Int32Array = NO_INTS;
  private freqs: Int32Array = NO_INTS;
  /** Offset of the block's packed position lengths, -1 until the first positions() there. */
  private positionLengthsOffset = -1;
  private positionBits = 0;
  /** The block's position lengths, unpacked only when wider than PACKED_VALUE_MAX_WIDTH (else read in place through docView). */
  private widePositionLengths: Int32Array | null = null;

  private block = -1;
  private docsInBlock = 0;
  /** Docs of the current block decoded so far (docs are unpacked as far as next/advance need). */
  private docsDecoded = 0;
  /** Docs a read of summed deltas spans on average in the current block (`decodeDocs`); Infinity when its widths are not summed. */
  private skimSpan = Infinity;
  private docBits = 0;
  /** Where the block's packed doc deltas start in docData, read through docView. */
  private docByte = 0;
  private docView: DataView<ArrayBufferLike> = new DataView(EMPTY.buffer);
  private docViewData: Uint8Array = EMPTY;
  private index = -1;
  private freqsLoaded = false;
  private freqOffset = 0;
  private freqBits = 0;
  private shallowBlock = 0;
  private posPointer = 0;
  private posIndex = 0;
  private positionsIndex = -1;
  /** The doc whose positions' byte range locatePositions found: from posPointer to docPositionsEnd. */
  private locatedIndex = -1;
  private docPositionsEnd = 0;
  private positionBuffer: Int32Array | null = null;
  /** Views of positionBuffer by length, so that positions() does not allocate per call. */
  private positionViews: Int32Array[] | null = null;
  private positionView: Int32Array | null = null;
  /** Buffers `readBlockRange` puts a block's doc or position bytes together in when they span pages, and the file offset of its last range. */
  private docScratch: Uint8Array | null = null;
  private posScratch: Uint8Array | null = null;
  private rangeBase = 0;
  /** Where the positions of the block `nextEncodedBlock` loaded start in posData. */
  private encodedStart = 0;
  /** Whether blocks may be handed over as they are stored (format 7 on: the current block and skip entry layout). */
  private storedBlocksCopyable = false;
  /** Where `storedBlockCount` found the term's skip entries to start (format 8 on). */
  private skipEntriesStart = 0;
  /** Bit width of the doc deltas of the block `nextStoredBlockFirstDelta` read. */
  nextStoredBlockDeltaBits = 0;

  constructor(streams: PostingsStreams, pointer: TermPostingsPointer, withPositions: boolean) {
    this.reset(streams, pointer, withPositions);
  }

  /**
   * Moves the cursor to another term's postings, as if created anew for it, keeping its buffers
   * (and the last positions read, when the term is of the same segment): a merge reads its
   * sources' terms one after another through one cursor each.
   */
  reset(streams: PostingsStreams, pointer: TermPostingsPointer, withPositions: boolean): void {
    const posFile = withPositions ? streams.positions : null;
    if (posFile !== this.posFile) this.lastPosData = null;
    this.doc = -1;
    this.docBase = 0;
    this.blockEnd = 0;
    this.posData = null;
    this.posEnd = 0;
    this.skipRanges = null;
    this.impactsBlock = -1;
    this.positionLengthsOffset = -1;
    this.widePositionLengths = null;
    this.block = -1;
    this.docsInBlock = 0;
    this.docsDecoded = 0;
    this.index = -1;
    this.freqsLoaded = false;
    this.shallowBlock = 0;
    this.posPointer = 0;
    this.posIndex = 0;
    this.positionsIndex = -1;
    this.locatedIndex = -1;
    // Block buffers are allocated for the first term's size (or lent by a merge): a longer term needs its own.
    if (this.docs.length < Math.min(POSTINGS_BLOCK_SIZE, pointer.docFreq)) {
      this.docs = NO_INTS;
      this.freqs = NO_INTS;
    }
    this.docFreq = pointer.docFreq;
    this.maxFreq = pointer.maxFreq;
    this.minNorm = pointer.minNorm;
    this.docFile = streams.docs;
    this.posFile = posFile;
    this.termDocEnd = pointer.docEnd;
    this.termPosEnd = pointer.posEnd;
    this.hasPositionLengths = withPositions && streams.positionLengths && pointer.docFreq > 1;
    this.storedBlocksCopyable = streams.positionLengths && streams.impacts && pointer.docFreq >= POSTINGS_BLOCK_SIZE;
    // From format 8 on, the skip data of a term of several blocks starts with their number (short blocks may add to the docs' ceil(docFreq / 128)).
    const countsStored = streams.blockCounts && pointer.docFreq > POSTINGS_BLOCK_SIZE;
    const fewestBlocks = Math.ceil(pointer.docFreq / POSTINGS_BLOCK_SIZE);
    const cached = countsStored || fewestBlocks >= SKIP_CACHE_MIN_BLOCKS ? skipCache.get(streams.docs, pointer.docStart) : undefined;
    // A cached term's skip array holds exactly its blocks.
    const blocks = cached !== undefined ? cached.skip.length / SKIP_STRIDE : countsStored ? this.storedBlockCount(streams.docs, pointer) : fewestBlocks;
    this.blockCountTotal = blocks;
    if (cached !== undefined) {
      // The first block is then read by loadBlock.
      this.skip = cached.skip;
      this.skipRanges = cached.ranges;
      this.docData = EMPTY;
      return;
    }
    // Skip data the cache keeps is never changed: a cached term's gets an array of its own.
    let skip = this.ownSkip;
    if (blocks >= SKIP_CACHE_MIN_BLOCKS) skip = new Float64Array(blocks * SKIP_STRIDE);
    else if (skip.length < blocks * SKIP_STRIDE) skip = this.ownSkip = new Float64Array(Math.max(blocks, 4) * SKIP_STRIDE);
    this.skip = skip;
    skip[POS_START] = pointer.posStart;
    skip[MAX_FREQ] = pointer.maxFreq;
    skip[MIN_NORM] = pointer.minNorm;
    skip[COUNT] = pointer.docFreq;
    const withImpacts = streams.impacts && pointer.docFreq > 1;
    if (pointer.docFreq === 1) {
      this.docData = EMPTY;
      skip[LAST_DOC] = pointer.singletonDoc;
      skip[DOC_START] = -1;
      if (this.docs.length === 0) {
        this.docs = new Int32Array(1);
        this.freqs = new Int32Array(1);
      }
      this.docs[0] = pointer.singletonDoc;
      this.freqs[0] = pointer.singletonFreq;
      return;
    }
    const docFile = streams.docs;
    if (blocks === 1) {
      // The whole term is one range: its last doc, then its only block.
      const data = (this.docData = docFile.read(pointer.docStart, pointer.docEnd));
      const base = docFile.base;
      skip[LAST_DOC] = readVarintAt(data, pointer.docStart - base);
      let blockStart = varintEnd;
      if (withImpacts) {
        this.addSkipRange(data, base, pointer.docStart);
        skip[IMPACTS_AT] = blockStart + base;
        blockStart = skipImpacts(data, blockStart);
        if (blockStart < 0 || blockStart + base > pointer.docEnd) throw corruptFile(docFile.path, 'the skip entry of block 0 has malformed impacts');
      }
      skip[DOC_START] = blockStart + base;
      this.docBase = base;
      return;
    }
    // A skip entry with pairs has no fixed size bound: read ranges for typical entries, and further ranges as they run out.
    const entryBytes = MAX_SKIP_ENTRY_BYTES + (withImpacts ? MAX_IMPACTS_BYTES : 0);
    const estimate = withImpacts ? TYPICAL_IMPACT_SKIP_ENTRY_BYTES : MAX_SKIP_ENTRY_BYTES;
    const entriesStart = countsStored ? this.skipEntriesStart : pointer.docStart;
    let readEnd = Math.min(pointer.docEnd, entriesStart + blocks * estimate + entryBytes - estimate);
    let data = docFile.read(entriesStart, readEnd);
    let dataBase = docFile.base;
    if (withImpacts) this.addSkipRange(data, dataBase, entriesStart);
    let position = entriesStart - dataBase;
    let lastDoc = -1;
    let posStart = pointer.posStart;
    let docsLeft = pointer.docFreq;
    for (let b = 0; b < blocks; b++) {
      if (position + dataBase + entryBytes > readEnd && readEnd < pointer.docEnd) {
        const from = position + dataBase;
        readEnd = Math.min(pointer.docEnd, from + (blocks - b) * estimate + entryBytes - estimate);
        data = docFile.read(from, readEnd);
        dataBase = docFile.base;
        position = from - dataBase;
        if (withImpacts) this.addSkipRange(data, dataBase, from);
      }
      const base = b * SKIP_STRIDE;
      lastDoc += readVarintAt(data, position) + 1;
      skip[base + LAST_DOC] = lastDoc;
      let count = Math.min(POSTINGS_BLOCK_SIZE, docsLeft);
      if (countsStored) {
        count = POSTINGS_BLOCK_SIZE - readVarintAt(data, varintEnd);
        if (count < 1 || count > docsLeft - (blocks - 1 - b) || (b === blocks - 1 && count !== docsLeft)) {
          throw corruptFile(docFile.path, `the skip entry of block ${b} has a doc count of ${count} with ${docsLeft} docs left`);
        }
      }
      docsLeft -= count;
      skip[base + COUNT] = count;
      skip[base + DOC_START] = readVarintAt(data, varintEnd);
      skip[base + POS_START] = posStart;
      if (withPositions) posStart += readVarintAt(data, varintEnd);
      skip[base + MAX_FREQ] = readVarintAt(data, varintEnd) + 1;
      position = varintEnd;
      skip[base + MIN_NORM] = data[position++]!;
      if (withImpacts) {
        skip[base + IMPACTS_AT] = position + dataBase;
        position = skipImpacts(data, position);
        if (position < 0) throw corruptFile(docFile.path, `the skip entry of block ${b} has malformed impacts`);
      }
    }
    if (position + dataBase > pointer.docEnd) throw corruptFile(docFile.path, 'skip data runs past the term');
    // The first blocks may lie in the bytes just read (loadBlock checks).
    this.docData = data;
    this.docBase = dataBase;
    let blockStart = position + dataBase;
    for (let b = 0; b < blocks; b++) {
      const length = skip[b * SKIP_STRIDE + DOC_START]!;
      skip[b * SKIP_STRIDE + DOC_START] = blockStart;
      blockStart += length;
    }
    if (blocks >= SKIP_CACHE_MIN_BLOCKS) {
      const ranges = this.skipRanges === null ? null : [compactSkipRange(this.skipRanges, entriesStart, position + dataBase)];
      skipCache.set(docFile, pointer.docStart, { skip, ranges }, skip.byteLength + (ranges?.[0]!.data.byteLength ?? 0));
    }
  }

  /** The block count at the start of a term's skip data (format 8 on), checked against its docs. */
  private storedBlockCount(docFile: SegmentDataFile, pointer: TermPostingsPointer): number {
    const data = docFile.read(pointer.docStart, Math.min(pointer.docEnd, pointer.docStart + 8));
    const blocks = readVarintAt(data, pointer.docStart - docFile.base);
    if (blocks < Math.ceil(pointer.docFreq / POSTINGS_BLOCK_SIZE) || blocks > pointer.docFreq) {
      throw corruptFile(docFile.path, `a term of ${pointer.docFreq} docs has ${blocks} blocks`);
    }
    this.skipEntriesStart = varintEnd + docFile.base;
    return blocks;
  }

  /** Moves to the next doc and returns it. */
  next(): number {
    const index = ++this.index;
    if (index < this.docsInBlock) {
      if (index >= this.docsDecoded) this.decodeDocs(NO_MORE_DOCS);
      return (this.doc = this.docs[index]!);
    }
    if (this.doc === NO_MORE_DOCS || this.block + 1 >= this.blockCountTotal) return this.exhaust();
    this.loadBlock(this.block + 1);
    this.index = 0;
    if (this.docsDecoded === 0) this.decodeDocs(NO_MORE_DOCS);
    return (this.doc = this.docs[0]!);
  }

  /** Moves to the first doc >= target and returns it. */
  advance(target: number): number {
    if (this.doc === NO_MORE_DOCS) return NO_MORE_DOCS;
    if (this.block < 0 || target > this.skip[this.block * SKIP_STRIDE + LAST_DOC]!) {
      const block = this.findBlock(this.block < 0 ? 0 : this.block + 1, target);
      if (block >= this.blockCountTotal) return this.exhaust();
      this.loadBlock(block);
      this.index = -1;
    }
    const docs = this.docs;
    const decoded = this.docsDecoded;
    let index = this.index + 1;
    while (index < decoded && docs[index]! < target) index++;
    if (index === decoded) index = this.decodeDocs(target);
    this.index = index;
    return (this.doc = docs[index]!);
  }

  /** Term frequency in the current doc. */
  freq(): number {
    if (!this.freqsLoaded) this.loadFreqs();
    return this.freqs[this.index]!;
  }

  /** Positions of the term in the current doc (a view valid until the next positions() call). */
  positions(): ArrayLike<number> {
    if (this.posFile === null) throw new RangeError('field was indexed without positions');
    if (this.positionsIndex === this.index) return this.positionView!;
    if (!this.hasPositionLengths) return this.positionsByFreq(this.posData ?? this.readBlockPositions(this.posFile));
    return this.decodePositions(NO_MORE_POSITIONS);
  }

  /**
   * Positions of the term in the current doc, decoded only up to the first >= limit (the view may
   * stop there; a later positions() call decodes them all). Format 4 on; all of them before.
   */
  positionsUpTo(limit: number): ArrayLike<number> {
    if (this.positionsIndex === this.index || !this.hasPositionLengths) return this.positions();
    return this.decodePositions(limit);
  }

  /**
   * Writes the current doc's positions, each less `offset`, to `out` (room for `positionsByteLength()`
   * of them) and returns how many there are.
   */
  positionStartsInto(out: Int32Array, offset: number): number {
    if (!this.hasPositionLengths || this.positionsIndex === this.index) {
      const positions = this.positions();
      for (let j = 0; j < positions.length; j++) out[j] = positions[j]! - offset;
      return positions.length;
    }
    this.locatePositions();
    const posData = this.posData!;
    let pointer = this.posPointer;
    const end = this.docPositionsEnd;
    let count = 0;
    let position = 0;
    while (pointer < end) {
      let byte = posData[pointer++]!;
      if (byte < 0x80) {
        position += byte;
      } else {
        let delta = byte & 0x7f;
        let shift = 7;
        do {
          byte = posData[pointer++]!;
          delta |= (byte & 0x7f) << shift;
          shift += 7;
        } while (byte >= 0x80 && shift < 35);
        position += delta;
      }
      out[count++] = position - offset;
    }
    if (pointer > end) throw corruptFile(this.posFile!.path, `a position of doc ${this.doc} runs past its byte length`);
    return count;
  }

  /**
   * Keeps, in order, those of the first `count` of `starts` (ascending) at which the term sits
   * `offset` further in the current doc, and returns how many; its positions are decoded only as
   * far as that takes.
   */
  keepStartsAt(starts: Int32Array, count: number, offset: number): number {
    if (!this.hasPositionLengths || this.positionsIndex === this.index) return keepStartsIn(this.positions(), starts, count, offset);
    this.locatePositions();
    const posData = this.posData!;
    let pointer = this.posPointer;
    const end = this.docPositionsEnd;
    let position = 0;
    // Below every target (starts may be negative): no position decoded yet.
    let current = NO_POSITION_YET;
    let kept = 0;
    starts: for (let j = 0; j < count; j++) {
      const start = starts[j]!;
      const target = start + offset;
      while (current < target) {
        if (pointer >= end) break starts;
        let byte = posData[pointer++]!;
        if (byte < 0x80) {
          position += byte;
        } else {
          let delta = byte & 0x7f;
          let shift = 7;
          do {
            byte = posData[pointer++]!;
            delta |= (byte & 0x7f) << shift;
            shift += 7;
          } while (byte >= 0x80 && shift < 35);
          position += delta;
        }
        current = position;
      }
      if (current === target) starts[kept++] = start;
    }
    if (pointer > end) throw corruptFile(this.posFile!.path, `a position of doc ${this.doc} runs past its byte length`);
    return kept;
  }

  /** Byte length of the current doc's encoded positions, which grows with its freq (the freq before format 4). */
  positionsByteLength(): number {
    if (this.posFile === null) throw new RangeError('field was indexed without positions');
    if (!this.hasPositionLengths) return this.freq();
    this.locatePositions();
    return this.docPositionsEnd - this.posPointer;
  }

  /** Reads the current block's bytes of postings.pos (the term's, for a term of one block). */
  private readBlockPositions(posFile: SegmentDataFile): Uint8Array {
    const block = this.block;
    const start = this.skip[block * SKIP_STRIDE + POS_START]!;
    const end = block + 1 < this.blockCountTotal ? this.skip[(block + 1) * SKIP_STRIDE + POS_START]! : this.termPosEnd;
    if (end < start) throw corruptFile(posFile.path, `positions of block ${block} end before they start`);
    let data = this.lastPosData;
    if (data === null || start < this.posBase || end > this.posBase + data.length - READ_PADDING) {
      data = this.lastPosData = this.readBlockRange(posFile, start, end, true);
      this.posBase = this.rangeBase;
    }
    this.posEnd = (end - this.posBase) | 0;
    this.posPointer = (start - this.posBase) | 0;
    this.posData = data;
    return data;
  }

  /**
   * `file.read(start, end)` for a block's bytes, but a range running over a page boundary is put
   * together in a buffer the cursor keeps for its docs or its positions (valid until its next such
   * read), not in a new one each time; sets `rangeBase`.
   */
  private readBlockRange(file: SegmentDataFile, start: number, end: number, positions: boolean): Uint8Array {
    if (end > start) {
      const head = file.read(start, start + 1);
      const headBase = file.base;
      const headEnd = headBase + head.length - READ_PADDING;
      this.rangeBase = headBase;
      if (end <= headEnd) return head;
      const tail = file.read(headEnd, end);
      if (file.base === headEnd) {
        const size = end - start;
        let scratch = positions ? this.posScratch : this.docScratch;
        if (scratch === null || scratch.length < size + READ_PADDING) {
          scratch = new Uint8Array(Math.max(size + READ_PADDING, 2 * (scratch?.length ?? 0), 512));
          if (positions) this.posScratch = scratch;
          else this.docScratch = scratch;
        }
        scratch.set(head.subarray(start - headBase, headEnd - headBase));
        scratch.set(tail.subarray(0, end - headEnd), headEnd - start);
        scratch.fill(0, size, size + READ_PADDING);
        this.rangeBase = start;
        return scratch.subarray(0, size + READ_PADDING);
      }
    }
    const data = file.read(start, end);
    this.rangeBase = file.base;
    return data;
  }

  /**
   * Format 4 blocks: finds the current doc's encoded positions, `[posPointer, docPositionsEnd)`
   * of posData, by adding up the byte lengths of the docs between the last one found and it.
   */
  private locatePositions(): void {
    const index = this.index;
    if (this.locatedIndex === index) return;
    if (this.posData === null) this.readBlockPositions(this.posFile!);
    if (this.positionLengthsOffset < 0) this.locatePositionLengths();
    let start = this.posPointer;
    let length = 0;
    const wide = this.widePositionLengths;
    if (wide === null) {
      const from = this.posIndex;
      const count = this.docsInBlock;
      if (count - index < index - from) {
        // Nearer the block's end: the doc's positions start where the lengths from it to the end, summed, leave off.
        start = this.posEnd - this.sumPositionLengths(index, count);
        if (start < this.posPointer) throw corruptFile(this.posFile!.path, `position lengths of block ${this.block} run past its positions`);
      } else {
        start += this.sumPositionLengths(from, index);
      }
      const width = this.positionBits;
      const bit = index * width;
      length = (this.docView.getUint32(this.positionLengthsOffset + (bit >>> 3), true) >>> (bit & 7)) & ((1 << width) - 1);
    } else {
      for (let j = this.posIndex; j <= index; j++) {
        start += length;
        length = wide[j]!;
      }
    }
    const end = start + length;
    if (end > this.posEnd) throw corruptFile(this.posFile!.path, `positions of doc ${this.doc} end past the data`);
    this.posPointer = start;
    this.posIndex = index;
    this.docPositionsEnd = end;
    this.locatedIndex = index;
  }

  /** Sum of the current block's packed position lengths `[from, to)` (not wide ones). */
  private sumPositionLengths(from: number, to: number): number {
    const view = this.docView;
    const width = this.positionBits;
    const mask = (1 << width) - 1;
    const offset = this.positionLengthsOffset;
    let bit = from * width;
    let j = from;
    let sum = 0;
    if (width >= SUM_MIN_WIDTH && width <= SUM_MAX_WIDTH) {
      const perWord = SUM_COUNT[width]!;
      for (; j + perWord <= to; j += perWord) {
        sum += sumPacked(view.getUint32(offset + (bit >>> 3), true) >>> (bit & 7), width);
        bit += perWord * width;
      }
    }
    if (width <= PAIR_MAX_WIDTH) {
      const step = 2 * width;
      for (; j + 1 < to; j += 2) {
        const word = view.getUint32(offset + (bit >>> 3), true) >>> (bit & 7);
        sum += (word & mask) + ((word >>> width) & mask);
        bit += step;
      }
    }
    for (; j < to; j++) {
      sum += (view.getUint32(offset + (bit >>> 3), true) >>> (bit & 7)) & mask;
      bit += width;
    }
    return sum;
  }

  /** Format 4 blocks: decodes the current doc's positions up to the first >= limit. */
  private decodePositions(limit: number): Int32Array {
    this.locatePositions();
    const posData = this.posData!;
    let pointer = this.posPointer;
    const end = this.docPositionsEnd;
    const out = this.positionBufferFor(end - pointer);
    let count = 0;
    let position = 0;
    while (pointer < end) {
      let byte = posData[pointer++]!;
      if (byte < 0x80) {
        position += byte;
      } else {
        let delta = byte & 0x7f;
        let shift = 7;
        do {
          byte = posData[pointer++]!;
          delta |= (byte & 0x7f) << shift;
          shift += 7;
        } while (byte >= 0x80 && shift < 35);
        position += delta;
      }
      out[count++] = position;
      if (position >= limit) break;
    }
    if (pointer > end) throw corruptFile(this.posFile!.path, `a position of doc ${this.doc} runs past its byte length`);
    if (pointer < end) return this.positionViewOf(out, count);
    this.posPointer = end;
    this.posIndex = this.index + 1;
    return this.finishPositions(out, count);
  }

  /** Singletons and formats before 4: skips earlier docs' positions by counting varints. */
  private positionsByFreq(posData: Uint8Array): ArrayLike<number> {
    if (!this.freqsLoaded) this.loadFreqs();
    const freqs = this.freqs;
    let pointer = this.posPointer;
    for (let j = this.posIndex; j < this.index; j++) {
      let remaining = freqs[j]!;
      while (remaining > 0) if (posData[pointer++]! < 0x80) remaining--;
    }
    const freq = freqs[this.index]!;
    const out = this.positionBufferFor(freq);
    let position = 0;
    for (let i = 0; i < freq; i++) {
      let byte = posData[pointer++]!;
      let delta = byte & 0x7f;
      let shift = 7;
      while (byte >= 0x80) {
        byte = posData[pointer++]!;
        delta |= (byte & 0x7f) << shift;
        shift += 7;
      }
      position += delta;
      out[i] = position;
    }
    this.posPointer = pointer;
    return this.finishPositions(out, freq);
  }

  /** The position buffer, grown to hold at least `size` positions. */
  private positionBufferFor(size: number): Int32Array {
    if (this.positionBuffer === null || this.positionBuffer.length < size) {
      this.positionBuffer = new Int32Array(Math.max(16, size, (this.positionBuffer?.length ?? 0) * 2));
      this.positionViews = null;
    }
    return this.positionBuffer;
  }

  /** Records the current doc's decoded positions and returns their view. */
  private finishPositions(out: Int32Array, count: number): Int32Array {
    this.posIndex = this.index + 1;
    this.positionsIndex = this.index;
    return (this.positionView = this.positionViewOf(out, count));
  }

  /** The first `count` positions of the buffer `out`. */
  private positionViewOf(out: Int32Array, count: number): Int32Array {
    return ((this.positionViews ??= [])[count] ??= out.subarray(0, count));
  }

  /** Docs of the block `nextEncodedBlock` loaded, ascending (a view valid until the cursor moves). */
  get blockDocs(): Int32Array {
    return this.docs;
  }

  /** Freqs of the block `nextEncodedBlock` loaded. */
  get blockFreqs(): Int32Array {
    return this.freqs;
  }

  /** Bytes holding the block's encoded positions, doc after doc from `blockPositionStart`. */
  get blockPositionData(): Uint8Array {
    return this.posData!;
  }

  /** Index in `blockPositionData` of the block's first doc's positions. */
  get blockPositionStart(): number {
    return this.encodedStart;
  }

  /**
   * For merges: moves to the last doc of the next block and returns the block's doc count (0 past
   * the end). Its docs and freqs are decoded (into `buffers` unless the cursor has its own: they
   * must then be left alone until the cursor is done); `withPositions`, its positions are left
   * encoded (delta varints, as PostingsEncoder writes them) and each doc's byte length, checked
   * against its freq, goes to `buffers.positionLengths`, so that they can be copied as they are.
   */
  nextEncodedBlock(buffers: BlockBuffers, withPositions: boolean): number {
    if (this.doc === NO_MORE_DOCS || this.block + 1 >= this.blockCountTotal) {
      this.exhaust();
      return 0;
    }
    if (this.docs.length === 0) {
      this.docs = buffers.docs;
      this.freqs = buffers.freqs;
    }
    this.loadBlock(this.block + 1);
    const count = this.docsInBlock;
    if (this.docsDecoded < count) this.decodeDocs(NO_MORE_DOCS);
    this.index = count - 1;
    this.doc = this.docs[count - 1]!;
    if (!this.freqsLoaded) this.loadFreqs();
    if (!withPositions) return count;
    const posFile = this.posFile;
    if (posFile === null) throw new RangeError('field was indexed without positions');
    const data = this.readBlockPositions(posFile);
    const lengths = buffers.positionLengths;
    const start = this.posPointer;
    this.encodedStart = start;
    if (this.hasPositionLengths) {
      this.locatePositionLengths();
      if (this.widePositionLengths !== null) lengths.set(this.widePositionLengths.subarray(0, count));
      else unpackFrom(this.docData, this.positionLengthsOffset, count, this.positionBits, lengths);
      checkPositionLengths(this.encodedPositions(posFile, data, count), lengths);
    } else {
      measurePositionLengths(this.encodedPositions(posFile, data, count), lengths);
    }
    return count;
  }

  /**
   * For merges: the last doc of the next block when `takeStoredBlock` may hand it over as it is
   * stored (a full block of a format 7+ term, positional exactly when `withPositions`), else -1.
   */
  nextStoredBlockLastDoc(withPositions: boolean): number {
    const block = this.block + 1;
    if (!this.storedBlocksCopyable || (this.posFile !== null) !== withPositions || this.doc === NO_MORE_DOCS) return -1;
    if (block >= this.blockCountTotal || this.skip[block * SKIP_STRIDE + COUNT] !== POSTINGS_BLOCK_SIZE) return -1;
    return this.skip[block * SKIP_STRIDE + LAST_DOC]!;
  }

  /** The last doc before the next block (-1 before the first): the next block's first doc delta counts from it. */
  get nextBlockPreviousDoc(): number {
    return this.block < 0 ? -1 : this.skip[this.block * SKIP_STRIDE + LAST_DOC]!;
  }

  /**
   * For merges, of the block `nextStoredBlockLastDoc` offered: its first doc delta, its first doc
   * less `nextBlockPreviousDoc` and one (-1 when its doc delta width is malformed, which decoding
   * the block reports). Its width is then `nextStoredBlockDeltaBits`.
   */
  nextStoredBlockFirstDelta(): number {
    const data = this.storedBlockBytes(this.block + 1);
    const start = (this.skip[(this.block + 1) * SKIP_STRIDE + DOC_START]! - this.docBase) | 0;
    const width = data[start]!;
    this.nextStoredBlockDeltaBits = width;
    if (width > 32) return -1;
    // The first value's bits are the low `width` bits of the 4 bytes after the two widths (ranges are padded).
    const word = data[start + 2]! | (data[start + 3]! << 8) | (data[start + 4]! << 16) | (data[start + 5]! << 24);
    return width === 32 ? word >>> 0 : word & ((1 << width) - 1);
  }

  /** The bytes of the stored block `block` in postings.doc, read into docData unless it holds them already. */
  private storedBlockBytes(block: number): Uint8Array {
    const base = block * SKIP_STRIDE;
    const fileStart = this.skip[base + DOC_START]!;
    const fileEnd = block + 1 < this.blockCountTotal ? this.skip[base + SKIP_STRIDE + DOC_START]! : this.termDocEnd;
    if (fileEnd < fileStart) throw corruptFile(this.docFile.path, `block ${block} ends before it starts`);
    let data = this.docData;
    if (fileStart < this.docBase || fileEnd > this.docBase + data.length - READ_PADDING) {
      data = this.docData = this.docFile.read(fileStart, fileEnd);
      this.docBase = this.docFile.base;
    }
    return data;
  }

  /**
   * Moves past the next block (see `nextStoredBlockLastDoc`) without decoding it and hands it to
   * `sink`, its last doc shifted by `docShift` and its first doc delta to be `firstDelta` (one
   * that fits the block's width): its bytes in postings.doc, its positions' bytes in
   * postings.pos (none without positions), its competitive (freq, norm) pairs. Only the block's
   * layout is checked (its bit widths against its size); its content is as the page checksums
   * verified it. The cursor is then at the block's last doc, good for further blocks only.
   */
  takeStoredBlock(sink: StoredBlockSink, docShift: number, firstDelta: number): void {
    const block = this.block + 1;
    const base = block * SKIP_STRIDE;
    const data = this.storedBlockBytes(block);
    const start = (this.skip[base + DOC_START]! - this.docBase) | 0;
    const end = ((block + 1 < this.blockCountTotal ? this.skip[base + SKIP_STRIDE + DOC_START]! : this.termDocEnd) - this.docBase) | 0;
    this.block = block;
    this.docsInBlock = 0;
    this.index = -1;
    this.posData = null;
    this.posIndex = 0;
    this.positionsIndex = -1;
    this.locatedIndex = -1;
    this.positionLengthsOffset = -1;
    this.freqsLoaded = false;
    this.doc = this.skip[base + LAST_DOC]!;
    let layoutEnd = start + 2 + packedBytes(POSTINGS_BLOCK_SIZE, data[start]!) + packedBytes(POSTINGS_BLOCK_SIZE, data[start + 1]!);
    let widthsValid = start + 2 <= end && data[start]! <= 32 && data[start + 1]! <= 32;
    const posFile = this.posFile;
    // Copyable blocks are of format 7 on: they have pairs.
    const { freqs, norms, size } = this.blockImpacts(block);
    if (posFile === null) {
      if (!widthsValid || layoutEnd !== end) throw corruptFile(this.docFile.path, `block ${block} is malformed`);
      sink.addStoredBlock(this.doc + docShift, firstDelta, freqs, norms, 0, size, data, start, end, EMPTY, 0, 0);
      return;
    }
    widthsValid &&= layoutEnd < end && data[layoutEnd]! <= 31;
    if (widthsValid) layoutEnd += 1 + packedBytes(POSTINGS_BLOCK_SIZE, data[layoutEnd]!);
    if (!widthsValid || layoutEnd !== end) throw corruptFile(this.docFile.path, `block ${block} is malformed`);
    const posData = this.readBlockPositions(posFile);
    sink.addStoredBlock(this.doc + docShift, firstDelta, freqs, norms, 0, size, data, start, end, posData, this.posPointer, this.posEnd);
  }

  private encodedPositions(posFile: SegmentDataFile, data: Uint8Array, count: number): EncodedPositions {
    const { block, posPointer: start, posEnd: end, docs, freqs } = this;
    return { path: posFile.path, block, data, start, end, docs, freqs, count };
  }

  /** Moves the shallow block pointer to the block containing `target`; returns its last doc. */
  shallowAdvance(target: number): number {
    let block = this.shallowBlock;
    if (block > 0 && block <= this.blockCountTotal && target <= this.skip[(block - 1) * SKIP_STRIDE + LAST_DOC]!) block = 0;
    block = this.findBlock(block, target);
    this.shallowBlock = block;
    return block < this.blockCountTotal ? this.skip[block * SKIP_STRIDE + LAST_DOC]! : NO_MORE_DOCS;
  }

  /** Largest freq in the current shallow block (0 past the end). */
  blockMaxFreq(): number {
    return this.shallowBlock < this.blockCountTotal ? this.skip[this.shallowBlock * SKIP_STRIDE + MAX_FREQ]! : 0;
  }

  /** Smallest norm byte in the current shallow block (255 past the end). */
  blockMinNorm(): number {
    return this.shallowBlock < this.blockCountTotal ? this.skip[this.shallowBlock * SKIP_STRIDE + MIN_NORM]! : 255;
  }

  /** Largest `scoring.bound` over the current shallow block's competitive (freq, norm) pairs (0 past the end). */
  blockMaxBound(scoring: ImpactBound): number {
    const block = this.shallowBlock;
    if (block >= this.blockCountTotal) return 0;
    if (this.skipRanges === null) return scoring.bound(this.skip[block * SKIP_STRIDE + MAX_FREQ]!, this.skip[block * SKIP_STRIDE + MIN_NORM]!);
    const { freqs, norms, size } = this.blockImpacts(block);
    let bound = 0;
    for (let i = 0; i < size; i++) {
      const score = scoring.bound(freqs[i]!, norms[i]!);
      if (score > bound) bound = score;
    }
    return bound;
  }

  /** Keeps a range of skip data (file offset `base` at index 0) whose entries start at file offset `start`. */
  private addSkipRange(data: Uint8Array, base: number, start: number): void {
    (this.skipRanges ??= []).push({ data, base, start });
  }

  /** Block `block`'s competitive pairs (format 7 on), decoded from its skip entry on first use. */
  private blockImpacts(block: number): ImpactList {
    const impacts = (this.impacts ??= new ImpactList(MAX_BLOCK_IMPACTS));
    if (this.impactsBlock === block) return impacts;
    const skip = this.skip;
    const base = block * SKIP_STRIDE;
    impacts.size = 0;
    const at = skip[base + IMPACTS_AT]!;
    const ranges = this.skipRanges!;
    let range = ranges.length - 1;
    while (ranges[range]!.start > at) range--;
    const { data, base: dataBase } = ranges[range]!;
    if (readImpacts(data, at - dataBase, skip[base + MAX_FREQ]!, skip[base + MIN_NORM]!, impacts) < 0) {
      this.impactsBlock = -1;
      throw corruptFile(this.docFile.path, `the skip entry of block ${block} has malformed impacts`);
    }
    this.impactsBlock = block;
    return impacts;
  }

  private exhaust(): number {
    this.block = this.blockCountTotal;
    this.docsInBlock = 0;
    this.index = 0;
    return (this.doc = NO_MORE_DOCS);
  }

  /**
   * First block >= from whose last doc is >= target (blockCountTotal when none): galloping from
   * `from` (targets mostly lie a few blocks on, whose skip entries share cache lines), then binary.
   */
  private findBlock(from: number, target: number): number {
    const skip = this.skip;
    const total = this.blockCountTotal;
    if (from >= total || skip[from * SKIP_STRIDE + LAST_DOC]! >= target) return from;
    let below = from;
    for (let step = 1; ; step *= 2) {
      const probe = below + step;
      if (probe >= total) return this.findBlockBetween(below + 1, total, target);
      if (skip[probe * SKIP_STRIDE + LAST_DOC]! >= target) return this.findBlockBetween(below + 1, probe, target);
      below = probe;
    }
  }

  /** First block in [low, high) whose last doc is >= target, else high. */
  private findBlockBetween(low: number, high: number, target: number): number {
    const skip = this.skip;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (skip[middle * SKIP_STRIDE + LAST_DOC]! < target) low = middle + 1;
      else high = middle;
    }
    return low;
  }

  private loadBlock(block: number): void {
    this.block = block;
    const base = block * SKIP_STRIDE;
    this.posData = null;
    this.posIndex = 0;
    this.positionsIndex = -1;
    this.locatedIndex = -1;
    this.positionLengthsOffset = -1;
    // Skip data is a Float64Array: counts and in-buffer offsets taken from it are made small integers (`| 0`), so that the fields holding them stay so.
    const count = this.skip[base + COUNT]! | 0;
    this.docsInBlock = count;
    const fileStart = this.skip[base + DOC_START]!;
    if (fileStart < 0) {
      this.freqsLoaded = true;
      this.docsDecoded = count;
      return;
    }
    const fileEnd = block + 1 < this.blockCountTotal ? this.skip[base + SKIP_STRIDE + DOC_START]! : this.termDocEnd;
    if (this.docs.length === 0) {
      const size = Math.min(POSTINGS_BLOCK_SIZE, this.docFreq);
      this.docs = new Int32Array(size);
      this.freqs = new Int32Array(size);
    }
    let data = this.docData;
    if (this.blockCountTotal > 1) {
      // A term of one block had its bytes read with its last doc, by the constructor.
      if (fileEnd < fileStart) throw corruptFile(this.docFile.path, `block ${block} ends before it starts`);
      // Blocks are small: the page (or range) that held the previous block often holds this one too.
      if (fileStart < this.docBase || fileEnd > this.docBase + data.length - READ_PADDING) {
        data = this.docData = this.readBlockRange(this.docFile, fileStart, fileEnd, false);
        this.docBase = this.rangeBase;
      }
    }
    const dataBase = this.docBase;
    const start = (fileStart - dataBase) | 0;
    this.blockEnd = (fileEnd - dataBase) | 0;
    const docBits = data[start]!;
    this.freqBits = data[start + 1]!;
    if (start + 2 > this.blockEnd || docBits > 32 || this.freqBits > 32 || start + 2 + packedBytes(count, docBits) + packedBytes(count, this.freqBits) > this.blockEnd) {
      throw corruptFile(this.docFile.path, `block ${block} is malformed`);
    }
    this.freqOffset = start + 2 + packedBytes(count, docBits);
    this.docBits = docBits;
    this.docByte = start + 2;
    if (this.docViewData !== data) {
      this.docView = new DataView(data.buffer, data.byteOffset, data.byteLength);
      this.docViewData = data;
    }
    this.docsDecoded = 0;
    this.freqsLoaded = false;
    const previousLast = block === 0 ? -1 : this.skip[base - SKIP_STRIDE + LAST_DOC]!;
    this.skimSpan =
      docBits >= SUM_MIN_WIDTH && docBits <= SUM_MAX_WIDTH ? (SUM_COUNT[docBits]! * (this.skip[base + LAST_DOC]! - previousLast)) / count : Infinity;
    if (docBits > PACKED_VALUE_MAX_WIDTH) {
      const docs = this.docs;
      unpackFrom(data, start + 2, count, docBits, docs);
      let previous = previousLast;
      for (let i = 0; i < count; i++) {
        previous += docs[i]! + 1;
        docs[i] = previous;
      }
      this.docsDecoded = count;
    }
  }

  /**
   * Unpacks further docs of the current block, up to the first >= target (all of them for
   * NO_MORE_DOCS), and returns its index; the block's last doc is >= any target advance passes.
   * Docs before the returned index may be left unwritten, except the last one decoded.
   */
  private decodeDocs(target: number): number {
    const docs = this.docs;
    const view = this.docView;
    const width = this.docBits;
    const mask = (1 << width) - 1;
    const count = this.docsInBlock;
    const start = this.docByte;
    let i = this.docsDecoded;
    let previous = i > 0 ? docs[i - 1]! : this.block === 0 ? -1 : this.skip[(this.block - 1) * SKIP_STRIDE + LAST_DOC]!;
    let bit = i * width;
    const span = this.skimSpan;
    const lastDoc = target === NO_MORE_DOCS ? 0 : this.skip[this.block * SKIP_STRIDE + LAST_DOC]!;
    if (target !== NO_MORE_DOCS && lastDoc - target < target - previous && span !== Infinity) {
      // Nearer the block's last doc: sums of deltas taken back from it find a doc below target, decoded on from there.
      const perWord = SUM_COUNT[width]!;
      let high = lastDoc;
      for (let j = count - perWord; j > i; j -= perWord) {
        const jBit = j * width;
        const below = high - perWord - sumPacked(view.getUint32(start + (jBit >>> 3), true) >>> (jBit & 7), width);
        if (below < target) {
          previous = below;
          docs[j - 1] = below;
          i = j;
          bit = jBit;
          break;
        }
        high = below;
      }
    } else if (target - previous > span && target !== NO_MORE_DOCS) {
      // Reads of deltas that all stay below target are only summed, not stored (advance never reads
      // the docs it passed), while the target likely lies past the next read's: one reaching it is wasted.
      const perWord = SUM_COUNT[width]!;
      const from = i;
      while (i + perWord < count) {
        const next = previous + perWord + sumPacked(view.getUint32(start + (bit >>> 3), true) >>> (bit & 7), width);
        if (next >= target) break;
        previous = next;
        bit += perWord * width;
        i += perWord;
        if (target - previous <= span) break;
      }
      if (i !== from) docs[i - 1] = previous;
    }
    if (target === NO_MORE_DOCS && width <= TRIPLE_MAX_WIDTH) {
      // The rest of the block, three deltas per 4-byte read (no target to stop at).
      const step = 3 * width;
      while (i + 2 < count) {
        const word = view.getUint32(start + (bit >>> 3), true) >>> (bit & 7);
        previous += (word & mask) + 1;
        docs[i] = previous;
        previous += ((word >>> width) & mask) + 1;
        docs[i + 1] = previous;
        previous += ((word >>> (2 * width)) & mask) + 1;
        docs[i + 2] = previous;
        bit += step;
        i += 3;
      }
    }
    if (width <= PAIR_MAX_WIDTH) {
      // Two deltas per 4-byte read: the 25 bits past the first one's offset hold both.
      const step = 2 * width;
      while (i + 1 < count) {
        const word = view.getUint32(start + (bit >>> 3), true) >>> (bit & 7);
        const first = previous + (word & mask) + 1;
        previous = first + ((word >>> width) & mask) + 1;
        docs[i] = first;
        docs[i + 1] = previous;
        bit += step;
        i += 2;
        if (previous >= target) {
          this.docsDecoded = i;
          return first >= target ? i - 2 : i - 1;
        }
      }
    }
    while (i < count) {
      previous += ((view.getUint32(start + (bit >>> 3), true) >>> (bit & 7)) & mask) + 1;
      bit += width;
      docs[i++] = previous;
      if (previous >= target) break;
    }
    this.docsDecoded = i;
    return i - 1;
  }

  private loadFreqs(): void {
    const freqs = this.freqs;
    const count = this.docsInBlock;
    unpackFrom(this.docData, this.freqOffset, count, this.freqBits, freqs);
    for (let i = 0; i < count; i++) freqs[i] = freqs[i]! + 1;
    this.freqsLoaded = true;
  }

  /**
   * Finds the block's packed position byte lengths, which follow its packed freqs (format 4 on);
   * they are read one by one (4 bytes from each one's first: up to 3 past them, ranges are padded).
   */
  private locatePositionLengths(): void {
    const count = this.docsInBlock;
    const data = this.docData;
    const bitsOffset = this.freqOffset + packedBytes(count, this.freqBits);
    const bits = data[bitsOffset];
    if (bits === undefined || bits > 31 || bitsOffset + 1 + packedBytes(count, bits) > this.blockEnd) {
      throw corruptFile(this.docFile.path, `position lengths of block ${this.block} are malformed`);
    }
    this.positionLengthsOffset = bitsOffset + 1;
    this.positionBits = bits;
    this.widePositionLengths = null;
    if (bits > PACKED_VALUE_MAX_WIDTH) {
      this.widePositionLengths = new Int32Array(count);
      unpackFrom(data, bitsOffset + 1, count, bits, this.widePositionLengths);
    }
  }
}
