import type { FlatField } from '../mapping/mapping.ts';
import type { ParsedDocument } from '../mapping/parse-document.ts';
import { encodeNorm } from '../segment/norms.ts';
import {
  type DocMeta,
  type DocNumbers,
  type FieldStats,
  type InplaceColumn,
  type NumericRangeIndex,
  type KeywordColumn,
  type LeafReader,
  type NumericColumn,
  type PostingsCursor,
  type TermsIterator,
} from '../segment/leaf-reader.ts';
import { ByteArena } from './byte-arena.ts';
import { ByteVector } from './growable.ts';
import { MutableKeywordColumn, MutableNumericColumn } from './columns.ts';
import { IntSlicePool } from './int-slices.ts';
import { FieldPostings } from './postings.ts';
import { TokenBuffer } from './text-terms.ts';
import { FieldOverlay } from './field-overlay.ts';
import { readTopLevelTexts } from '../update/source-splice.ts';

/** A document ready for the mutable layer: identity, stored bytes and parsed field values. */
export interface IndexableDocument {
  id: string;
  seqNo: number;
  version: number;
  primaryTerm: number;
  source: Buffer;
  parsed: ParsedDocument;
}

/** Reused by every add: indexing is synchronous, so one document's tokens are never interleaved with another's. */
const tokens = new TokenBuffer();
/** Heap bytes per doc besides its id text: meta array slots, the id map entry, the source view object. */
const PER_DOC_BYTES = 200;

/**
 * The in-memory write layer of a shard: inverted index, columns, stored sources and doc meta of
 * recent writes. Appending is synchronous, so the next search sees every write that resolved.
 */
export class MutableSegment implements LeafReader {
  readonly name: string;
  private readonly ids: string[] = [];
  private readonly seqNos: number[] = [];
  private readonly versions: number[] = [];
  private readonly primaryTerms: number[] = [];
  private readonly sources: Buffer[] = [];
  private readonly sourceArena = new ByteArena();
  private readonly live = new ByteVector(64);
  private liveCount = 0;
  private readonly idIndex = new Map<string, number>();
  private readonly indexes = new Map<string, FieldPostings>();
  /** Postings streams of every field. */
  private readonly pool = new IntSlicePool();
  private readonly numeric = new Map<string, MutableNumericColumn>();
  private readonly keyword = new Map<string, MutableKeywordColumn>();
  private readonly inplaceFields: Set<string>;
  /** Bytes of terms, field overlays and per-doc meta added so far (approximate). */
  private otherBytes = 0;
  /** Field-level updates of this layer's documents (field-overlay.ts). */
  readonly overlay = new FieldOverlay({
    topLevelTexts: (doc, keys) => readTopLevelTexts(this.sources[doc]!, keys),
    norm: (field, doc) => this.ownNorm(field, doc),
    keywordColumn: (field) => this.keyword.get(field)?.column() ?? null,
    inplaceColumn: (field) => this.inplaceColumn(field),
  });

  constructor(generation: number, inplaceFields: Iterable<string>) {
    this.name = `mutable-${generation}`;
    this.inplaceFields = new Set(inplaceFields);
  }

  /** Memory the layer holds (its source chunks and postings pool as allocated, the rest estimated), for the epoch size threshold. */
  get bytes(): number {
    return this.sourceArena.allocatedBytes + this.pool.allocatedInts * 4 + this.otherBytes;
  }

  get maxDoc(): number {
    return this.ids.length;
  }

  /** Adds a document and returns its doc id. The caller deletes any older copy first. */
  add(document: IndexableDocument, fields: ReadonlyMap<string, FlatField>): number {
    const doc = this.ids.length;
    this.ids.push(document.id);
    this.seqNos.push(document.seqNo);
    this.versions.push(document.version);
    this.primaryTerms.push(document.primaryTerm);
    this.sources.push(this.sourceArena.copy(document.source));
    this.live.ensure(doc + 1);
    this.live.data[doc] = 1;
    this.liveCount++;
    this.idIndex.set(document.id, doc);
    this.otherBytes += PER_DOC_BYTES + document.id.length;

    for (const [path, values] of document.parsed.text) {
      this.indexText(doc, path, values, fields.get(path)?.analyzer ?? 'standard');
    }
    for (const [path, values] of document.parsed.keyword) {
      this.indexKeyword(doc, path, values);
      let column = this.keyword.get(path);
      if (!column) this.keyword.set(path, (column = new MutableKeywordColumn()));
      column.add(doc, values);
    }
    for (const [path, values] of document.parsed.numeric) {
      this.numericColumnFor(path).add(doc, values);
    }
    return doc;
  }

  /** Replaces top-level fields of a doc (JSON text, null: removed) as a field overlay; see field-overlay.ts. */
  applyFields(doc: number, texts: ReadonlyMap<string, string | null>, fields: ReadonlyMap<string, FlatField>, strictNumbers: boolean): void {
    const before = this.overlay.bytes;
    this.overlay.apply(doc, texts, fields, strictNumbers);
    this.otherBytes += this.overlay.bytes - before;
  }

  /** Marks a doc deleted; returns false when it already was. */
  deleteDoc(doc: number): boolean {
    if (doc >= this.maxDoc || this.live.data[doc] === 0) return false;
    this.live.data[doc] = 0;
    this.liveCount--;
    const id = this.ids[doc]!;
    if (this.idIndex.get(id) === doc) this.idIndex.delete(id);
    return true;
  }

  /** Declares a field inplace (a mapping update added it); its column becomes writable. */
  markInplace(field: string): void {
    this.inplaceFields.add(field);
  }

  /** Overwrites a doc's seq_no, version and primary term (inplace and field-level updates change them without a new doc). */
  setMeta(doc: number, seqNo: number, version: number, primaryTerm: number): void {
    this.seqNos[doc] = seqNo;
    this.versions[doc] = version;
    this.primaryTerms[doc] = primaryTerm;
  }

  private fieldIndex(path: string, positions: boolean): FieldPostings {
    let index = this.indexes.get(path);
    if (!index) {
      index = new FieldPostings(this.pool, positions);
      this.indexes.set(path, index);
    }
    return index;
  }

  private indexText(doc: number, path: string, values: readonly string[], analyzer: FlatField['analyzer']): void {
    const index = this.fieldIndex(path, true);
    const termsBefore = index.termCount;
    tokens.collect(values, analyzer, index.table);
    const tokenCount = tokens.count;
    if (tokenCount === 0) return;
    this.countNewTerms(index, termsBefore);
    const norm = encodeNorm(tokenCount);
    index.norms.ensure(doc + 1);
    index.norms.data[doc] = norm;
    index.stats.docCount++;
    index.stats.sumTotalTermFreq += tokenCount;
    index.addTokens(doc, tokens.ids, tokens.positions, tokenCount, norm);
  }

  private indexKeyword(doc: number, path: string, values: readonly string[]): void {
    if (values.length === 0) return;
    const index = this.fieldIndex(path, false);
    index.norms.ensure(doc + 1);
    index.norms.data[doc] = 1;
    index.stats.docCount++;
    index.stats.sumTotalTermFreq += 1;
    const termsBefore = index.termCount;
    tokens.collectKeywords(values, index.table);
    this.countNewTerms(index, termsBefore);
    index.addTokens(doc, tokens.ids, null, tokens.count, 1);
  }

  /** Makes room for the terms interned since `termsBefore` and counts their bytes. */
  private countNewTerms(index: FieldPostings, termsBefore: number): void {
    const count = index.termCount;
    if (count === termsBefore) return;
    index.fitTerms();
    const terms = index.table.terms;
    for (let id = termsBefore; id < count; id++) this.otherBytes += terms[id]!.length + 48;
  }

  private numericColumnFor(path: string): MutableNumericColumn {
    let column = this.numeric.get(path);
    if (!column) this.numeric.set(path, (column = new MutableNumericColumn()));
    return column;
  }

  numLiveDocs(): number {
    return this.liveCount;
  }

  isLive(doc: number): boolean {
    return this.live.data[doc] === 1;
  }

  indexedFields(): string[] {
    const own = [...this.indexes.keys()];
    return this.overlay.size === 0 ? own : [...new Set([...own, ...this.overlay.indexedFields()])];
  }

  postings(field: string, term: string): PostingsCursor | null {
    const index = this.indexes.get(field);
    const id = index ? index.table.lookup(term) : -1;
    const own = id >= 0 ? index!.cursor(id) : null;
    return this.overlay.touches(field) ? this.overlay.postings(field, term, own) : own;
  }

  docFreq(field: string, term: string): number {
    const index = this.indexes.get(field);
    const id = index ? index.table.lookup(term) : -1;
    const own = id >= 0 ? index!.docFreq(id) : 0;
    return this.overlay.touches(field) ? this.overlay.docFreq(field, term, own) : own;
  }

  terms(field: string, from?: string): TermsIterator {
    const own = this.ownTerms(field, from);
    return this.overlay.touches(field) ? this.overlay.terms(field, own, from) : own;
  }

  private ownTerms(field: string, from?: string): TermsIterator {
    const index = this.indexes.get(field);
    if (!index) {
      return {
        next: () => null,
        docFreq: () => 0,
        postings: () => {
          throw new RangeError(`field [${field}] has no terms`);
        },
      };
    }
    const sorted = index.sortedIds();
    const terms = index.table.terms;
    let position = from === undefined ? 0 : lowerBound(sorted, terms, from);
    let current = -1;
    return {
      next: () => {
        if (position >= sorted.length) return null;
        current = sorted[position++]!;
        return terms[current]!;
      },
      docFreq: () => index.docFreq(current),
      postings: () => index.cursor(current),
    };
  }

  hasPositions(field: string): boolean {
    return (this.indexes.get(field)?.positions ?? false) || this.overlay.hasPositions(field);
  }

  norm(field: string, doc: number): number {
    const own = this.ownNorm(field, doc);
    return this.overlay.touches(field) ? this.overlay.norm(field, doc, own) : own;
  }

  private ownNorm(field: string, doc: number): number {
    const norms = this.indexes.get(field)?.norms;
    return norms && doc < norms.length ? norms.data[doc]! : 0;
  }

  fieldStats(field: string): FieldStats {
    const stats = this.indexes.get(field)?.stats;
    const own = stats ? { ...stats } : { docCount: 0, sumTotalTermFreq: 0 };
    return this.overlay.touches(field) ? this.overlay.fieldStats(field, own) : own;
  }

  numericFields(): string[] {
    const own = [...this.numeric.keys()];
    return this.overlay.size === 0 ? own : [...new Set([...own, ...this.overlay.numericFields()])];
  }

  numericColumn(field: string): NumericColumn | null {
    const own = this.numeric.get(field) ?? null;
    return this.overlay.touches(field) ? this.overlay.numericColumn(field, own) : own;
  }

  numericRangeIndex(_field: string): NumericRangeIndex | null {
    return null;
  }

  inplaceColumn(field: string): InplaceColumn | null {
    if (!this.inplaceFields.has(field)) return null;
    return this.numericColumnFor(field);
  }

  keywordFields(): string[] {
    const own = [...this.keyword.keys()];
    return this.overlay.size === 0 ? own : [...new Set([...own, ...this.overlay.keywordFields()])];
  }

  keywordColumn(field: string): KeywordColumn | null {
    const own = this.keyword.get(field)?.column() ?? null;
    return this.overlay.touches(field) ? this.overlay.keywordColumn(field, own) : own;
  }

  source(doc: number): Buffer {
    return this.overlay.size === 0 ? this.sources[doc]! : this.overlay.source(doc, this.sources[doc]!);
  }

  meta(doc: number): DocMeta {
    return {
      id: this.ids[doc]!,
      seqNo: this.seqNos[doc]!,
      version: this.versions[doc]!,
      primaryTerm: this.primaryTerms[doc]!,
    };
  }

  metaNumbers(doc: number): DocNumbers {
    return { seqNo: this.seqNos[doc]!, version: this.versions[doc]!, primaryTerm: this.primaryTerms[doc]! };
  }

  lookupId(id: string): number {
    return this.idIndex.get(id) ?? -1;
  }
}

/** Term order used everywhere: UTF-16 code unit order. */
export function compareTerms(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function lowerBound(sorted: Int32Array, terms: readonly string[], target: string): number {
  let low = 0;
  let high = sorted.length;
  while (low < high) {
    const mid = (low + high) >>> 1;
    if (terms[sorted[mid]!]! < target) low = mid + 1;
    else high = mid;
  }
  return low;
}
