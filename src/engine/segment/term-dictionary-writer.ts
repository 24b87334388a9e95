/**
 * Writes the `terms` file: per field, terms in blocks of TERMS_PER_BLOCK entries, front coded
 * on their UTF-8 bytes, each with its postings statistics and stream pointers; then a field
 * directory holding every block's first term (the in-memory index readers binary search).
 */
import type { ByteSink } from './byte-io.ts';
import type { EncodedTerm } from './postings-encoder.ts';

/** Number of terms per term-dictionary block. */
export const TERMS_PER_BLOCK = 32;

/** Field kinds as stored on disk. */
export const FieldKindCode = { text: 0, keyword: 1, numeric: 2 } as const;

/** A field kind of a segment. */
export type SegmentFieldKind = keyof typeof FieldKindCode;

const utf8Encoder = new TextEncoder();

interface FieldDirectoryEntry {
  name: string;
  kind: SegmentFieldKind;
  positions: boolean;
  termCount: number;
  blockFirstTerms: string[];
  blockOffsets: number[];
  blockDocBases: number[];
  blockPosBases: number[];
}

/** Appends term entries to the terms file sink, field by field. */
export class TermDictionaryWriter {
  private readonly fields: FieldDirectoryEntry[] = [];
  private current: FieldDirectoryEntry | null = null;
  private previousBytes = new Uint8Array(256);
  private previousLength = 0;
  private currentBytes = new Uint8Array(256);
  private inBlock = 0;
  private lastTerm: string | null = null;

  constructor(private readonly sink: ByteSink) {}

  /** Starts the terms of a field. */
  startField(name: string, kind: SegmentFieldKind, positions: boolean): void {
    this.current = {
      name,
      kind,
      positions,
      termCount: 0,
      blockFirstTerms: [],
      blockOffsets: [],
      blockDocBases: [],
      blockPosBases: [],
    };
    this.fields.push(this.current);
    this.inBlock = 0;
    this.lastTerm = null;
  }

  /**
   * Adds a term (strictly ascending within the field) whose postings start at `docStart` in
   * postings.doc and `posStart` in postings.pos.
   */
  addTerm(term: string, encoded: EncodedTerm, docStart: number, posStart: number): void {
    const field = this.current;
    if (field === null) throw new Error('addTerm before startField');
    if (this.lastTerm !== null && !(term > this.lastTerm)) {
      throw new RangeError(`terms of field ${field.name} out of order: ${JSON.stringify(term)} after ${JSON.stringify(this.lastTerm)}`);
    }
    this.lastTerm = term;
    const sink = this.sink;
    if (this.currentBytes.length < term.length * 3) this.currentBytes = new Uint8Array(term.length * 3);
    const length = utf8Encoder.encodeInto(term, this.currentBytes).written;
    const bytes = this.currentBytes;
    let prefix = 0;
    if (this.inBlock === TERMS_PER_BLOCK) this.inBlock = 0;
    if (this.inBlock === 0) {
      field.blockFirstTerms.push(term);
      field.blockOffsets.push(sink.length);
      field.blockDocBases.push(docStart);
      field.blockPosBases.push(posStart);
    } else {
      const previous = this.previousBytes;
      const limit = Math.min(this.previousLength, length);
      while (prefix < limit && previous[prefix] === bytes[prefix]) prefix++;
    }
    sink.writeVarint(prefix);
    sink.writeVarint(length - prefix);
    sink.writeRange(bytes, prefix, length);
    sink.writeVarint(encoded.docFreq);
    if (encoded.docFreq === 1) {
      sink.writeVarint(encoded.singletonDoc);
      sink.writeVarint(encoded.singletonFreq - 1);
    } else {
      sink.writeVarint(encoded.maxFreq - 1);
      sink.writeByte(encoded.minNorm);
      sink.writeVarint(encoded.docBytes);
    }
    if (field.positions) sink.writeVarint(encoded.posBytes);
    this.currentBytes = this.previousBytes;
    this.previousBytes = bytes;
    this.previousLength = length;
    this.inBlock++;
    field.termCount++;
  }

  /** Writes the field directory and the trailer pointing at it (call once, after all fields). */
  finish(): void {
    const sink = this.sink;
    const directoryOffset = sink.length;
    sink.writeVarint(this.fields.length);
    for (const field of this.fields) {
      sink.writeString(field.name);
      sink.writeByte(FieldKindCode[field.kind]);
      sink.writeByte(field.positions ? 1 : 0);
      sink.writeVarint(field.termCount);
      const blocks = field.blockFirstTerms.length;
      sink.writeVarint(blocks);
      let previousOffset = 0;
      let previousDocBase = 0;
      let previousPosBase = 0;
      for (let b = 0; b < blocks; b++) {
        sink.writeString(field.blockFirstTerms[b]!);
        sink.writeVarint(field.blockOffsets[b]! - previousOffset);
        sink.writeVarint(field.blockDocBases[b]! - previousDocBase);
        sink.writeVarint(field.blockPosBases[b]! - previousPosBase);
        previousOffset = field.blockOffsets[b]!;
        previousDocBase = field.blockDocBases[b]!;
        previousPosBase = field.blockPosBases[b]!;
      }
    }
    sink.writeF64(directoryOffset);
  }
}
