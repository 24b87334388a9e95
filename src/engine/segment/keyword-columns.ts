/**
 * Keyword columns (`columns.kw`): per field the sorted unique terms of the segment (their
 * index is the ordinal) and per-doc ordinals, bit-packed on disk and unpacked into Int32Arrays
 * the first time a field is read.
 */
import type { KeywordColumn } from './leaf-reader.ts';
import { ByteReader, ByteSink } from './byte-io.ts';
import { bitsRequired, bitsRequiredFor, packInto, unpackFrom } from './bitpack.ts';
import type { WriteContext } from './write-context.ts';

const SINGLE = 0;
const MULTI = 1;
const utf8Encoder = new TextEncoder();

/** Shared term list of both column shapes. */
abstract class OrdinalTerms {
  constructor(readonly terms: string[]) {}

  get ordinalCount(): number {
    return this.terms.length;
  }

  term(ordinal: number): string {
    const term = this.terms[ordinal];
    if (term === undefined) throw new RangeError(`ordinal ${ordinal} out of range`);
    return term;
  }

  lookup(term: string): number {
    const terms = this.terms;
    let low = 0;
    let high = terms.length - 1;
    while (low <= high) {
      const middle = (low + high) >>> 1;
      const candidate = terms[middle]!;
      if (candidate < term) low = middle + 1;
      else if (candidate > term) high = middle - 1;
      else return middle;
    }
    return -1;
  }
}

/** Keyword column where every doc holds at most one term (-1 = none). */
export class SingleKeywordColumn extends OrdinalTerms implements KeywordColumn {
  constructor(
    terms: string[],
    readonly ordinals: Int32Array,
  ) {
    super(terms);
  }

  count(doc: number): number {
    return this.ordinals[doc]! < 0 ? 0 : 1;
  }

  ordinal(doc: number, _index: number): number {
    return this.ordinals[doc]!;
  }
}

/** Keyword column where doc d holds ordinals[offsets[d] .. offsets[d+1]). */
export class MultiKeywordColumn extends OrdinalTerms implements KeywordColumn {
  constructor(
    terms: string[],
    readonly offsets: Uint32Array,
    readonly ordinals: Int32Array,
  ) {
    super(terms);
  }

  count(doc: number): number {
    return this.offsets[doc + 1]! - this.offsets[doc]!;
  }

  ordinal(doc: number, index: number): number {
    return this.ordinals[this.offsets[doc]! + index]!;
  }
}

/** A keyword field gathered from the sources, ready to be written. */
export interface CollectedKeywordField {
  name: string;
  terms: string[];
  /** Values per new doc. */
  counts: Uint32Array;
  /** All ordinals, doc after doc. */
  ordinals: Int32Array;
}

/** Merges the sources' keyword columns of a field, keeping only terms used by kept docs. */
export async function collectKeywordField(context: WriteContext, name: string): Promise<CollectedKeywordField> {
  const columns = context.sources.map((source) => source.reader.keywordColumn(name));
  const used = columns.map((column) => new Uint8Array(column?.ordinalCount ?? 0));
  await context.forEachKeptDoc((sourceIndex, oldDoc) => {
    const column = columns[sourceIndex];
    if (!column) return;
    const marks = used[sourceIndex]!;
    const count = column.count(oldDoc);
    for (let i = 0; i < count; i++) marks[column.ordinal(oldDoc, i)] = 1;
  });

  const ordinalMaps = columns.map((column) => new Int32Array(column?.ordinalCount ?? 0).fill(-1));
  const nextOrdinal = columns.map(() => 0);
  const advance = (sourceIndex: number): void => {
    const marks = used[sourceIndex]!;
    let ordinal = nextOrdinal[sourceIndex]!;
    while (ordinal < marks.length && marks[ordinal] === 0) ordinal++;
    nextOrdinal[sourceIndex] = ordinal;
  };
  columns.forEach((_column, sourceIndex) => advance(sourceIndex));
  const terms: string[] = [];
  for (;;) {
    let smallest: string | null = null;
    for (let s = 0; s < columns.length; s++) {
      if (nextOrdinal[s]! >= used[s]!.length) continue;
      const term = columns[s]!.term(nextOrdinal[s]!);
      if (smallest === null || term < smallest) smallest = term;
    }
    if (smallest === null) break;
    for (let s = 0; s < columns.length; s++) {
      if (nextOrdinal[s]! >= used[s]!.length || columns[s]!.term(nextOrdinal[s]!) !== smallest) continue;
      ordinalMaps[s]![nextOrdinal[s]!] = terms.length;
      nextOrdinal[s]!++;
      advance(s);
    }
    terms.push(smallest);
    if (context.pauseDue()) await context.pause();
  }

  const counts = new Uint32Array(context.maxDoc);
  let ordinals = new Int32Array(Math.max(16, context.maxDoc));
  let total = 0;
  await context.forEachKeptDoc((sourceIndex, oldDoc, newDoc) => {
    const column = columns[sourceIndex];
    if (!column) return;
    const count = column.count(oldDoc);
    if (total + count > ordinals.length) {
      const grown = new Int32Array(Math.max(ordinals.length * 2, total + count));
      grown.set(ordinals);
      ordinals = grown;
    }
    const ordinalMap = ordinalMaps[sourceIndex]!;
    for (let i = 0; i < count; i++) ordinals[total + i] = ordinalMap[column.ordinal(oldDoc, i)]!;
    counts[newDoc] = count;
    total += count;
  });
  return { name, terms, counts, ordinals: ordinals.subarray(0, total) };
}

/** Appends the keyword columns file body. */
export function writeKeywordColumns(sink: ByteSink, maxDoc: number, fields: CollectedKeywordField[]): void {
  sink.writeVarint(maxDoc);
  sink.writeVarint(fields.length);
  const section = new ByteSink();
  for (const field of fields) {
    section.reset();
    encodeSection(section, field, maxDoc);
    sink.writeString(field.name);
    sink.writeVarint(section.length);
    sink.writeSink(section);
  }
}

function encodeSection(sink: ByteSink, field: CollectedKeywordField, maxDoc: number): void {
  sink.writeVarint(field.terms.length);
  let previous = new Uint8Array(0);
  for (const term of field.terms) {
    const bytes = utf8Encoder.encode(term);
    const limit = Math.min(previous.length, bytes.length);
    let prefix = 0;
    while (prefix < limit && previous[prefix] === bytes[prefix]) prefix++;
    sink.writeVarint(prefix);
    sink.writeVarint(bytes.length - prefix);
    sink.writeBytes(bytes.subarray(prefix));
    previous = bytes;
  }
  const multi = field.counts.some((count) => count > 1);
  if (!multi) {
    const shifted = new Int32Array(maxDoc);
    let cursor = 0;
    for (let doc = 0; doc < maxDoc; doc++) shifted[doc] = field.counts[doc] === 0 ? 0 : field.ordinals[cursor++]! + 1;
    const width = bitsRequired(field.terms.length);
    sink.writeByte(SINGLE);
    sink.writeByte(width);
    packInto(sink, shifted, maxDoc, width);
    return;
  }
  const countWidth = bitsRequiredFor(field.counts, maxDoc);
  const ordinalWidth = bitsRequired(Math.max(0, field.terms.length - 1));
  sink.writeByte(MULTI);
  sink.writeByte(countWidth);
  packInto(sink, field.counts, maxDoc, countWidth);
  sink.writeVarint(field.ordinals.length);
  sink.writeByte(ordinalWidth);
  packInto(sink, field.ordinals, field.ordinals.length, ordinalWidth);
}

/** Directory of a loaded keyword columns file; fields are decoded on first use. */
export class KeywordColumnsFile {
  private readonly sections = new Map<string, { offset: number; length: number }>();
  private readonly decoded = new Map<string, KeywordColumn>();

  constructor(
    private readonly data: Uint8Array,
    offset: number,
    private readonly maxDoc: number,
  ) {
    const reader = new ByteReader(data, offset);
    const storedMaxDoc = reader.readVarint();
    if (storedMaxDoc !== maxDoc) throw new RangeError(`keyword columns hold ${storedMaxDoc} docs, segment has ${maxDoc}`);
    const fieldCount = reader.readVarint();
    for (let f = 0; f < fieldCount; f++) {
      const name = reader.readString();
      const length = reader.readVarint();
      this.sections.set(name, { offset: reader.pos, length });
      reader.pos += length;
    }
  }

  /** Field names, in file order. */
  fields(): string[] {
    return [...this.sections.keys()];
  }

  /** The column of a field, or null when absent. */
  column(name: string): KeywordColumn | null {
    const cached = this.decoded.get(name);
    if (cached) return cached;
    const section = this.sections.get(name);
    if (!section) return null;
    const column = this.decode(section.offset);
    this.decoded.set(name, column);
    return column;
  }

  /** Decodes every field (used at open so that format errors surface immediately). */
  decodeAll(): void {
    for (const name of this.sections.keys()) this.column(name);
  }

  private decode(offset: number): KeywordColumn {
    const reader = new ByteReader(this.data, offset);
    const termCount = reader.readVarint();
    const terms: string[] = new Array(termCount);
    let termBytes = Buffer.alloc(64);
    for (let t = 0; t < termCount; t++) {
      const prefix = reader.readVarint();
      const suffix = reader.readVarint();
      if (termBytes.length < prefix + suffix) {
        const grown = Buffer.alloc(Math.max(prefix + suffix, termBytes.length * 2));
        termBytes.copy(grown, 0, 0, prefix);
        termBytes = grown;
      }
      termBytes.set(reader.readBytes(suffix), prefix);
      terms[t] = termBytes.toString('utf8', 0, prefix + suffix);
    }
    const maxDoc = this.maxDoc;
    const mode = reader.readByte();
    if (mode === SINGLE) {
      const width = reader.readByte();
      const ordinals = new Int32Array(maxDoc);
      unpackFrom(this.data, reader.pos, maxDoc, width, ordinals);
      for (let doc = 0; doc < maxDoc; doc++) ordinals[doc] = ordinals[doc]! - 1;
      return new SingleKeywordColumn(terms, ordinals);
    }
    if (mode !== MULTI) throw new RangeError(`unknown keyword column mode ${mode}`);
    const counts = new Int32Array(maxDoc);
    const countWidth = reader.readByte();
    reader.pos = unpackFrom(this.data, reader.pos, maxDoc, countWidth, counts);
    const total = reader.readVarint();
    const ordinalWidth = reader.readByte();
    const ordinals = new Int32Array(total);
    unpackFrom(this.data, reader.pos, total, ordinalWidth, ordinals);
    const offsets = new Uint32Array(maxDoc + 1);
    for (let doc = 0; doc < maxDoc; doc++) offsets[doc + 1] = offsets[doc]! + counts[doc]!;
    if (offsets[maxDoc] !== total) throw new RangeError('keyword column counts do not match its ordinals');
    return new MultiKeywordColumn(terms, offsets, ordinals);
  }
}
