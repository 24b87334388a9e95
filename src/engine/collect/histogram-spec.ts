/**
 * `histogram` and `date_histogram` specs: bucket key rounding (numeric intervals, fixed date
 * intervals, calendar intervals; dates on the wall clock of the `time_zone`, DST included) and
 * the parsing of their options.
 */
import { EngineError } from '../errors.ts';
import type { FlatField } from '../mapping/mapping.ts';
import { addDateUnitsIn, floorDateIn, type DateUnit } from '../query/date-math.ts';
import { readTimeZone, type TimeZone } from '../query/time-zone.ts';
import { checkKeys, describe, dslError, expectObject, readBoolean, readInteger, readNumber, readString } from '../query/dsl-reader.ts';
import type { BucketOrder, ValueSource } from './aggregation-options.ts';
import { parseBucketOrder, parseDateOption, valueSource } from './aggregation-options.ts';
import type { AggregationSpec } from './aggregation-spec.ts';
import { DatePattern } from './date-pattern.ts';
import { isoDate } from './value-format.ts';

/** `histogram` and `date_histogram`. */
export interface HistogramSpec {
  type: 'histogram' | 'date_histogram';
  name: string;
  subs: AggregationSpec[];
  source: ValueSource;
  /** Bucket width (numbers, or milliseconds for fixed date intervals); 0 with a calendar unit. */
  interval: number;
  calendarUnit: DateUnit | null;
  offset: number;
  minDocCount: number;
  extendedBounds: { min: number | null; max: number | null } | null;
  keyed: boolean;
  order: BucketOrder[];
  /** `time_zone` of a date histogram: bucket boundaries fall on its wall clock (UTC for numbers). */
  timeZone: TimeZone;
  /** `format` of a date histogram: how `key_as_string` prints and `extended_bounds` strings parse; null for ISO 8601. */
  datePattern: DatePattern | null;
}

const CALENDAR_UNITS: Record<string, DateUnit> = {
  '1m': 'minute',
  minute: 'minute',
  '1h': 'hour',
  hour: 'hour',
  '1d': 'day',
  day: 'day',
  '1w': 'week',
  week: 'week',
  '1M': 'month',
  month: 'month',
  '1q': 'quarter',
  quarter: 'quarter',
  '1y': 'year',
  year: 'year',
};

const FIXED_UNIT_MILLIS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** Milliseconds of a fixed time value such as `30m`, `1h`, `-6h`; null when malformed. */
function parseTimeValue(text: string): number | null {
  const match = /^([+-]?)(\d+)(ms|s|m|h|d)$/.exec(text.trim());
  if (match === null) return null;
  const millis = Number(match[2]) * FIXED_UNIT_MILLIS[match[3]!]!;
  return match[1] === '-' ? -millis : millis;
}

/** The bucket key of a value. */
export function histogramKey(spec: HistogramSpec, value: number): number {
  const zone = spec.timeZone;
  if (spec.calendarUnit !== null) return floorDateIn(value - spec.offset, spec.calendarUnit, zone) + spec.offset;
  if (zone.isUtc) return Math.floor((value - spec.offset) / spec.interval) * spec.interval + spec.offset;
  // Fixed intervals in a zone are counted on its wall clock; a start the clocks skipped keeps the value's offset.
  const shifted = value - spec.offset;
  const local = zone.toLocal(shifted);
  const rounded = Math.floor(local / spec.interval) * spec.interval;
  const key = zone.toUtc(rounded);
  return (key <= shifted ? key : shifted - (local - rounded)) + spec.offset;
}

/** A date histogram key's `key_as_string`: its `format`, else ISO 8601, on the clock of its time zone. */
export function histogramKeyText(spec: HistogramSpec, key: number): string {
  return spec.datePattern === null ? isoDate(key, spec.timeZone) : spec.datePattern.format(key, spec.timeZone);
}

/** The key of the bucket following `key`. */
export function nextHistogramKey(spec: HistogramSpec, key: number): number {
  const zone = spec.timeZone;
  if (spec.calendarUnit !== null) return addDateUnitsIn(key - spec.offset, spec.calendarUnit, 1, zone) + spec.offset;
  if (zone.isUtc) return key + spec.interval;
  const next = zone.toUtc(zone.toLocal(key - spec.offset) + spec.interval) + spec.offset;
  return next > key ? next : key + spec.interval;
}

/** Parses the options of a histogram or date histogram. */
export function parseHistogramSpec(
  name: string,
  type: 'histogram' | 'date_histogram',
  options: Record<string, unknown>,
  fields: ReadonlyMap<string, FlatField> | null,
  subs: AggregationSpec[],
  now: number,
): HistogramSpec {
  const dates = type === 'date_histogram';
  checkKeys(
    options,
    dates
      ? ['field', 'calendar_interval', 'fixed_interval', 'interval', 'offset', 'min_doc_count', 'extended_bounds', 'keyed', 'order', 'format', 'time_zone', 'script']
      : ['field', 'interval', 'offset', 'min_doc_count', 'extended_bounds', 'keyed', 'order', 'format', 'script'],
    type,
  );
  const source = valueSource(options, fields, type);
  if (source.kind === 'keyword') {
    throw new EngineError('illegal_argument', `Field [${source.field}] of type [keyword] is not supported for aggregation [${type}]`);
  }
  if (dates && source.kind === 'numeric' && source.format !== 'date') {
    throw new EngineError('illegal_argument', `Field [${source.field}] of type [${source.format}] is not supported for aggregation [date_histogram]`);
  }
  let interval = 0;
  let calendarUnit: DateUnit | null = null;
  let offset = 0;
  const timeZone = readTimeZone(dates ? options.time_zone : undefined, type);
  const datePattern = dates && options.format !== undefined ? DatePattern.parse(readString(options.format, 'format', type), type) : null;
  if (dates) {
    ({ interval, calendarUnit } = parseDateInterval(options));
    if (options.offset !== undefined) {
      const parsed = typeof options.offset === 'number' ? options.offset : parseTimeValue(readString(options.offset, 'offset', type));
      if (parsed === null || !Number.isFinite(parsed)) throw dslError(`[${type}] invalid [offset] ${describe(options.offset)}`);
      offset = parsed;
    }
  } else {
    if (options.interval === undefined) throw dslError('[histogram] Required [interval]');
    interval = readNumber(options.interval, 'interval', type);
    if (interval <= 0) throw dslError(`[histogram] [interval] must be >0 for histogram aggregation [${name}]`);
    offset = options.offset === undefined ? 0 : readNumber(options.offset, 'offset', type);
  }
  const minDocCount = options.min_doc_count === undefined ? 0 : readInteger(options.min_doc_count, 'min_doc_count', type);
  let extendedBounds: HistogramSpec['extendedBounds'] = null;
  if (options.extended_bounds !== undefined) {
    const bounds = expectObject(options.extended_bounds, `${type}.extended_bounds`);
    checkKeys(bounds, ['min', 'max'], `${type}.extended_bounds`);
    const bound = (value: unknown, which: string): number | null =>
      value === undefined || value === null
        ? null
        : dates
          ? ((typeof value === 'string' ? datePattern?.parse(value, timeZone) : null) ?? parseDateOption(value, which, type, now, timeZone))
          : readNumber(value, which, type);
    extendedBounds = { min: bound(bounds.min, 'min'), max: bound(bounds.max, 'max') };
    if (extendedBounds.min !== null && extendedBounds.max !== null && extendedBounds.min > extendedBounds.max) {
      throw dslError(`[${type}] [extended_bounds.min][${extendedBounds.min}] cannot be greater than [extended_bounds.max][${extendedBounds.max}]`);
    }
  }
  const keyed = options.keyed === undefined ? false : readBoolean(options.keyed, 'keyed', type);
  const order = parseBucketOrder(options.order, subs, type, [{ by: '_key', direction: 'asc', aggregation: '', stat: null }]);
  return { type, name, subs, source, interval, calendarUnit, offset, minDocCount, extendedBounds, keyed, order, timeZone, datePattern };
}

function parseDateInterval(options: Record<string, unknown>): { interval: number; calendarUnit: DateUnit | null } {
  const given = ['calendar_interval', 'fixed_interval', 'interval'].filter((key) => options[key] !== undefined);
  if (given.length === 0) throw dslError('[date_histogram] Required one of fields [fixed_interval, calendar_interval], but none were specified.');
  if (given.length > 1) throw dslError(`[date_histogram] Cannot use [${given[0]}] with [${given[1]}]`);
  const key = given[0]!;
  const text = readString(options[key], key, 'date_histogram');
  if (key !== 'fixed_interval' && Object.hasOwn(CALENDAR_UNITS, text)) return { interval: 0, calendarUnit: CALENDAR_UNITS[text]! };
  if (key === 'calendar_interval') {
    throw dslError(`[date_histogram] The supplied interval [${text}] could not be parsed as a calendar interval.`);
  }
  const millis = parseTimeValue(text);
  if (millis === null || millis <= 0) {
    throw dslError(`[date_histogram] failed to parse setting [date_histogram.${key}] with value [${text}] as a time value`);
  }
  return { interval: millis, calendarUnit: null };
}
