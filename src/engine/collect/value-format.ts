/** Text forms of aggregation values as Elasticsearch prints them (`key_as_string`, range keys). */
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

/** ISO 8601 form of epoch millis in UTC, like ES's default date format. */
export function isoDate(millis: number): string {
  const date = new Date(millis);
  return Number.isNaN(date.getTime()) ? String(millis) : date.toISOString();
}

/** A value in its format's text form. */
export function formatValue(value: number, format: ValueFormat): string {
  switch (format) {
    case 'date':
      return isoDate(value);
    case 'boolean':
      return value !== 0 ? 'true' : 'false';
    default:
      return javaDouble(value);
  }
}

/** Default key of a range bucket: `from-to` with `*` for open ends. */
export function rangeKey(from: number | null, to: number | null, format: ValueFormat): string {
  const side = (value: number | null): string => (value === null ? '*' : formatValue(value, format));
  return `${side(from)}-${side(to)}`;
}
