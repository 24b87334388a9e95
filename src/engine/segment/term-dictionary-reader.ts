/**
 * Reads the `terms` file: the field directory (block first terms kept in memory for binary
 * search), read at open, and term blocks, read (paged-file.ts) and decoded on demand by exact
 * lookups and sorted iteration.
 */
import type { PostingsCursor, TermsIterator } from './leaf-reader.ts';
import { ByteReader } from './byte-io.ts';
import { EngineError } from '../errors.ts';
import { corruptFile, HEADER_BYTES } from './segment-file.ts';
import type { SegmentDataFile } from './paged-file.ts';
import { FieldKindCode, TERMS_PER_BLOCK, type SegmentFieldKind } from './term-dictionary-writer.ts';
import { SegmentPostingsCursor, type PostingsStreams, type TermPostingsPointer } from './postings-cursor.ts';

const utf8Encoder = new TextEncoder();
const KIND_BY_CODE: SegmentFieldKind[] = [];
for (const [kind, code] of Object.entries(FieldKindCode)) KIND_BY_CODE[code] = kind as SegmentFieldKind;

/** Decodes the entries of one block after another; holds the current entry. */
class TermBlockScanner implements TermPostingsPointer {
  termBytes = Buffer.alloc(64);
  termLength = 0;
  docFreq = 0;
  maxFreq = 0;
  minNorm = 0;
  singletonDoc = -1;
  singletonFreq = 0;
  docStart = 0;
  docEnd = 0;
  posStart = 0;
  posEnd = 0;
  private nextDocStart = 0;
  private nextPosStart = 0;
  private remainingInBlock = 0;
  private reader = new ByteReader(new Uint8Array(0));

  constructor(private readonly dictionary: FieldTermDictionary) {}

  /** Positions the scanner before the first entry of a block, reading the block's bytes. */
  enterBlock(block: number): void {
    const dictionary = this.dictionary;
    const file = dictionary.file;
    const start = dictionary.blockOffsets[block]!;
    const data = file.read(start, dictionary.blockEnd(block));
    if (data !== this.reader.data) this.reader = new ByteReader(data);
    this.reader.pos = start - file.base;
    this.nextDocStart = dictionary.blockDocBases[block]!;
    this.nextPosStart = dictionary.blockPosBases[block]!;
    const lastBlock = dictionary.blockOffsets.length - 1;
    this.remainingInBlock = block < lastBlock ? TERMS_PER_BLOCK : dictionary.termCount - lastBlock * TERMS_PER_BLOCK;
  }

  /** Decodes the next entry of the block; false when the block is done. */
  nextEntry(): boolean {
    if (this.remainingInBlock === 0) return false;
    this.remainingInBlock--;
    const reader = this.reader;
    const prefix = reader.readVarint();
    const suffix = reader.readVarint();
    const length = prefix + suffix;
    if (this.termBytes.length < length) {
      const grown = Buffer.alloc(Math.max(length, this.termBytes.length * 2));
      this.termBytes.copy(grown, 0, 0, prefix);
      this.termBytes = grown;
    }
    const data = reader.data;
    const termBytes = this.termBytes;
    let from = reader.pos;
    if (from + suffix > data.length) throw new RangeError('term entry past end of data');
    for (let i = prefix; i < length; i++) termBytes[i] = data[from++]!;
    reader.pos = from;
    this.termLength = length;
    this.readStats(reader);
    return true;
  }

  /**
   * Scans the rest of the block for the term whose UTF-8 bytes are `target[0..length)`: true with
   * the scanner on its entry (its term bytes are not kept), false when the block lacks it. An
   * entry shares `prefix` bytes with the one before, so only an entry that shares exactly as many
   * bytes with the target as the one before did can equal it; the others are skipped without
   * looking at their bytes.
   */
  seekInBlock(target: Uint8Array, length: number): boolean {
    const reader = this.reader;
    const data = reader.data;
    // Bytes the last entry shares with the target.
    let matched = 0;
    while (this.remainingInBlock > 0) {
      this.remainingInBlock--;
      const prefix = reader.readVarint();
      const suffix = reader.readVarint();
      const from = reader.pos;
      if (from + suffix > data.length) throw new RangeError('term entry past end of data');
      if (prefix === matched) {
        let same = 0;
        while (same < suffix && matched + same < length && data[from + same] === target[matched + same]) same++;
        matched += same;
        if (matched === length && same === suffix) {
          reader.pos = from + suffix;
          this.readStats(reader);
          return true;
        }
      } else if (prefix < matched) {
        matched = prefix;
      }
      reader.pos = from + suffix;
      this.skipStats(reader);
    }
    return false;
  }

  /** Reads the current entry's statistics and postings offsets. */
  private readStats(reader: ByteReader): void {
    this.docFreq = reader.readVarint();
    this.docStart = this.nextDocStart;
    this.posStart = this.nextPosStart;
    if (this.docFreq === 1) {
      this.singletonDoc = reader.readVarint();
      this.singletonFreq = reader.readVarint() + 1;
      this.maxFreq = this.singletonFreq;
      const norms = this.dictionary.norms;
      this.minNorm = norms === null ? 0 : norms[this.singletonDoc]!;
    } else {
      this.singletonDoc = -1;
      this.singletonFreq = 0;
      this.maxFreq = reader.readVarint() + 1;
      this.minNorm = reader.readByte();
      this.nextDocStart += reader.readVarint();
    }
    if (this.dictionary.hasPositions) this.nextPosStart += reader.readVarint();
    this.docEnd = this.nextDocStart;
    this.posEnd = this.nextPosStart;
  }

  /** Moves past an entry's statistics, counting its postings bytes. */
  private skipStats(reader: ByteReader): void {
    if (reader.readVarint() === 1) {
      reader.readVarint();
      reader.readVarint();
    } else {
      reader.readVarint();
      reader.readByte();
      this.nextDocStart += reader.readVarint();
    }
    if (this.dictionary.hasPositions) this.nextPosStart += reader.readVarint();
  }

  /** The current entry's term as a string. */
  term(): string {
    return this.termBytes.toString('utf8', 0, this.termLength);
  }

  /** A snapshot of the current entry's postings pointer. */
  pointer(): TermPostingsPointer {
    return {
      docFreq: this.docFreq,
      maxFreq: this.maxFreq,
      minNorm: this.minNorm,
      singletonDoc: this.singletonDoc,
      singletonFreq: this.singletonFreq,
      docStart: this.docStart,
      docEnd: this.docEnd,
      posStart: this.posStart,
      posEnd: this.posEnd,
    };
  }
}

/** Lookups a field's dictionary remembers (a phrase of up to this many terms finds them all again). */
const RECENT_LOOKUPS = 8;

/** One field's term dictionary. */
export class FieldTermDictionary {
  termCount = 0;
  readonly blockFirstTerms: string[] = [];
  blockOffsets = new Float64Array(0);
  blockDocBases = new Float64Array(0);
  blockPosBases = new Float64Array(0);
  /** Where the field's last block ends: the next block in the file, or the directory. */
  lastBlockEnd = 0;
  /** Norm bytes of the field (for singleton min norms), null when the field has none. */
  norms: Uint8Array | null = null;
  private lookupScanner: TermBlockScanner | null = null;
  private lookupTarget = new Uint8Array(64);
  /** The last RECENT_LOOKUPS terms looked up and their pointers (null: absent), oldest overwritten first. */
  private readonly recentTerms: (string | null)[] = new Array<string | null>(RECENT_LOOKUPS).fill(null);
  private readonly recentPointers: (TermPostingsPointer | null)[] = new Array<TermPostingsPointer | null>(RECENT_LOOKUPS).fill(null);
  private recentNext = 0;

  constructor(
    readonly name: string,
    readonly kind: SegmentFieldKind,
    readonly hasPositions: boolean,
    /** The `terms` file. */
    readonly file: SegmentDataFile,
    private readonly streams: PostingsStreams,
  ) {}

  /** File offset just past block `block`'s entries. */
  blockEnd(block: number): number {
    return block + 1 < this.blockOffsets.length ? this.blockOffsets[block + 1]! : this.lastBlockEnd;
  }

  /**
   * Postings pointer of a term, or null when absent. A query asks for a term's statistics when it
   * is weighed and for its postings when it is scored, so the last few answers are kept.
   */
  lookup(term: string): TermPostingsPointer | null {
    const recentTerms = this.recentTerms;
    for (let index = 0; index < RECENT_LOOKUPS; index++) {
      if (recentTerms[index] === term) return this.recentPointers[index] ?? null;
    }
    const pointer = this.find(term);
    recentTerms[this.recentNext] = term;
    this.recentPointers[this.recentNext] = pointer;
    this.recentNext = (this.recentNext + 1) % RECENT_LOOKUPS;
    return pointer;
  }

  private find(term: string): TermPostingsPointer | null {
    const block = this.blockFor(term);
    if (block < 0) return null;
    // Lookups run synchronously to completion, so one scanner and target buffer serve them all.
    const scanner = (this.lookupScanner ??= new TermBlockScanner(this));
    if (this.lookupTarget.length < term.length * 3) this.lookupTarget = new Uint8Array(term.length * 3);
    const length = utf8Encoder.encodeInto(term, this.lookupTarget).written;
    try {
      scanner.enterBlock(block);
      if (scanner.seekInBlock(this.lookupTarget, length)) return scanner.pointer();
    } catch (error) {
      throw asCorrupt(this.file, error);
    }
    return null;
  }

  /** Cursor over a term's postings: `reuse` moved to it when it is a segment cursor. */
  cursor(pointer: TermPostingsPointer, reuse?: PostingsCursor): PostingsCursor {
    if (!(reuse instanceof SegmentPostingsCursor)) return new SegmentPostingsCursor(this.streams, pointer, this.hasPositions);
    reuse.reset(this.streams, pointer, this.hasPositions);
    return reuse;
  }

  /** Sorted iterator over terms >= `from`. */
  iterator(from?: string): TermsIterator {
    return new SegmentTermsIterator(this, new TermBlockScanner(this), from);
  }

  /** Index of the last block whose first term is <= term (-1 when term precedes all). */
  blockFor(term: string): number {
    const firstTerms = this.blockFirstTerms;
    let low = 0;
    let high = firstTerms.length - 1;
    let found = -1;
    while (low <= high) {
      const middle = (low + high) >>> 1;
      if (firstTerms[middle]! <= term) {
        found = middle;
        low = middle + 1;
      } else {
        high = middle - 1;
      }
    }
    return found;
  }
}

/** TermsIterator over a segment field. */
class SegmentTermsIterator implements TermsIterator {
  private block: number;
  private started = false;

  constructor(
    private readonly dictionary: FieldTermDictionary,
    private readonly scanner: TermBlockScanner,
    private from: string | undefined,
  ) {
    this.block = from === undefined ? 0 : Math.max(0, dictionary.blockFor(from));
  }

  next(): string | null {
    try {
      return this.advanceTerm();
    } catch (error) {
      throw asCorrupt(this.dictionary.file, error);
    }
  }

  private advanceTerm(): string | null {
    const scanner = this.scanner;
    const blocks = this.dictionary.blockFirstTerms.length;
    for (;;) {
      if (!this.started) {
        if (this.block >= blocks) return null;
        scanner.enterBlock(this.block);
        this.started = true;
      }
      if (!scanner.nextEntry()) {
        this.block++;
        this.started = false;
        continue;
      }
      const term = scanner.term();
      if (this.from !== undefined) {
        if (term < this.from) continue;
        this.from = undefined;
      }
      return term;
    }
  }

  docFreq(): number {
    return this.scanner.docFreq;
  }

  postings(reuse?: PostingsCursor): PostingsCursor {
    // The cursor reads the pointer's fields when made, not later: the scanner itself serves.
    return this.dictionary.cursor(this.scanner, reuse);
  }
}

/** A decoding error of a term block as corrupt_index naming the file (integrity errors pass as they are). */
function asCorrupt(file: SegmentDataFile, error: unknown): Error {
  return error instanceof EngineError ? error : corruptFile(file.path, (error as Error).message);
}

/** Reads the field directory of a terms file into per-field dictionaries (the term blocks stay on disk). */
export function readTermDictionaries(file: SegmentDataFile, streams: PostingsStreams): Map<string, FieldTermDictionary> {
  const bodyEnd = file.bodyEnd;
  if (bodyEnd < HEADER_BYTES + 8) throw new RangeError('term directory offset out of range');
  const trailerData = file.read(bodyEnd - 8, bodyEnd);
  const directoryOffset = new ByteReader(trailerData, bodyEnd - 8 - file.base).readF64();
  if (!Number.isSafeInteger(directoryOffset) || directoryOffset < HEADER_BYTES || directoryOffset > bodyEnd - 8) {
    throw new RangeError('term directory offset out of range');
  }
  const directoryEnd = bodyEnd - 8;
  const data = file.read(directoryOffset, directoryEnd);
  const reader = new ByteReader(data.subarray(0, directoryEnd - file.base), directoryOffset - file.base);
  const fields = new Map<string, FieldTermDictionary>();
  const fieldCount = reader.readVarint();
  for (let f = 0; f < fieldCount; f++) {
    const name = reader.readString();
    const kind = KIND_BY_CODE[reader.readByte()];
    if (kind === undefined) throw new RangeError(`unknown field kind for ${name}`);
    const positions = reader.readByte() === 1;
    const dictionary = new FieldTermDictionary(name, kind, positions, file, streams);
    dictionary.termCount = reader.readVarint();
    const blocks = reader.readVarint();
    dictionary.blockOffsets = new Float64Array(blocks);
    dictionary.blockDocBases = new Float64Array(blocks);
    dictionary.blockPosBases = new Float64Array(blocks);
    let offset = 0;
    let docBase = 0;
    let posBase = 0;
    for (let b = 0; b < blocks; b++) {
      dictionary.blockFirstTerms.push(reader.readString());
      offset += reader.readVarint();
      docBase += reader.readVarint();
      posBase += reader.readVarint();
      dictionary.blockOffsets[b] = offset;
      dictionary.blockDocBases[b] = docBase;
      dictionary.blockPosBases[b] = posBase;
      if (offset < HEADER_BYTES || offset > directoryOffset) throw new RangeError(`block ${b} of ${name} lies outside the term blocks`);
    }
    fields.set(name, dictionary);
  }
  // Fields' blocks follow one another in the file: a field's last block ends where the next block starts.
  const firstOffsets = [...fields.values()].filter((field) => field.blockOffsets.length > 0).map((field) => field.blockOffsets[0]!);
  for (const dictionary of fields.values()) {
    const blocks = dictionary.blockOffsets.length;
    if (blocks === 0) continue;
    const last = dictionary.blockOffsets[blocks - 1]!;
    let end = directoryOffset;
    for (const offset of firstOffsets) if (offset > last && offset < end) end = offset;
    dictionary.lastBlockEnd = end;
  }
  return fields;
}
