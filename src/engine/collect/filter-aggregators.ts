/**
 * Shard collectors of `filter`, `filters` and `missing`. A filter's query is bound to each leaf on
 * its own (a one-leaf search context, without scores: matching never depends on the statistics)
 * and its scorer is advanced to each collected doc, which arrive in increasing order within a
 * leaf (the same doc again under another owner bucket keeps the scorer where it is).
 */
import type { KeywordColumn, LeafReader, NumericColumn } from '../segment/leaf-reader.ts';
import { SearchContext } from '../query/search-context.ts';
import type { Scorer } from '../query/scorer.ts';
import type { FiltersPartial, SingleBucketPartial } from './aggregation-partials.ts';
import type { Aggregator, AggregatorGroup } from './aggregator.ts';
import type { BucketBudget } from './bucket-budget.ts';
import { GrowableFloats } from './bucket-ordinals.ts';
import type { FilterSpec, FiltersSpec, MissingSpec, ParsedFilter } from './filter-spec.ts';

/** Tests the docs of one leaf, in increasing order, against a filter. */
export class LeafFilter {
  private scorer: Scorer | null = null;

  constructor(private readonly filter: ParsedFilter | null) {}

  /** Binds the filter to a leaf. */
  setLeaf(leaf: LeafReader): void {
    if (this.filter === null) {
      this.scorer = null;
      return;
    }
    const context = new SearchContext([leaf], this.filter.fields);
    this.scorer = this.filter.query.createWeight(context, false, 1).scorer(leaf, 0);
  }

  /** Whether `doc` (never below the previous doc asked about) matches. */
  matches(doc: number): boolean {
    const scorer = this.scorer;
    if (scorer === null) return false;
    if (scorer.doc < doc) scorer.advance(doc);
    return scorer.doc === doc;
  }
}

/** Shard collector of `filter`: one bucket per owner, its ordinal the owner's. */
export class FilterAggregator implements Aggregator {
  readonly name: string;
  private readonly docCounts = new GrowableFloats(0);
  private readonly filter: LeafFilter;

  constructor(
    spec: FilterSpec,
    private readonly subs: AggregatorGroup,
  ) {
    this.name = spec.name;
    this.filter = new LeafFilter(spec.filter);
  }

  setLeaf(leaf: LeafReader): void {
    this.filter.setLeaf(leaf);
    this.subs.setLeaf(leaf);
  }

  collect(doc: number, owner: number): void {
    if (!this.filter.matches(doc)) return;
    this.docCounts.ensure(owner);
    this.docCounts.data[owner]!++;
    this.subs.collect(doc, owner);
  }

  partial(owner: number, budget: BucketBudget): SingleBucketPartial {
    budget.consume(1);
    return { type: 'single_bucket', docCount: this.docCounts.get(owner), aggs: this.subs.partials(owner, budget) };
  }
}

/** Shard collector of `filters`: bucket ordinal = owner · buckets + filter index (the other bucket last). */
export class FiltersAggregator implements Aggregator {
  readonly name: string;
  private readonly docCounts = new GrowableFloats(0);
  private readonly filters: LeafFilter[];
  private readonly bucketCount: number;

  constructor(
    private readonly spec: FiltersSpec,
    private readonly subs: AggregatorGroup,
  ) {
    this.name = spec.name;
    this.filters = spec.filters.map((filter) => new LeafFilter(filter));
    this.bucketCount = spec.filters.length + (spec.otherBucketKey === null ? 0 : 1);
  }

  setLeaf(leaf: LeafReader): void {
    for (const filter of this.filters) filter.setLeaf(leaf);
    this.subs.setLeaf(leaf);
  }

  collect(doc: number, owner: number): void {
    let matched = false;
    for (let index = 0; index < this.filters.length; index++) {
      if (!this.filters[index]!.matches(doc)) continue;
      matched = true;
      this.collectBucket(doc, owner * this.bucketCount + index);
    }
    if (!matched && this.spec.otherBucketKey !== null) this.collectBucket(doc, owner * this.bucketCount + this.filters.length);
  }

  private collectBucket(doc: number, ordinal: number): void {
    this.docCounts.ensure(ordinal);
    this.docCounts.data[ordinal]!++;
    this.subs.collect(doc, ordinal);
  }

  partial(owner: number, budget: BucketBudget): FiltersPartial {
    budget.consume(this.bucketCount);
    return {
      type: 'filters',
      buckets: filtersBucketKeys(this.spec).map((key, index) => {
        const ordinal = owner * this.bucketCount + index;
        return { key, docCount: this.docCounts.get(ordinal), aggs: this.subs.partials(ordinal, budget) };
      }),
    };
  }
}

/** The keys of a `filters` aggregation's buckets in order: names (or indexes when anonymous), then the other bucket's. */
export function filtersBucketKeys(spec: FiltersSpec): string[] {
  const keys = spec.keys ?? spec.filters.map((_, index) => String(index));
  return spec.otherBucketKey === null ? keys : [...keys, spec.otherBucketKey];
}

/** Shard collector of `missing`: docs with no value for the field (every doc when it is unmapped). */
export class MissingAggregator implements Aggregator {
  readonly name: string;
  private readonly docCounts = new GrowableFloats(0);
  private column: KeywordColumn | NumericColumn | null = null;

  constructor(
    private readonly spec: MissingSpec,
    private readonly subs: AggregatorGroup,
  ) {
    this.name = spec.name;
  }

  setLeaf(leaf: LeafReader): void {
    const { source } = this.spec;
    this.column = source.kind === 'keyword' ? leaf.keywordColumn(source.field) : source.kind === 'numeric' ? leaf.numericColumn(source.field) : null;
    this.subs.setLeaf(leaf);
  }

  collect(doc: number, owner: number): void {
    if (this.column !== null && this.column.count(doc) > 0) return;
    this.docCounts.ensure(owner);
    this.docCounts.data[owner]!++;
    this.subs.collect(doc, owner);
  }

  partial(owner: number, budget: BucketBudget): SingleBucketPartial {
    budget.consume(1);
    return { type: 'single_bucket', docCount: this.docCounts.get(owner), aggs: this.subs.partials(owner, budget) };
  }
}
