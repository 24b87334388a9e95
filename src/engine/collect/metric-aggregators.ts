/**
 * Metric aggregators: the stats family (min, max, sum, avg, stats and extended_stats share one
 * collector), value_count, cardinality, and percentiles / percentile_ranks (a t-digest per
 * owner). State is kept per owner bucket in flat arrays.
 */
import type { KeywordColumn, LeafReader, NumericColumn } from '../segment/leaf-reader.ts';
import type { TDigest } from 'tdigest';
import type { BucketKey, CardinalityPartial, DigestPartial, ExtendedStatsPartial, HdrPartial, StatsPartial, ValueCountPartial } from './aggregation-partials.ts';
import { EXACT_CARDINALITY_LIMIT } from './aggregation-partials.ts';
import type { MetricSpec } from './aggregation-spec.ts';
import type { Aggregator } from './aggregator.ts';
import { GrowableFloats } from './bucket-ordinals.ts';
import { HyperLogLog } from './hyperloglog.ts';
import { digestPartial, newDigest, type PercentilesSpec } from './percentiles.ts';
import { type HdrHistogram, hdrPartial, newHdrHistogram, recordHdrValue } from './hdr-percentiles.ts';

/**
 * The values of a numeric field (or the spec's `missing` value for a document without one), handed
 * to `add` per owner bucket: the collection shared by the metrics that fold values one by one.
 */
abstract class NumericValuesAggregator implements Aggregator {
  readonly name: string;
  private column: NumericColumn | null = null;
  private readonly missing: number | null;

  constructor(protected readonly spec: MetricSpec | PercentilesSpec) {
    this.name = spec.name;
    this.missing = typeof spec.missing === 'number' ? spec.missing : null;
  }

  setLeaf(leaf: LeafReader): void {
    this.column = this.spec.source.kind === 'numeric' ? leaf.numericColumn(this.spec.source.field) : null;
  }

  collect(doc: number, owner: number): void {
    const column = this.column;
    const count = column === null ? 0 : column.count(doc);
    if (count === 0) {
      if (this.missing !== null) this.add(owner, this.missing);
      return;
    }
    for (let i = 0; i < count; i++) this.add(owner, column!.value(doc, i));
  }

  /** Folds one value into the owner bucket's state. */
  protected abstract add(owner: number, value: number): void;

  abstract partial(owner: number): ReturnType<Aggregator['partial']>;
}

/** Count, sum, min and max (and for extended_stats the sum of squares) of a numeric field per owner bucket. */
export class StatsAggregator extends NumericValuesAggregator {
  private readonly counts = new GrowableFloats(0);
  private readonly sums = new GrowableFloats(0);
  private readonly mins = new GrowableFloats(Infinity);
  private readonly maxes = new GrowableFloats(-Infinity);
  /** Sums of squares, kept for extended_stats only. */
  private readonly squares: GrowableFloats | null;

  constructor(spec: MetricSpec) {
    super(spec);
    this.squares = spec.type === 'extended_stats' ? new GrowableFloats(0) : null;
  }

  protected add(owner: number, value: number): void {
    this.counts.ensure(owner);
    this.sums.ensure(owner);
    this.mins.ensure(owner);
    this.maxes.ensure(owner);
    this.counts.data[owner]!++;
    this.sums.data[owner]! += value;
    if (value < this.mins.data[owner]!) this.mins.data[owner] = value;
    if (value > this.maxes.data[owner]!) this.maxes.data[owner] = value;
    if (this.squares !== null) {
      this.squares.ensure(owner);
      this.squares.data[owner]! += value * value;
    }
  }

  partial(owner: number): StatsPartial | ExtendedStatsPartial {
    const count = this.counts.get(owner);
    if (this.squares !== null) {
      return {
        type: 'extended_stats',
        format: this.spec.source.format,
        count,
        sum: this.sums.get(owner),
        sumOfSquares: this.squares.get(owner),
        min: count === 0 ? null : this.mins.get(owner),
        max: count === 0 ? null : this.maxes.get(owner),
      };
    }
    return {
      type: 'stats',
      format: this.spec.source.format,
      count,
      sum: this.sums.get(owner),
      min: count === 0 ? null : this.mins.get(owner),
      max: count === 0 ? null : this.maxes.get(owner),
    };
  }
}

/** Number of values (numeric or keyword) per owner bucket. */
export class ValueCountAggregator implements Aggregator {
  readonly name: string;
  private readonly counts = new GrowableFloats(0);
  private column: NumericColumn | KeywordColumn | null = null;

  constructor(private readonly spec: MetricSpec) {
    this.name = spec.name;
  }

  setLeaf(leaf: LeafReader): void {
    const { source } = this.spec;
    this.column =
      source.kind === 'keyword' ? leaf.keywordColumn(source.field) : source.kind === 'numeric' ? leaf.numericColumn(source.field) : null;
  }

  collect(doc: number, owner: number): void {
    const count = this.column === null ? 0 : this.column.count(doc);
    const added = count === 0 && this.spec.missing !== null ? 1 : count;
    if (added === 0) return;
    this.counts.ensure(owner);
    this.counts.data[owner]! += added;
  }

  partial(owner: number): ValueCountPartial {
    return { type: 'value_count', count: this.counts.get(owner) };
  }
}

/** Distinct values per owner bucket: exact sets, turning into HyperLogLog sketches past the limit. */
export class CardinalityAggregator implements Aggregator {
  readonly name: string;
  private readonly exact: (Set<BucketKey> | undefined)[] = [];
  private readonly sketches: (HyperLogLog | undefined)[] = [];
  private keywordColumn: KeywordColumn | null = null;
  private numericColumn: NumericColumn | null = null;

  constructor(private readonly spec: MetricSpec) {
    this.name = spec.name;
  }

  setLeaf(leaf: LeafReader): void {
    const { source } = this.spec;
    this.keywordColumn = source.kind === 'keyword' ? leaf.keywordColumn(source.field) : null;
    this.numericColumn = source.kind === 'numeric' ? leaf.numericColumn(source.field) : null;
  }

  collect(doc: number, owner: number): void {
    const keyword = this.keywordColumn;
    if (keyword !== null) {
      const count = keyword.count(doc);
      for (let i = 0; i < count; i++) this.add(owner, keyword.term(keyword.ordinal(doc, i)));
      if (count > 0) return;
    } else if (this.numericColumn !== null) {
      const numeric = this.numericColumn;
      const count = numeric.count(doc);
      for (let i = 0; i < count; i++) this.add(owner, numeric.value(doc, i));
      if (count > 0) return;
    }
    if (this.spec.missing !== null) this.add(owner, this.spec.missing);
  }

  private add(owner: number, value: BucketKey): void {
    const sketch = this.sketches[owner];
    if (sketch !== undefined) {
      sketch.add(value);
      return;
    }
    let set = this.exact[owner];
    if (set === undefined) {
      set = new Set();
      this.exact[owner] = set;
    }
    set.add(value);
    if (set.size > EXACT_CARDINALITY_LIMIT) {
      const created = new HyperLogLog();
      for (const member of set) created.add(member);
      this.sketches[owner] = created;
      this.exact[owner] = undefined;
    }
  }

  partial(owner: number): CardinalityPartial {
    const sketch = this.sketches[owner];
    if (sketch !== undefined) return { type: 'cardinality', values: null, sketch: sketch.toBase64() };
    return { type: 'cardinality', values: [...(this.exact[owner] ?? [])], sketch: null };
  }
}

/**
 * `percentiles` / `percentile_ranks`: per owner bucket a t-digest, or with the `hdr` method an
 * HDR histogram, of a numeric field's values.
 */
export class PercentilesAggregator extends NumericValuesAggregator {
  private readonly digests: (TDigest | undefined)[] = [];
  private readonly histograms: (HdrHistogram | undefined)[] = [];

  constructor(protected override readonly spec: PercentilesSpec) {
    super(spec);
  }

  protected add(owner: number, value: number): void {
    const { spec } = this;
    if (spec.hdrDigits !== null) {
      const histogram = (this.histograms[owner] ??= newHdrHistogram(spec.hdrDigits));
      recordHdrValue(histogram, value, spec.source.field);
    } else {
      (this.digests[owner] ??= newDigest(spec.compression)).push(value);
    }
  }

  partial(owner: number): DigestPartial | HdrPartial {
    const { spec } = this;
    if (spec.hdrDigits !== null) return hdrPartial(this.histograms[owner], spec.source.format, spec.hdrDigits);
    return digestPartial(this.digests[owner], spec.source.format, spec.compression);
  }
}
