/**
 * `terms` on a shard: counts docs per distinct value (keyword terms through per-leaf ordinal →
 * key id tables, numbers through a dictionary), then returns the top shard_size buckets by the
 * requested order together with the count of what it left out.
 */
import type { KeywordColumn, LeafReader, NumericColumn } from '../segment/leaf-reader.ts';
import type { BucketKey, KeyedBucketPartial, TermsPartial } from './aggregation-partials.ts';
import type { TermsSpec } from './aggregation-spec.ts';
import type { Aggregator, AggregatorGroup } from './aggregator.ts';
import type { BucketBudget } from './bucket-budget.ts';
import { compareBuckets, ordersByMetric } from './bucket-order.ts';
import { BucketOrdinals, GrowableFloats, KeyDictionary } from './bucket-ordinals.ts';
import { acceptsValue, type TermsValueFilter } from './terms-include.ts';
import { ExactLongColumn } from './exact-sort-values.ts';

/** `leafKeyIds` entry of an ordinal whose term `include` / `exclude` leaves out. */
const REJECTED = -2;

/** Shard collector of one `terms` aggregation. */
export class TermsAggregator implements Aggregator {
  readonly name: string;
  private readonly keys = new KeyDictionary<BucketKey>();
  private readonly ordinals = new BucketOrdinals();
  private readonly docCounts = new GrowableFloats(0);
  private keywordColumn: KeywordColumn | null = null;
  private numericColumn: NumericColumn | null = null;
  /** The current leaf's exact values of a long field beyond ±(2^53 − 1), keyed exactly (exact-sort-values.ts). */
  private exactColumn: ExactLongColumn | null = null;
  /** Key id of each ordinal of the current leaf's keyword column; -1 until first seen, REJECTED when filtered out. */
  private leafKeyIds = new Int32Array(0);
  private readonly missingKeyId: number;
  private readonly valueFilter: TermsValueFilter | null;

  constructor(
    private readonly spec: TermsSpec,
    private readonly subs: AggregatorGroup,
  ) {
    this.name = spec.name;
    this.missingKeyId = spec.missing === null ? -1 : this.keys.idOf(spec.missing);
    this.valueFilter = spec.valueFilter;
  }

  /** Key id of a keyword ordinal of the current leaf, or REJECTED. */
  private leafKeyId(column: KeywordColumn, ordinal: number): number {
    let keyId = this.leafKeyIds[ordinal]!;
    if (keyId === -1) {
      const term = column.term(ordinal);
      keyId = this.valueFilter === null || acceptsValue(this.valueFilter, term) ? this.keys.idOf(term) : REJECTED;
      this.leafKeyIds[ordinal] = keyId;
    }
    return keyId;
  }

  setLeaf(leaf: LeafReader): void {
    const { source } = this.spec;
    this.keywordColumn = source.kind === 'keyword' ? leaf.keywordColumn(source.field) : null;
    this.numericColumn = source.kind === 'numeric' ? leaf.numericColumn(source.field) : null;
    this.exactColumn = source.kind === 'numeric' && source.exact !== undefined ? ExactLongColumn.of(leaf.keywordColumn(source.exact.path), source.exact.type) : null;
    const column = this.keywordColumn;
    this.leafKeyIds = new Int32Array(column === null ? 0 : column.ordinalCount).fill(-1);
    if (column !== null && this.spec.minDocCount === 0) {
      // min_doc_count 0 lists every term of the field, matched or not.
      for (let ordinal = 0; ordinal < column.ordinalCount; ordinal++) this.leafKeyId(column, ordinal);
    }
    if (this.numericColumn !== null && this.spec.minDocCount === 0) {
      const numeric = this.numericColumn;
      for (let doc = 0; doc < leaf.maxDoc; doc++) {
        const count = numeric.count(doc);
        for (let i = 0; i < count; i++) {
          const value = numeric.value(doc, i);
          if (this.valueFilter === null || acceptsValue(this.valueFilter, value)) for (const key of this.keysOf(doc, value)) this.keys.idOf(key);
        }
      }
    }
    this.subs.setLeaf(leaf);
  }

  collect(doc: number, owner: number): void {
    const keyword = this.keywordColumn;
    if (keyword !== null) {
      const count = keyword.count(doc);
      if (count === 0) return this.collectMissing(doc, owner);
      let previous = -1;
      for (let i = 0; i < count; i++) {
        const ordinal = keyword.ordinal(doc, i);
        if (ordinal === previous) continue;
        previous = ordinal;
        const keyId = this.leafKeyId(keyword, ordinal);
        if (keyId !== REJECTED) this.collectBucket(doc, owner, keyId);
      }
      return;
    }
    const numeric = this.numericColumn;
    const count = numeric === null ? 0 : numeric.count(doc);
    if (count === 0) return this.collectMissing(doc, owner);
    let previous = NaN;
    for (let i = 0; i < count; i++) {
      const value = numeric!.value(doc, i);
      if (value === previous) continue;
      previous = value;
      if (this.valueFilter !== null && !acceptsValue(this.valueFilter, value)) continue;
      if (this.exactColumn === null || Number.isSafeInteger(value)) this.collectBucket(doc, owner, this.keys.idOf(value));
      else for (const key of this.keysOf(doc, value)) this.collectBucket(doc, owner, this.keys.idOf(key));
    }
  }

  /** Bucket keys of a numeric value of the doc: its exact values when the float rounds them, else the value. */
  private keysOf(doc: number, value: number): BucketKey[] {
    if (this.exactColumn === null || Number.isSafeInteger(value)) return [value];
    const exact = this.exactColumn.valuesRoundedTo(doc, value);
    return exact.length === 0 ? [value] : exact;
  }

  private collectMissing(doc: number, owner: number): void {
    if (this.missingKeyId >= 0) this.collectBucket(doc, owner, this.missingKeyId);
  }

  private collectBucket(doc: number, owner: number, keyId: number): void {
    const ordinal = this.ordinals.ordinal(owner, keyId);
    this.docCounts.ensure(ordinal);
    this.docCounts.data[ordinal]!++;
    this.subs.collect(doc, ordinal);
  }

  partial(owner: number, budget: BucketBudget): TermsPartial {
    const { spec } = this;
    if (spec.minDocCount === 0) {
      for (let keyId = 0; keyId < this.keys.size; keyId++) this.ordinals.ordinal(owner, keyId);
    }
    const withSubs = ordersByMetric(spec.order);
    const candidates: (KeyedBucketPartial & { ordinal: number })[] = [];
    for (const ordinal of this.ordinals.ordinalsOf(owner)) {
      const docCount = this.docCounts.get(ordinal);
      if (docCount === 0 && spec.minDocCount > 0) continue;
      const key = this.keys.keys[this.ordinals.keyIdOf(ordinal)]!;
      candidates.push({ key, docCount, aggs: withSubs ? this.subs.partials(ordinal, budget) : {}, ordinal });
    }
    candidates.sort((left, right) => compareBuckets(spec.order, left, right));
    const kept = candidates.slice(0, spec.shardSize);
    // The shard_size overshoot only sharpens counts (the response holds at most `size`): it is not charged.
    budget.consume(Math.min(kept.length, spec.size));
    let otherDocCount = 0;
    for (let i = kept.length; i < candidates.length; i++) otherDocCount += candidates[i]!.docCount;
    const truncated = kept.length < candidates.length;
    const countDescending = spec.order[0]!.by === '_count' && spec.order[0]!.direction === 'desc';
    return {
      type: 'terms',
      format: spec.source.format,
      buckets: kept.map(({ key, docCount, aggs, ordinal }) => ({
        key,
        docCount,
        aggs: withSubs ? aggs : this.subs.partials(ordinal, budget),
      })),
      otherDocCount,
      errorBound: truncated && countDescending ? kept[kept.length - 1]!.docCount : 0,
    };
  }
}
