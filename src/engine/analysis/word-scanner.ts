/**
 * Finds token boundaries: words roughly as Unicode word segmentation (UAX #29) draws them for
 * Latin, Greek and Cyrillic scripts, and whitespace-separated runs. Characters are classified
 * once through a lazily filled table, so scanning is one table lookup per UTF-16 unit.
 */

/** Character classes used by the word scanner. */
const SEPARATOR = 1;
const LETTER = 2;
const DIGIT = 3;
/** Combining marks and invisible format characters: they extend the word they follow. */
const EXTEND = 4;
/** Connector punctuation such as `_`: joins word characters (`snake_case` is one word). */
const CONNECTOR = 5;
/** Han and Hiragana characters: one token each. */
const IDEOGRAPH = 6;
/** `'` and `’`: inside a word only between two letters (`don't`, `o'neil`). */
const APOSTROPHE = 7;
/** `.` and `,`: inside a word only between two digits (`3.14`, `1,000`). */
const NUMBER_SEPARATOR = 8;

const IDEOGRAPH_PATTERN = /^[\p{Script=Han}\p{Script=Hiragana}]$/u;
const LETTER_PATTERN = /^\p{L}$/u;
const DIGIT_PATTERN = /^[\p{Nd}\p{Nl}]$/u;
const EXTEND_PATTERN = /^[\p{M}\p{Cf}]$/u;
const CONNECTOR_PATTERN = /^\p{Pc}$/u;

/** Class of every BMP code unit, 0 until first seen. */
const BMP_CLASSES = new Uint8Array(0x10000);
/** Class of the astral code points seen so far (rare: historic scripts, rare ideographs, emoji). */
const ASTRAL_CLASSES = new Map<number, number>();

function classifyCodePoint(codePoint: number): number {
  if (codePoint === 0x27 || codePoint === 0x2019) return APOSTROPHE;
  if (codePoint === 0x2e || codePoint === 0x2c) return NUMBER_SEPARATOR;
  const character = String.fromCodePoint(codePoint);
  if (IDEOGRAPH_PATTERN.test(character)) return IDEOGRAPH;
  if (LETTER_PATTERN.test(character)) return LETTER;
  if (DIGIT_PATTERN.test(character)) return DIGIT;
  if (EXTEND_PATTERN.test(character)) return EXTEND;
  if (CONNECTOR_PATTERN.test(character)) return CONNECTOR;
  return SEPARATOR;
}

for (let code = 0; code < 0x80; code++) BMP_CLASSES[code] = classifyCodePoint(code);

/** Class of the character starting at `index` (SEPARATOR past the end or on a lone surrogate). */
function classAt(text: string, index: number): number {
  if (index >= text.length) return SEPARATOR;
  const code = text.charCodeAt(index);
  if (code >= 0xd800 && code <= 0xdbff && index + 1 < text.length) {
    const low = text.charCodeAt(index + 1);
    if (low >= 0xdc00 && low <= 0xdfff) {
      const codePoint = ((code - 0xd800) << 10) + (low - 0xdc00) + 0x10000;
      let kind = ASTRAL_CLASSES.get(codePoint);
      if (kind === undefined) {
        kind = classifyCodePoint(codePoint);
        ASTRAL_CLASSES.set(codePoint, kind);
      }
      return kind;
    }
  }
  const kind = BMP_CLASSES[code]!;
  if (kind !== 0) return kind;
  return (BMP_CLASSES[code] = code >= 0xd800 && code <= 0xdfff ? SEPARATOR : classifyCodePoint(code));
}

/** UTF-16 units taken by the character at `index` (2 for a surrogate pair). */
function widthAt(text: string, index: number): number {
  const code = text.charCodeAt(index);
  if (code < 0xd800 || code > 0xdbff || index + 1 >= text.length) return 1;
  const low = text.charCodeAt(index + 1);
  return low >= 0xdc00 && low <= 0xdfff ? 2 : 1;
}

/** Whitespace as Java's `Character.isWhitespace` defines it (no-break spaces are not). */
function isWhitespace(code: number): boolean {
  if (code <= 0x20) return code === 0x20 || (code >= 0x09 && code <= 0x0d) || (code >= 0x1c && code <= 0x1f);
  if (code < 0x1680) return false;
  return (
    code === 0x1680 ||
    (code >= 0x2000 && code <= 0x200a && code !== 0x2007) ||
    code === 0x2028 ||
    code === 0x2029 ||
    code === 0x205f ||
    code === 0x3000
  );
}

/** Token boundaries found by a scan, as reusable parallel arrays. */
export class TokenSpans {
  /** Number of spans found by the last scan. */
  count = 0;
  /** Start offsets (UTF-16 units, inclusive). */
  starts = new Int32Array(256);
  /** End offsets (exclusive). */
  ends = new Int32Array(256);
  /** 1 when the span is pure ASCII. */
  ascii = new Uint8Array(256);

  /** Appends one span, growing the arrays when full. */
  push(start: number, end: number, ascii: boolean): void {
    if (this.count === this.starts.length) this.grow();
    this.starts[this.count] = start;
    this.ends[this.count] = end;
    this.ascii[this.count] = ascii ? 1 : 0;
    this.count += 1;
  }

  private grow(): void {
    const capacity = this.starts.length * 2;
    const starts = new Int32Array(capacity);
    const ends = new Int32Array(capacity);
    const ascii = new Uint8Array(capacity);
    starts.set(this.starts);
    ends.set(this.ends);
    ascii.set(this.ascii);
    this.starts = starts;
    this.ends = ends;
    this.ascii = ascii;
  }
}

/** Is `kind` a class that can start a word run? */
function startsWord(kind: number): boolean {
  return kind === LETTER || kind === DIGIT || kind === CONNECTOR;
}

/** `scanWords` for text known to be pure ASCII: no marks, ideographs or surrogates to handle. */
function scanAsciiWords(text: string, spans: TokenSpans): void {
  const length = text.length;
  let index = 0;
  while (index < length) {
    let kind = BMP_CLASSES[text.charCodeAt(index)]!;
    if (!startsWord(kind)) {
      index += 1;
      continue;
    }
    const start = index;
    let hasWordCharacter = kind !== CONNECTOR;
    let previous = kind;
    index += 1;
    while (index < length) {
      kind = BMP_CLASSES[text.charCodeAt(index)]!;
      if (kind === previous) {
        index += 1;
      } else if (kind === LETTER || kind === DIGIT) {
        previous = kind;
        hasWordCharacter = true;
        index += 1;
      } else if (kind === CONNECTOR) {
        previous = kind;
        index += 1;
      } else if (
        (kind === APOSTROPHE && previous === LETTER && BMP_CLASSES[text.charCodeAt(index + 1)] === LETTER) ||
        (kind === NUMBER_SEPARATOR && previous === DIGIT && BMP_CLASSES[text.charCodeAt(index + 1)] === DIGIT)
      ) {
        index += 2;
      } else {
        break;
      }
    }
    if (hasWordCharacter) spans.push(start, index, true);
  }
}

/**
 * Fills `spans` with the words of `text`: runs of letters, digits, marks and connectors
 * (with `'` between letters and `.`/`,` between digits kept inside), each Han or Hiragana
 * character on its own. Runs without a letter or digit (such as `___`) are not words.
 * `asciiOnly` promises that `text` has no character above U+007F (a faster scan).
 */
export function scanWords(text: string, spans: TokenSpans, asciiOnly: boolean): void {
  spans.count = 0;
  if (asciiOnly) {
    scanAsciiWords(text, spans);
    return;
  }
  const length = text.length;
  let index = 0;
  while (index < length) {
    const first = text.charCodeAt(index);
    const kind = first < 0x80 ? BMP_CLASSES[first]! : classAt(text, index);
    if (kind === IDEOGRAPH) {
      const width = widthAt(text, index);
      spans.push(index, index + width, false);
      index += width;
      continue;
    }
    if (kind !== LETTER && kind !== DIGIT && kind !== CONNECTOR) {
      index += 1;
      continue;
    }
    const start = index;
    let ascii = first < 0x80;
    let hasWordCharacter = kind !== CONNECTOR;
    let previous = kind;
    index += first < 0x80 ? 1 : widthAt(text, index);
    while (index < length) {
      const code = text.charCodeAt(index);
      const next = code < 0x80 ? BMP_CLASSES[code]! : classAt(text, index);
      if (next === LETTER || next === DIGIT) {
        previous = next;
        hasWordCharacter = true;
      } else if (next === CONNECTOR) {
        previous = next;
      } else if (next === APOSTROPHE) {
        if (previous !== LETTER || classAt(text, index + 1) !== LETTER) break;
      } else if (next === NUMBER_SEPARATOR) {
        if (previous !== DIGIT || classAt(text, index + 1) !== DIGIT) break;
      } else if (next !== EXTEND) {
        break;
      }
      if (code < 0x80) {
        index += 1;
      } else {
        ascii = false;
        index += widthAt(text, index);
      }
    }
    if (hasWordCharacter) spans.push(start, index, ascii);
  }
}

/** Fills `spans` with the maximal runs of non-whitespace characters of `text`. */
export function scanWhitespaceSeparated(text: string, spans: TokenSpans): void {
  spans.count = 0;
  const length = text.length;
  let index = 0;
  while (index < length) {
    while (index < length && isWhitespace(text.charCodeAt(index))) index += 1;
    if (index === length) break;
    const start = index;
    let ascii = true;
    while (index < length) {
      const code = text.charCodeAt(index);
      if (isWhitespace(code)) break;
      if (code >= 0x80) ascii = false;
      index += 1;
    }
    spans.push(start, index, ascii);
  }
}
