import { ApiError } from './errors.ts';
import { MAX_JSON_DEPTH } from '../node/documents.ts';
import { exactIntegerLiterals } from '../engine/mapping/exact-long.ts';

export { MAX_JSON_DEPTH };


const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACE = 0x7d;
const CLOSE_BRACKET = 0x5d;
const COLON = 0x3a;

/**
 * Parses one JSON text after a cheap structural pre-scan that rejects nesting deeper than
 * `maxDepth` and a `__proto__` key (prototype pollution) without building anything. An empty or
 * blank text yields `undefined` (a request without a body). `what` names the text in errors,
 * e.g. "request body" or "line [3]".
 */
export function parseJsonText(text: string, what = 'request body', maxDepth = MAX_JSON_DEPTH): unknown {
  if (isBlank(text)) return undefined;
  checkStructure(text, what, maxDepth);
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new ApiError('invalid_json', `Failed to parse ${what}: ${(error as Error).message}`);
  }
}

/**
 * A search body whose `search_after` integers beyond ±(2^53 − 1), which `JSON.parse` rounded,
 * are replaced by their literals from the body's text as strings (a long sort key reads a numeric
 * string exactly, as Elasticsearch does). Other bodies are returned as they are.
 */
export function withExactSearchAfter<T>(body: T, text: string | undefined): T {
  if (text === undefined || body === null || typeof body !== 'object') return body;
  const after = (body as { search_after?: unknown }).search_after;
  if (!Array.isArray(after) || !after.some((value) => typeof value === 'number' && Number.isInteger(value) && !Number.isSafeInteger(value))) return body;
  const literals = exactIntegerLiterals(text).get('search_after') ?? [];
  let next = 0;
  const exact = after.map((value) => (typeof value === 'number' && Number.isInteger(value) && !Number.isSafeInteger(value) && next < literals.length ? literals[next++]! : value));
  return { ...body, search_after: exact };
}

/** True when the text holds only JSON whitespace. */
export function isBlank(text: string): boolean {
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index);
    if (code !== 0x20 && code !== 0x0a && code !== 0x0d && code !== 0x09) return false;
  }
  return true;
}

/**
 * Walks the text once: strings are skipped with `indexOf` (so long values cost little), brackets
 * outside strings are counted. Malformed text is left for `JSON.parse` to report.
 */
function checkStructure(text: string, what: string, maxDepth: number): void {
  let depth = 0;
  let index = 0;
  const length = text.length;
  while (index < length) {
    const code = text.charCodeAt(index);
    if (code === QUOTE) {
      const end = closingQuote(text, index);
      if (end < 0) return;
      if (end - index === 10 && text.startsWith('__proto__', index + 1) && followedByColon(text, end + 1)) {
        throw new ApiError('invalid_json', `Failed to parse ${what}: the field name [__proto__] is not allowed`);
      }
      index = end + 1;
      continue;
    }
    if (code === OPEN_BRACE || code === OPEN_BRACKET) {
      depth++;
      if (depth > maxDepth) {
        throw new ApiError(
          'nesting_too_deep',
          `The nesting depth of the ${what} exceeds the maximum allowed depth of [${maxDepth}]`,
        );
      }
    } else if (code === CLOSE_BRACE || code === CLOSE_BRACKET) {
      depth--;
    }
    index++;
  }
}

/** Index of the quote closing the string that opens at `start`, or -1 when unterminated. */
function closingQuote(text: string, start: number): number {
  let search = start + 1;
  for (;;) {
    const quote = text.indexOf('"', search);
    if (quote < 0) return -1;
    let backslashes = 0;
    for (let back = quote - 1; back > start && text.charCodeAt(back) === BACKSLASH; back--) backslashes++;
    if (backslashes % 2 === 0) return quote;
    search = quote + 1;
  }
}

function followedByColon(text: string, from: number): boolean {
  for (let index = from; index < text.length; index++) {
    const code = text.charCodeAt(index);
    if (code === COLON) return true;
    if (code !== 0x20 && code !== 0x0a && code !== 0x0d && code !== 0x09) return false;
  }
  return false;
}
