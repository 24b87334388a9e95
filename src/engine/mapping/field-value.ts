/**
 * Coercion of one scalar document value to what a mapped field indexes, following Elasticsearch's
 * default `coerce: true`:
 * - numbers accept JSON numbers and numeric strings (`"12"`, `"1.5e3"`); `long` and `integer`
 *   truncate fractions toward zero; values outside the type's range are rejected; an empty string
 *   counts as a missing value. Longs are held as float64, exact within ±(2^53 - 1): new values
 *   beyond are refused (`strictNumbers`), since they would be rounded silently; documents written
 *   before this rule still load (WAL replay parses without it).
 * - `boolean` accepts `true`, `false`, `"true"`, `"false"` (indexed as 1 and 0); `""` is missing.
 * - `date` accepts what `parseDate` accepts (indexed as epoch millis).
 * - `text` and `keyword` accept strings, numbers and booleans (converted with `String`).
 */
import { EngineError } from '../errors.ts';
import { parseDate } from './date.ts';
import { previewJson } from './json-value.ts';
import type { FlatField } from './mapping.ts';

/** Largest finite float32, the range of a `float` field. */
export const FLOAT_MAX = 3.4028234663852886e38;

/** Smallest and largest values of an `integer` field. */
export const INTEGER_MIN = -2_147_483_648;
/** Largest value of an `integer` field. */
export const INTEGER_MAX = 2_147_483_647;

/** 2^63, the float64 nearest to 2^63-1: without `strictNumbers` (replay), longs must lie within ±2^63. */
const LONG_BOUND = 9_223_372_036_854_775_808;

/** A decimal number; written so that no digit can be matched two ways (`\d+\.?\d*` backtracks quadratically on `111…1x`). */
const NUMERIC_STRING = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$/;

/** The mapper_parsing error for a value that does not fit its field. */
export function fieldValueError(field: FlatField, value: unknown, reason: string): EngineError {
  return new EngineError(
    'mapper_parsing',
    `failed to parse field [${field.path}] of type [${field.type}]: value [${previewJson(value)}] ${reason}`,
  );
}

/**
 * Column value (number; dates as epoch millis, booleans as 0/1) of a scalar for a numeric,
 * date or boolean field; null when the value counts as missing. Throws mapper_parsing otherwise.
 * `strictNumbers` (the default: callers admit new values) refuses a `long` that is not a safe
 * integer; only the replay of documents written before that rule passes false.
 */
export function coerceColumnValue(field: FlatField, value: unknown, strictNumbers = true): number | null {
  switch (field.type) {
    case 'boolean':
      return coerceBoolean(field, value);
    case 'date': {
      if (typeof value !== 'number' && typeof value !== 'string') {
        throw fieldValueError(field, value, 'is not a date (expected ISO 8601 or epoch millis)');
      }
      const millis = parseDate(value);
      if (millis === null) throw fieldValueError(field, value, 'is not a date (expected ISO 8601 or epoch millis)');
      return millis;
    }
    case 'long':
    case 'integer':
    case 'double':
    case 'float':
      return coerceNumber(field, value, strictNumbers);
    default:
      throw fieldValueError(field, value, 'cannot go into a column');
  }
}

/** String indexed for a scalar in a `text` or `keyword` field; throws mapper_parsing for other JSON values. */
export function coerceStringValue(field: FlatField, value: unknown): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  throw fieldValueError(field, value, 'is not a string, number or boolean');
}

function coerceBoolean(field: FlatField, value: unknown): number | null {
  if (value === true || value === 'true') return 1;
  if (value === false || value === 'false') return 0;
  if (value === '') return null;
  throw fieldValueError(field, value, 'is not a boolean (only true or false are allowed)');
}

function coerceNumber(field: FlatField, value: unknown, strictNumbers: boolean): number | null {
  let number: number;
  if (typeof value === 'number') {
    number = value;
  } else if (typeof value === 'string') {
    if (value === '') return null;
    if (!NUMERIC_STRING.test(value)) throw fieldValueError(field, value, 'is not a number');
    number = Number(value);
  } else {
    throw fieldValueError(field, value, 'is not a number');
  }
  if (!Number.isFinite(number)) throw fieldValueError(field, value, 'is not a finite number');
  switch (field.type) {
    case 'long':
      number = Math.trunc(number);
      if (number > LONG_BOUND || number < -LONG_BOUND) throw fieldValueError(field, value, 'is out of range for a long');
      if (strictNumbers && !Number.isSafeInteger(number)) {
        throw fieldValueError(
          field,
          value,
          `cannot be held exactly: a long must lie within ±${Number.MAX_SAFE_INTEGER} (2^53 - 1), beyond which it would be rounded`,
        );
      }
      return number;
    case 'integer':
      number = Math.trunc(number);
      if (number > INTEGER_MAX || number < INTEGER_MIN) {
        throw fieldValueError(field, value, 'is out of range for an integer');
      }
      return number;
    case 'float':
      if (Math.abs(number) > FLOAT_MAX) throw fieldValueError(field, value, 'is out of range for a float');
      return number;
    default:
      return number;
  }
}
