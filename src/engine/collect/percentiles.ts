/**
 * `percentiles` and `percentile_ranks`: their options, and the t-digest (npm `tdigest`, Dunning's
 * algorithm, pure JavaScript) each shard fills per owner bucket. A shard's partial is the list of
 * its digest's centroids; the coordinating node pushes every shard's centroids into one digest and
 * reads the percentiles from it, as Elasticsearch merges its shards' TDigest states. While a
 * digest holds fewer than about 100 values per shard no centroid absorbs another, so the answers
 * are exact interpolations between the values, the same on one shard or many; past that they are
 * approximations, tighter towards the extremes (ES's documented behaviour).
 */
import { TDigest } from 'tdigest';
import type { FlatField } from '../mapping/mapping.ts';
import { EngineError } from '../errors.ts';
import { checkKeys, dslError, expectObject, readBoolean, readInteger, readNumber } from '../query/dsl-reader.ts';
import { hdrValues } from './hdr-percentiles.ts';
import type { ValueSource } from './aggregation-options.ts';
import { parseMissingValue, valueSource } from './aggregation-options.ts';
import type { BucketKey, DigestPartial, HdrPartial, ValueFormat } from './aggregation-partials.ts';
import { formatValue, javaDouble } from './value-format.ts';

/** `percentiles` (points are percents) and `percentile_ranks` (points are values). */
export interface PercentilesSpec {
  type: 'percentiles' | 'percentile_ranks';
  name: string;
  subs: [];
  source: ValueSource;
  missing: BucketKey | null;
  /** The `percents` of `percentiles`, the `values` of `percentile_ranks`, in request order. */
  points: number[];
  keyed: boolean;
  /** `tdigest.compression` (ES default 100): about how many centroids a digest keeps. */
  compression: number;
  /** `hdr.number_of_significant_value_digits` with the `hdr` method; null for the t-digest. */
  hdrDigits: number | null;
}

/** Elasticsearch's default `percents`. */
export const DEFAULT_PERCENTS = [1, 5, 25, 50, 75, 95, 99];

/** Parses the options of `percentiles` or `percentile_ranks`. */
export function parsePercentiles(
  name: string,
  type: 'percentiles' | 'percentile_ranks',
  options: Record<string, unknown>,
  fields: ReadonlyMap<string, FlatField> | null,
  now: number,
): PercentilesSpec {
  const pointsKey = type === 'percentiles' ? 'percents' : 'values';
  checkKeys(options, ['field', pointsKey, 'keyed', 'tdigest', 'hdr', 'missing', 'format', 'script'], type);
  const source = valueSource(options, fields, type);
  if (source.kind === 'keyword') {
    throw new EngineError('illegal_argument', `Field [${source.field}] of type [keyword] is not supported for aggregation [${type}]`);
  }
  let hdrDigits: number | null = null;
  if (options.hdr !== undefined) {
    if (options.tdigest !== undefined) throw dslError(`[${type}] [tdigest] and [hdr] are mutually exclusive: pick one method`);
    const hdr = expectObject(options.hdr, `${type}.hdr`);
    checkKeys(hdr, ['number_of_significant_value_digits'], `${type}.hdr`);
    const digits = hdr.number_of_significant_value_digits;
    if (typeof digits === 'number' && (digits < 0 || digits > 5)) throw dslError(`[numberOfSignificantValueDigits] must be between 0 and 5: [${name}]`);
    hdrDigits = digits === undefined ? 3 : readInteger(digits, 'number_of_significant_value_digits', type, 0, 5);
  }
  let compression = 100;
  if (options.tdigest !== undefined) {
    const tdigest = expectObject(options.tdigest, `${type}.tdigest`);
    checkKeys(tdigest, ['compression', 'execution_hint'], `${type}.tdigest`);
    if (tdigest.compression !== undefined) compression = readNumber(tdigest.compression, 'compression', type);
    if (compression < 0) throw dslError(`[compression] must be greater than or equal to 0. Found [${javaDouble(compression)}] in [${name}]`);
    if (compression < 1) throw dslError(`[compression] must be greater than or equal to 1 in Trove. Found [${javaDouble(compression)}] in [${name}]`);
  }
  let points: number[];
  if (options[pointsKey] === undefined) {
    if (type === 'percentile_ranks') throw dslError(`[values] must not be null: [${name}]`);
    points = DEFAULT_PERCENTS;
  } else {
    if (!Array.isArray(options[pointsKey])) throw dslError(`[${type}] [${pointsKey}] must be an array of numbers`);
    points = (options[pointsKey] as unknown[]).map((value) => readNumber(value, pointsKey, type));
    if (points.length === 0) throw dslError(`[${pointsKey}] must not be empty: [${name}]`);
    if (type === 'percentiles') {
      for (const percent of points) {
        if (percent < 0 || percent > 100) throw dslError(`percent must be in [0,100], got [${percent}]: [${name}]`);
      }
    }
  }
  const keyed = options.keyed === undefined ? true : readBoolean(options.keyed, 'keyed', type);
  return { type, name, subs: [], source, missing: parseMissingValue(options.missing, source, type, now), points, keyed, compression, hdrDigits };
}

/** A new, empty digest of the given compression. */
export function newDigest(compression: number): TDigest {
  // tdigest's delta is the largest share of the mass one centroid may own: 1 / compression.
  return new TDigest(1 / compression);
}

/** The plain-data partial of a digest. */
export function digestPartial(digest: TDigest | undefined, format: ValueFormat, compression: number): DigestPartial {
  const means: number[] = [];
  const weights: number[] = [];
  for (const centroid of digest?.toArray() ?? []) {
    means.push(centroid.mean);
    weights.push(centroid.n);
  }
  return { type: 'digest', format, compression, means, weights };
}

/** The digest a partial stands for. */
export function digestOf(partial: DigestPartial): TDigest {
  const digest = newDigest(partial.compression);
  for (let i = 0; i < partial.means.length; i++) digest.push(partial.means[i]!, partial.weights[i]!);
  return digest;
}

/** Merges two shards' digests into one partial. */
export function mergeDigests(left: DigestPartial, right: DigestPartial): DigestPartial {
  const digest = digestOf(left);
  for (let i = 0; i < right.means.length; i++) digest.push(right.means[i]!, right.weights[i]!);
  return digestPartial(digest, left.format, left.compression);
}

/**
 * The value at quantile `q` of a digest's centroids (sorted by mean), read as Elasticsearch's
 * t-digest (`MergingDigest.quantile`) reads them, so that small digests, whose centroids are the
 * values themselves, answer exactly as it does (the 25th percentile of 1, 51, 101, 151 is 51): a
 * unit-weight centroid owns half a unit of rank either side of it, and ranks between two
 * centroids interpolate. The first and last centroids stand for the minimum and maximum.
 */
export function digestQuantile(means: readonly number[], weights: readonly number[], q: number): number | null {
  const count = means.length;
  if (count === 0) return null;
  const min = means[0]!;
  const max = means[count - 1]!;
  if (count === 1) return min;
  let total = 0;
  for (const weight of weights) total += weight;
  const index = q * total;
  if (index < 1) return min;
  const first = weights[0]!;
  if (first > 1 && index < first / 2) return min + ((index - 1) / (first / 2 - 1)) * (means[0]! - min);
  if (index > total - 1) return max;
  const last = weights[count - 1]!;
  if (last > 1 && total - index <= last / 2) return max - ((total - index - 1) / (last / 2 - 1)) * (max - means[count - 1]!);
  let weightSoFar = first / 2;
  for (let i = 0; i < count - 1; i++) {
    const step = (weights[i]! + weights[i + 1]!) / 2;
    if (weightSoFar + step > index) {
      let leftUnit = 0;
      if (weights[i] === 1) {
        if (index - weightSoFar < 0.5) return means[i]!;
        leftUnit = 0.5;
      }
      let rightUnit = 0;
      if (weights[i + 1] === 1) {
        if (weightSoFar + step - index <= 0.5) return means[i + 1]!;
        rightUnit = 0.5;
      }
      const toLeft = index - weightSoFar - leftUnit;
      const toRight = weightSoFar + step - index - rightUnit;
      return (means[i]! * toRight + means[i + 1]! * toLeft) / (toLeft + toRight);
    }
    weightSoFar += step;
  }
  const beyond = index - total - last / 2;
  const rest = last / 2 - beyond;
  return (means[count - 1]! * beyond + max * rest) / (beyond + rest);
}

/** Renders merged percentiles or percentile ranks in the ES shape (`values` keyed by the point, or a list). */
export function renderPercentiles(spec: PercentilesSpec, partial: DigestPartial | HdrPartial): Record<string, unknown> {
  const ranks = spec.type === 'percentile_ranks';
  let values: (number | null)[];
  if (partial.type === 'hdr') {
    values = hdrValues(partial, spec.points, ranks);
  } else {
    const digest = partial.means.length === 0 ? null : digestOf(partial);
    values = spec.points.map((point) => {
      if (digest === null) return null;
      return ranks ? (digest.p_rank(point) as number) * 100 : digestQuantile(partial.means, partial.weights, point / 100);
    });
  }
  const entries = spec.points.map((point, index) => ({ point, value: values[index]! }));
  const asString = (value: number | null): string | null => (value !== null && partial.format === 'date' && !ranks ? formatValue(value, 'date') : null);
  if (spec.keyed) {
    const values: Record<string, unknown> = {};
    for (const { point, value } of entries) {
      const key = javaDouble(point);
      values[key] = value;
      const text = asString(value);
      if (text !== null) values[`${key}_as_string`] = text;
    }
    return { values };
  }
  return {
    values: entries.map(({ point, value }) => {
      const text = asString(value);
      return text === null ? { key: point, value } : { key: point, value, value_as_string: text };
    }),
  };
}
