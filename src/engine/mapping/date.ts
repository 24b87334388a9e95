/**
 * Date values as Trove accepts them: the Elasticsearch default date format
 * `strict_date_optional_time||epoch_millis`.
 *
 * - ISO 8601 strings: `yyyy`, `yyyy-MM`, `yyyy-MM-dd`, then optionally `THH`, `THH:mm`,
 *   `THH:mm:ss`, `THH:mm:ss.S` (1 to 9 fraction digits, `.` or `,`) and a zone (`Z`, `±HH`,
 *   `±HHmm`, `±HH:mm`). No zone means UTC. Fractions finer than a millisecond are truncated.
 * - Epoch millis: a number, or a string of digits (optionally signed, optionally with a fraction).
 *   Like Elasticsearch, the ISO form is tried first, so a four-digit string such as `"2020"` is a
 *   year, not 2020 milliseconds.
 *
 * A field's `format` (`||`-separated, tried in order) may name `strict_date_optional_time`,
 * `date_optional_time`, `strict_date_optional_time_nanos`, `strict_date_time`, `date_time`,
 * `strict_date_time_no_millis` (the ISO form above), `strict_date` / `date` (`yyyy-MM-dd`),
 * `epoch_millis`, `epoch_second`, a named pattern (`basic_date`, ...) or a Java pattern (see
 * src/engine/collect/date-pattern.ts).
 */

import { DatePattern } from '../collect/date-pattern.ts';
import { EngineError } from '../errors.ts';

/** Largest distance from the epoch a JavaScript Date can represent, in milliseconds. */
const MAX_EPOCH_MILLIS = 8.64e15;

const MILLIS_PER_DAY = 86_400_000;

const ISO_DATE =
  /^(\d{4})(?:-(\d{2})(?:-(\d{2})(?:T(\d{2})(?::(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?)?(Z|[+-]\d{2}(?::?\d{2})?)?)?)?)?$/;

const EPOCH_MILLIS_STRING = /^[+-]?\d+(?:\.\d+)?$/;

/** Converts a date value (ISO 8601 string, epoch millis number or numeric string) to epoch millis; null if not a date. */
export function parseDate(value: unknown): number | null {
  if (typeof value === 'number') return epochMillis(value);
  if (typeof value !== 'string') return null;
  const iso = parseIsoDate(value);
  if (iso !== null) return iso;
  if (EPOCH_MILLIS_STRING.test(value)) return epochMillis(Number(value));
  return null;
}

/**
 * True when a string is an ISO 8601 date with at least year, month and day: what dynamic
 * mapping detects as a `date` (bare years and year-months stay text, they are usually not dates).
 */
export function looksLikeIsoDate(value: string): boolean {
  return value.length >= 10 && value.charCodeAt(4) === 45 /* - */ && value.charCodeAt(7) === 45 && parseIsoDate(value) !== null;
}

function epochMillis(value: number): number | null {
  if (!Number.isFinite(value)) return null;
  const millis = Math.floor(value);
  return Math.abs(millis) <= MAX_EPOCH_MILLIS ? millis : null;
}

function parseIsoDate(value: string): number | null {
  const match = ISO_DATE.exec(value);
  if (match === null) return null;
  const year = Number(match[1]);
  const month = match[2] === undefined ? 1 : Number(match[2]);
  const day = match[3] === undefined ? 1 : Number(match[3]);
  const hour = match[4] === undefined ? 0 : Number(match[4]);
  const minute = match[5] === undefined ? 0 : Number(match[5]);
  const second = match[6] === undefined ? 0 : Number(match[6]);
  const millis = match[7] === undefined ? 0 : Number(match[7].slice(0, 3).padEnd(3, '0'));
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return null;
  if (hour > 23 || minute > 59 || second > 59) return null;
  const offsetMinutes = match[8] === undefined ? 0 : parseZoneOffset(match[8]);
  if (offsetMinutes === null) return null;
  const days = daysFromCivil(year, month, day);
  return (
    days * MILLIS_PER_DAY + hour * 3_600_000 + minute * 60_000 + second * 1000 + millis - offsetMinutes * 60_000
  );
}

/** Zone designator to minutes east of UTC; null when out of range (beyond ±18:00 or minutes > 59). */
function parseZoneOffset(zone: string): number | null {
  if (zone === 'Z') return 0;
  const sign = zone.charCodeAt(0) === 45 ? -1 : 1;
  const digits = zone.slice(1).replace(':', '');
  const hours = Number(digits.slice(0, 2));
  const minutes = digits.length > 2 ? Number(digits.slice(2)) : 0;
  if (minutes > 59 || hours * 60 + minutes > 18 * 60) return null;
  return sign * (hours * 60 + minutes);
}

function isLeapYear(year: number): boolean {
  return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
}

function daysInMonth(year: number, month: number): number {
  if (month === 2) return isLeapYear(year) ? 29 : 28;
  return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;
}

/** Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's days_from_civil). */
function daysFromCivil(year: number, month: number, day: number): number {
  const shiftedYear = month <= 2 ? year - 1 : year;
  const era = Math.floor(shiftedYear / 400);
  const yearOfEra = shiftedYear - era * 400;
  const dayOfYear = Math.floor((153 * (month > 2 ? month - 3 : month + 9) + 2) / 5) + day - 1;
  const dayOfEra = yearOfEra * 365 + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100) + dayOfYear;
  return era * 146_097 + dayOfEra - 719_468;
}

const ISO_FORMATS = new Set([
  'strict_date_optional_time',
  'date_optional_time',
  'strict_date_optional_time_nanos',
  'strict_date_time',
  'date_time',
  'strict_date_time_no_millis',
]);

const DAY_FORMATS = new Set(['strict_date', 'date']);
const DAY_ONLY = /^\d{4}-\d{2}-\d{2}$/;

/** One parsed entry of a `format` list. */
type DateFormat = { kind: 'iso' | 'epoch_millis' | 'epoch_second' | 'day' } | { kind: 'pattern'; pattern: DatePattern };

const formatCache = new Map<string, DateFormat>();

/** Parses one format name or pattern; an unknown one is a mapper_parsing error naming the field. */
export function parseDateFormat(text: string, field: string): DateFormat {
  const cached = formatCache.get(text);
  if (cached !== undefined) return cached;
  let format: DateFormat;
  if (ISO_FORMATS.has(text)) format = { kind: 'iso' };
  else if (DAY_FORMATS.has(text)) format = { kind: 'day' };
  else if (text === 'epoch_millis' || text === 'epoch_second') format = { kind: text };
  else {
    try {
      format = { kind: 'pattern', pattern: DatePattern.parse(text, 'format') };
    } catch (error) {
      throw new EngineError('mapper_parsing', `Invalid format: [${text}] for field [${field}]: ${(error as Error).message}`);
    }
  }
  if (formatCache.size < 1000) formatCache.set(text, format);
  return format;
}

/** Epoch millis of a date value under a field's formats (tried in order); null when none fits. */
export function parseDateWithFormats(value: unknown, formats: readonly string[] | undefined, field: string): number | null {
  if (formats === undefined) return parseDate(value);
  for (const text of formats) {
    const millis = parseOneFormat(value, parseDateFormat(text, field));
    if (millis !== null) return millis;
  }
  return null;
}

function parseOneFormat(value: unknown, format: DateFormat): number | null {
  switch (format.kind) {
    case 'iso':
      return typeof value === 'string' ? parseIsoDate(value) : null;
    case 'day':
      return typeof value === 'string' && DAY_ONLY.test(value) ? parseIsoDate(value) : null;
    case 'epoch_millis':
    case 'epoch_second': {
      const number = typeof value === 'number' ? value : typeof value === 'string' && EPOCH_MILLIS_STRING.test(value) ? Number(value) : NaN;
      return Number.isNaN(number) ? null : epochMillis(format.kind === 'epoch_second' ? number * 1000 : number);
    }
    default: {
      if (typeof value !== 'string') return null;
      const millis = format.pattern.parse(value);
      return millis === null ? null : epochMillis(millis);
    }
  }
}
