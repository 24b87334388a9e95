/**
 * The `hdr` method of `percentiles` and `percentile_ranks`, answering what Elasticsearch and
 * OpenSearch answer: they record values in HdrHistogram's DoubleHistogram, which holds any
 * non-negative value (fractions too) to `number_of_significant_value_digits` digits. Its layout
 * is the same at every scale: with `half` the histogram's sub-bucket half count (1024 for three
 * digits), a value v in [2^m, 2^(m+1)) falls in the bucket of width 2^m / half that holds it,
 * whatever else was recorded. Only the unit of its integer histogram depends on the data: it is
 * 2^k / half for the smallest binary order k of the values recorded, and a percentile is the
 * highest value of its bucket to that unit (51 reads 51.0302734375 when 1 is the smallest value, to
 * three digits). So a histogram is kept here as counts per bucket (binary order and sub-bucket)
 * plus the count of zeros, which adds across shards exactly: the answer is the same on one shard
 * or many. A negative value is an error, as in OpenSearch.
 */
import { EngineError } from '../errors.ts';
import type { HdrPartial, ValueFormat } from './aggregation-partials.ts';

/** A double HDR histogram of one owner bucket (see the module comment). */
export interface HdrHistogram {
  digits: number;
  /** Values recorded that are 0. */
  zeros: number;
  /** Counts by bucket: the key is `order * 2^32 + sub`, sub in [half, 2·half). */
  counts: Map<number, number>;
}

/** Bucket keys are the binary order times this plus the sub-bucket, so they sort as the values do. */
const ORDER_STRIDE = 2 ** 32;
/** Offset that keeps binary orders (down to 2^-1074) positive in keys. */
const ORDER_BIAS = 1100;

/** A new, empty histogram of the given precision. */
export function newHdrHistogram(digits: number): HdrHistogram {
  return { digits, zeros: 0, counts: new Map() };
}

/** HdrHistogram's sub-bucket half count for a number of significant digits. */
function halfCount(digits: number): number {
  const magnitude = Math.ceil(Math.log2(2 * 10 ** digits));
  return 2 ** (Math.max(magnitude, 1) - 1);
}

/** The binary order of a positive finite value: m with 2^m <= value < 2^(m+1). */
function binaryOrder(value: number): number {
  let order = Math.floor(Math.log2(value));
  while (2 ** order > value) order--;
  while (2 ** (order + 1) <= value) order++;
  return order;
}

/** The bucket key of a positive value. */
function bucketKey(value: number, half: number): number {
  const order = binaryOrder(value);
  const sub = Math.floor(value / (2 ** order / half));
  return (order + ORDER_BIAS) * ORDER_STRIDE + sub;
}

/** The lowest value of a bucket and its width. */
function bucketRange(key: number, half: number): { low: number; width: number } {
  const order = Math.floor(key / ORDER_STRIDE) - ORDER_BIAS;
  const sub = key % ORDER_STRIDE;
  const width = 2 ** order / half;
  return { low: sub * width, width };
}

/** Records one value; a negative one is refused. */
export function recordHdrValue(histogram: HdrHistogram, value: number, _field: string): void {
  if (value < 0) throw new EngineError('illegal_argument', 'Negative values are not supported by HDR aggregation');
  if (!Number.isFinite(value)) throw new EngineError('illegal_argument', `[${value}] cannot be recorded in an HDR histogram`);
  if (value === 0) {
    histogram.zeros++;
    return;
  }
  const key = bucketKey(value, halfCount(histogram.digits));
  histogram.counts.set(key, (histogram.counts.get(key) ?? 0) + 1);
}

/** The plain-data partial of a histogram (none: an empty one): `[zeros, key, count, key, count, ...]` as JSON. */
export function hdrPartial(histogram: HdrHistogram | undefined, format: ValueFormat, digits: number): HdrPartial {
  if (histogram === undefined || (histogram.zeros === 0 && histogram.counts.size === 0)) return { type: 'hdr', format, digits, encoded: '' };
  const flat: number[] = [histogram.zeros];
  for (const [key, count] of histogram.counts) flat.push(key, count);
  return { type: 'hdr', format, digits, encoded: JSON.stringify(flat) };
}

function histogramOf(partial: HdrPartial): HdrHistogram {
  const histogram = newHdrHistogram(partial.digits);
  if (partial.encoded === '') return histogram;
  const flat = JSON.parse(partial.encoded) as number[];
  histogram.zeros = flat[0]!;
  for (let index = 1; index + 1 < flat.length; index += 2) histogram.counts.set(flat[index]!, flat[index + 1]!);
  return histogram;
}

/** Adds two shards' histograms. */
export function mergeHdr(left: HdrPartial, right: HdrPartial): HdrPartial {
  if (left.encoded === '') return right;
  if (right.encoded === '') return left;
  const merged = histogramOf(left);
  const other = histogramOf(right);
  merged.zeros += other.zeros;
  for (const [key, count] of other.counts) merged.counts.set(key, (merged.counts.get(key) ?? 0) + count);
  return hdrPartial(merged, left.format, left.digits);
}

/**
 * The value at each percent (the highest value of the bucket holding it, to the histogram's unit;
 * the lowest at 0 %), or the percent of values at or below each value (null without values).
 */
export function hdrValues(partial: HdrPartial, points: readonly number[], ranks: boolean): (number | null)[] {
  if (partial.encoded === '') return points.map(() => null);
  const histogram = histogramOf(partial);
  const half = halfCount(histogram.digits);
  const keys = [...histogram.counts.keys()].sort((left, right) => left - right);
  const total = keys.reduce((sum, key) => sum + histogram.counts.get(key)!, histogram.zeros);
  // The unit of the integer histogram: a value of the smallest binary order recorded is `half` units.
  const unit = keys.length === 0 ? 0 : 2 ** (Math.floor(keys[0]! / ORDER_STRIDE) - ORDER_BIAS) / half;
  if (ranks) {
    return points.map((value) => {
      if (value < 0) return 0;
      let below = histogram.zeros;
      // A value below the smallest binary order recorded is below every bucket but the zeros'.
      if (value > 0 && unit > 0 && value / unit >= half) {
        const limit = bucketKey(value, half);
        for (const key of keys) if (key <= limit) below += histogram.counts.get(key)!;
      }
      return Math.min(100, (100 * below) / total);
    });
  }
  return points.map((percent) => {
    const requested = Math.min(Math.max(nextDown(percent), 0), 100);
    const wanted = Math.max(Math.ceil((requested / 100) * total), 1);
    let seen = histogram.zeros;
    if (seen >= wanted) return 0;
    for (const key of keys) {
      seen += histogram.counts.get(key)!;
      if (seen >= wanted) {
        const { low, width } = bucketRange(key, half);
        return percent === 0 ? low : low + width - unit;
      }
    }
    return 0;
  });
}

/** The largest double below `value` (Java's Math.nextAfter towards minus infinity). */
function nextDown(value: number): number {
  if (value === 0) return -Number.MIN_VALUE;
  const buffer = new DataView(new ArrayBuffer(8));
  buffer.setFloat64(0, value);
  const bits = buffer.getBigUint64(0);
  buffer.setBigUint64(0, value > 0 ? bits - 1n : bits + 1n);
  return buffer.getFloat64(0);
}
