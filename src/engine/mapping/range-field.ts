/**
 * Range field types (`integer_range`, `long_range`, `float_range`, `double_range`, `date_range`,
 * `ip_range`): each value is a range `{gte|gt, lte|lt}` (either end may be left open), an array
 * of them, or for `ip_range` a CIDR string. A range is held as its inclusive bounds: `gt`
 * becomes the next value up of the element type (the next integer, float, double, millisecond
 * or address), `lt` the next down; an open end is the lowest or highest value (±Infinity for
 * the numeric types, `::` and `ffff:…:ffff` for addresses).
 *
 * The bounds live in hidden companions (see `RangePaths`): a column of the low bounds, a column
 * of the high bounds (numeric columns, keyword columns of address terms for `ip_range`) and,
 * for documents holding several ranges, a keyword column of `low|high` pairs, since a
 * multi-valued column keeps each document's values sorted and so loses which low goes with
 * which high.
 */
import { EngineError } from '../errors.ts';
import { coerceColumnValue, coerceStringValue } from './field-value.ts';
import { cidrTermRange, decodeIp, IP_TERM_LENGTH } from './ip.ts';
import { isPlainObject, previewJson } from './json-value.ts';
import type { FieldType, FlatField } from './mapping.ts';

/** The range field types and the type of their bounds. */
export const RANGE_ELEMENT_TYPES = {
  integer_range: 'integer',
  long_range: 'long',
  float_range: 'float',
  double_range: 'double',
  date_range: 'date',
  ip_range: 'ip',
} as const satisfies Record<string, FieldType>;

/** A range field type. */
export type RangeType = keyof typeof RANGE_ELEMENT_TYPES;

/** Whether a type is one of the range types. */
export function isRangeType(type: string): type is RangeType {
  return Object.hasOwn(RANGE_ELEMENT_TYPES, type);
}

/** The hidden companions of a range field. */
export interface RangePaths {
  /** Column of the inclusive low bounds (numeric; keyword address terms for `ip_range`). */
  from: string;
  /** Column of the inclusive high bounds. */
  to: string;
  /** Keyword column of `low|high` pairs, written for documents holding several ranges. */
  pairs: string;
  /** Whether the bound columns are keyword columns of address terms (`ip_range`). */
  keyword: boolean;
}

/** The companion paths of the range field at `path`. */
export function rangePathsOf(path: string, type: RangeType): RangePaths {
  return { from: `${path}\u0000from`, to: `${path}\u0000to`, pairs: `${path}\u0000ranges`, keyword: type === 'ip_range' };
}

/** A bound: a number (epoch millis for dates), or a 32-hex-digit address term for `ip_range`. */
export type RangeBound = number | string;

/** One range with inclusive bounds. */
export interface InclusiveRange {
  from: RangeBound;
  to: RangeBound;
}

/** Lowest and highest address terms. */
const IP_MIN = '0'.repeat(IP_TERM_LENGTH);
const IP_MAX = 'f'.repeat(IP_TERM_LENGTH);

const float32 = new Float32Array(1);
const float32Bits = new Int32Array(float32.buffer);
const float64 = new Float64Array(1);
const float64Bits = new BigInt64Array(float64.buffer);

/** The smallest double above `value`. */
function nextUpDouble(value: number): number {
  if (Number.isNaN(value) || value === Infinity) return value;
  if (value === 0) return Number.MIN_VALUE;
  float64[0] = value;
  float64Bits[0] = value > 0 ? float64Bits[0]! + 1n : float64Bits[0]! - 1n;
  return float64[0]!;
}

/** The smallest float32 above `value` (value rounded to float32 first). */
function nextUpFloat(value: number): number {
  if (Number.isNaN(value) || value === Infinity) return value;
  const rounded = Math.fround(value);
  if (rounded > value) return rounded;
  if (rounded === 0) return 1.401298464324817e-45;
  float32[0] = rounded;
  float32Bits[0] = rounded > 0 ? float32Bits[0]! + 1 : float32Bits[0]! - 1;
  return float32[0]!;
}

/** The address term one above or below `term` (unchanged at the ends of the address space). */
function stepIp(term: string, up: boolean): string {
  if (term === (up ? IP_MAX : IP_MIN)) return term;
  const next = BigInt(`0x${term}`) + (up ? 1n : -1n);
  return next.toString(16).padStart(IP_TERM_LENGTH, '0');
}

/** The next bound above (`up`) or below `bound` in the element type of `type`. */
export function stepBound(type: RangeType, bound: RangeBound, up: boolean): RangeBound {
  if (typeof bound === 'string') return stepIp(bound, up);
  if (!Number.isFinite(bound)) return bound;
  switch (type) {
    case 'integer_range':
    case 'long_range':
    case 'date_range':
      return up ? Math.floor(bound) + 1 : Math.ceil(bound) - 1;
    case 'float_range':
      return up ? nextUpFloat(bound) : -nextUpFloat(-bound);
    default:
      return up ? nextUpDouble(bound) : -nextUpDouble(-bound);
  }
}

/** The lowest (`low`) or highest bound of a type: an open end. */
export function openBound(type: RangeType, low: boolean): RangeBound {
  if (type === 'ip_range') return low ? IP_MIN : IP_MAX;
  return low ? -Infinity : Infinity;
}

/** A bound as OpenSearch prints it in messages (addresses in their usual form). */
export function showBound(bound: RangeBound): string {
  return typeof bound === 'string' ? decodeIp(bound) : String(bound);
}

/** The range field's bound type as a leaf view (so bounds coerce like that type's values). */
export function elementField(field: FlatField): FlatField {
  const type = RANGE_ELEMENT_TYPES[field.type as RangeType];
  return { ...field, type, storage: type === 'ip' ? 'keyword' : 'numeric' };
}

/** The mapper_parsing error about one range value of a field. */
function rangeError(field: FlatField, reason: string): EngineError {
  return new EngineError('mapper_parsing', `failed to parse field [${field.path}] of type [${field.type}]: ${reason}`);
}

/** The key sets a range value may use. */
const RANGE_KEYS = new Set(['gte', 'gt', 'lte', 'lt']);

/**
 * One range value of a document for a range field: an object of `gte|gt` and `lte|lt` (either
 * may be missing or null: an open end), or a CIDR string for `ip_range`. Throws mapper_parsing
 * in OpenSearch's words for a value that is not one, and when its low bound lies above its high.
 */
export function parseRangeValue(field: FlatField, value: unknown): InclusiveRange {
  const type = field.type as RangeType;
  if (type === 'ip_range' && typeof value === 'string') {
    const cidr = value.includes('/') ? cidrTermRange(value) : null;
    if (cidr === null) throw rangeError(field, `error parsing field [${field.path}], expected an object or a CIDR block but got [${value}]`);
    return { from: cidr.lower, to: cidr.upper };
  }
  if (!isPlainObject(value)) {
    throw rangeError(field, `error parsing field [${field.path}], expected an object but got ${previewJson(value)}`);
  }
  const element = elementField(field);
  let from = openBound(type, true);
  let to = openBound(type, false);
  for (const key of Object.keys(value)) {
    if (!RANGE_KEYS.has(key)) throw rangeError(field, `error parsing field [${field.path}], with unknown parameter [${key}]`);
    const raw = value[key];
    if (raw === null || raw === undefined) continue;
    const bound = coerceBound(element, raw);
    if (bound === null) continue;
    if (key === 'gte') from = bound;
    else if (key === 'gt') from = stepBound(type, bound, true);
    else if (key === 'lte') to = bound;
    else to = stepBound(type, bound, false);
  }
  if (from > to) throw rangeError(field, `min value (${showBound(from)}) is greater than max value (${showBound(to)})`);
  return { from, to };
}

/** A bound of a document range in the element type (null: counts as missing). */
function coerceBound(element: FlatField, raw: unknown): RangeBound | null {
  if (element.type === 'ip') return coerceStringValue(element, raw);
  return coerceColumnValue(element, raw, true);
}

/** The term of a range in the pairs column. */
export function encodeRangePair(range: InclusiveRange): string {
  return `${String(range.from)}|${String(range.to)}`;
}

/** A range read back from the pairs column (`keyword`: bounds are address terms). */
export function decodeRangePair(term: string, keyword: boolean): InclusiveRange {
  const bar = term.indexOf('|');
  const from = term.slice(0, bar);
  const to = term.slice(bar + 1);
  return keyword ? { from, to } : { from: Number(from), to: Number(to) };
}

/** How a query range relates to the ranges of a document (`range` query `relation`). */
export type RangeRelation = 'intersects' | 'within' | 'contains';

/** Whether a document range `doc` stands in `relation` to the query range `query` (all bounds inclusive). */
export function rangeMatches(doc: InclusiveRange, query: InclusiveRange, relation: RangeRelation): boolean {
  switch (relation) {
    case 'within':
      return doc.from >= query.from && doc.to <= query.to;
    case 'contains':
      return doc.from <= query.from && doc.to >= query.to;
    default:
      return doc.from <= query.to && doc.to >= query.from;
  }
}

/** The bounds of the low-bound column a matching range may have (a cheap pre-filter for the exact check). */
export function lowBoundWindow(query: InclusiveRange, relation: RangeRelation, type: RangeType): InclusiveRange {
  switch (relation) {
    case 'within':
      return { from: query.from, to: query.to };
    case 'contains':
      return { from: openBound(type, true), to: query.from };
    default:
      return { from: openBound(type, true), to: query.to };
  }
}
