/**
 * Exact queries on `long` and `unsigned_long` fields beyond ±(2^53 − 1) (see mapping/exact-long.ts). The float64
 * column is exact for safe values, and every unsafe value's float lies beyond every safe one, so
 * a term or range whose values are safe stays on the column (today's path). A term with an unsafe
 * value reads the exact companion; a range with an unsafe bound is split into its safe part on
 * the column and its unsafe part on the companion. Query values are exact when written as strings
 * (`"9223372036854775807"`); a JSON number beyond 2^53 was rounded by the request's JSON parser
 * and is taken as the integer it became.
 *
 * Sorting (modes min and max) and `terms` keys read exact values (collect/exact-sort-values.ts);
 * a sort that sums or averages a long field refuses (400) on a shard holding unsafe values of it,
 * rather than order by rounded values.
 */
import { EngineError } from '../errors.ts';
import { encodeExact, EXACT_INTEGER_TYPES, integerOfText, isExactIntegerType, isUnsafeLong, type ExactIntegerType } from '../mapping/exact-long.ts';
import type { FlatField } from '../mapping/mapping.ts';
import type { LeafReader } from '../segment/leaf-reader.ts';
import { MatchNoneQuery } from './basic-queries.ts';
import { BooleanQuery } from './boolean-query.ts';
import { KeywordRangeQuery, NumericRangeQuery } from './column-queries.ts';
import { dslError } from './dsl-reader.ts';
import type { Query } from './scorer.ts';

const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);

/** A query value as an exact integer (integer strings and integral numbers), else null. */
export function exactQueryInteger(value: unknown): bigint | null {
  if (typeof value === 'string') return integerOfText(value.trim());
  if (typeof value === 'number' && Number.isInteger(value)) return BigInt(value);
  return null;
}

/** The exact type of a field with an exact companion; null for other fields. */
function exactTypeOf(field: FlatField): ExactIntegerType | null {
  return field.exactPath !== undefined && isExactIntegerType(field.type) ? field.type : null;
}

/** The exact query for one unsafe value of a long field; null when the field or value takes the column path. */
export function exactLongTerm(field: FlatField, value: unknown, boost: number, owner: string): Query | null {
  const type = exactTypeOf(field);
  if (type === null) return null;
  const exact = exactQueryInteger(value);
  if (exact === null || !isUnsafeLong(exact)) return null;
  const range = EXACT_INTEGER_TYPES[type];
  if (exact < range.min || exact > range.max) throw dslError(`[${owner}] Value [${exact}] is out of range for ${range.named} (field [${field.path}])`);
  const term = encodeExact(type, exact);
  return new KeywordRangeQuery(field.exactPath!, { lower: term, upper: term, includeLower: true, includeUpper: true }, boost);
}

/** Bounds of a range as given (undefined: open) with their inclusiveness. */
export interface LongRangeBounds {
  lower: unknown;
  upper: unknown;
  includeLower: boolean;
  includeUpper: boolean;
}

/** The exact range query of a long field when a bound is an unsafe integer; null when the column path is exact. */
export function exactLongRange(field: FlatField, bounds: LongRangeBounds, boost: number): Query | null {
  const type = exactTypeOf(field);
  if (type === null) return null;
  const { min, max } = EXACT_INTEGER_TYPES[type];
  const lower = bounds.lower === undefined ? null : exactQueryInteger(bounds.lower);
  const upper = bounds.upper === undefined ? null : exactQueryInteger(bounds.upper);
  if (!(lower !== null && isUnsafeLong(lower)) && !(upper !== null && isUnsafeLong(upper))) return null;
  if ((bounds.lower !== undefined && lower === null) || (bounds.upper !== undefined && upper === null)) return null;
  let low = lower === null ? min : bounds.includeLower ? lower : lower + 1n;
  let high = upper === null ? max : bounds.includeUpper ? upper : upper - 1n;
  if (low < min) low = min;
  if (high > max) high = max;
  if (low > high) return new MatchNoneQuery();
  const safeLow = low > -MAX_SAFE ? low : -MAX_SAFE;
  const safeHigh = high < MAX_SAFE ? high : MAX_SAFE;
  const companion = field.exactPath!;
  const column = safeLow <= safeHigh ? (weight: number): Query => new NumericRangeQuery(field.path, Number(safeLow), Number(safeHigh), weight) : null;
  const exact =
    low < -MAX_SAFE || high > MAX_SAFE
      ? (weight: number): Query => new KeywordRangeQuery(companion, { lower: encodeExact(type, low), upper: encodeExact(type, high), includeLower: true, includeUpper: true }, weight)
      : null;
  if (column !== null && exact !== null) return new BooleanQuery({ must: [], should: [column(1), exact(1)], filter: [], mustNot: [] }, 1, boost);
  return (column ?? exact)!(boost);
}

/** Whether any leaf holds a value of the long field beyond ±(2^53 − 1). */
function holdsUnsafeValues(field: FlatField, leaves: readonly LeafReader[]): boolean {
  const companion = field.exactPath;
  return companion !== undefined && leaves.some((leaf) => (leaf.keywordColumn(companion)?.ordinalCount ?? 0) > 0);
}

/**
 * Refuses (400) a use (an averaging sort) of the long fields of `paths` when this shard holds
 * values of them beyond ±(2^53 − 1), which the float64 column would round.
 */
export function assertColumnExact(paths: Iterable<string>, use: string, fields: ReadonlyMap<string, FlatField>, leaves: readonly LeafReader[]): void {
  for (const path of paths) {
    const field = fields.get(path);
    if (field !== undefined && holdsUnsafeValues(field, leaves)) {
      throw new EngineError(
        'illegal_argument',
        `${use} on long field [${path}] is not supported while it holds values beyond ±${Number.MAX_SAFE_INTEGER} (2^53 - 1); term and range queries on it are exact`,
      );
    }
  }
}
