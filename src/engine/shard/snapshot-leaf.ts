/**
 * A leaf as it was when a snapshot opened (scroll and point-in-time contexts). Segments are
 * immutable except for three things a later write changes in place: deletions, doc meta and the
 * slots of inplace columns; the in-memory layers also grow. The snapshot copies nothing up front:
 * it records the leaf's doc count and live count at open, hides docs added later (postings are
 * cut at that doc count), and keeps, copy-on-write, the state of each doc a later write is about
 * to change (`preserve`, called by the shard before every delete and inplace write). Reads of
 * such a doc answer the saved state, every other read passes to the leaf.
 */
import {
  NO_MORE_DOCS,
  type DocMeta,
  type DocNumbers,
  type FieldStats,
  type InplaceColumn,
  type KeywordColumn,
  type LeafReader,
  type NumericColumn,
  type NumericRangeIndex,
  type PostingsCursor,
  type TermsIterator,
} from '../segment/leaf-reader.ts';

/** A doc's state at open time, saved before a later write changed it. */
interface SavedDoc {
  live: boolean;
  meta: DocMeta;
  /** Inplace column values (NaN: no value), by field. */
  inplace: Map<string, number>;
  /** The stored source, when the write changes the doc where it lives rather than replacing it. */
  source: Buffer | null;
}

/** Most docFreq answers one snapshot of an in-memory leaf caches (they are recounted past it). */
const DOC_FREQ_CACHE_LIMIT = 10_000;

/** See the module comment. */
export class SnapshotLeaf implements LeafReader {
  readonly name: string;
  readonly maxDoc: number;
  /** A query may pause inside a snapshot leaf: nothing it reads changes (see execute.ts). */
  readonly pausable = true;
  private readonly liveCount: number;
  private readonly saved = new Map<number, SavedDoc>();
  /** In-memory leaves only: their field statistics at open, and docFreqs counted below `maxDoc`. */
  private readonly grows: boolean;
  private readonly openStats = new Map<string, FieldStats>();
  private readonly docFreqs = new Map<string, number>();

  constructor(
    /** The leaf this snapshot reads through. */
    readonly leaf: LeafReader,
    /** Whether the leaf still takes documents (the mutable layer, or the layer an epoch is freezing). */
    grows: boolean,
  ) {
    this.name = leaf.name;
    this.maxDoc = leaf.maxDoc;
    this.liveCount = leaf.numLiveDocs();
    this.grows = grows;
    if (grows) for (const field of leaf.indexedFields()) this.openStats.set(field, leaf.fieldStats(field));
  }

  /**
   * Saves a doc's current state before a write deletes it or changes it in place (first change
   * only); `inPlace` also saves its stored source, which a write that keeps the doc may change.
   */
  preserve(doc: number, inplaceFields: readonly string[], inPlace: boolean): void {
    if (doc >= this.maxDoc || this.saved.has(doc)) return;
    const inplace = new Map<string, number>();
    for (const field of inplaceFields) {
      const column = this.leaf.inplaceColumn(field);
      if (column) inplace.set(field, column.get(doc));
    }
    this.saved.set(doc, { live: this.leaf.isLive(doc), meta: this.leaf.meta(doc), inplace, source: inPlace ? this.leaf.source(doc) : null });
  }

  numLiveDocs(): number {
    return this.liveCount;
  }

  isLive(doc: number): boolean {
    if (doc >= this.maxDoc) return false;
    if (this.saved.size === 0) return this.leaf.isLive(doc);
    return this.saved.get(doc)?.live ?? this.leaf.isLive(doc);
  }

  indexedFields(): string[] {
    return this.grows ? [...this.openStats.keys()] : this.leaf.indexedFields();
  }

  postings(field: string, term: string): PostingsCursor | null {
    const cursor = this.leaf.postings(field, term);
    if (cursor === null || !this.grows) return cursor;
    return new CappedPostings(cursor, this.maxDoc, this.docFreq(field, term));
  }

  docFreq(field: string, term: string): number {
    if (!this.grows) return this.leaf.docFreq(field, term);
    const key = `${field}\u0000${term}`;
    let count = this.docFreqs.get(key);
    if (count === undefined) {
      count = 0;
      const cursor = this.leaf.postings(field, term);
      if (cursor?.countBelow) count = cursor.countBelow(this.maxDoc);
      else if (cursor !== null) while (cursor.next() < this.maxDoc) count++;
      if (this.docFreqs.size >= DOC_FREQ_CACHE_LIMIT) this.docFreqs.clear();
      this.docFreqs.set(key, count);
    }
    return count;
  }

  terms(field: string, from?: string): TermsIterator {
    const terms = this.leaf.terms(field, from);
    if (!this.grows) return terms;
    let current: string | null = null;
    return {
      next: () => (current = terms.next()),
      docFreq: () => this.docFreq(field, current!),
      postings: () => new CappedPostings(terms.postings(), this.maxDoc, this.docFreq(field, current!)),
    };
  }

  hasPositions(field: string): boolean {
    return this.leaf.hasPositions(field);
  }

  norm(field: string, doc: number): number {
    return this.leaf.norm(field, doc);
  }

  fieldStats(field: string): FieldStats {
    if (!this.grows) return this.leaf.fieldStats(field);
    const stats = this.openStats.get(field);
    return stats ? { ...stats } : { docCount: 0, sumTotalTermFreq: 0 };
  }

  numericFields(): string[] {
    return this.leaf.numericFields();
  }

  numericColumn(field: string): NumericColumn | null {
    const inplace = this.leaf.inplaceColumn(field);
    return inplace ? new SnapshotColumn(inplace, field, this.saved) : this.leaf.numericColumn(field);
  }

  numericRangeIndex(field: string): NumericRangeIndex | null {
    return this.leaf.numericRangeIndex(field);
  }

  inplaceColumn(field: string): InplaceColumn | null {
    const inplace = this.leaf.inplaceColumn(field);
    return inplace ? new SnapshotColumn(inplace, field, this.saved) : null;
  }

  keywordFields(): string[] {
    return this.leaf.keywordFields();
  }

  keywordColumn(field: string): KeywordColumn | null {
    return this.leaf.keywordColumn(field);
  }

  source(doc: number): Buffer {
    const saved = this.saved.size === 0 ? undefined : this.saved.get(doc);
    return saved?.source ?? this.leaf.source(doc);
  }

  meta(doc: number): DocMeta {
    const saved = this.saved.size === 0 ? undefined : this.saved.get(doc);
    return saved ? { ...saved.meta } : this.leaf.meta(doc);
  }

  metaNumbers(doc: number): DocNumbers {
    const saved = this.saved.size === 0 ? undefined : this.saved.get(doc);
    return saved ? { seqNo: saved.meta.seqNo, version: saved.meta.version, primaryTerm: saved.meta.primaryTerm } : this.leaf.metaNumbers(doc);
  }

  /** The doc with this id that was live at open, or -1 (one the leaf no longer knows is found among the saved docs). */
  lookupId(id: string): number {
    const doc = this.leaf.lookupId(id);
    if (doc >= 0 && this.isLive(doc)) return doc;
    for (const [savedDoc, saved] of this.saved) if (saved.live && saved.meta.id === id) return savedDoc;
    return -1;
  }
}

/** An inplace column read at open time: saved values first, the live column for unchanged docs. */
class SnapshotColumn implements InplaceColumn {
  constructor(
    private readonly column: InplaceColumn,
    private readonly field: string,
    private readonly saved: ReadonlyMap<number, SavedDoc>,
  ) {}

  count(doc: number): number {
    return Number.isNaN(this.get(doc)) ? 0 : 1;
  }

  value(doc: number, _index: number): number {
    return this.get(doc);
  }

  get(doc: number): number {
    const saved = this.saved.size === 0 ? undefined : this.saved.get(doc)?.inplace.get(this.field);
    return saved ?? this.column.get(doc);
  }

  set(): void {
    throw new Error('a snapshot is read-only');
  }
}

/** Postings of an in-memory leaf cut at the snapshot's doc count (later docs are not in the snapshot). */
class CappedPostings implements PostingsCursor {
  constructor(
    private readonly cursor: PostingsCursor,
    private readonly maxDoc: number,
    readonly docFreq: number,
  ) {}

  get doc(): number {
    const doc = this.cursor.doc;
    return doc >= this.maxDoc ? NO_MORE_DOCS : doc;
  }

  get maxFreq(): number {
    return this.cursor.maxFreq;
  }

  get minNorm(): number {
    return this.cursor.minNorm;
  }

  next(): number {
    const doc = this.cursor.next();
    return doc >= this.maxDoc ? NO_MORE_DOCS : doc;
  }

  advance(target: number): number {
    const doc = this.cursor.advance(target);
    return doc >= this.maxDoc ? NO_MORE_DOCS : doc;
  }

  freq(): number {
    return this.cursor.freq();
  }

  positions(): ArrayLike<number> {
    return this.cursor.positions();
  }

  shallowAdvance(target: number): number {
    return this.cursor.shallowAdvance(target);
  }

  blockMaxFreq(): number {
    return this.cursor.blockMaxFreq();
  }

  blockMinNorm(): number {
    return this.cursor.blockMinNorm();
  }
}
