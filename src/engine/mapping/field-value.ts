/**
 * Coercion of one scalar document value to what a mapped field indexes, following Elasticsearch's
 * default `coerce: true`:
 * - numbers accept JSON numbers and numeric strings (`"12"`, `"1.5e3"`); `long` and `integer`
 *   truncate fractions toward zero; values outside the type's range are rejected; an empty string
 *   counts as a missing value. Longs are held as float64, exact within ±(2^53 - 1); beyond, the
 *   document walk keeps their exact digits (exact-long.ts) when the document text or a string
 *   carries them, and this function only sees the values it could not: those are refused
 *   (`strictNumbers`) rather than rounded silently; documents written before this rule still load
 *   (WAL replay parses without it).
 * - `boolean` accepts `true`, `false`, `"true"`, `"false"` (indexed as 1 and 0); `""` is missing.
 * - `byte`, `short` truncate like `integer` within their ranges; `unsigned_long` takes 0 to
 *   2^64 - 1 (beyond 2^53 - 1 exactly like `long`, see below);
 *   `half_float` is rounded to half precision (|value| ≤ 65504); `scaled_float` is held as
 *   round(value × scaling_factor) / scaling_factor.
 * - `date` and `date_nanos` accept what the field's `format` list accepts (default: what
 *   `parseDate` accepts), indexed as epoch millis; `date_nanos` must lie within 1970 to 2262.
 * - `text`, `keyword` and `wildcard` accept strings, numbers and booleans (converted with `String`);
 *   `ip` accepts an IPv4 or IPv6 address string (indexed as its 16-byte term, see ip.ts);
 *   `binary` accepts a base64 string (not indexed; with `doc_values: true` kept as a keyword column).
 * - `geo_point` values are read by geo-point.ts, not here.
 */
import { EngineError } from '../errors.ts';
import { parseDateWithFormats } from './date.ts';
import { encodeIp } from './ip.ts';
import { previewJson } from './json-value.ts';
import type { FlatField } from './mapping.ts';

/** Largest finite float32, the range of a `float` field. */
export const FLOAT_MAX = 3.4028234663852886e38;

/** Smallest and largest values of an `integer` field. */
export const INTEGER_MIN = -2_147_483_648;
/** Largest value of an `integer` field. */
export const INTEGER_MAX = 2_147_483_647;

/** Ranges of the small integer types. */
const SMALL_INTEGER_RANGES: Record<string, readonly [number, number]> = {
  integer: [INTEGER_MIN, INTEGER_MAX],
  short: [-32_768, 32_767],
  byte: [-128, 127],
};

/** Largest finite half-precision float, the range of a `half_float` field. */
export const HALF_FLOAT_MAX = 65_504;

/** Latest epoch millis a `date_nanos` field holds (2262-04-11T23:47:16.854Z, 2^63 - 1 nanoseconds). */
const DATE_NANOS_MAX_MILLIS = 9_223_372_036_854;

/** 2^64, the float64 nearest to 2^64 - 1, the bound of an `unsigned_long` without `strictNumbers`. */
const UNSIGNED_LONG_BOUND = 18_446_744_073_709_551_616;

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
    case 'date':
    case 'date_nanos': {
      const expected = field.dateFormats === undefined ? 'ISO 8601 or epoch millis' : `format [${field.dateFormats.join('||')}]`;
      if (typeof value !== 'number' && typeof value !== 'string') throw fieldValueError(field, value, `is not a date (expected ${expected})`);
      const millis = parseDateWithFormats(value, field.dateFormats, field.path);
      if (millis === null) throw fieldValueError(field, value, `is not a date (expected ${expected})`);
      if (field.type === 'date_nanos' && (millis < 0 || millis > DATE_NANOS_MAX_MILLIS)) {
        throw fieldValueError(field, value, 'is out of range for date_nanos (1970-01-01 to 2262-04-11)');
      }
      return millis;
    }
    case 'long':
    case 'integer':
    case 'short':
    case 'byte':
    case 'unsigned_long':
    case 'double':
    case 'float':
    case 'half_float':
    case 'scaled_float':
      return coerceNumber(field, value, strictNumbers);
    default:
      throw fieldValueError(field, value, 'cannot go into a column');
  }
}

/**
 * String indexed for a scalar in a text or keyword-like field (an `ip` field indexes the address
 * term); throws mapper_parsing for other JSON values.
 */
export function coerceStringValue(field: FlatField, value: unknown): string {
  if (field.type === 'ip') {
    const term = typeof value === 'string' ? encodeIp(value) : null;
    if (term === null) throw fieldValueError(field, value, 'is not an IP string literal');
    return term;
  }
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  throw fieldValueError(field, value, 'is not a string, number or boolean');
}

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** Checks a `binary` value: a base64 string (whitespace such as MIME line breaks allowed). */
export function checkBinaryValue(field: FlatField, value: unknown): void {
  if (typeof value !== 'string' || !BASE64.test(value.replace(/\s+/g, ''))) {
    throw fieldValueError(field, value, 'is not a base64 string');
  }
}

/** `value` rounded to the nearest half-precision float (ties to even). */
export function roundToHalfFloat(value: number): number {
  if (value === 0 || !Number.isFinite(value)) return value;
  const exponent = Math.max(Math.floor(Math.log2(Math.abs(value))), -14);
  const quantum = 2 ** (exponent - 10);
  const scaled = value / quantum;
  let rounded = Math.floor(scaled);
  const rest = scaled - rounded;
  if (rest > 0.5 || (rest === 0.5 && rounded % 2 !== 0)) rounded++;
  return rounded * quantum;
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
          `cannot be held exactly: beyond ±${Number.MAX_SAFE_INTEGER} (2^53 - 1) a long keeps its digits only when a document's JSON or a string carries them (not through update operators or an inplace field)`,
        );
      }
      return number;
    case 'unsigned_long':
      number = Math.trunc(number);
      if (number < 0 || number > UNSIGNED_LONG_BOUND) throw fieldValueError(field, value, 'is out of range for an unsigned_long');
      if (strictNumbers && !Number.isSafeInteger(number)) {
        throw fieldValueError(
          field,
          value,
          `cannot be held exactly: beyond ${Number.MAX_SAFE_INTEGER} (2^53 - 1) an unsigned_long keeps its digits only when a document's JSON or a string carries them (not through update operators)`,
        );
      }
      return number === 0 ? 0 : number;
    case 'integer':
    case 'short':
    case 'byte': {
      number = Math.trunc(number);
      const [min, max] = SMALL_INTEGER_RANGES[field.type]!;
      if (number > max || number < min) {
        throw fieldValueError(field, value, `is out of range for ${field.type === 'integer' ? 'an integer' : `a ${field.type}`}`);
      }
      return number === 0 ? 0 : number;
    }
    case 'float':
      if (Math.abs(number) > FLOAT_MAX) throw fieldValueError(field, value, 'is out of range for a float');
      return number;
    case 'half_float':
      if (Math.abs(number) > HALF_FLOAT_MAX) throw fieldValueError(field, value, 'is out of range for a half_float');
      return roundToHalfFloat(number);
    case 'scaled_float': {
      const factor = field.scalingFactor ?? 1;
      const scaled = Math.round(number * factor);
      if (Math.abs(scaled) > LONG_BOUND) throw fieldValueError(field, value, 'is out of range for a scaled_float');
      return scaled / factor;
    }
    default:
      return number;
  }
}
