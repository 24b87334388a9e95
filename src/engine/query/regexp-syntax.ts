/**
 * The two pattern languages of term-matching queries, parsed to a `PatternNode` tree (automaton.ts):
 * Lucene's regular expression syntax (ES `regexp`: `.`, `?`, `*`, `+`, `{n,m}`, `|`, `( )`,
 * `[...]` / `[^...]` classes, `"..."` literals, `\` escapes, `\d \s \w` and their negations, and
 * under `flags` `@` any string, `#` the empty language, `<n-m>` decimal intervals) and wildcards
 * (ES `wildcard`: `*`, `?`, `\` escapes). Patterns are anchored: they match whole terms. The
 * complement `~` and intersection `&` operators are refused (400) instead of being read literally.
 * The parser loops over concatenations and recurses only into groups, whose depth the 1000
 * character limit of regexps bounds.
 */
import { MAX_CODE_POINT, type PatternNode } from './automaton.ts';
import { dslError } from './dsl-reader.ts';

/** Lucene's regexp syntax flags, with ES's names (`flags: "INTERVAL|ANYSTRING"`). */
export const REGEXP_FLAGS: Readonly<Record<string, number>> = {
  INTERSECTION: 0x0001,
  COMPLEMENT: 0x0002,
  EMPTY: 0x0004,
  ANYSTRING: 0x0008,
  INTERVAL: 0x0020,
  NONE: 0,
  ALL: 0xffff,
};

/** Any single code point. */
const ANY: PatternNode = { kind: 'chars', ranges: [[0, MAX_CODE_POINT]] };

const DIGIT: ReadonlyArray<readonly [number, number]> = [[48, 57]];
const SPACE: ReadonlyArray<readonly [number, number]> = [[9, 13], [32, 32]];
const WORD: ReadonlyArray<readonly [number, number]> = [[48, 57], [65, 90], [95, 95], [97, 122]];

/** The code point ranges outside `ranges` (which must be sorted and disjoint). */
function complementRanges(ranges: ReadonlyArray<readonly [number, number]>): Array<[number, number]> {
  const sorted = [...ranges].sort((left, right) => left[0] - right[0]);
  const result: Array<[number, number]> = [];
  let next = 0;
  for (const [low, high] of sorted) {
    if (low > next) result.push([next, low - 1]);
    next = Math.max(next, high + 1);
  }
  if (next <= MAX_CODE_POINT) result.push([next, MAX_CODE_POINT]);
  return result;
}

/** One code point, with its other cases when matching is case-insensitive. */
function literal(codePoint: number, caseInsensitive: boolean): PatternNode {
  if (!caseInsensitive) return { kind: 'chars', ranges: [[codePoint, codePoint]] };
  const text = String.fromCodePoint(codePoint);
  const variants = new Set([codePoint]);
  for (const variant of [text.toLowerCase(), text.toUpperCase()]) {
    if ([...variant].length === 1) variants.add(variant.codePointAt(0)!);
  }
  return { kind: 'chars', ranges: [...variants].map((value) => [value, value] as const) };
}

/** Parses an ES wildcard pattern (`*` any run, `?` one code point, `\` escapes the next one). */
export function parseWildcard(pattern: string, caseInsensitive: boolean): PatternNode {
  const parts: PatternNode[] = [];
  const codePoints = [...pattern];
  for (let index = 0; index < codePoints.length; index++) {
    const character = codePoints[index]!;
    if (character === '*') {
      if (parts.at(-1)?.kind !== 'repeat') parts.push({ kind: 'repeat', node: ANY, min: 0, max: Infinity });
    } else if (character === '?') parts.push(ANY);
    else if (character === '\\' && index + 1 < codePoints.length) parts.push(literal(codePoints[++index]!.codePointAt(0)!, caseInsensitive));
    else parts.push(literal(character.codePointAt(0)!, caseInsensitive));
  }
  return { kind: 'concat', parts };
}

/** Parses a Lucene regular expression under the given syntax flags. */
export function parseRegexp(pattern: string, flags: number, caseInsensitive: boolean): PatternNode {
  return new RegexpParser(pattern, flags, caseInsensitive).parse();
}

class RegexpParser {
  private readonly codePoints: number[];
  private position = 0;

  constructor(
    private readonly pattern: string,
    private readonly flags: number,
    private readonly caseInsensitive: boolean,
  ) {
    this.codePoints = [...pattern].map((character) => character.codePointAt(0)!);
  }

  parse(): PatternNode {
    const node = this.parseUnion();
    if (this.more()) throw this.error(`end-of-string expected at position ${this.position}`);
    return node;
  }

  private error(message: string): Error {
    return dslError(`[regexp] failed to parse regexp [${this.pattern.length > 64 ? `${this.pattern.slice(0, 64)}...` : this.pattern}]: ${message}`);
  }

  private more(): boolean {
    return this.position < this.codePoints.length;
  }

  private peek(characters: string): boolean {
    return this.more() && characters.includes(String.fromCodePoint(this.codePoints[this.position]!));
  }

  private match(character: string): boolean {
    if (!this.more() || this.codePoints[this.position] !== character.codePointAt(0)) return false;
    this.position++;
    return true;
  }

  private next(): number {
    if (!this.more()) throw this.error('unexpected end-of-string');
    return this.codePoints[this.position++]!;
  }

  private check(flag: number): boolean {
    return (this.flags & flag) !== 0;
  }

  private parseUnion(): PatternNode {
    const parts = [this.parseConcat()];
    while (this.match('|')) parts.push(this.parseConcat());
    return parts.length === 1 ? parts[0]! : { kind: 'union', parts };
  }

  private parseConcat(): PatternNode {
    const parts = [this.parseRepeat()];
    while (this.more() && !this.peek(')|')) {
      if (this.check(REGEXP_FLAGS.INTERSECTION!) && this.peek('&')) {
        throw this.error(`the intersection operator [&] at position ${this.position} is not supported (leave INTERSECTION out of [flags] to match it literally)`);
      }
      parts.push(this.parseRepeat());
    }
    return parts.length === 1 ? parts[0]! : { kind: 'concat', parts };
  }

  private parseRepeat(): PatternNode {
    let node = this.parseCharClassOrSimple();
    while (this.peek('?*+{')) {
      if (this.match('?')) node = { kind: 'repeat', node, min: 0, max: 1 };
      else if (this.match('*')) node = { kind: 'repeat', node, min: 0, max: Infinity };
      else if (this.match('+')) node = { kind: 'repeat', node, min: 1, max: Infinity };
      else if (this.match('{')) {
        const min = this.readInteger();
        let max = min;
        if (this.match(',')) max = this.peek('0123456789') ? this.readInteger() : Infinity;
        if (!this.match('}')) throw this.error(`expected '}' at position ${this.position}`);
        if (max < min) throw this.error(`invalid repetition range(out of order): ${min}..${max}`);
        node = { kind: 'repeat', node, min, max };
      }
    }
    return node;
  }

  private readInteger(): number {
    const start = this.position;
    while (this.peek('0123456789')) this.position++;
    if (start === this.position) throw this.error(`integer expected at position ${this.position}`);
    return Number(String.fromCodePoint(...this.codePoints.slice(start, this.position)));
  }

  private parseCharClassOrSimple(): PatternNode {
    if (this.check(REGEXP_FLAGS.COMPLEMENT!) && this.peek('~')) {
      throw this.error(`the complement operator [~] at position ${this.position} is not supported (leave COMPLEMENT out of [flags] to match it literally)`);
    }
    if (!this.match('[')) return this.parseSimple();
    const negated = this.match('^');
    const ranges: Array<readonly [number, number]> = [];
    do {
      for (const range of this.parseClassMember()) ranges.push(range);
    } while (this.more() && !this.peek(']'));
    if (!this.match(']')) throw this.error(`expected ']' at position ${this.position}`);
    return { kind: 'chars', ranges: negated ? complementRanges(ranges) : ranges };
  }

  private parseClassMember(): ReadonlyArray<readonly [number, number]> {
    const shorthand = this.parseShorthand();
    if (shorthand !== null) return shorthand;
    const low = this.parseCharacter();
    if (!this.match('-')) return this.caseRanges(low);
    const high = this.parseCharacter();
    if (high < low) throw this.error(`invalid range: from (${low}) cannot be > to (${high})`);
    return [[low, high]];
  }

  private caseRanges(codePoint: number): ReadonlyArray<readonly [number, number]> {
    const node = literal(codePoint, this.caseInsensitive);
    return node.kind === 'chars' ? node.ranges : [];
  }

  /** `\d \D \s \S \w \W`, or null (position unchanged) when not at one. */
  private parseShorthand(): ReadonlyArray<readonly [number, number]> | null {
    if (this.codePoints[this.position] !== 92 || this.position + 1 >= this.codePoints.length) return null;
    const letter = String.fromCodePoint(this.codePoints[this.position + 1]!);
    const base = letter.toLowerCase() === 'd' ? DIGIT : letter.toLowerCase() === 's' ? SPACE : letter.toLowerCase() === 'w' ? WORD : null;
    if (base === null) return null;
    this.position += 2;
    return letter === letter.toUpperCase() ? complementRanges(base) : base;
  }

  private parseCharacter(): number {
    this.match('\\');
    return this.next();
  }

  private parseSimple(): PatternNode {
    if (this.match('.')) return ANY;
    if (this.check(REGEXP_FLAGS.EMPTY!) && this.match('#')) return { kind: 'nothing' };
    if (this.check(REGEXP_FLAGS.ANYSTRING!) && this.match('@')) return { kind: 'repeat', node: ANY, min: 0, max: Infinity };
    if (this.match('"')) {
      const start = this.position;
      while (this.more() && !this.peek('"')) this.position++;
      if (!this.match('"')) throw this.error(`expected '"' at position ${this.position}`);
      const parts = this.codePoints.slice(start, this.position - 1).map((codePoint) => literal(codePoint, this.caseInsensitive));
      return { kind: 'concat', parts };
    }
    if (this.match('(')) {
      if (this.match(')')) return { kind: 'concat', parts: [] };
      const node = this.parseUnion();
      if (!this.match(')')) throw this.error(`expected ')' at position ${this.position}`);
      return node;
    }
    if (this.check(REGEXP_FLAGS.INTERVAL!) && this.match('<')) return this.parseInterval();
    const shorthand = this.parseShorthand();
    if (shorthand !== null) return { kind: 'chars', ranges: shorthand };
    return literal(this.parseCharacter(), this.caseInsensitive);
  }

  /** `<n-m>`: decimal integers from n to m; fixed width when both bounds have the same length. */
  private parseInterval(): PatternNode {
    const start = this.position;
    while (this.more() && !this.peek('>')) this.position++;
    if (!this.match('>')) throw this.error(`expected '>' at position ${this.position}`);
    const body = String.fromCodePoint(...this.codePoints.slice(start, this.position - 1));
    const bounds = /^(\d+)-(\d+)$/.exec(body);
    if (bounds === null) throw this.error(`interval syntax error at position ${this.position - 1}`);
    const [smin, smax] = [bounds[1]!, bounds[2]!];
    const fixedWidth = smin.length === smax.length ? smin.length : 0;
    let [low, high] = [BigInt(smin), BigInt(smax)];
    if (low > high) [low, high] = [high, low];
    return decimalInterval(low, high, fixedWidth);
  }
}

/** Digits `from`..`to` at one position. */
function digitRange(from: number, to: number): PatternNode {
  return { kind: 'chars', ranges: [[48 + from, 48 + to]] };
}

/** Strings of the same length as `low`/`high` between them, digit by digit. */
function sameLengthInterval(low: string, high: string): PatternNode {
  if (low.length === 0) return { kind: 'concat', parts: [] };
  const first = Number(low[0]);
  const last = Number(high[0]);
  const rest = low.length - 1;
  if (first === last) return { kind: 'concat', parts: [digitRange(first, first), sameLengthInterval(low.slice(1), high.slice(1))] };
  const anyDigits: PatternNode = { kind: 'repeat', node: digitRange(0, 9), min: rest, max: rest };
  const parts: PatternNode[] = [{ kind: 'concat', parts: [digitRange(first, first), sameLengthInterval(low.slice(1), '9'.repeat(rest))] }];
  if (last - first > 1) parts.push({ kind: 'concat', parts: [digitRange(first + 1, last - 1), anyDigits] });
  parts.push({ kind: 'concat', parts: [digitRange(last, last), sameLengthInterval('0'.repeat(rest), high.slice(1))] });
  return { kind: 'union', parts };
}

/** Lucene's decimal interval: fixed width (zero-padded), or any number of leading zeros. */
function decimalInterval(low: bigint, high: bigint, fixedWidth: number): PatternNode {
  if (fixedWidth > 0) return sameLengthInterval(low.toString().padStart(fixedWidth, '0'), high.toString().padStart(fixedWidth, '0'));
  const lowText = low.toString();
  const highText = high.toString();
  const parts: PatternNode[] = [];
  for (let length = lowText.length; length <= highText.length; length++) {
    const from = length === lowText.length ? lowText : `1${'0'.repeat(length - 1)}`;
    const to = length === highText.length ? highText : '9'.repeat(length);
    parts.push(sameLengthInterval(from, to));
  }
  const zeros: PatternNode = { kind: 'repeat', node: digitRange(0, 0), min: 0, max: Infinity };
  return { kind: 'concat', parts: [zeros, parts.length === 1 ? parts[0]! : { kind: 'union', parts }] };
}
