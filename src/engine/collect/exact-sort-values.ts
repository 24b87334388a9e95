/**
 * Exact values of `long` and `unsigned_long` fields beyond ±(2^53 − 1) as sort values and `terms`
 * keys. Their float64 column rounds them, so a doc whose value is beyond that range reads its
 * exact value from the field's companion (mapping/exact-long.ts) and carries it as an *exact
 * string*: U+0000 followed by the 17 hex digits of value + 2^63. Exact strings compare as strings
 * in numeric order, cross threads and nodes as plain JSON, and compare with the float values of
 * the same key exactly (every unsafe value's float lies beyond every safe one, and rounding is
 * monotonic). The response renders one as the integer it stands for.
 */
import type { KeywordColumn } from '../segment/leaf-reader.ts';
import { decodeExact, integerOfText, isUnsafeLong, type ExactIntegerType } from '../mapping/exact-long.ts';

const MARK = '\u0000';
const OFFSET = 2n ** 63n;
const DIGITS = 17;

/** The exact string of an integer. */
export function exactString(value: bigint): string {
  return MARK + (value + OFFSET).toString(16).padStart(DIGITS, '0');
}

/** Whether a sort value or bucket key is an exact string. */
export function isExactString(value: unknown): value is string {
  return typeof value === 'string' && value.length === DIGITS + 1 && value.charCodeAt(0) === 0;
}

/** The integer an exact string stands for. */
export function exactOf(value: string): bigint {
  return BigInt(`0x${value.slice(1)}`) - OFFSET;
}

/** The decimal digits of an exact string's integer (`-9223372036854775808`). */
export function exactDigits(value: string): string {
  return exactOf(value).toString();
}

/**
 * Compares a number and an exact string (negative: `number` is smaller). Floats order them
 * unless they round alike; then both are integers and compare exactly.
 */
export function compareNumberToExact(number: number, exact: string): number {
  const value = exactOf(exact);
  const rounded = Number(value);
  if (number !== rounded) return number < rounded ? -1 : 1;
  if (!Number.isInteger(number)) return 0;
  const whole = BigInt(number);
  return whole < value ? -1 : whole > value ? 1 : 0;
}

/**
 * Compares two numeric values, either of which may be an exact string; null when a string among
 * them is not an exact string (the caller's order applies).
 */
export function compareExactAware(left: number | string, right: number | string): number | null {
  if (typeof left === 'number') return isExactString(right) ? compareNumberToExact(left, right) : null;
  if (!isExactString(left)) return null;
  if (typeof right === 'number') return -compareNumberToExact(right, left);
  if (!isExactString(right)) return null;
  return left < right ? -1 : left > right ? 1 : 0;
}

/** A number that float64 rounds (an integer beyond ±(2^53 − 1)). */
export function isRoundedInteger(value: number): boolean {
  return Number.isInteger(value) && !Number.isSafeInteger(value);
}

/**
 * A `search_after` value of a long key: an exact string for an integer beyond ±(2^53 − 1) written
 * as a string (or already exact), else null (the number path applies).
 */
export function exactSearchAfter(value: unknown): string | null {
  if (isExactString(value)) return value;
  if (typeof value !== 'string') return null;
  const integer = integerOfText(value.trim());
  return integer !== null && isUnsafeLong(integer) ? exactString(integer) : null;
}

/** Reads exact values of one long field in one leaf from its companion column. */
export class ExactLongColumn {
  constructor(
    private readonly companion: KeywordColumn,
    private readonly type: ExactIntegerType,
  ) {}

  /** The companion of a leaf, when the leaf holds unsafe values of the field; else null. */
  static of(companion: KeywordColumn | null, type: ExactIntegerType): ExactLongColumn | null {
    return companion !== null && companion.ordinalCount > 0 ? new ExactLongColumn(companion, type) : null;
  }

  /** The doc's smallest (`first`) or largest unsafe value as an exact string; null when it has none. */
  extreme(doc: number, first: boolean): string | null {
    const count = this.companion.count(doc);
    if (count === 0) return null;
    return exactString(decodeExact(this.type, this.companion.term(this.companion.ordinal(doc, first ? 0 : count - 1))));
  }

  /** The doc's distinct unsafe values whose float is `rounded`, as exact strings, ascending. */
  valuesRoundedTo(doc: number, rounded: number): string[] {
    const out: string[] = [];
    const count = this.companion.count(doc);
    let previous = -1;
    for (let index = 0; index < count; index++) {
      const ordinal = this.companion.ordinal(doc, index);
      if (ordinal === previous) continue;
      previous = ordinal;
      const value = decodeExact(this.type, this.companion.term(ordinal));
      if (Number(value) === rounded) out.push(exactString(value));
    }
    return out;
  }
}
