/**
 * Sort specifications (Elasticsearch syntax) and the comparator over sort values shared by the
 * shard collector, `search_after` and the cross-shard merge. Sort values are plain JSON: numbers
 * (numeric fields, dates as epoch millis, booleans 0/1, `_score`, `_doc`), strings (keyword
 * fields) and null for a missing value (placed first or last whatever the order, like ES).
 */
import { EngineError } from '../errors.ts';
import type { FlatField } from '../mapping/mapping.ts';
import { COLUMN_NUMERIC_TYPES, DATE_TYPES } from '../mapping/mapping.ts';
import { decodeIp, encodeIp } from '../mapping/ip.ts';
import { isExactIntegerType, type ExactIntegerType } from '../mapping/exact-long.ts';
import { compareExactAware, exactDigits, exactSearchAfter, isExactString } from './exact-sort-values.ts';
import { assertDocValues, refuseTextFieldData } from '../query/typed-values.ts';
import { parseDateValue } from '../query/date-math.ts';
import {
  checkKeys,
  describe,
  dslError,
  isDslObject,
  readEnum,
  readString,
  singleEntry,
} from '../query/dsl-reader.ts';

/** Sort direction. */
export type SortOrder = 'asc' | 'desc';

/** How a multi-valued field yields one sort value. */
export type SortMode = 'min' | 'max' | 'sum' | 'avg' | 'median';

/** One sort key. */
export interface SortKey {
  /** `unmapped`: a field absent from the mapping sorted with `unmapped_type` (every doc missing). */
  kind: 'score' | 'doc' | 'shard_doc' | 'numeric' | 'keyword' | 'unmapped';
  /** Field path, or `_score` / `_doc` / `_shard_doc` (point-in-time searches: the shard's position in the high 32 bits, its doc below). */
  field: string;
  order: SortOrder;
  mode: SortMode;
  /** Placement of docs without a value, or the value used in their place. */
  missing: 'first' | 'last' | number | string;
  /** A `long`/`unsigned_long` key: where its exact values beyond ±(2^53 − 1) are (exact-sort-values.ts). */
  exact?: { path: string; type: ExactIntegerType };
}

/** A sort value as hits carry it (a long key's value beyond ±(2^53 − 1) is an exact string, exact-sort-values.ts). */
export type SortValue = number | string | null;

/** The sort Elasticsearch uses when none is given. */
export const SCORE_SORT: readonly SortKey[] = [{ kind: 'score', field: '_score', order: 'desc', mode: 'max', missing: 'last' }];

const SORT_OPTIONS = ['order', 'missing', 'mode', 'unmapped_type', 'numeric_type', 'format'];

/**
 * Parses the `sort` of a request against the mapping. With `fields` null (merging shard hits,
 * whose sort values are already computed) only orders and missing placements are resolved.
 */
export function parseSort(sort: unknown, fields: ReadonlyMap<string, FlatField> | null): SortKey[] {
  const entries = Array.isArray(sort) ? sort : [sort];
  if (entries.length === 0) throw dslError('[sort] must not be empty');
  return entries.map((entry) => parseSortEntry(entry, fields));
}

function parseSortEntry(entry: unknown, fields: ReadonlyMap<string, FlatField> | null): SortKey {
  if (typeof entry === 'string') {
    const match = /^(.*):(asc|desc)$/.exec(entry);
    return match === null ? sortKey(entry, {}, fields) : sortKey(match[1]!, { order: match[2] }, fields);
  }
  if (!isDslObject(entry)) throw dslError(`[sort] expected a field name or an object, got ${describe(entry)}`);
  const [field, options] = singleEntry(entry, 'sort');
  if (field === '_geo_distance') throw dslError('[sort] sorting by [_geo_distance] is not supported; filter with a [geo_distance] query instead');
  if (typeof options === 'string') return sortKey(field, { order: options }, fields);
  if (!isDslObject(options)) throw dslError(`[sort] options of [${field}] must be an object or an order`);
  checkKeys(options, SORT_OPTIONS, 'sort');
  return sortKey(field, options, fields);
}

function sortKey(field: string, options: Record<string, unknown>, fields: ReadonlyMap<string, FlatField> | null): SortKey {
  if (field === '') throw dslError('[sort] field name must not be empty');
  const special = field === '_score' ? 'score' : field === '_doc' ? 'doc' : field === '_shard_doc' ? 'shard_doc' : null;
  const defaultOrder: SortOrder = special === 'score' ? 'desc' : 'asc';
  const order = options.order === undefined ? defaultOrder : readEnum(options.order, ['asc', 'desc'] as const, 'order', 'sort');
  const mode =
    options.mode === undefined
      ? order === 'asc'
        ? 'min'
        : 'max'
      : readEnum(options.mode, ['min', 'max', 'sum', 'avg', 'median'] as const, 'mode', 'sort');
  if (special !== null) return { kind: special, field, order, mode, missing: 'last' };
  if (fields === null) return { kind: 'unmapped', field, order, mode, missing: parseMissing(options.missing, 'unmapped', undefined, field) };
  const mapped = fields.get(field);
  let kind: SortKey['kind'];
  if (mapped === undefined) {
    if (options.unmapped_type === undefined) {
      throw new EngineError('illegal_argument', `No mapping found for [${field}] in order to sort on`);
    }
    readString(options.unmapped_type, 'unmapped_type', 'sort');
    kind = 'unmapped';
  } else if (mapped.storage === 'text') {
    refuseTextFieldData(mapped, field);
  } else if (mapped.storage === 'keyword') {
    assertDocValues(mapped, field);
    if (mapped.type === 'binary') throw new EngineError('illegal_argument', `can't sort on binary field [${field}]`);
    kind = 'keyword';
    if (mode !== 'min' && mode !== 'max') throw dslError(`[sort] mode [${mode}] is not supported on keyword field [${field}]`);
  } else if (COLUMN_NUMERIC_TYPES.has(mapped.type)) {
    assertDocValues(mapped, field);
    kind = 'numeric';
  } else {
    throw dslError(`[sort] cannot sort on field [${field}] of type [${mapped.type}]`);
  }
  const key: SortKey = { kind, field: mapped?.path ?? field, order, mode, missing: parseMissing(options.missing, kind, mapped, field) };
  if (kind === 'numeric' && mapped !== undefined && mapped.exactPath !== undefined && isExactIntegerType(mapped.type)) key.exact = { path: mapped.exactPath, type: mapped.type };
  return key;
}

function parseMissing(
  missing: unknown,
  kind: SortKey['kind'],
  mapped: FlatField | undefined,
  field: string,
): SortKey['missing'] {
  if (missing === undefined || missing === null || missing === '_last') return 'last';
  if (missing === '_first') return 'first';
  if (kind === 'keyword' || (kind === 'unmapped' && typeof missing === 'string')) {
    if (typeof missing !== 'string') throw dslError(`[sort] missing value of [${field}] must be a string`);
    return missing;
  }
  const value = coerceNumericSortValue(missing, mapped);
  if (value === null) throw dslError(`[sort] invalid missing value ${describe(missing)} for field [${field}]`);
  return value;
}

/** A numeric sort value from JSON input (numbers, numeric strings, dates, booleans). */
function coerceNumericSortValue(value: unknown, mapped: FlatField | undefined): number | null {
  if (typeof value === 'number') return Number.isFinite(value) ? value : null;
  if (typeof value === 'boolean') return value ? 1 : 0;
  if (typeof value !== 'string') return null;
  if (mapped?.type === 'boolean' && (value === 'true' || value === 'false')) return value === 'true' ? 1 : 0;
  if (mapped !== undefined && DATE_TYPES.has(mapped.type)) return parseDateValue(value, false, Date.now());
  const number = value.trim() === '' ? NaN : Number(value);
  return Number.isFinite(number) ? number : null;
}

/** Validates `search_after` against the sort keys and normalises its values. */
export function parseSearchAfter(
  values: unknown,
  keys: readonly SortKey[],
  fields: ReadonlyMap<string, FlatField>,
): SortValue[] {
  if (!Array.isArray(values)) throw dslError('[search_after] must be an array');
  if (values.length !== keys.length) {
    throw dslError(`search_after has ${values.length} value(s) but sort has ${keys.length}.`);
  }
  return keys.map((key, index) => {
    const value = values[index];
    if (value === null) return null;
    if (key.kind === 'keyword' || key.kind === 'unmapped') {
      if (typeof value === 'string' && fields.get(key.field)?.type === 'ip') {
        const term = encodeIp(value);
        if (term === null) throw dslError(`[search_after] value ${describe(value)} for [${key.field}] is not an IP address`);
        return term;
      }
      if (typeof value === 'string') return value;
      if (key.kind === 'unmapped') return null;
      throw dslError(`[search_after] value ${describe(value)} for [${key.field}] must be a string`);
    }
    const exact = exactSearchAfter(value);
    if (exact !== null && key.kind === 'numeric') return exact;
    const number = coerceNumericSortValue(value, fields.get(key.field));
    if (number === null) throw dslError(`[search_after] value ${describe(value)} for [${key.field}] must be a number`);
    return number;
  });
}

/**
 * Sort values as a hit shows them: the addresses of `ip` keys (which sort by their 16-byte terms),
 * exact strings as `exactNumber` makes of their digits (a JSON number written as is); other
 * values as they are.
 */
export function displaySortValues(
  values: readonly unknown[],
  sort: unknown,
  fields: ReadonlyMap<string, FlatField>,
  exactNumber: (digits: string) => unknown = (digits) => digits,
): unknown[] {
  if (sort === undefined || !values.some((value) => typeof value === 'string')) return [...values];
  const keys = parseSort(sort, null);
  return values.map((value, index) => {
    if (isExactString(value)) return exactNumber(exactDigits(value));
    const key = keys[index];
    return typeof value === 'string' && key !== undefined && fields.get(key.field)?.type === 'ip' ? decodeIp(value) : value;
  });
}

/** Compares two values of one key in output order (negative: `left` comes first). */
export function compareSortValue(key: SortKey, left: SortValue, right: SortValue): number {
  if (left === null || right === null) {
    if (left === right) return 0;
    const nullFirst = key.missing === 'first';
    return left === null ? (nullFirst ? -1 : 1) : nullFirst ? 1 : -1;
  }
  let result: number | null;
  if (typeof left === 'number' && typeof right === 'number') result = left < right ? -1 : left > right ? 1 : 0;
  else result = compareExactAware(left, right) ?? compareAsText(left, right);
  return key.order === 'asc' ? result : -result;
}

function compareAsText(left: number | string, right: number | string): number {
  const leftText = String(left);
  const rightText = String(right);
  return leftText < rightText ? -1 : leftText > rightText ? 1 : 0;
}

/** Compares two hits' sort values key by key (negative: `left` comes first). */
export function compareSortValues(keys: readonly SortKey[], left: readonly SortValue[], right: readonly SortValue[]): number {
  for (let i = 0; i < keys.length; i++) {
    const result = compareSortValue(keys[i]!, left[i] ?? null, right[i] ?? null);
    if (result !== 0) return result;
  }
  return 0;
}

/** Whether the keys are exactly the default score order (top-k by score can then prune). */
export function isScoreOrder(keys: readonly SortKey[]): boolean {
  return keys.length === 1 && keys[0]!.kind === 'score' && keys[0]!.order === 'desc';
}

/** Whether any key needs the hit's score. */
export function needsScore(keys: readonly SortKey[]): boolean {
  return keys.some((key) => key.kind === 'score');
}
