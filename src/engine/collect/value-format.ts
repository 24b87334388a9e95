/** Text forms of aggregation values as Elasticsearch prints them (`key_as_string`, range keys). */
import { TimeZone } from '../query/time-zone.ts';
import type { ValueFormat } from './aggregation-partials.ts';

/** A double as Java's Double.toString prints it: `10.0`, `1.5`, `1.0E7`. */
export function javaDouble(value: number): string {
  if (!Number.isFinite(value)) return value > 0 ? 'Infinity' : value < 0 ? '-Infinity' : 'NaN';
  const magnitude = Math.abs(value);
  if (value === 0 || (magnitude >= 1e-3 && magnitude < 1e7)) {
    const text = String(value);
    return text.includes('.') ? text : `${text}.0`;
  }
  const [mantissa, exponent] = value.toExponential().split('e');
  const digits = mantissa!.includes('.') ? mantissa! : `${mantissa}.0`;
  return `${digits}E${Number(exponent)}`;
}

/** ISO 8601 form of epoch millis, like ES's default date format: in UTC (`…Z`), or on the wall clock of `zone` with its offset. */
export function isoDate(millis: number, zone: TimeZone = TimeZone.UTC): string {
  const date = new Date(millis);
  if (Number.isNaN(date.getTime())) return String(millis);
  if (zone.isUtc) return date.toISOString();
  const local = new Date(zone.toLocal(millis));
  return Number.isNaN(local.getTime()) ? date.toISOString() : `${local.toISOString().slice(0, -1)}${zone.offsetTextAt(millis)}`;
}

/** A value in its format's text form (dates in `zone`, UTC by default). */
export function formatValue(value: number, format: ValueFormat, zone: TimeZone = TimeZone.UTC): string {
  switch (format) {
    case 'date':
      return isoDate(value, zone);
    case 'boolean':
      return value !== 0 ? 'true' : 'false';
    default:
      return javaDouble(value);
  }
}

/** Default key of a range bucket: `from-to` with `*` for open ends. */
export function rangeKey(from: number | null, to: number | null, format: ValueFormat, zone: TimeZone = TimeZone.UTC): string {
  const side = (value: number | null): string => (value === null ? '*' : formatValue(value, format, zone));
  return `${side(from)}-${side(to)}`;
}
