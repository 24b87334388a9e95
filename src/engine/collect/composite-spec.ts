/**
 * `composite`: buckets for every combination of the values of its sources (`terms`, `histogram`,
 * `date_histogram`), in the order of the sources, paged with `size` and `after`. Each shard
 * returns its first `size` keys after `after` with exact counts; the coordinating node keeps the
 * first `size` of their union, which is exact (a key among the first `size` overall is among the
 * first `size` of every shard that holds it), so paging with `after_key` sees each bucket once.
 */
import { EngineError } from '../errors.ts';
import type { FlatField } from '../mapping/mapping.ts';
import { parseDateValue } from '../query/date-math.ts';
import { checkKeys, describe, dslError, expectObject, isDslObject, readBoolean, readEnum, readInteger, readString, singleEntry } from '../query/dsl-reader.ts';
import { valueSource, type ValueSource } from './aggregation-options.ts';
import type { AggregationSpec } from './aggregation-spec.ts';
import { DatePattern } from './date-pattern.ts';
import { parseHistogramSpec, type HistogramSpec } from './histogram-spec.ts';

/** A composite key: one value per source, null for a doc without a value (`missing_bucket`). */
export type CompositeKey = (string | number | null)[];

/** One source of a composite aggregation. */
export interface CompositeSource {
  name: string;
  kind: 'terms' | 'histogram' | 'date_histogram';
  source: ValueSource;
  direction: 'asc' | 'desc';
  /** Docs without a value get a null key instead of no bucket. */
  missingBucket: boolean;
  /** Where the null key sorts: `default` is first ascending and last descending. */
  missingOrder: 'default' | 'first' | 'last';
  /** How histogram sources round values to keys; null for terms. */
  rounding: HistogramSpec | null;
  /** `format` of a date_histogram source: keys print as strings; null for epoch millis. */
  datePattern: DatePattern | null;
}

/** `composite`. */
export interface CompositeSpec {
  type: 'composite';
  name: string;
  subs: AggregationSpec[];
  sources: CompositeSource[];
  size: number;
  /** Only keys after this one (`after`); null from the start. */
  after: CompositeKey | null;
}

/** Most sources one composite aggregation may have (ES has no cap; each adds a key part). */
const MAX_SOURCES = 32;

/** Parses a `composite` aggregation (top level only, like ES). */
export function parseCompositeSpec(
  name: string,
  options: Record<string, unknown>,
  fields: ReadonlyMap<string, FlatField> | null,
  subs: AggregationSpec[],
  now: number,
  depth: number,
): CompositeSpec {
  if (depth > 0) throw new EngineError('illegal_argument', `[composite] aggregation cannot be used with a parent aggregation of type: [${name}]`);
  checkKeys(options, ['sources', 'size', 'after'], 'composite');
  if (!Array.isArray(options.sources) || options.sources.length === 0) throw dslError('[composite] [sources] must be a non-empty array');
  if (options.sources.length > MAX_SOURCES) throw dslError(`[composite] [sources] lists ${options.sources.length} sources, at most ${MAX_SOURCES} are allowed`);
  const sources = options.sources.map((entry) => parseSource(entry, fields, subs, now));
  const names = new Set<string>();
  for (const source of sources) {
    if (names.has(source.name)) throw new EngineError('illegal_argument', `Composite source names must be unique, found duplicates: [${source.name}]`);
    names.add(source.name);
  }
  const size = options.size === undefined ? 10 : readInteger(options.size, 'size', 'composite', 1, 65_536);
  const after = options.after === undefined ? null : parseAfter(options.after, sources, now);
  return { type: 'composite', name, subs, sources, size, after };
}

function parseSource(entry: unknown, fields: ReadonlyMap<string, FlatField> | null, subs: AggregationSpec[], now: number): CompositeSource {
  if (!isDslObject(entry)) throw dslError('[composite] [sources] entries must be objects');
  const [name, body] = singleEntry(entry, 'composite.sources');
  const [kind, value] = singleEntry(expectObject(body, `composite.sources.${name}`), `composite.sources.${name}`);
  if (kind !== 'terms' && kind !== 'histogram' && kind !== 'date_histogram') {
    throw dslError(`[composite] source [${name}] of unknown type [${kind}]: use terms, histogram or date_histogram`);
  }
  const options = expectObject(value, kind);
  const own = ['field', 'order', 'missing_bucket', 'missing_order', 'format', 'script', 'value_type'];
  const roundingKeys = kind === 'terms' ? [] : kind === 'histogram' ? ['interval', 'offset'] : ['calendar_interval', 'fixed_interval', 'interval', 'offset', 'time_zone'];
  checkKeys(options, [...own, ...roundingKeys], kind);
  const source = valueSource(options, fields, kind);
  const direction = options.order === undefined ? 'asc' : readEnum(options.order, ['asc', 'desc'] as const, 'order', kind);
  const missingBucket = options.missing_bucket === undefined ? false : readBoolean(options.missing_bucket, 'missing_bucket', kind);
  const missingOrder = options.missing_order === undefined ? 'default' : readEnum(options.missing_order, ['default', 'first', 'last'] as const, 'missing_order', kind);
  if (missingOrder !== 'default' && !missingBucket) throw dslError(`[${kind}] [missing_order] requires [missing_bucket] to be true`);
  let rounding: HistogramSpec | null = null;
  if (kind !== 'terms') {
    const roundingOptions: Record<string, unknown> = { field: options.field };
    for (const key of roundingKeys) if (options[key] !== undefined) roundingOptions[key] = options[key];
    rounding = parseHistogramSpec(name, kind, roundingOptions, fields, subs, now);
  }
  const dates = kind === 'date_histogram' || source.format === 'date';
  if (options.format !== undefined && !dates) throw dslError(`[${kind}] [format] is only supported on date sources`);
  const datePattern = options.format === undefined ? null : DatePattern.parse(readString(options.format, 'format', kind), kind);
  if (source.kind === 'keyword' && kind !== 'terms') {
    throw new EngineError('illegal_argument', `Field [${source.field}] of type [keyword] is not supported for aggregation [${kind}]`);
  }
  return { name, kind, source, direction, missingBucket, missingOrder, rounding, datePattern };
}

function afterError(message: string): EngineError {
  return new EngineError('illegal_argument', `[composite] invalid [after]: ${message}`);
}

/** Parses `after` into a key: one value per source, named like the sources. */
function parseAfter(value: unknown, sources: readonly CompositeSource[], now: number): CompositeKey {
  if (!isDslObject(value)) throw afterError(`must be an object, got ${describe(value)}`);
  const names = Object.keys(value);
  if (names.length !== sources.length) throw afterError(`[after] has ${names.length} value(s) but [sources] has ${sources.length}`);
  return sources.map((source) => {
    if (!Object.hasOwn(value, source.name)) throw afterError(`no value for source [${source.name}]`);
    const part = value[source.name];
    if (part === null) {
      if (!source.missingBucket) throw afterError(`source [${source.name}] has no missing_bucket, so its value cannot be null`);
      return null;
    }
    // An unmapped field (or one not resolved, while rendering) keeps the value as given.
    if (source.source.kind === 'none' && (typeof part === 'string' || typeof part === 'number')) return part;
    if (source.source.kind === 'keyword') {
      if (typeof part === 'string' || typeof part === 'number' || typeof part === 'boolean') return String(part);
      throw afterError(`source [${source.name}] needs a string, got ${describe(part)}`);
    }
    if (typeof part === 'number' && Number.isFinite(part)) return part;
    if (typeof part === 'boolean' && source.source.format === 'boolean') return part ? 1 : 0;
    if (typeof part === 'string') {
      const dates = source.kind === 'date_histogram' || source.source.format === 'date';
      const parsed = dates ? (source.datePattern?.parse(part, source.rounding?.timeZone) ?? parseDateValue(part, false, now)) : part.trim() === '' ? NaN : Number(part);
      if (parsed !== null && Number.isFinite(parsed)) return parsed;
    }
    throw afterError(`source [${source.name}] needs a number${source.kind === 'date_histogram' ? ' or a date' : ''}, got ${describe(part)}`);
  });
}

/** Compares two keys in the sources' orders (nulls where `missing_order` puts them). */
export function compareCompositeKeys(sources: readonly CompositeSource[], left: CompositeKey, right: CompositeKey): number {
  for (let i = 0; i < sources.length; i++) {
    const a = left[i]!;
    const b = right[i]!;
    if (a === b) continue;
    const source = sources[i]!;
    if (a === null || b === null) {
      const nullFirst = source.missingOrder === 'default' ? source.direction === 'asc' : source.missingOrder === 'first';
      return (a === null) === nullFirst ? -1 : 1;
    }
    let result: number;
    if (typeof a === 'number' && typeof b === 'number') result = a - b;
    else result = String(a) < String(b) ? -1 : String(a) > String(b) ? 1 : 0;
    if (result !== 0) return source.direction === 'asc' ? result : -result;
  }
  return 0;
}

/** A key as the response writes it (`key`, `after_key`): an object by source name. */
export function renderCompositeKey(sources: readonly CompositeSource[], key: CompositeKey): Record<string, unknown> {
  const rendered: Record<string, unknown> = {};
  sources.forEach((source, index) => {
    const value = key[index]!;
    let shown: unknown = value;
    if (typeof value === 'number' && source.source.format === 'boolean') shown = value !== 0;
    else if (typeof value === 'number' && source.datePattern !== null) shown = source.datePattern.format(value, source.rounding?.timeZone);
    Object.defineProperty(rendered, source.name, { value: shown, enumerable: true, writable: true, configurable: true });
  });
  return rendered;
}
