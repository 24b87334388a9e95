/**
 * Constant-score filters answered from per-document columns: numeric ranges and value sets
 * (numbers, dates as epoch millis, booleans as 0/1), keyword ranges over ordinals, and `exists`.
 * Numeric ranges and value sets use the leaf's range index when it has one (segments of format
 * 2, fields that are not inplace): the matching entries are found by binary search and only
 * their docs are visited; else, and for ranges too wide to gain from it, the column is scanned.
 */
import type { KeywordColumn, LeafReader, NumericColumn, NumericRangeIndex } from '../segment/leaf-reader.ts';
import { BitSetScorer, DocBitSet, DocListScorer, ScanScorer } from './doc-set-scorers.ts';
import type { TermBounds } from './multi-term-query.ts';
import { termInBounds } from './multi-term-query.ts';
import type { HighlightTerms, Query, Scorer, Weight } from './scorer.ts';
import { NO_SUB_QUERIES, SimpleWeight } from './scorer.ts';
import type { SearchContext } from './search-context.ts';

/** Base of column filters: a constant score and one scorer per leaf. */
/** A constant-score query answered leaf by leaf from columns: subclasses give the scorer of one leaf. */
export abstract class ColumnQuery implements Query {
  constructor(readonly boost: number) {}

  /** Scorer for the leaf with the given constant score, or null when nothing can match. */
  abstract leafScorer(leaf: LeafReader, constantScore: number): Scorer | null;

  createWeight(_context: SearchContext, needsScores: boolean, boost: number): Weight {
    return new ColumnWeight(this, needsScores ? boost * this.boost : 0);
  }

  extractTerms(_out: HighlightTerms): void {}

  subQueries(): readonly Query[] {
    return NO_SUB_QUERIES;
  }
}

class ColumnWeight extends SimpleWeight {
  constructor(
    private readonly query: ColumnQuery,
    private readonly constantScore: number,
  ) {
    super();
  }

  scorer(leaf: LeafReader): Scorer | null {
    return this.query.leafScorer(leaf, this.constantScore);
  }
}

/** Docs with a numeric value in [min, max] (bounds already adjusted to inclusive). */
export class NumericRangeQuery extends ColumnQuery {
  constructor(
    readonly field: string,
    readonly min: number,
    readonly max: number,
    boost = 1,
  ) {
    super(boost);
  }

  leafScorer(leaf: LeafReader, constantScore: number): Scorer | null {
    const column = leaf.numericColumn(this.field);
    if (column === null || !(this.min <= this.max)) return null;
    const index = leaf.numericRangeIndex(this.field);
    if (index === null) return new NumericRangeScorer(leaf.maxDoc, constantScore, column, this.min, this.max, leaf.maxDoc);
    const run: EntryRun = { min: this.min, max: this.max, from: index.lowerBound(this.min), to: index.upperBound(this.max) };
    if (run.from >= run.to) return null;
    const entries = run.to - run.from;
    if (entries > leaf.maxDoc * MAX_INDEXED_FRACTION) {
      return new NumericRangeScorer(leaf.maxDoc, constantScore, column, this.min, this.max, entries);
    }
    return indexedScorer(index, [run], entries, leaf.maxDoc, constantScore);
  }
}

/**
 * Above this fraction of a leaf's docs, a range keeps the column scan: collecting its docs from
 * the index would cost more than checking the few candidates of a selective clause it is
 * intersected with, and leading alone it gains less.
 */
const MAX_INDEXED_FRACTION = 0.25;

/** Entries [from, to) of a range index: those with a value in [min, max]. */
interface EntryRun {
  min: number;
  max: number;
  from: number;
  to: number;
}

/**
 * Visits the docs of each run. Positions are asked for again right before each visit: an index
 * over an overlay remembers only its most recent positions, and a terms query asks for many.
 */
function visitRuns(index: NumericRangeIndex, runs: readonly EntryRun[], add: (doc: number) => void): void {
  for (const run of runs) index.forEachDoc(index.lowerBound(run.min), index.upperBound(run.max), add);
}

/**
 * A scorer over the docs of some runs of a range index: a sorted doc list when they are few
 * (fewer than the leaf's bitset words), else a bitset.
 */
function indexedScorer(index: NumericRangeIndex, runs: readonly EntryRun[], entries: number, maxDoc: number, constantScore: number): Scorer {
  if (entries * 32 >= maxDoc) {
    const bits = new DocBitSet(maxDoc);
    const add = (doc: number): void => bits.add(doc);
    visitRuns(index, runs, add);
    return new BitSetScorer(bits, constantScore);
  }
  let docs = new Int32Array(entries);
  let count = 0;
  const add = (doc: number): void => {
    docs[count++] = doc;
  };
  visitRuns(index, runs, add);
  docs.sort();
  if (index.multiValued && count > 1) {
    let unique = 1;
    for (let i = 1; i < count; i++) if (docs[i] !== docs[unique - 1]) docs[unique++] = docs[i]!;
    docs = docs.subarray(0, unique);
  }
  return new DocListScorer(docs, constantScore);
}

class NumericRangeScorer extends ScanScorer {
  constructor(
    maxDoc: number,
    constantScore: number,
    private readonly column: NumericColumn,
    private readonly min: number,
    private readonly max: number,
    costEstimate: number,
  ) {
    super(maxDoc, constantScore, costEstimate);
  }

  protected matches(doc: number): boolean {
    const column = this.column;
    const count = column.count(doc);
    for (let i = 0; i < count; i++) {
      const value = column.value(doc, i);
      if (value > this.max) return false;
      if (value >= this.min) return true;
    }
    return false;
  }
}

/** Docs holding one of the given numeric values (term/terms on numeric, date, boolean fields). */
export class NumericSetQuery extends ColumnQuery {
  private readonly values: Set<number>;

  constructor(
    readonly field: string,
    values: readonly number[],
    boost = 1,
  ) {
    super(boost);
    this.values = new Set(values);
  }

  leafScorer(leaf: LeafReader, constantScore: number): Scorer | null {
    const column = leaf.numericColumn(this.field);
    if (column === null || this.values.size === 0) return null;
    const index = leaf.numericRangeIndex(this.field);
    if (index === null) return new NumericSetScorer(leaf.maxDoc, constantScore, column, this.values);
    const runs: EntryRun[] = [];
    let entries = 0;
    for (const value of this.values) {
      const run = { min: value, max: value, from: index.lowerBound(value), to: index.upperBound(value) };
      if (run.from >= run.to) continue;
      runs.push(run);
      entries += run.to - run.from;
    }
    if (entries === 0) return null;
    if (entries > leaf.maxDoc * MAX_INDEXED_FRACTION) return new NumericSetScorer(leaf.maxDoc, constantScore, column, this.values);
    return indexedScorer(index, runs, entries, leaf.maxDoc, constantScore);
  }
}

class NumericSetScorer extends ScanScorer {
  constructor(
    maxDoc: number,
    constantScore: number,
    private readonly column: NumericColumn,
    private readonly values: Set<number>,
  ) {
    super(maxDoc, constantScore);
  }

  protected matches(doc: number): boolean {
    const count = this.column.count(doc);
    for (let i = 0; i < count; i++) if (this.values.has(this.column.value(doc, i))) return true;
    return false;
  }
}

/** First ordinal whose term is >= `term` (ordinalCount when none). */
function ordinalCeiling(column: KeywordColumn, term: string): number {
  let low = 0;
  let high = column.ordinalCount;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (column.term(middle) < term) low = middle + 1;
    else high = middle;
  }
  return low;
}

/** Docs with a keyword value within string bounds, compared through the leaf's ordinals. */
export class KeywordRangeQuery extends ColumnQuery {
  constructor(
    readonly field: string,
    readonly bounds: TermBounds,
    boost = 1,
  ) {
    super(boost);
  }

  leafScorer(leaf: LeafReader, constantScore: number): Scorer | null {
    const column = leaf.keywordColumn(this.field);
    if (column === null) return null;
    const { lower, upper } = this.bounds;
    let first = lower === null ? 0 : ordinalCeiling(column, lower);
    if (first < column.ordinalCount && !termInBounds(column.term(first), this.bounds)) first++;
    let last = upper === null ? column.ordinalCount - 1 : ordinalCeiling(column, upper);
    if (last >= column.ordinalCount || !termInBounds(column.term(last), this.bounds)) last--;
    if (first > last) return null;
    return new OrdinalRangeScorer(leaf.maxDoc, constantScore, column, first, last);
  }
}

class OrdinalRangeScorer extends ScanScorer {
  constructor(
    maxDoc: number,
    constantScore: number,
    private readonly column: KeywordColumn,
    private readonly first: number,
    private readonly last: number,
  ) {
    super(maxDoc, constantScore);
  }

  protected matches(doc: number): boolean {
    const column = this.column;
    const count = column.count(doc);
    for (let i = 0; i < count; i++) {
      const ordinal = column.ordinal(doc, i);
      if (ordinal > this.last) return false;
      if (ordinal >= this.first) return true;
    }
    return false;
  }
}

/** How `exists` detects a value for one mapped field. */
export interface ExistsSource {
  field: string;
  kind: 'norms' | 'keyword' | 'numeric';
}

/** Docs that hold a value in any of the given fields. */
export class ExistsQuery extends ColumnQuery {
  constructor(
    readonly sources: readonly ExistsSource[],
    boost = 1,
  ) {
    super(boost);
  }

  leafScorer(leaf: LeafReader, constantScore: number): Scorer | null {
    const normFields: string[] = [];
    const columns: (KeywordColumn | NumericColumn)[] = [];
    for (const source of this.sources) {
      if (source.kind === 'norms') {
        if (leaf.indexedFields().includes(source.field)) normFields.push(source.field);
        continue;
      }
      const column = source.kind === 'keyword' ? leaf.keywordColumn(source.field) : leaf.numericColumn(source.field);
      if (column !== null) columns.push(column);
    }
    if (normFields.length === 0 && columns.length === 0) return null;
    return new ExistsScorer(leaf, constantScore, normFields, columns);
  }
}

class ExistsScorer extends ScanScorer {
  constructor(
    private readonly leaf: LeafReader,
    constantScore: number,
    private readonly normFields: readonly string[],
    private readonly columns: readonly (KeywordColumn | NumericColumn)[],
  ) {
    super(leaf.maxDoc, constantScore);
  }

  protected matches(doc: number): boolean {
    for (let i = 0; i < this.columns.length; i++) if (this.columns[i]!.count(doc) > 0) return true;
    for (let i = 0; i < this.normFields.length; i++) if (this.leaf.norm(this.normFields[i]!, doc) > 0) return true;
    return false;
  }
}
