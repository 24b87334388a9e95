/** Bucket aggregators over numeric columns: `range` / `date_range` and `histogram` / `date_histogram`. */
import type { LeafReader, NumericColumn } from '../segment/leaf-reader.ts';
import type { HistogramPartial, KeyedBucketPartial, RangePartial } from './aggregation-partials.ts';
import type { RangeSpec } from './aggregation-spec.ts';
import type { Aggregator, AggregatorGroup } from './aggregator.ts';
import type { BucketBudget } from './bucket-budget.ts';
import { BucketOrdinals, GrowableFloats, KeyDictionary } from './bucket-ordinals.ts';
import type { HistogramSpec } from './histogram-spec.ts';
import { histogramKey, nextHistogramKey } from './histogram-spec.ts';
import { rangeKey } from './value-format.ts';

/** The key of a range bucket: its own `key`, else `from-to` printed in the range's format (`*` for an open end). */
export function rangeBucketKey(spec: RangeSpec, range: RangeSpec['ranges'][number]): string {
  if (range.key !== null) return range.key;
  const pattern = spec.datePattern;
  if (pattern === null) return rangeKey(range.from, range.to, spec.source.format, spec.timeZone);
  return `${range.from === null ? '*' : pattern.format(range.from, spec.timeZone)}-${range.to === null ? '*' : pattern.format(range.to, spec.timeZone)}`;
}

/** Shard collector of a `range` aggregation: bucket ordinal = owner · ranges + range index. */
export class RangeAggregator implements Aggregator {
  readonly name: string;
  private readonly docCounts = new GrowableFloats(0);
  private readonly froms: Float64Array;
  private readonly tos: Float64Array;
  private column: NumericColumn | null = null;

  constructor(
    private readonly spec: RangeSpec,
    private readonly subs: AggregatorGroup,
  ) {
    this.name = spec.name;
    this.froms = Float64Array.from(spec.ranges, (range) => range.from ?? -Infinity);
    this.tos = Float64Array.from(spec.ranges, (range) => range.to ?? Infinity);
  }

  setLeaf(leaf: LeafReader): void {
    this.column = this.spec.source.kind === 'numeric' ? leaf.numericColumn(this.spec.source.field) : null;
    this.subs.setLeaf(leaf);
  }

  collect(doc: number, owner: number): void {
    const column = this.column;
    const count = column === null ? 0 : column.count(doc);
    const missing = this.spec.missing;
    if (count === 0 && missing === null) return;
    const rangeCount = this.froms.length;
    for (let range = 0; range < rangeCount; range++) {
      const from = this.froms[range]!;
      const to = this.tos[range]!;
      for (let i = 0; i < Math.max(count, 1); i++) {
        const value = count === 0 ? missing! : column!.value(doc, i);
        if (value >= to) break;
        if (value >= from) {
          const ordinal = owner * rangeCount + range;
          this.docCounts.ensure(ordinal);
          this.docCounts.data[ordinal]!++;
          this.subs.collect(doc, ordinal);
          break;
        }
      }
    }
  }

  partial(owner: number, budget: BucketBudget): RangePartial {
    const { spec } = this;
    budget.consume(spec.ranges.length);
    return {
      type: 'range',
      format: spec.source.format,
      buckets: spec.ranges.map((range, index) => {
        const ordinal = owner * spec.ranges.length + index;
        return {
          key: rangeBucketKey(spec, range),
          from: range.from,
          to: range.to,
          docCount: this.docCounts.get(ordinal),
          aggs: this.subs.partials(ordinal, budget),
        };
      }),
    };
  }
}

/** Shard collector of a `histogram` or `date_histogram`: one bucket per rounded key. */
export class HistogramAggregator implements Aggregator {
  readonly name: string;
  private readonly keys = new KeyDictionary<number>();
  private readonly ordinals = new BucketOrdinals();
  private readonly docCounts = new GrowableFloats(0);
  private column: NumericColumn | null = null;
  /** Last calendar bucket computed: values in [cachedStart, cachedEnd) share its key (saves date math). */
  private cachedStart = NaN;
  private cachedEnd = NaN;
  private cachedKeyId = -1;

  constructor(
    private readonly spec: HistogramSpec,
    private readonly subs: AggregatorGroup,
  ) {
    this.name = spec.name;
  }

  setLeaf(leaf: LeafReader): void {
    this.column = this.spec.source.kind === 'numeric' ? leaf.numericColumn(this.spec.source.field) : null;
    this.subs.setLeaf(leaf);
  }

  collect(doc: number, owner: number): void {
    const column = this.column;
    if (column === null) return;
    const count = column.count(doc);
    let previousKeyId = -1;
    for (let i = 0; i < count; i++) {
      const keyId = this.keyIdOf(column.value(doc, i));
      if (keyId === previousKeyId) continue;
      previousKeyId = keyId;
      const ordinal = this.ordinals.ordinal(owner, keyId);
      this.docCounts.ensure(ordinal);
      this.docCounts.data[ordinal]!++;
      this.subs.collect(doc, ordinal);
    }
  }

  private keyIdOf(value: number): number {
    const { spec } = this;
    if (spec.calendarUnit === null && spec.timeZone.isUtc) return this.keys.idOf(histogramKey(spec, value));
    if (value >= this.cachedStart && value < this.cachedEnd) return this.cachedKeyId;
    const key = histogramKey(spec, value);
    const end = nextHistogramKey(spec, key);
    this.cachedKeyId = this.keys.idOf(key);
    // A fixed interval in a zone with rules is read off the wall clock, which repeats an hour when
    // clocks go back: only a bucket without a transition is one run of instants.
    const contiguous = spec.calendarUnit !== null || spec.timeZone.fixed || spec.timeZone.offsetAt(key) === spec.timeZone.offsetAt(end - 1);
    this.cachedStart = contiguous ? key : NaN;
    this.cachedEnd = contiguous ? end : NaN;
    return this.cachedKeyId;
  }

  partial(owner: number, budget: BucketBudget): HistogramPartial {
    const buckets: KeyedBucketPartial[] = [];
    const ordinals = this.ordinals.ordinalsOf(owner);
    budget.consume(ordinals.length);
    for (const ordinal of ordinals) {
      buckets.push({
        key: this.keys.keys[this.ordinals.keyIdOf(ordinal)]!,
        docCount: this.docCounts.get(ordinal),
        aggs: this.subs.partials(ordinal, budget),
      });
    }
    buckets.sort((left, right) => (left.key as number) - (right.key as number));
    return { type: 'histogram', format: this.spec.source.format, buckets };
  }
}
