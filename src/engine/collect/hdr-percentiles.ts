/**
 * The `hdr` method of `percentiles` and `percentile_ranks`: an HDR histogram (npm
 * `hdr-histogram-js`, Gil Tene's HdrHistogram) per owner bucket, holding values to
 * `number_of_significant_value_digits` digits. A shard's partial is its histogram in the standard
 * compressed encoding; the coordinating node adds the shards' histograms, which is exact, so the
 * answers are the same on one shard or many. The histograms count whole numbers: like
 * Elasticsearch's HDR a negative value is an error, and so is a value with a fraction.
 */
import { build, decodeFromCompressedBase64, encodeIntoCompressedBase64, type Histogram, type JsHistogram } from 'hdr-histogram-js';
import { EngineError } from '../errors.ts';
import type { HdrPartial, ValueFormat } from './aggregation-partials.ts';

/** A new, empty histogram of the given precision. */
export function newHdrHistogram(digits: number): Histogram {
  return build({ numberOfSignificantValueDigits: digits as 1 | 2 | 3 | 4 | 5, autoResize: true });
}

/** Records one value; a negative or fractional value is refused. */
export function recordHdrValue(histogram: Histogram, value: number, field: string): void {
  if (value < 0) throw new EngineError('illegal_argument', `Negative values are not supported by HDR aggregation: [${value}] in field [${field}]`);
  if (!Number.isSafeInteger(value)) {
    throw new EngineError('illegal_argument', `The HDR method counts whole numbers: [${value}] in field [${field}] is not one; use the default [tdigest] method`);
  }
  histogram.recordValue(value);
}

/** The plain-data partial of a histogram (none: an empty one). */
export function hdrPartial(histogram: Histogram | undefined, format: ValueFormat, digits: number): HdrPartial {
  return { type: 'hdr', format, digits, encoded: histogram === undefined || histogram.totalCount === 0 ? '' : encodeIntoCompressedBase64(histogram) };
}

function histogramOf(partial: HdrPartial): Histogram {
  return partial.encoded === '' ? newHdrHistogram(partial.digits) : decodeFromCompressedBase64(partial.encoded);
}

/** Adds two shards' histograms. */
export function mergeHdr(left: HdrPartial, right: HdrPartial): HdrPartial {
  if (left.encoded === '') return right;
  if (right.encoded === '') return left;
  const merged = histogramOf(left);
  merged.add(histogramOf(right));
  return hdrPartial(merged, left.format, left.digits);
}

/** The value at each percent, or the percent of values at or below each value (null without values). */
export function hdrValues(partial: HdrPartial, points: readonly number[], ranks: boolean): (number | null)[] {
  if (partial.encoded === '') return points.map(() => null);
  const histogram = histogramOf(partial) as JsHistogram;
  if (!ranks) return points.map((percent) => histogram.getValueAtPercentile(percent));
  const recorded: { lowest: number; count: number }[] = [];
  const iterator = histogram.recordedValuesIterator;
  iterator.reset();
  while (iterator.hasNext()) {
    const step = iterator.next();
    recorded.push({ lowest: histogram.lowestEquivalentValue(step.valueIteratedTo), count: step.countAtValueIteratedTo });
  }
  const total = histogram.totalCount;
  return points.map((value) => {
    let below = 0;
    for (const entry of recorded) if (entry.lowest <= value) below += entry.count;
    return Math.min(100, (100 * below) / total);
  });
}
