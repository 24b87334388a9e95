/**
 * The read contract every searchable unit of a shard implements: immutable segments
 * (`SegmentReader`) and the in-memory write layer (`MutableSegment`). Queries, collectors,
 * the segment writer (epochs) and merges only ever see this interface.
 *
 * Doc ids are dense per leaf: 0 .. maxDoc-1, in insertion order.
 */

/** Sentinel doc id returned by cursors once exhausted. */
export const NO_MORE_DOCS = 0x7fffffff;

/** Number of documents per postings block (skip data and block-max metadata are per block). */
export const POSTINGS_BLOCK_SIZE = 128;

/** Turns a (freq, norm byte) pair into a score upper bound (Bm25Scoring.bound). */
export interface ImpactBound {
  bound(freq: number, norm: number): number;
}

/** Iterator over one term's postings, in increasing doc id order. Starts before the first doc. */
export interface PostingsCursor {
  /** Current doc id; -1 before the first `next`/`advance`, NO_MORE_DOCS at the end. */
  readonly doc: number;
  /** Number of documents containing the term (including deleted ones). */
  readonly docFreq: number;
  /** Moves to the next doc and returns it. */
  next(): number;
  /** Moves to the first doc >= target and returns it (target > current doc). */
  advance(target: number): number;
  /** Term frequency in the current doc. */
  freq(): number;
  /** Positions of the term in the current doc, ascending (only for fields indexed with positions). */
  positions(): ArrayLike<number>;
  /**
   * Block-max support: moves the block pointer (not the doc) to the block containing `target`
   * and returns the last doc id of that block (NO_MORE_DOCS past the end).
   */
  shallowAdvance(target: number): number;
  /** Largest term frequency in the current shallow block. */
  blockMaxFreq(): number;
  /** Smallest norm byte (field length) among the current shallow block's docs. */
  blockMinNorm(): number;
  /**
   * Largest `scoring.bound` over the current shallow block's competitive (freq, norm) pairs, when
   * the cursor keeps them (segments); else `blockMaxFreq` and `blockMinNorm` bound the block.
   */
  blockMaxBound?(scoring: ImpactBound): number;
  /** Largest term frequency of the whole postings list (for whole-list score bounds). */
  readonly maxFreq: number;
  /** Smallest norm byte over the whole postings list. */
  readonly minNorm: number;
  /** In-memory postings only: how many of the listed docs are below `doc`, without moving (a binary search). */
  countBelow?(doc: number): number;
}

/** Sorted iteration over a field's terms. */
export interface TermsIterator {
  /** Advances and returns the next term (ascending by UTF-16 code unit order), or null at the end. */
  next(): string | null;
  /** Document frequency of the current term. */
  docFreq(): number;
  /**
   * Postings of the current term; `reuse`, a cursor the caller is done with (an earlier result of
   * this call), may be moved to the term instead of a new one being made.
   */
  postings(reuse?: PostingsCursor): PostingsCursor;
}

/** Per-field collection statistics that BM25 sums over the leaves of a shard. */
export interface FieldStats {
  /** Documents with at least one token in the field (live or not). */
  docCount: number;
  /** Sum of field lengths over those documents. */
  sumTotalTermFreq: number;
}

/** Per-document numeric values (numbers, dates as epoch millis, booleans as 0/1). */
export interface NumericColumn {
  /** Number of values the document holds (0 = missing). */
  count(doc: number): number;
  /** The i-th value of the doc, values of a doc sorted ascending. */
  value(doc: number, index: number): number;
}

/**
 * A numeric field's values in ascending order, each entry naming its doc: a range of values is
 * a contiguous run of entries. Missing values have no entry; a multi-valued doc has one per value.
 */
export interface NumericRangeIndex {
  /** Number of entries. */
  readonly size: number;
  /** Whether a doc can have several entries (then a run of entries can name a doc twice). */
  readonly multiValued: boolean;
  /** First entry whose value is >= `value` (`size` when none). */
  lowerBound(value: number): number;
  /** First entry whose value is > `value` (`size` when none). */
  upperBound(value: number): number;
  /** Calls `visit` with the doc of each entry in [from, to), in value order (not doc order). */
  forEachDoc(from: number, to: number, visit: (doc: number) => void): void;
}

/** A writable single-valued numeric column: the storage of an `inplace` field. */
export interface InplaceColumn extends NumericColumn {
  /** Overwrites the doc's slot (NaN marks missing). O(1). */
  set(doc: number, value: number): void;
  /** Current slot value, NaN when missing. */
  get(doc: number): number;
}

/** Per-document keyword values as ordinals into the leaf's sorted term list. */
export interface KeywordColumn {
  /** Number of distinct terms in this leaf. */
  readonly ordinalCount: number;
  /** Term for an ordinal (ordinals follow ascending term order). */
  term(ordinal: number): string;
  /** Ordinal of a term, or -1 when the leaf does not contain it. */
  lookup(term: string): number;
  /** Number of values the document holds. */
  count(doc: number): number;
  /** The i-th ordinal of the doc, ascending. */
  ordinal(doc: number, index: number): number;
}

/** The numbers of a document's bookkeeping. */
export interface DocNumbers {
  seqNo: number;
  version: number;
  primaryTerm: number;
}

/** Per-document bookkeeping every leaf keeps. */
export interface DocMeta extends DocNumbers {
  id: string;
}

/** Read view of a segment or of the mutable layer. */
export interface LeafReader {
  /** Stable name used in stats and logs (segment name, or `mutable-<gen>`). */
  readonly name: string;
  /** One past the largest doc id. */
  readonly maxDoc: number;
  /** True when nothing a query reads in this leaf changes while it runs, so it may pause inside it (segments are, by type; snapshot views say so here). */
  readonly pausable?: boolean;
  /** Live (not deleted) documents. */
  numLiveDocs(): number;
  /** False when the doc was deleted or overwritten. */
  isLive(doc: number): boolean;

  /** Fields that have an inverted index in this leaf (text and keyword fields). */
  indexedFields(): string[];
  /** Postings of a term, or null when absent. */
  postings(field: string, term: string): PostingsCursor | null;
  /** Document frequency of a term (0 when absent). */
  docFreq(field: string, term: string): number;
  /** Sorted terms of a field, optionally only those >= `from`. */
  terms(field: string, from?: string): TermsIterator;
  /** Whether the field was indexed with positions (text fields). */
  hasPositions(field: string): boolean;
  /** Norm byte (quantised field length, see norms.ts) of the doc's field; 0 when absent. */
  norm(field: string, doc: number): number;
  /** BM25 statistics of a field in this leaf. */
  fieldStats(field: string): FieldStats;

  /** Fields with numeric columns (including inplace ones). */
  numericFields(): string[];
  /** Numeric column of a field, or null. Inplace fields return their InplaceColumn. */
  numericColumn(field: string): NumericColumn | null;
  /**
   * Range index of a numeric field, or null: the mutable layer, inplace fields (their values
   * change after the segment is written), booleans and segments of format 1 have none.
   */
  numericRangeIndex(field: string): NumericRangeIndex | null;
  /** Inplace column of a field, or null when the field is not inplace in this leaf. */
  inplaceColumn(field: string): InplaceColumn | null;
  /** Fields with keyword (ordinal) columns. */
  keywordFields(): string[];
  /** Keyword column of a field, or null. */
  keywordColumn(field: string): KeywordColumn | null;

  /** The stored `_source` bytes (UTF-8 JSON) of a doc, live or not, as written (without inplace overlay). */
  source(doc: number): Buffer;
  /** Id, seq_no, version and primary term of a doc. */
  meta(doc: number): DocMeta;
  /** Seq_no, version and primary term of a doc, without reading its id. */
  metaNumbers(doc: number): DocNumbers;
  /** Doc id of the live document with this `_id`, or -1. */
  lookupId(id: string): number;
}
