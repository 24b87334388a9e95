/**
 * Exact 64-bit `long` and `unsigned_long` values. Their column holds float64, exact within
 * ±(2^53 − 1); a value beyond is also indexed, exactly, in the field's hidden companion (`<path>`
 * + U+0000 + `exact`) as a 16-hex-digit term of value − the type's minimum (value + 2^63 for a
 * long, the value itself for an unsigned_long), whose term order is numeric order. Values within
 * the safe range never reach the companion, so the column stays the whole story for them.
 *
 * A JSON number beyond 2^53 is rounded by `JSON.parse`; its digits are read back from the
 * document's text (`exactIntegerLiterals`), so a document sent as `{"id": 9223372036854775807}`
 * keeps every digit. Numeric strings carry their digits themselves.
 */

/** Smallest and largest `long`. */
export const LONG_MIN = -(2n ** 63n);
/** Largest `long` (Long.MAX_VALUE). */
export const LONG_MAX = 2n ** 63n - 1n;

const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);

/** The types with exact terms beyond 2^53, their value ranges and how errors name them. */
export const EXACT_INTEGER_TYPES = {
  long: { min: LONG_MIN, max: LONG_MAX, named: 'a long' },
  unsigned_long: { min: 0n, max: 2n ** 64n - 1n, named: 'an unsigned_long' },
} as const;

/** A type with exact terms. */
export type ExactIntegerType = keyof typeof EXACT_INTEGER_TYPES;

/** Whether a field type keeps exact terms beyond 2^53. */
export function isExactIntegerType(type: string): type is ExactIntegerType {
  return Object.hasOwn(EXACT_INTEGER_TYPES, type);
}

/** Path of the hidden companion holding the exact terms of a `long` field's unsafe values. */
export function exactCompanionPath(path: string): string {
  return `${path}\u0000exact`;
}

/** The order-preserving term of a value of the type (16 lowercase hex digits of value − the type's minimum). */
export function encodeExact(type: ExactIntegerType, value: bigint): string {
  return (value - EXACT_INTEGER_TYPES[type].min).toString(16).padStart(16, '0');
}

/** The value a term of the type stands for. */
export function decodeExact(type: ExactIntegerType, term: string): bigint {
  return BigInt(`0x${term}`) + EXACT_INTEGER_TYPES[type].min;
}

/** Whether a long lies beyond ±(2^53 − 1), where float64 would round it. */
export function isUnsafeLong(value: bigint): boolean {
  return value > MAX_SAFE || value < -MAX_SAFE;
}

const INTEGER_TEXT = /^[+-]?\d+$/;

/** The exact integer a numeric string spells (`"-12"`, `"+9223372036854775807"`), or null for other text. */
export function integerOfText(text: string): bigint | null {
  return INTEGER_TEXT.test(text) ? BigInt(text) : null;
}

/**
 * The integer literals of a JSON text that float64 cannot hold (beyond ±(2^53 − 1)), by the
 * dotted path of the key holding them (array elements share their array's path), in text order.
 * One linear pass; the text is assumed to be valid JSON (it was parsed already).
 */
export function exactIntegerLiterals(text: string): Map<string, string[]> {
  const found = new Map<string, string[]>();
  // Per open container: the path of its values (objects: the path of the current key).
  const stack: { isObject: boolean; prefix: string; path: string }[] = [];
  let expectKey = false;
  let index = 0;
  const pathNow = (): string => stack[stack.length - 1]?.path ?? '';
  while (index < text.length) {
    const char = text[index]!;
    if (char === '"') {
      const end = stringEnd(text, index);
      if (expectKey) {
        const top = stack[stack.length - 1]!;
        const key = JSON.parse(text.slice(index, end + 1)) as string;
        top.path = top.prefix === '' ? key : `${top.prefix}.${key}`;
        expectKey = false;
      }
      index = end + 1;
    } else if (char === '{' || char === '[') {
      const path = pathNow();
      stack.push({ isObject: char === '{', prefix: path, path });
      expectKey = char === '{';
      index++;
    } else if (char === '}' || char === ']') {
      stack.pop();
      index++;
    } else if (char === ',') {
      expectKey = stack[stack.length - 1]?.isObject === true;
      index++;
    } else if (char === '-' || (char >= '0' && char <= '9')) {
      let end = index + 1;
      while (end < text.length && /[0-9.eE+-]/.test(text[end]!)) end++;
      const literal = text.slice(index, end);
      if (INTEGER_TEXT.test(literal) && literal.replace('-', '').length >= 16 && isUnsafeLong(BigInt(literal))) {
        const list = found.get(pathNow());
        if (list === undefined) found.set(pathNow(), [literal]);
        else list.push(literal);
      }
      index = end;
    } else {
      index++;
    }
  }
  return found;
}

/** Index of the closing quote of the string starting at `start`. */
function stringEnd(text: string, start: number): number {
  let index = start + 1;
  for (;;) {
    const quote = text.indexOf('"', index);
    if (quote < 0) return text.length - 1;
    let backslashes = 0;
    for (let back = quote - 1; back > start && text[back] === '\\'; back--) backslashes++;
    if (backslashes % 2 === 0) return quote;
    index = quote + 1;
  }
}
