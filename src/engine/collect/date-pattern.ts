/**
 * The `format` of a date aggregation (`date_range`) or field: the Java date patterns Elasticsearch
 * users write most (`yyyy`, `uuuu`, `yy`, `MM`, `dd`, `HH`, `mm`, `ss`, `S` to `SSSSSSSSS` (fractions
 * of a second, read to the millisecond), `X`, `XX`, `XXX` (a zone offset or `Z`), quoted literals
 * and separators, in UTC unless an offset is given), the named formats built from them
 * (`basic_date`, `date_hour_minute_second`, ...), `epoch_millis`, `epoch_second` and the ISO 8601 ones. A pattern
 * both prints (`key`, `from_as_string`, `to_as_string`) and parses (`from` / `to` strings that are
 * not date math), in UTC or the aggregation's `time_zone`.
 */
import { dslError } from '../query/dsl-reader.ts';
import { TimeZone } from '../query/time-zone.ts';
import { isoDate } from './value-format.ts';

type Token =
  | { field: 'year' | 'year2' | 'month' | 'day' | 'hour' | 'minute' | 'second' }
  | { field: 'fraction' | 'offset'; width: number }
  | { literal: string };

const FIELDS: Record<string, 'year' | 'year2' | 'month' | 'day' | 'hour' | 'minute' | 'second'> = {
  yyyy: 'year',
  uuuu: 'year',
  yy: 'year2',
  MM: 'month',
  dd: 'day',
  HH: 'hour',
  mm: 'minute',
  ss: 'second',
};

/** Elasticsearch's named formats that are plain patterns (`strict_` and lenient names alike: patterns here are strict). */
const NAMED_PATTERNS: Readonly<Record<string, string>> = {
  basic_date: 'yyyyMMdd',
  date: 'yyyy-MM-dd',
  basic_date_time: "yyyyMMdd'T'HHmmss.SSSX",
  basic_date_time_no_millis: "yyyyMMdd'T'HHmmssX",
  basic_time: 'HHmmss.SSSX',
  basic_time_no_millis: 'HHmmssX',
  date_hour: "yyyy-MM-dd'T'HH",
  date_hour_minute: "yyyy-MM-dd'T'HH:mm",
  date_hour_minute_second: "yyyy-MM-dd'T'HH:mm:ss",
  date_hour_minute_second_fraction: "yyyy-MM-dd'T'HH:mm:ss.SSS",
  date_hour_minute_second_millis: "yyyy-MM-dd'T'HH:mm:ss.SSS",
  hour: 'HH',
  hour_minute: 'HH:mm',
  hour_minute_second: 'HH:mm:ss',
  hour_minute_second_fraction: 'HH:mm:ss.SSS',
  hour_minute_second_millis: 'HH:mm:ss.SSS',
  year: 'yyyy',
  year_month: 'yyyy-MM',
  year_month_day: 'yyyy-MM-dd',
};

/** The pattern a named format stands for (`strict_date_hour` is `date_hour`), or the text itself. */
function namedPattern(text: string): string {
  const name = text.startsWith('strict_') ? text.slice('strict_'.length) : text;
  return Object.hasOwn(NAMED_PATTERNS, name) ? NAMED_PATTERNS[name]! : text;
}

const ZONE_OFFSET = /^(?:Z|[+-]\d{2}(?::?\d{2})?)/;

const ISO_NAMES = new Set(['strict_date_optional_time', 'date_optional_time', 'strict_date_optional_time_nanos', 'date_time', 'strict_date_time', 'iso8601']);

/** A parsed date `format`. */
export class DatePattern {
  private constructor(
    readonly text: string,
    private readonly kind: 'iso' | 'epoch_millis' | 'epoch_second' | 'pattern',
    private readonly tokens: readonly Token[],
  ) {}

  /** Parses a `format`; a pattern letter outside the supported ones is a 400. */
  static parse(text: string, owner: string): DatePattern {
    if (ISO_NAMES.has(text)) return new DatePattern(text, 'iso', []);
    if (text === 'epoch_millis' || text === 'epoch_second') return new DatePattern(text, text, []);
    const pattern = namedPattern(text);
    const tokens: Token[] = [];
    let i = 0;
    while (i < pattern.length) {
      const char = pattern[i]!;
      if (char === "'") {
        const end = pattern.indexOf("'", i + 1);
        if (end < 0) throw dslError(`[${owner}] unterminated quote in date format [${text}]`);
        tokens.push({ literal: end === i + 1 ? "'" : pattern.slice(i + 1, end) });
        i = end + 1;
      } else if (/[A-Za-z]/.test(char)) {
        let end = i;
        while (pattern[end] === char) end++;
        const run = pattern.slice(i, end);
        if (char === 'S' && run.length <= 9) tokens.push({ field: 'fraction', width: run.length });
        else if (char === 'X' && run.length <= 3) tokens.push({ field: 'offset', width: run.length });
        else if (Object.hasOwn(FIELDS, run)) tokens.push({ field: FIELDS[run]! });
        else throw dslError(`[${owner}] date format [${text}]: pattern [${run}] is not supported`);
        i = end;
      } else {
        tokens.push({ literal: char });
        i++;
      }
    }
    return new DatePattern(text, 'pattern', tokens);
  }

  /** Epoch millis in this format, on the wall clock of `zone`. */
  format(millis: number, zone: TimeZone = TimeZone.UTC): string {
    if (this.kind === 'iso') return isoDate(millis, zone);
    if (this.kind === 'epoch_millis') return String(millis);
    if (this.kind === 'epoch_second') return String(millis / 1000);
    const offsetMillis = zone.offsetAt(millis);
    const date = new Date(millis + offsetMillis);
    const pad = (value: number, width: number): string => String(value).padStart(width, '0');
    return this.tokens
      .map((token) => {
        if ('literal' in token) return token.literal;
        switch (token.field) {
          case 'year':
            return pad(date.getUTCFullYear(), 4);
          case 'year2':
            return pad(date.getUTCFullYear() % 100, 2);
          case 'month':
            return pad(date.getUTCMonth() + 1, 2);
          case 'day':
            return pad(date.getUTCDate(), 2);
          case 'hour':
            return pad(date.getUTCHours(), 2);
          case 'minute':
            return pad(date.getUTCMinutes(), 2);
          case 'second':
            return pad(date.getUTCSeconds(), 2);
          case 'fraction':
            return pad(date.getUTCMilliseconds(), 3).padEnd(token.width, '0').slice(0, token.width);
          default:
            return offsetText(offsetMillis, token.width);
        }
      })
      .join('');
  }

  /** Epoch millis of a text in this format (missing fields at their start) read on the wall clock of `zone`, or null when it does not fit. */
  parse(text: string, zone: TimeZone = TimeZone.UTC): number | null {
    if (this.kind === 'iso') return null;
    if (this.kind === 'epoch_millis' || this.kind === 'epoch_second') {
      if (!/^-?\d+(\.\d+)?$/.test(text)) return null;
      return this.kind === 'epoch_millis' ? Number(text) : Number(text) * 1000;
    }
    const parts = { year: 1970, month: 1, day: 1, hour: 0, minute: 0, second: 0, millis: 0 };
    let offsetMinutes: number | null = null;
    let position = 0;
    for (const token of this.tokens) {
      if ('literal' in token) {
        if (!text.startsWith(token.literal, position)) return null;
        position += token.literal.length;
        continue;
      }
      if (token.field === 'offset') {
        const zoneText = ZONE_OFFSET.exec(text.slice(position))?.[0];
        if (zoneText === undefined) return null;
        position += zoneText.length;
        offsetMinutes = zoneText === 'Z' ? 0 : (zoneText[0] === '-' ? -1 : 1) * (Number(zoneText.slice(1, 3)) * 60 + Number(zoneText.slice(3).replace(':', '') || 0));
        continue;
      }
      const width = token.field === 'year' ? 4 : token.field === 'fraction' ? token.width : 2;
      const digits = text.slice(position, position + width);
      if (!/^\d+$/.test(digits) || digits.length !== width) return null;
      position += width;
      const value = Number(digits);
      if (token.field === 'year2') parts.year = 2000 + value;
      else if (token.field === 'fraction') parts.millis = Number(digits.slice(0, 3).padEnd(3, '0'));
      else parts[token.field] = value;
    }
    if (position !== text.length) return null;
    const millis = Date.UTC(parts.year, parts.month - 1, parts.day, parts.hour, parts.minute, parts.second, parts.millis);
    if (Number.isNaN(millis)) return null;
    return offsetMinutes === null ? zone.toUtc(millis) : millis - offsetMinutes * 60_000;
  }
}

/** A zone offset as pattern `X` (`+01`), `XX` (`+0130`) or `XXX` (`+01:30`) prints it; `Z` for UTC. */
function offsetText(offsetMillis: number, width: number): string {
  if (offsetMillis === 0) return 'Z';
  const minutes = Math.round(Math.abs(offsetMillis) / 60_000);
  const hours = String(Math.floor(minutes / 60)).padStart(2, '0');
  const rest = String(minutes % 60).padStart(2, '0');
  const sign = offsetMillis < 0 ? '-' : '+';
  if (width === 1) return rest === '00' ? `${sign}${hours}` : `${sign}${hours}${rest}`;
  return width === 2 ? `${sign}${hours}${rest}` : `${sign}${hours}:${rest}`;
}
