/**
 * Dates in queries and aggregations: ISO 8601 strings (date, date-time, optional fraction and
 * offset), epoch millis, and Elasticsearch date math — an anchor (`now` or `<date>||`) followed by
 * `+N<unit>`, `-N<unit>` and `/<unit>` (round) with units y M w d h H m s. Rounding and partial
 * dates round down, or up to the unit's last millisecond when `roundUp` is set (used for gt and
 * lte bounds, like Elasticsearch). Dates without an offset, calendar arithmetic and rounding are
 * in UTC unless a time zone is given (time-zone.ts).
 */
import { TimeZone } from './time-zone.ts';

/** Calendar units of date math and date histograms. */
export type DateUnit = 'year' | 'quarter' | 'month' | 'week' | 'day' | 'hour' | 'minute' | 'second';

const MATH_UNITS: Record<string, DateUnit> = {
  y: 'year',
  M: 'month',
  w: 'week',
  d: 'day',
  h: 'hour',
  H: 'hour',
  m: 'minute',
  s: 'second',
};

const FIXED_UNIT_MILLIS: Partial<Record<DateUnit, number>> = {
  week: 604_800_000,
  day: 86_400_000,
  hour: 3_600_000,
  minute: 60_000,
  second: 1000,
};

/** Epoch millis of a UTC calendar day; unlike `Date.UTC`, years 0 to 99 are not taken as 1900 to 1999. */
function utcDay(year: number, month: number, day: number): number {
  const date = new Date(0);
  date.setUTCFullYear(year, month, day);
  return date.getTime();
}

/** Start of the unit containing `millis` (weeks start on Monday). */
export function floorDate(millis: number, unit: DateUnit): number {
  const date = new Date(millis);
  switch (unit) {
    case 'year':
      return utcDay(date.getUTCFullYear(), 0, 1);
    case 'quarter':
      return utcDay(date.getUTCFullYear(), Math.floor(date.getUTCMonth() / 3) * 3, 1);
    case 'month':
      return utcDay(date.getUTCFullYear(), date.getUTCMonth(), 1);
    case 'week': {
      const day = utcDay(date.getUTCFullYear(), date.getUTCMonth(), date.getUTCDate());
      const sinceMonday = (date.getUTCDay() + 6) % 7;
      return day - sinceMonday * 86_400_000;
    }
    default: {
      const size = FIXED_UNIT_MILLIS[unit]!;
      return Math.floor(millis / size) * size;
    }
  }
}

/** `millis` moved by `amount` units (calendar-aware for months, quarters and years). */
export function addDateUnits(millis: number, unit: DateUnit, amount: number): number {
  if (unit === 'year' || unit === 'quarter' || unit === 'month') {
    const months = unit === 'year' ? 12 * amount : unit === 'quarter' ? 3 * amount : amount;
    const date = new Date(millis);
    const month = date.getUTCMonth() + months;
    const targetYear = date.getUTCFullYear() + Math.floor(month / 12);
    const targetMonth = ((month % 12) + 12) % 12;
    const daysInTarget = new Date(Date.UTC(targetYear, targetMonth + 1, 0)).getUTCDate();
    const dayOfMonth = Math.min(date.getUTCDate(), daysInTarget);
    return (
      Date.UTC(targetYear, targetMonth, dayOfMonth) + (millis - Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), date.getUTCDate()))
    );
  }
  return millis + FIXED_UNIT_MILLIS[unit]! * amount;
}

/** Start of the unit containing `millis` on the wall clock of `zone` (sub-day units keep the instant's offset). */
export function floorDateIn(millis: number, unit: DateUnit, zone: TimeZone): number {
  if (zone.isUtc) return floorDate(millis, unit);
  const local = zone.toLocal(millis);
  const floored = floorDate(local, unit);
  if (unit === 'hour' || unit === 'minute' || unit === 'second') return millis - (local - floored);
  return zone.toUtc(floored);
}

/** `millis` moved by `amount` units; days and longer on the wall clock of `zone` (a DST day is 23 or 25 hours). */
export function addDateUnitsIn(millis: number, unit: DateUnit, amount: number, zone: TimeZone): number {
  if (zone.isUtc || unit === 'hour' || unit === 'minute' || unit === 'second') return addDateUnits(millis, unit, amount);
  return zone.toUtc(addDateUnits(zone.toLocal(millis), unit, amount));
}

const ISO_DATE =
  /^(\d{4})(?:-(\d{2})(?:-(\d{2})(?:[T ](\d{2})(?::(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?)?)?)?)?(Z|[+-]\d{2}(?::?\d{2})?)?$/;

/**
 * Parses an ISO 8601 date; partial dates mean their first (or, with roundUp, last) millisecond.
 * A date without an offset is read on the wall clock of `zone`.
 */
export function parseIsoDate(text: string, roundUp = false, zone: TimeZone = TimeZone.UTC): number | null {
  const match = ISO_DATE.exec(text);
  if (match === null) return null;
  const [, year, month, day, hour, minute, second, fraction, offset] = match;
  const numbers = [year, month ?? '1', day ?? '1', hour ?? '0', minute ?? '0', second ?? '0'].map(Number);
  const [y, mo, d, h, mi, s] = numbers as [number, number, number, number, number, number];
  if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || s > 59) return null;
  const date = new Date(Date.UTC(y, mo - 1, d, h, mi, s));
  // Date.UTC maps years 0-99 to 1900-1999.
  if (y < 100) date.setUTCFullYear(y);
  if (date.getUTCDate() !== d) return null;
  let millis = date.getTime();
  if (fraction !== undefined) millis += Math.floor(Number(`0.${fraction}`) * 1000);
  if (offset !== undefined && offset !== 'Z') {
    const sign = offset[0] === '-' ? -1 : 1;
    const digits = offset.slice(1).replace(':', '');
    const minutes = Number(digits.slice(0, 2)) * 60 + (digits.length > 2 ? Number(digits.slice(2)) : 0);
    millis -= sign * minutes * 60_000;
  }
  if (roundUp && fraction === undefined) {
    const unit: DateUnit | null =
      month === undefined ? 'year' : day === undefined ? 'month' : hour === undefined ? 'day' : minute === undefined ? 'hour' : second === undefined ? 'minute' : 'second';
    millis = addDateUnits(millis, unit, 1) - 1;
  }
  if (offset === undefined && !zone.isUtc) return zone.toUtc(millis);
  return millis;
}

/**
 * Resolves a date value (epoch millis number, ISO string, epoch millis string, or date math)
 * to epoch millis; null when it cannot be parsed. `zone` reads dates without an offset and
 * rounds date math (`now/d` is midnight in that zone).
 */
export function parseDateValue(value: unknown, roundUp: boolean, now: number, zone: TimeZone = TimeZone.UTC): number | null {
  if (typeof value === 'number') return Number.isFinite(value) ? value : null;
  if (typeof value !== 'string') return null;
  const text = value.trim();
  let anchor: number | null;
  let math: string;
  if (text.startsWith('now')) {
    anchor = now;
    math = text.slice(3);
  } else {
    const separator = text.indexOf('||');
    if (separator < 0) {
      const iso = parseIsoDate(text, roundUp, zone);
      if (iso !== null) return iso;
      return /^-?\d+$/.test(text) ? Number(text) : null;
    }
    anchor = parseIsoDate(text.slice(0, separator), false, zone) ?? (/^-?\d+$/.test(text.slice(0, separator)) ? Number(text.slice(0, separator)) : null);
    math = text.slice(separator + 2);
  }
  if (anchor === null) return null;
  return applyDateMath(anchor, math, roundUp, zone);
}

function applyDateMath(anchor: number, math: string, roundUp: boolean, zone: TimeZone): number | null {
  let millis = anchor;
  let index = 0;
  while (index < math.length) {
    const operator = math[index]!;
    index++;
    if (operator === '/') {
      const unit = MATH_UNITS[math[index] ?? ''];
      if (unit === undefined) return null;
      index++;
      millis = floorDateIn(millis, unit, zone);
      if (roundUp) millis = addDateUnitsIn(millis, unit, 1, zone) - 1;
      continue;
    }
    if (operator !== '+' && operator !== '-') return null;
    let digits = '';
    while (index < math.length && math[index]! >= '0' && math[index]! <= '9') digits += math[index++];
    const unit = MATH_UNITS[math[index] ?? ''];
    if (unit === undefined) return null;
    index++;
    const amount = digits === '' ? 1 : Number(digits);
    millis = addDateUnitsIn(millis, unit, operator === '+' ? amount : -amount, zone);
  }
  return millis;
}
