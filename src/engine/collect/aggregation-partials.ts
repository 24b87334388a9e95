/**
 * Aggregation partials: what each shard returns for its aggregations, plain JSON so that they
 * can cross the network, and `mergeAggregations`, which folds several shards' partials into one
 * (bucket counts and metrics summed, value sets unioned). Rendering into the Elasticsearch
 * response shape happens once, after the merge (render-aggregations.ts).
 */
import type { Explanation } from '../query/explain.ts';
import { setKey } from '../mapping/json-value.ts';
import { mergeComposite } from './composite-aggregator.ts';
import { mergeHdr } from './hdr-percentiles.ts';
import { HyperLogLog } from './hyperloglog.ts';
import { mergeIpRanges } from './ip-range.ts';
import { mergeDigests } from './percentiles.ts';
import { mergeSignificantTerms } from './significant-terms.ts';
import { mergeTopHitsPartials } from './top-hits.ts';

/** How bucket keys and metric values render (`key_as_string`, `value_as_string`). */
export type ValueFormat = 'number' | 'date' | 'boolean' | 'string' | 'ip';

/** A bucket key: a keyword term or a number (numeric terms, histogram keys; a long beyond ±(2^53 − 1) as an exact string, exact-sort-values.ts). */
export type BucketKey = string | number;

/**
 * Aggregation name → partial. Names are user input (`constructor`, `toString` are valid names), so
 * they are read with `partialNamed` and written with `putPartial`, never with `partials[name]`.
 */
export type AggregationPartials = Record<string, AggregationPartial>;

/** The partial of the aggregation `name` (an own key only), or undefined. */
export function partialNamed(partials: AggregationPartials, name: string): AggregationPartial | undefined {
  return Object.hasOwn(partials, name) ? partials[name] : undefined;
}

/** Stores the partial of the aggregation `name` as an own key (also for `__proto__`). */
export function putPartial(partials: AggregationPartials, name: string, partial: AggregationPartial): void {
  setKey(partials, name, partial);
}

/** A bucket with a key. */
export interface KeyedBucketPartial {
  key: BucketKey;
  docCount: number;
  aggs: AggregationPartials;
}

/** `terms`: the shard's top shard_size buckets and what it left out. */
export interface TermsPartial {
  type: 'terms';
  format: ValueFormat;
  buckets: KeyedBucketPartial[];
  /** Doc count of the buckets the shards did not return. */
  otherDocCount: number;
  /** Largest count a term missing from `buckets` may have had, summed over shards. */
  errorBound: number;
}

/** A `range` bucket. */
export interface RangeBucketPartial {
  key: string;
  from: number | null;
  to: number | null;
  docCount: number;
  aggs: AggregationPartials;
}

/** `range`: one bucket per requested range, in request order. */
export interface RangePartial {
  type: 'range';
  format: ValueFormat;
  buckets: RangeBucketPartial[];
}

/** `histogram` / `date_histogram`: non-empty buckets by ascending key. */
export interface HistogramPartial {
  type: 'histogram';
  format: ValueFormat;
  buckets: KeyedBucketPartial[];
}

/** `min`, `max`, `sum`, `avg`, `stats`: the running statistics. */
export interface StatsPartial {
  type: 'stats';
  format: ValueFormat;
  count: number;
  sum: number;
  min: number | null;
  max: number | null;
}

/** `extended_stats`: the running statistics with the sum of squares. */
export interface ExtendedStatsPartial {
  type: 'extended_stats';
  format: ValueFormat;
  count: number;
  sum: number;
  sumOfSquares: number;
  min: number | null;
  max: number | null;
}

/** `percentiles` / `percentile_ranks`: the t-digest's centroids (means ascending, with their weights). */
export interface DigestPartial {
  type: 'digest';
  format: ValueFormat;
  /** The `tdigest.compression` asked for (100 by default), kept for the merge. */
  compression: number;
  means: number[];
  weights: number[];
}

/** `percentiles` / `percentile_ranks` with the `hdr` method: the HDR histogram, compressed and base64 ('' when empty). */
export interface HdrPartial {
  type: 'hdr';
  format: ValueFormat;
  digits: number;
  encoded: string;
}

/** `filter` and `missing`: one bucket. */
export interface SingleBucketPartial {
  type: 'single_bucket';
  docCount: number;
  aggs: AggregationPartials;
}

/** `filters`: one bucket per filter in request order, then the other bucket when asked for. */
export interface FiltersPartial {
  type: 'filters';
  buckets: { key: string; docCount: number; aggs: AggregationPartials }[];
}

/** `composite`: a shard's first `size` keys after `after` (source values, null for a missing bucket). */
export interface CompositePartial {
  type: 'composite';
  buckets: { key: (string | number | null)[]; docCount: number; aggs: AggregationPartials }[];
}

/** One hit of a `top_hits` partial: the doc's meta and source, its score and sort values, and its collection (set by the coordinating node). */
export interface TopHit {
  index: string;
  id: string;
  score: number | null;
  sort?: (string | number | null)[];
  version: number;
  seqNo: number;
  primaryTerm: number;
  source?: Record<string, unknown>;
  /** `source` as the JSON text the response shows (stored bytes as sent), when loaded. */
  sourceText?: string;
  /** How the query scored the hit (`explain`). */
  explanation?: Explanation;
}

/** `top_hits`: each shard's best `from + size` hits of the bucket, and the bucket's doc count. */
export interface TopHitsPartial {
  type: 'top_hits';
  total: number;
  maxScore: number | null;
  hits: TopHit[];
}

/** `ip_range`: one bucket per requested range, in request order (keys and bounds come from the request). */
export interface IpRangePartial {
  type: 'ip_range';
  buckets: { docCount: number; aggs: AggregationPartials }[];
}

/** `significant_terms`: the shard's best terms with foreground and background counts, and both set sizes. */
export interface SignificantTermsPartial {
  type: 'significant_terms';
  format: ValueFormat;
  subsetSize: number;
  supersetSize: number;
  buckets: { key: BucketKey; docCount: number; bgCount: number; aggs: AggregationPartials }[];
}

/** `value_count`. */
export interface ValueCountPartial {
  type: 'value_count';
  count: number;
}

/** `cardinality`: the exact value set, or a HyperLogLog sketch (base64) once it grew too big. */
export interface CardinalityPartial {
  type: 'cardinality';
  values: BucketKey[] | null;
  sketch: string | null;
}

/** Any aggregation partial. */
export type AggregationPartial =
  | TermsPartial
  | RangePartial
  | HistogramPartial
  | StatsPartial
  | ValueCountPartial
  | CardinalityPartial
  | ExtendedStatsPartial
  | DigestPartial
  | SingleBucketPartial
  | FiltersPartial
  | CompositePartial
  | TopHitsPartial
  | IpRangePartial
  | SignificantTermsPartial
  | HdrPartial;

/** Distinct values kept exactly before `cardinality` switches to a sketch (ES's maximum precision_threshold). */
export const EXACT_CARDINALITY_LIMIT = 40_000;

/** Merges several shards' partials (in shard order) into one. */
export function mergeAggregations(partials: readonly AggregationPartials[]): AggregationPartials {
  const merged: AggregationPartials = {};
  for (const partial of partials) {
    for (const [name, value] of Object.entries(partial)) {
      const existing = partialNamed(merged, name);
      putPartial(merged, name, existing === undefined ? value : mergePartial(existing, value));
    }
  }
  return merged;
}

function mergePartial(left: AggregationPartial, right: AggregationPartial): AggregationPartial {
  if (left.type !== right.type) throw new Error(`cannot merge aggregation partials of types ${left.type} and ${right.type}`);
  switch (left.type) {
    case 'terms': {
      const other = right as TermsPartial;
      return {
        type: 'terms',
        format: left.format,
        buckets: mergeKeyedBuckets(left.buckets, other.buckets),
        otherDocCount: left.otherDocCount + other.otherDocCount,
        errorBound: left.errorBound + other.errorBound,
      };
    }
    case 'histogram': {
      const buckets = mergeKeyedBuckets(left.buckets, (right as HistogramPartial).buckets);
      buckets.sort((a, b) => (a.key as number) - (b.key as number));
      return { type: 'histogram', format: left.format, buckets };
    }
    case 'range': {
      const other = right as RangePartial;
      return {
        type: 'range',
        format: left.format,
        buckets: left.buckets.map((bucket, index) => {
          const match = other.buckets[index]!;
          return { ...bucket, docCount: bucket.docCount + match.docCount, aggs: mergeAggregations([bucket.aggs, match.aggs]) };
        }),
      };
    }
    case 'stats': {
      const other = right as StatsPartial;
      return {
        type: 'stats',
        format: left.format,
        count: left.count + other.count,
        sum: left.sum + other.sum,
        min: left.min === null ? other.min : other.min === null ? left.min : Math.min(left.min, other.min),
        max: left.max === null ? other.max : other.max === null ? left.max : Math.max(left.max, other.max),
      };
    }
    case 'extended_stats': {
      const other = right as ExtendedStatsPartial;
      return {
        type: 'extended_stats',
        format: left.format,
        count: left.count + other.count,
        sum: left.sum + other.sum,
        sumOfSquares: left.sumOfSquares + other.sumOfSquares,
        min: left.min === null ? other.min : other.min === null ? left.min : Math.min(left.min, other.min),
        max: left.max === null ? other.max : other.max === null ? left.max : Math.max(left.max, other.max),
      };
    }
    case 'digest':
      return mergeDigests(left, right as DigestPartial);
    case 'hdr':
      return mergeHdr(left, right as HdrPartial);
    case 'single_bucket': {
      const other = right as SingleBucketPartial;
      return { type: 'single_bucket', docCount: left.docCount + other.docCount, aggs: mergeAggregations([left.aggs, other.aggs]) };
    }
    case 'filters': {
      const other = right as FiltersPartial;
      return {
        type: 'filters',
        buckets: left.buckets.map((bucket, index) => {
          const match = other.buckets[index]!;
          return { key: bucket.key, docCount: bucket.docCount + match.docCount, aggs: mergeAggregations([bucket.aggs, match.aggs]) };
        }),
      };
    }
    case 'value_count':
      return { type: 'value_count', count: left.count + (right as ValueCountPartial).count };
    case 'composite':
      return mergeComposite(left, right as CompositePartial);
    case 'top_hits':
      return mergeTopHitsPartials(left, right as TopHitsPartial);
    case 'ip_range':
      return mergeIpRanges(left, right as IpRangePartial);
    case 'significant_terms':
      return mergeSignificantTerms(left, right as SignificantTermsPartial);
    case 'cardinality':
      return mergeCardinality(left, right as CardinalityPartial);
  }
}

function bucketIdentity(key: BucketKey): string {
  return typeof key === 'number' ? `n${key}` : `s${key}`;
}

function mergeKeyedBuckets(left: readonly KeyedBucketPartial[], right: readonly KeyedBucketPartial[]): KeyedBucketPartial[] {
  return mergeBucketsBy(left, right, (bucket) => bucketIdentity(bucket.key), (existing, bucket) => ({
    key: existing.key,
    docCount: existing.docCount + bucket.docCount,
    aggs: mergeAggregations([existing.aggs, bucket.aggs]),
  }));
}

/** Merges two shards' bucket lists: buckets of the same identity are combined, the others kept, in first-seen order. */
export function mergeBucketsBy<B>(left: readonly B[], right: readonly B[], identity: (bucket: B) => string, combine: (existing: B, bucket: B) => B): B[] {
  const byKey = new Map<string, B>();
  for (const bucket of left) byKey.set(identity(bucket), bucket);
  for (const bucket of right) {
    const key = identity(bucket);
    const existing = byKey.get(key);
    byKey.set(key, existing === undefined ? bucket : combine(existing, bucket));
  }
  return [...byKey.values()];
}

/** The sketch of a cardinality partial (built from its exact values when needed). */
export function cardinalitySketch(partial: CardinalityPartial): HyperLogLog {
  if (partial.sketch !== null) return HyperLogLog.fromBase64(partial.sketch);
  const sketch = new HyperLogLog();
  for (const value of partial.values ?? []) sketch.add(value);
  return sketch;
}

function mergeCardinality(left: CardinalityPartial, right: CardinalityPartial): CardinalityPartial {
  if (left.values !== null && right.values !== null) {
    const union = new Set<BucketKey>(left.values);
    for (const value of right.values) union.add(value);
    if (union.size <= EXACT_CARDINALITY_LIMIT) return { type: 'cardinality', values: [...union], sketch: null };
  }
  const sketch = cardinalitySketch(left);
  sketch.merge(cardinalitySketch(right));
  return { type: 'cardinality', values: null, sketch: sketch.toBase64() };
}

/** Number of distinct values a cardinality partial stands for. */
export function cardinalityValue(partial: CardinalityPartial): number {
  return partial.values !== null ? partial.values.length : cardinalitySketch(partial).estimate();
}
