/**
 * The `format` of a date aggregation (`date_range`): the Java date patterns Elasticsearch users
 * write most (`yyyy`, `yy`, `MM`, `dd`, `HH`, `mm`, `ss`, `SSS`, quoted literals and separators,
 * all in UTC) and the named formats `epoch_millis`, `epoch_second` and the ISO 8601 ones. A pattern
 * both prints (`key`, `from_as_string`, `to_as_string`) and parses (`from` / `to` strings that are
 * not date math), in UTC or the aggregation's `time_zone`.
 */
import { dslError } from '../query/dsl-reader.ts';
import { TimeZone } from '../query/time-zone.ts';
import { isoDate } from './value-format.ts';

type Token = { field: 'year' | 'year2' | 'month' | 'day' | 'hour' | 'minute' | 'second' | 'millis' } | { literal: string };

const FIELDS: Record<string, Extract<Token, { field: unknown }>['field']> = {
  yyyy: 'year',
  uuuu: 'year',
  yy: 'year2',
  MM: 'month',
  dd: 'day',
  HH: 'hour',
  mm: 'minute',
  ss: 'second',
  SSS: 'millis',
};

const ISO_NAMES = new Set(['strict_date_optional_time', 'date_optional_time', 'strict_date_optional_time_nanos', 'date_time', 'strict_date_time']);

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
    const tokens: Token[] = [];
    let i = 0;
    while (i < text.length) {
      const char = text[i]!;
      if (char === "'") {
        const end = text.indexOf("'", i + 1);
        if (end < 0) throw dslError(`[${owner}] unterminated quote in date format [${text}]`);
        tokens.push({ literal: end === i + 1 ? "'" : text.slice(i + 1, end) });
        i = end + 1;
      } else if (/[A-Za-z]/.test(char)) {
        let end = i;
        while (text[end] === char) end++;
        const run = text.slice(i, end);
        const field = Object.hasOwn(FIELDS, run) ? FIELDS[run]! : undefined;
        if (field === undefined) throw dslError(`[${owner}] date format [${text}]: pattern [${run}] is not supported`);
        tokens.push({ field });
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
    const date = new Date(zone.toLocal(millis));
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
          default:
            return pad(date.getUTCMilliseconds(), 3);
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
    let position = 0;
    for (const token of this.tokens) {
      if ('literal' in token) {
        if (!text.startsWith(token.literal, position)) return null;
        position += token.literal.length;
        continue;
      }
      const width = token.field === 'year' ? 4 : token.field === 'millis' ? 3 : 2;
      const digits = text.slice(position, position + width);
      if (!/^\d+$/.test(digits) || digits.length !== width) return null;
      position += width;
      const value = Number(digits);
      if (token.field === 'year2') parts.year = 2000 + value;
      else parts[token.field] = value;
    }
    if (position !== text.length) return null;
    const millis = Date.UTC(parts.year, parts.month - 1, parts.day, parts.hour, parts.minute, parts.second, parts.millis);
    return Number.isNaN(millis) ? null : zone.toUtc(millis);
  }
}
