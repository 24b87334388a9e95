/**
 * `significant_terms`: the terms unusually frequent in a bucket (the foreground) compared with
 * the whole collection or the docs of a `background_filter` (the background), scored by a significance heuristic (JLH by default; see
 * significance-heuristics.ts). A shard counts the foreground and reads the background frequency of its
 * candidate terms from its term dictionary (deleted docs included, like ES's docFreq), or from
 * the column for fields without one, and returns its `shard_size` best; the coordinating node sums
 * both counts per term and keeps the terms with a positive score and `min_doc_count` docs.
 */
import { EngineError } from '../errors.ts';
import type { FlatField } from '../mapping/mapping.ts';
import { checkKeys, readInteger } from '../query/dsl-reader.ts';
import type { KeywordColumn, LeafReader, NumericColumn } from '../segment/leaf-reader.ts';
import { valueSource, type ValueSource } from './aggregation-options.ts';
import { mergeAggregations, mergeBucketsBy, type BucketKey, type SignificantTermsPartial } from './aggregation-partials.ts';
import type { AggregationSpec } from './aggregation-spec.ts';
import type { AggregationContext, Aggregator, AggregatorGroup } from './aggregator.ts';
import type { BucketBudget } from './bucket-budget.ts';
import { BucketOrdinals, GrowableFloats, KeyDictionary } from './bucket-ordinals.ts';
import { HEURISTIC_NAMES, parseSignificanceHeuristic, significanceScore, type SignificanceHeuristic } from './significance-heuristics.ts';
import { LeafFilter } from './filter-aggregators.ts';
import { parseFilter, type ParsedFilter } from './filter-spec.ts';
import { acceptsValue, parseTermsValueFilter, type TermsValueFilter } from './terms-include.ts';

/** `significant_terms`. */
export interface SignificantTermsSpec {
  type: 'significant_terms';
  name: string;
  subs: AggregationSpec[];
  source: ValueSource;
  size: number;
  shardSize: number;
  minDocCount: number;
  shardMinDocCount: number;
  valueFilter: TermsValueFilter | null;
  heuristic: SignificanceHeuristic;
  /** The docs the background is made of (`background_filter`); null for the whole collection (or when parsed for rendering). */
  backgroundFilter: ParsedFilter | null;
}

/** Parses a `significant_terms` aggregation. */
export function parseSignificantTerms(
  name: string,
  options: Record<string, unknown>,
  fields: ReadonlyMap<string, FlatField> | null,
  subs: AggregationSpec[],
  now: number,
): SignificantTermsSpec {
  checkKeys(
    options,
    ['field', 'size', 'shard_size', 'min_doc_count', 'shard_min_doc_count', 'include', 'exclude', 'execution_hint', 'background_filter', 'script', ...HEURISTIC_NAMES],
    'significant_terms',
  );
  const backgroundFilter = options.background_filter === undefined ? null : parseFilter(options.background_filter, fields, now);
  const heuristic = parseSignificanceHeuristic(options);
  const source = valueSource(options, fields, 'significant_terms');
  if (source.kind === 'numeric' && source.format !== 'number' && source.format !== 'date') {
    throw new EngineError('illegal_argument', `Field [${source.field}] of type [${source.format}] is not supported for aggregation [significant_terms]`);
  }
  const size = options.size === undefined ? 10 : readInteger(options.size, 'size', 'significant_terms', 1, 65_536);
  const shardSize = options.shard_size === undefined ? Math.floor(size * 1.5 + 10) : Math.max(readInteger(options.shard_size, 'shard_size', 'significant_terms', 1, 65_536), size);
  const minDocCount = options.min_doc_count === undefined ? 3 : readInteger(options.min_doc_count, 'min_doc_count', 'significant_terms');
  const shardMinDocCount = options.shard_min_doc_count === undefined ? 1 : readInteger(options.shard_min_doc_count, 'shard_min_doc_count', 'significant_terms');
  const valueFilter = parseTermsValueFilter(options, name, source, now);
  return { type: 'significant_terms', name, subs, source, size, shardSize, minDocCount, shardMinDocCount, valueFilter, heuristic, backgroundFilter };
}

/** Shard collector of a `significant_terms`. */
export class SignificantTermsAggregator implements Aggregator {
  readonly name: string;
  private readonly keys = new KeyDictionary<BucketKey>();
  private readonly ordinals = new BucketOrdinals();
  private readonly docCounts = new GrowableFloats(0);
  /** Docs collected per owner (the foreground size). */
  private readonly subsetSizes = new GrowableFloats(0);
  private keyword: KeywordColumn | null = null;
  private numeric: NumericColumn | null = null;
  /** Whether each leaf has a term dictionary for the field (read on first need). */
  private termDictionaries: boolean[] | null = null;
  /** Background size and counts per leaf for fields read from their column, built on first need. */
  private columnCounts: { size: number; counts: Map<BucketKey, number> }[] | null = null;

  constructor(
    private readonly spec: SignificantTermsSpec,
    private readonly subs: AggregatorGroup,
    private readonly context: AggregationContext,
  ) {
    this.name = spec.name;
  }

  setLeaf(leaf: LeafReader): void {
    const { source } = this.spec;
    this.keyword = source.kind === 'keyword' ? leaf.keywordColumn(source.field) : null;
    this.numeric = source.kind === 'numeric' ? leaf.numericColumn(source.field) : null;
    this.subs.setLeaf(leaf);
  }

  collect(doc: number, owner: number): void {
    this.subsetSizes.ensure(owner);
    this.subsetSizes.data[owner]!++;
    const values: BucketKey[] = [];
    if (this.keyword !== null) {
      const count = this.keyword.count(doc);
      for (let i = 0; i < count; i++) values.push(this.keyword.term(this.keyword.ordinal(doc, i)));
    } else if (this.numeric !== null) {
      const count = this.numeric.count(doc);
      for (let i = 0; i < count; i++) values.push(this.numeric.value(doc, i));
    }
    let previous: BucketKey | undefined;
    for (const value of values) {
      if (value === previous) continue;
      previous = value;
      if (this.spec.valueFilter !== null && !acceptsValue(this.spec.valueFilter, value)) continue;
      const ordinal = this.ordinals.ordinal(owner, this.keys.idOf(value));
      this.docCounts.ensure(ordinal);
      this.docCounts.data[ordinal]!++;
      this.subs.collect(doc, ordinal);
    }
  }

  /** Docs of the background holding `key`: the term dictionary's count, or the column's (always with a background filter). */
  private backgroundCount(key: BucketKey): number {
    const { field } = this.spec.source;
    const leaves = this.context.leaves;
    this.termDictionaries ??= leaves.map((leaf) => this.spec.backgroundFilter === null && leaf.indexedFields().includes(field));
    let total = 0;
    for (let index = 0; index < leaves.length; index++) {
      if (typeof key === 'string' && this.termDictionaries[index]) total += leaves[index]!.docFreq(field, key);
      else total += this.leafBackground(index).counts.get(key) ?? 0;
    }
    return total;
  }

  /** Docs in the background: the shard's live docs, or those matching the background filter. */
  private backgroundSize(): number {
    let size = 0;
    for (let index = 0; index < this.context.leaves.length; index++) {
      size += this.spec.backgroundFilter === null ? this.context.leaves[index]!.numLiveDocs() : this.leafBackground(index).size;
    }
    return size;
  }

  /** Live background docs of a leaf, and their count per value, read from its column once. */
  private leafBackground(index: number): { size: number; counts: Map<BucketKey, number> } {
    this.columnCounts ??= [];
    const known = this.columnCounts[index];
    if (known !== undefined) return known;
    const counts = new Map<BucketKey, number>();
    const leaf = this.context.leaves[index]!;
    const { field, kind } = this.spec.source;
    const keyword = kind === 'keyword' ? leaf.keywordColumn(field) : null;
    const numeric = kind === 'numeric' ? leaf.numericColumn(field) : null;
    const filter = this.spec.backgroundFilter === null ? null : new LeafFilter(this.spec.backgroundFilter);
    filter?.setLeaf(leaf);
    let size = 0;
    for (let doc = 0; doc < leaf.maxDoc; doc++) {
      if (!leaf.isLive(doc) || (filter !== null && !filter.matches(doc))) continue;
      size++;
      const count = keyword?.count(doc) ?? numeric?.count(doc) ?? 0;
      let previous: BucketKey | undefined;
      for (let i = 0; i < count; i++) {
        const value = keyword !== null ? keyword.term(keyword.ordinal(doc, i)) : numeric!.value(doc, i);
        if (value === previous) continue;
        previous = value;
        counts.set(value, (counts.get(value) ?? 0) + 1);
      }
    }
    const background = { size, counts };
    this.columnCounts[index] = background;
    return background;
  }

  partial(owner: number, budget: BucketBudget): SignificantTermsPartial {
    const { spec } = this;
    const subsetSize = this.subsetSizes.get(owner);
    const supersetSize = this.backgroundSize();
    const candidates: { key: BucketKey; docCount: number; bgCount: number; score: number; ordinal: number }[] = [];
    for (const ordinal of this.ordinals.ordinalsOf(owner)) {
      const docCount = this.docCounts.get(ordinal);
      if (docCount < spec.shardMinDocCount) continue;
      const key = this.keys.keys[this.ordinals.keyIdOf(ordinal)]!;
      const bgCount = this.backgroundCount(key);
      candidates.push({ key, docCount, bgCount, score: significanceScore(spec.heuristic, docCount, subsetSize, bgCount, supersetSize), ordinal });
    }
    candidates.sort(compareSignificance);
    const kept = candidates.slice(0, spec.shardSize);
    budget.consume(Math.min(kept.length, spec.size));
    return {
      type: 'significant_terms',
      format: spec.source.format,
      subsetSize,
      supersetSize,
      buckets: kept.map(({ key, docCount, bgCount, ordinal }) => ({ key, docCount, bgCount, aggs: this.subs.partials(ordinal, budget) })),
    };
  }
}

/** Best score first, then by key. */
function compareSignificance(left: { key: BucketKey; score: number }, right: { key: BucketKey; score: number }): number {
  if (left.score !== right.score) return right.score - left.score;
  if (typeof left.key === 'number' && typeof right.key === 'number') return left.key - right.key;
  return String(left.key) < String(right.key) ? -1 : String(left.key) > String(right.key) ? 1 : 0;
}

/** Merges two shards' partials: sizes and, per term, foreground and background counts summed. */
export function mergeSignificantTerms(left: SignificantTermsPartial, right: SignificantTermsPartial): SignificantTermsPartial {
  const buckets = mergeBucketsBy(left.buckets, right.buckets, (bucket) => `${typeof bucket.key}:${bucket.key}`, (existing, bucket) => ({
    key: existing.key,
    docCount: existing.docCount + bucket.docCount,
    bgCount: existing.bgCount + bucket.bgCount,
    aggs: mergeAggregations([existing.aggs, bucket.aggs]),
  }));
  return { type: 'significant_terms', format: left.format, subsetSize: left.subsetSize + right.subsetSize, supersetSize: left.supersetSize + right.supersetSize, buckets };
}

/** The buckets to show after the merge: positive score, `min_doc_count` docs, the `size` best. */
export function significantBuckets(spec: SignificantTermsSpec, partial: SignificantTermsPartial): (SignificantTermsPartial['buckets'][number] & { score: number })[] {
  return partial.buckets
    .map((bucket) => ({ ...bucket, score: significanceScore(spec.heuristic, bucket.docCount, partial.subsetSize, bucket.bgCount, partial.supersetSize) }))
    .filter((bucket) => bucket.score > 0 && bucket.docCount >= spec.minDocCount)
    .sort(compareSignificance)
    .slice(0, spec.size);
}
