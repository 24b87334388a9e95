/** Options shared by several aggregation types: value sources, bucket order, missing values, time zone. */
import { EngineError } from '../errors.ts';
import type { FlatField } from '../mapping/mapping.ts';
import { COLUMN_NUMERIC_TYPES, DATE_TYPES } from '../mapping/mapping.ts';
import { isExactIntegerType, type ExactIntegerType } from '../mapping/exact-long.ts';
import { assertDocValues, refuseTextFieldData } from '../query/typed-values.ts';
import { parseDateValue } from '../query/date-math.ts';
import { TimeZone } from '../query/time-zone.ts';
import { asArray, describe, dslError, isDslObject, readEnum, readNumber, readString, singleEntry } from '../query/dsl-reader.ts';
import type { BucketKey, ValueFormat } from './aggregation-partials.ts';

/** Where an aggregation reads its values. */
export interface ValueSource {
  field: string;
  /** `none`: the field is not mapped, so no doc has a value. */
  kind: 'keyword' | 'numeric' | 'none';
  format: ValueFormat;
  /** A `long`/`unsigned_long` field: where its exact values beyond ±(2^53 − 1) are (`terms` keys them exactly). */
  exact?: { path: string; type: ExactIntegerType };
}

/** Bucket order: by count, key, or a single-value metric sub-aggregation (`name` or `name.stat`). */
export interface BucketOrder {
  by: '_count' | '_key' | 'metric';
  direction: 'asc' | 'desc';
  /** Sub-aggregation name for `metric`. */
  aggregation: string;
  /** For `metric`: the value ordered on (min, max, sum, avg, count, value_count, cardinality). */
  stat: string | null;
}

/** Metric aggregation types. */
export const METRIC_TYPES: ReadonlySet<string> = new Set([
  'min',
  'max',
  'sum',
  'avg',
  'stats',
  'extended_stats',
  'value_count',
  'cardinality',
  'percentiles',
  'percentile_ranks',
]);

/** The stats a bucket order may name on a multi-value metric (`name.stat`). */
const ORDER_STATS: Record<string, readonly string[]> = {
  stats: ['count', 'min', 'max', 'avg', 'sum'],
  extended_stats: [
    'count',
    'min',
    'max',
    'avg',
    'sum',
    'sum_of_squares',
    'variance',
    'variance_population',
    'variance_sampling',
    'std_deviation',
    'std_deviation_population',
    'std_deviation_sampling',
  ],
};

/** The part of a spec `parseBucketOrder` needs to check metric order paths. */
export interface NamedSpec {
  name: string;
  type: string;
}

/**
 * Resolves the `field` of an aggregation to a value source; text fields are rejected like ES
 * does. With `fields` null (rendering merged partials, where formats come from the partials)
 * the field is not resolved.
 */
export function valueSource(options: Record<string, unknown>, fields: ReadonlyMap<string, FlatField> | null, type: string): ValueSource {
  if (options.script !== undefined) throw dslError(`[${type}] scripts are not supported`);
  if (options.field === undefined) throw dslError(`[${type}] Required one of fields [field, script], but none were specified.`);
  const field = readString(options.field, 'field', type);
  const mapped = fields?.get(field);
  if (mapped === undefined) return { field, kind: 'none', format: 'number' };
  if (mapped.storage === 'text') refuseTextFieldData(mapped, field);
  assertDocValues(mapped, field);
  // A field alias reads its target's column.
  if (mapped.storage === 'keyword') return { field: mapped.path, kind: 'keyword', format: mapped.type === 'ip' ? 'ip' : 'string' };
  if (!COLUMN_NUMERIC_TYPES.has(mapped.type)) throw dslError(`[${type}] field [${field}] of type [${mapped.type}] cannot be aggregated`);
  const format: ValueFormat = DATE_TYPES.has(mapped.type) ? 'date' : mapped.type === 'boolean' ? 'boolean' : 'number';
  const source: ValueSource = { field: mapped.path, kind: 'numeric', format };
  if (mapped.exactPath !== undefined && isExactIntegerType(mapped.type)) source.exact = { path: mapped.exactPath, type: mapped.type };
  return source;
}

/** A date, number or date-math bound of a date aggregation option (dates without an offset and rounding in `zone`). */
export function parseDateOption(value: unknown, name: string, type: string, now: number, zone: TimeZone = TimeZone.UTC): number {
  if (typeof value === 'string') {
    const millis = parseDateValue(value, false, now, zone);
    if (millis === null) throw dslError(`[${type}] [${name}] is not a date: ${describe(value)}`);
    return millis;
  }
  return readNumber(value, name, type);
}

/** A `missing` value for a source (a term for keyword fields, a number or date otherwise). */
export function parseMissingValue(value: unknown, source: ValueSource, type: string, now: number): BucketKey | null {
  if (value === undefined || value === null) return null;
  if (source.kind === 'none') {
    // Unmapped (or not resolved while rendering): no doc has the field, the value is only a key.
    if (typeof value === 'number' || typeof value === 'string') return value;
    if (typeof value === 'boolean') return value ? 1 : 0;
    throw dslError(`[${type}] [missing] must be a scalar, got ${describe(value)}`);
  }
  if (source.kind === 'keyword') {
    if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') return String(value);
    throw dslError(`[${type}] [missing] must be a scalar, got ${describe(value)}`);
  }
  if (source.format === 'boolean' && typeof value === 'boolean') return value ? 1 : 0;
  if (source.format === 'date') return parseDateOption(value, 'missing', type, now);
  return readNumber(value, 'missing', type);
}

/** Parses `order`; adds `_key asc` as the final tie-breaker like Elasticsearch. */
export function parseBucketOrder(value: unknown, subs: readonly NamedSpec[], type: string, defaults: BucketOrder[]): BucketOrder[] {
  const orders: BucketOrder[] = [];
  if (value === undefined) orders.push(...defaults);
  for (const entry of value === undefined ? [] : asArray(value)) {
    if (!isDslObject(entry)) throw dslError(`[${type}] [order] must be an object or an array of objects`);
    const [path, direction] = singleEntry(entry, `${type}.order`);
    const parsedDirection = readEnum(direction, ['asc', 'desc'] as const, path, `${type}.order`);
    // `_term` and `_time` are Elasticsearch's older names of `_key`.
    if (path === '_count' || path === '_key' || path === '_term' || path === '_time') {
      orders.push({ by: path === '_count' ? '_count' : '_key', direction: parsedDirection, aggregation: '', stat: null });
      continue;
    }
    const [aggregation, stat = null, ...rest] = path.split('.');
    const target = subs.find((sub) => sub.name === aggregation);
    // A single-bucket sub-aggregation (`filter`, `missing`) orders by its doc count: `name`, `name.doc_count` or `name._count`.
    if (target !== undefined && (target.type === 'filter' || target.type === 'missing') && rest.length === 0 && (stat === null || stat === 'doc_count' || stat === '_count')) {
      orders.push({ by: 'metric', direction: parsedDirection, aggregation: aggregation!, stat: 'doc_count' });
      continue;
    }
    if (target === undefined || rest.length > 0 || !METRIC_TYPES.has(target.type) || target.type.startsWith('percentile')) {
      throw dslError(`[${type}] Invalid aggregation order path [${path}]: no single-value metric sub-aggregation [${aggregation}]`);
    }
    const stats = Object.hasOwn(ORDER_STATS, target.type) ? ORDER_STATS[target.type]! : null;
    if ((stats !== null) !== (stat !== null)) {
      throw dslError(`[${type}] Invalid aggregation order path [${path}]: ${stats !== null ? 'a stat name is required' : 'unexpected stat name'}`);
    }
    if (stat !== null && !stats!.includes(stat)) {
      throw dslError(`[${type}] Invalid aggregation order path [${path}]: unknown stat [${stat}]`);
    }
    orders.push({ by: 'metric', direction: parsedDirection, aggregation: aggregation!, stat: stat ?? target.type });
  }
  if (!orders.some((order) => order.by === '_key')) orders.push({ by: '_key', direction: 'asc', aggregation: '', stat: null });
  return orders;
}
