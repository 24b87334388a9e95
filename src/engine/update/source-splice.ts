/**
 * Top-level fields of a stored `_source` as byte ranges of its JSON text, and splicing: the text
 * of a document whose top-level fields `replacements` names, every other byte kept as it was
 * sent (numbers beyond 2^53, `1.0`, key order and spacing of untouched fields survive). The scan
 * skips strings with `indexOf`, so its cost is the document's structure, not its text.
 */
import { EngineError } from '../errors.ts';

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const COMMA = 0x2c;
const COLON = 0x3a;

/** One `"key": value` member of the top-level object: byte offsets into the text. */
export interface TopLevelEntry {
  key: string;
  keyStart: number;
  valueStart: number;
  valueEnd: number;
}

/** The members of a JSON object text, in order, and where its closing brace is. */
export interface TopLevelLayout {
  entries: TopLevelEntry[];
  closeBrace: number;
}

/** Scans the top-level members of a JSON object text (the text must be valid JSON). */
export function topLevelLayout(text: Buffer): TopLevelLayout {
  let index = skipSpace(text, 0);
  if (text[index] !== OPEN_BRACE) throw malformed('the source is not a JSON object');
  index = skipSpace(text, index + 1);
  const entries: TopLevelEntry[] = [];
  if (text[index] === CLOSE_BRACE) return { entries, closeBrace: index };
  for (;;) {
    if (text[index] !== QUOTE) throw malformed('expected a key');
    const keyStart = index;
    const keyEnd = stringEnd(text, index);
    const rawKey = text.toString('utf8', keyStart, keyEnd);
    const key = rawKey.includes('\\') ? (JSON.parse(rawKey) as string) : rawKey.slice(1, -1);
    index = skipSpace(text, keyEnd);
    if (text[index] !== COLON) throw malformed('expected a colon');
    const valueStart = skipSpace(text, index + 1);
    const valueEnd = valueEndAt(text, valueStart);
    entries.push({ key, keyStart, valueStart, valueEnd });
    index = skipSpace(text, valueEnd);
    if (text[index] === COMMA) {
      index = skipSpace(text, index + 1);
      continue;
    }
    if (text[index] !== CLOSE_BRACE) throw malformed('expected a comma or a closing brace');
    return { entries, closeBrace: index };
  }
}

/** The JSON texts of the named top-level fields that the document holds (the last one of a repeated key, as JSON.parse reads it). */
export function readTopLevelTexts(text: Buffer, keys: Iterable<string>, layout = topLevelLayout(text)): Map<string, string> {
  const wanted = new Set(keys);
  const found = new Map<string, string>();
  for (const entry of layout.entries) {
    if (wanted.has(entry.key)) found.set(entry.key, text.toString('utf8', entry.valueStart, entry.valueEnd));
  }
  return found;
}

/**
 * The text with top-level fields replaced (a JSON text) or removed (null); fields the text lacks
 * are appended in the order given. Bytes of the other members, and between them, are kept.
 */
export function spliceSource(text: Buffer, replacements: ReadonlyMap<string, string | null>, layout = topLevelLayout(text)): Buffer {
  if (replacements.size === 0) return text;
  const lastIndex = new Map<string, number>();
  layout.entries.forEach((entry, position) => lastIndex.set(entry.key, position));
  const parts: Buffer[] = [];
  const entries = layout.entries;
  let kept = 0;
  let lastKept = false;
  /** After dropped members, the separator that stood before the first of them. */
  let separator: Buffer | null = null;
  parts.push(text.subarray(0, entries.length > 0 ? entries[0]!.keyStart : layout.closeBrace));
  entries.forEach((entry, position) => {
    const between = position === 0 ? null : text.subarray(entries[position - 1]!.valueEnd, entry.keyStart);
    const replaced = replacements.has(entry.key);
    const replacement = replaced ? replacements.get(entry.key)! : undefined;
    lastKept = !(replaced && (replacement === null || lastIndex.get(entry.key) !== position));
    if (!lastKept) {
      if (kept > 0 && separator === null) separator = between;
      return;
    }
    if (kept > 0) parts.push(separator ?? between!);
    separator = null;
    if (replaced) parts.push(text.subarray(entry.keyStart, entry.valueStart), Buffer.from(replacement!));
    else parts.push(text.subarray(entry.keyStart, entry.valueEnd));
    kept++;
  });
  const present = new Set(layout.entries.map((entry) => entry.key));
  for (const [key, replacement] of replacements) {
    if (replacement === null || present.has(key)) continue;
    parts.push(Buffer.from(`${kept > 0 ? ',' : ''}${JSON.stringify(key)}:${replacement}`));
    kept++;
  }
  parts.push(text.subarray(lastKept ? entries[entries.length - 1]!.valueEnd : layout.closeBrace));
  return Buffer.concat(parts);
}

function skipSpace(text: Buffer, index: number): number {
  while (index < text.length) {
    const code = text[index]!;
    if (code !== 0x20 && code !== 0x0a && code !== 0x0d && code !== 0x09) break;
    index++;
  }
  return index;
}

/** One past the closing quote of the string that starts at `start`. */
function stringEnd(text: Buffer, start: number): number {
  let index = start + 1;
  for (;;) {
    const quote = text.indexOf(QUOTE, index);
    if (quote < 0) throw malformed('unterminated string');
    let backslashes = 0;
    for (let back = quote - 1; back > start && text[back] === BACKSLASH; back--) backslashes++;
    if (backslashes % 2 === 0) return quote + 1;
    index = quote + 1;
  }
}

/** One past the end of the value that starts at `start`. */
function valueEndAt(text: Buffer, start: number): number {
  const first = text[start];
  if (first === QUOTE) return stringEnd(text, start);
  if (first === OPEN_BRACE || first === OPEN_BRACKET) {
    let depth = 0;
    let index = start;
    while (index < text.length) {
      const code = text[index]!;
      if (code === QUOTE) {
        index = stringEnd(text, index);
        continue;
      }
      if (code === OPEN_BRACE || code === OPEN_BRACKET) depth++;
      else if (code === CLOSE_BRACE || code === CLOSE_BRACKET) {
        depth--;
        if (depth === 0) return index + 1;
      }
      index++;
    }
    throw malformed('unterminated object or array');
  }
  let index = start;
  while (index < text.length) {
    const code = text[index]!;
    if (code === COMMA || code === CLOSE_BRACE || code === CLOSE_BRACKET || code === 0x20 || code === 0x0a || code === 0x0d || code === 0x09) break;
    index++;
  }
  if (index === start) throw malformed('expected a value');
  return index;
}

function malformed(reason: string): EngineError {
  return new EngineError('corrupt_index', `stored source is not a JSON object text: ${reason}`);
}
