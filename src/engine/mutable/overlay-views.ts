/**
 * Read views that lay a leaf's field overlays (field-overlay.ts) over its own postings and
 * columns: replaced docs are skipped in the leaf's data and answered from the overlay.
 */
import { DenseNumericColumn } from '../segment/numeric-columns.ts';
import { NO_MORE_DOCS, type KeywordColumn, type NumericColumn, type NumericRangeIndex, type PostingsCursor, type TermsIterator } from '../segment/leaf-reader.ts';
import { compareTerms } from './mutable-segment.ts';

/** Docs whose field was replaced: byte `doc` is 1 (past the end: not replaced). Read at once, never kept across writes. */
export type ReplacedDocs = Uint8Array;

function isReplaced(replaced: ReplacedDocs, doc: number): boolean {
  return doc < replaced.length && replaced[doc] === 1;
}

/** One replaced doc's indexed value of a text or keyword field. */
export interface OverlayTerms {
  /** Term → positions (text fields) or null (keyword fields, frequency 1). */
  terms: Map<string, number[] | null>;
  norm: number;
}

/** Postings of one term: the leaf's docs that were not replaced, then merged with the overlay's docs holding the term. */
export class OverlaidPostingsCursor implements PostingsCursor {
  doc = -1;
  readonly maxFreq: number;
  readonly minNorm: number;
  private baseDoc = -1;
  private overlayIndex = 0;
  private fromOverlay = false;

  constructor(
    private readonly base: PostingsCursor | null,
    private readonly replaced: ReplacedDocs,
    /** Overlay docs holding the term, ascending. */
    private readonly overlayDocs: readonly number[],
    /** Largest frequency of the term among the overlay docs (0 without any). */
    private readonly overlayMaxFreq: number,
    /** Smallest norm among the overlay docs (255 without any). */
    private readonly overlayMinNorm: number,
    private readonly values: ReadonlyMap<number, OverlayTerms | undefined>,
    private readonly term: string,
    readonly docFreq: number,
  ) {
    this.maxFreq = Math.max(base?.maxFreq ?? 0, overlayMaxFreq);
    this.minNorm = Math.min(base?.minNorm ?? 255, overlayMinNorm);
  }

  next(): number {
    return this.advance(this.doc + 1);
  }

  advance(target: number): number {
    const base = this.base;
    if (base) {
      if (this.baseDoc < target) this.baseDoc = this.baseDoc + 1 === target ? base.next() : base.advance(target);
      while (this.baseDoc !== NO_MORE_DOCS && isReplaced(this.replaced, this.baseDoc)) this.baseDoc = base.next();
    } else {
      this.baseDoc = NO_MORE_DOCS;
    }
    const docs = this.overlayDocs;
    while (this.overlayIndex < docs.length && docs[this.overlayIndex]! < target) this.overlayIndex++;
    const overlayDoc = this.overlayIndex < docs.length ? docs[this.overlayIndex]! : NO_MORE_DOCS;
    this.fromOverlay = overlayDoc < this.baseDoc;
    this.doc = this.fromOverlay ? overlayDoc : this.baseDoc;
    return this.doc;
  }

  freq(): number {
    if (!this.fromOverlay) return this.base!.freq();
    return this.values.get(this.doc)!.terms.get(this.term)?.length ?? 1;
  }

  positions(): ArrayLike<number> {
    if (!this.fromOverlay) return this.base!.positions();
    return this.values.get(this.doc)!.terms.get(this.term) ?? [];
  }

  shallowAdvance(target: number): number {
    if (this.base) return this.base.shallowAdvance(target);
    const last = this.overlayDocs.length > 0 ? this.overlayDocs[this.overlayDocs.length - 1]! : NO_MORE_DOCS;
    return target > last ? NO_MORE_DOCS : last;
  }

  blockMaxFreq(): number {
    return Math.max(this.base?.blockMaxFreq() ?? 0, this.overlayMaxFreq);
  }

  blockMinNorm(): number {
    return Math.min(this.base?.blockMinNorm() ?? 255, this.overlayMinNorm);
  }
}

/** Sorted union of a leaf's terms and an overlay's, skipping terms no doc holds any more. */
export function mergedTerms(
  base: TermsIterator,
  overlayTerms: readonly string[],
  docFreq: (term: string, baseDocFreq: number) => number,
  postings: (term: string, base: PostingsCursor | null) => PostingsCursor | null,
  from?: string,
): TermsIterator {
  let baseHead = base.next();
  let overlayIndex = from === undefined ? 0 : lowerBound(overlayTerms, from);
  let current: string | null = null;
  let currentInBase = false;
  let currentFreq = 0;
  const step = (): string | null => {
    for (;;) {
      const overlayHead = overlayIndex < overlayTerms.length ? overlayTerms[overlayIndex]! : null;
      if (baseHead === null && overlayHead === null) return null;
      let term: string;
      let inBase = false;
      let baseFreq = 0;
      if (baseHead !== null && (overlayHead === null || compareTerms(baseHead, overlayHead) <= 0)) {
        term = baseHead;
        inBase = true;
        baseFreq = base.docFreq();
        if (overlayHead === baseHead) overlayIndex++;
      } else {
        term = overlayHead!;
        overlayIndex++;
      }
      const freq = docFreq(term, baseFreq);
      current = term;
      currentInBase = inBase;
      currentFreq = freq;
      if (freq > 0) return term;
      if (inBase) baseHead = base.next();
    }
  };
  return {
    next: () => {
      if (current !== null && currentInBase) baseHead = base.next();
      current = null;
      return step();
    },
    docFreq: () => currentFreq,
    postings: () => postings(current!, currentInBase ? base.postings() : null)!,
  };
}

/** A numeric column whose replaced docs answer the overlay's values. */
export function overlaidNumericColumn(base: NumericColumn | null, replaced: ReplacedDocs, values: ReadonlyMap<number, number[] | undefined>): NumericColumn {
  return {
    count: (doc) => (isReplaced(replaced, doc) ? (values.get(doc)?.length ?? 0) : (base?.count(doc) ?? 0)),
    value: (doc, index) => (isReplaced(replaced, doc) ? values.get(doc)![index]! : base!.value(doc, index)),
  };
}

/**
 * A single-valued segment column with the replaced docs' values written in (NaN: the doc no longer
 * holds the field); null when an overlay value holds more than one number.
 */
export function overlaidDenseColumn(base: DenseNumericColumn, replaced: ReplacedDocs, values: ReadonlyMap<number, number[] | undefined>): DenseNumericColumn | null {
  const merged = Float64Array.from(base.values);
  for (const [doc, list] of values) {
    if ((list?.length ?? 0) > 1) return null;
    if (doc < merged.length && isReplaced(replaced, doc)) merged[doc] = list?.[0] ?? NaN;
  }
  return new DenseNumericColumn(merged);
}

/** Most entry-position splits a range index view remembers (see `OverlaidRangeIndex`). */
const REMEMBERED_SPLITS = 256;

/**
 * A range index over a leaf's own entries (those of replaced docs skipped when visited) and the
 * overlay's values. Entry positions count both, in value order: a position from `lowerBound` or
 * `upperBound` is the sum of the leaf's and the overlay's, and `forEachDoc` splits it back.
 */
export class OverlaidRangeIndex implements NumericRangeIndex {
  readonly size: number;
  readonly multiValued: boolean;
  private readonly values: Float64Array;
  private readonly docs: Int32Array;
  private readonly splits = new Map<number, [number, number]>();

  constructor(
    private readonly base: NumericRangeIndex,
    private readonly replaced: ReplacedDocs,
    overlayValues: ReadonlyMap<number, number[] | undefined>,
  ) {
    const entries: Array<[number, number]> = [];
    let multiValued = base.multiValued;
    for (const [doc, values] of overlayValues) {
      if (!values) continue;
      if (values.length > 1) multiValued = true;
      for (const value of values) entries.push([value, doc]);
    }
    entries.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
    this.values = Float64Array.from(entries, (entry) => entry[0]);
    this.docs = Int32Array.from(entries, (entry) => entry[1]);
    this.size = base.size + entries.length;
    this.multiValued = multiValued;
  }

  lowerBound(value: number): number {
    return this.remember(this.base.lowerBound(value), firstIndex(this.values, (candidate) => candidate >= value));
  }

  upperBound(value: number): number {
    return this.remember(this.base.upperBound(value), firstIndex(this.values, (candidate) => candidate > value));
  }

  forEachDoc(from: number, to: number, visit: (doc: number) => void): void {
    const start = this.splits.get(from);
    const end = this.splits.get(to);
    if (!start || !end) throw new RangeError('entry positions must come from lowerBound or upperBound');
    this.base.forEachDoc(start[0], end[0], (doc) => {
      if (!isReplaced(this.replaced, doc)) visit(doc);
    });
    for (let index = start[1]; index < end[1]; index++) visit(this.docs[index]!);
  }

  /** Positions are monotone in value, so a position has one split; the most recently used are kept. */
  private remember(base: number, overlay: number): number {
    const position = base + overlay;
    this.splits.delete(position);
    if (this.splits.size >= REMEMBERED_SPLITS) this.splits.delete(this.splits.keys().next().value!);
    this.splits.set(position, [base, overlay]);
    return position;
  }
}

/** First index whose value passes `test` (values ascending, `test` monotone), or the length. */
function firstIndex(values: Float64Array, test: (value: number) => boolean): number {
  let low = 0;
  let high = values.length;
  while (low < high) {
    const mid = (low + high) >>> 1;
    if (test(values[mid]!)) high = mid;
    else low = mid + 1;
  }
  return low;
}

/**
 * A keyword column whose replaced docs answer the overlay's values. When the overlay holds terms
 * the leaf lacks, the ordinal space is the sorted union (the leaf's ordinals remapped).
 */
export function overlaidKeywordColumn(base: KeywordColumn | null, replaced: ReplacedDocs, values: ReadonlyMap<number, string[] | undefined>): KeywordColumn {
  const fresh = new Set<string>();
  for (const list of values.values()) for (const term of list ?? []) if (!base || base.lookup(term) < 0) fresh.add(term);
  let terms: (ordinal: number) => string;
  let lookup: (term: string) => number;
  let fromBase: (ordinal: number) => number;
  let ordinalCount: number;
  if (fresh.size === 0) {
    terms = (ordinal) => base!.term(ordinal);
    lookup = (term) => (base ? base.lookup(term) : -1);
    fromBase = (ordinal) => ordinal;
    ordinalCount = base?.ordinalCount ?? 0;
  } else {
    const added = [...fresh].sort(compareTerms);
    const baseCount = base?.ordinalCount ?? 0;
    const all: string[] = [];
    const remap = new Int32Array(baseCount);
    let next = 0;
    for (let ordinal = 0; ordinal < baseCount; ordinal++) {
      const term = base!.term(ordinal);
      while (next < added.length && compareTerms(added[next]!, term) < 0) all.push(added[next++]!);
      remap[ordinal] = all.length;
      all.push(term);
    }
    while (next < added.length) all.push(added[next++]!);
    terms = (ordinal) => all[ordinal]!;
    lookup = (term) => {
      const position = lowerBound(all, term);
      return position < all.length && all[position] === term ? position : -1;
    };
    fromBase = (ordinal) => remap[ordinal]!;
    ordinalCount = all.length;
  }
  const overlayOrdinals = new Map<number, number[]>();
  const ordinalsOf = (doc: number): number[] => {
    let ordinals = overlayOrdinals.get(doc);
    if (!ordinals) {
      ordinals = [...new Set(values.get(doc) ?? [])].map(lookup).sort((a, b) => a - b);
      overlayOrdinals.set(doc, ordinals);
    }
    return ordinals;
  };
  return {
    ordinalCount,
    term: terms,
    lookup,
    count: (doc) => (isReplaced(replaced, doc) ? ordinalsOf(doc).length : (base?.count(doc) ?? 0)),
    ordinal:
      fresh.size === 0
        ? (doc, index) => (isReplaced(replaced, doc) ? ordinalsOf(doc)[index]! : base!.ordinal(doc, index))
        : (doc, index) => (isReplaced(replaced, doc) ? ordinalsOf(doc)[index]! : fromBase(base!.ordinal(doc, index))),
  };
}

function lowerBound(sorted: readonly string[], target: string): number {
  let low = 0;
  let high = sorted.length;
  while (low < high) {
    const mid = (low + high) >>> 1;
    if (compareTerms(sorted[mid]!, target) < 0) low = mid + 1;
    else high = mid;
  }
  return low;
}
