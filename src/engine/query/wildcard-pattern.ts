/**
 * The one matcher of user-supplied wildcard patterns (`_source` filters, field lists of
 * `multi_match` / `simple_query_string`, highlight fields, search targets): `*` matches any run of
 * characters (line breaks included) and, when enabled, `?` exactly one. No regular expression is
 * built: the pattern is split at its stars and the literal segments are found left to right, each
 * at its leftmost place, which is the classic greedy star algorithm. Matching is O(text ·
 * pattern) at worst and never backtracks exponentially (a regex `^.*a.*a.*a.*b$` does).
 */

/** Options of a wildcard pattern. */
export interface WildcardOptions {
  /** `?` matches exactly one character (index-name expressions); otherwise `?` is literal. */
  singleCharacter?: boolean;
}

/** A compiled wildcard pattern; compile once, match many texts. */
export class WildcardPattern {
  /** Text before the first wildcard: every match starts with it. */
  readonly literalPrefix: string;
  /** Whether the pattern holds a wildcard at all (else it matches itself only). */
  readonly hasWildcard: boolean;
  private readonly segments: readonly string[];
  private readonly singleCharacter: boolean;

  constructor(
    readonly pattern: string,
    options: WildcardOptions = {},
  ) {
    this.singleCharacter = options.singleCharacter === true && pattern.includes('?');
    this.segments = pattern.split('*');
    const firstWildcard = firstWildcardIndex(pattern, this.singleCharacter);
    this.hasWildcard = firstWildcard >= 0;
    this.literalPrefix = firstWildcard < 0 ? pattern : pattern.slice(0, firstWildcard);
  }

  /** Whether the whole `text` matches the pattern. */
  matches(text: string): boolean {
    const { segments } = this;
    const first = segments[0]!;
    if (segments.length === 1) return first.length === text.length && this.segmentAt(first, text, 0);
    const last = segments[segments.length - 1]!;
    const end = text.length - last.length;
    if (end < first.length || !this.segmentAt(first, text, 0) || !this.segmentAt(last, text, end)) return false;
    let position = first.length;
    for (let index = 1; index < segments.length - 1; index++) {
      const segment = segments[index]!;
      if (segment === '') continue;
      const found = this.find(segment, text, position, end);
      if (found < 0) return false;
      position = found + segment.length;
    }
    return true;
  }

  /** Leftmost place at or after `from` where `segment` fits wholly before `end`; -1 when none. */
  private find(segment: string, text: string, from: number, end: number): number {
    if (!this.singleCharacter || !segment.includes('?')) {
      const found = text.indexOf(segment, from);
      return found >= 0 && found + segment.length <= end ? found : -1;
    }
    for (let start = from; start + segment.length <= end; start++) if (this.segmentAt(segment, text, start)) return start;
    return -1;
  }

  /** Whether `segment` (no `*`) matches `text` at `start`. */
  private segmentAt(segment: string, text: string, start: number): boolean {
    if (!this.singleCharacter) return text.startsWith(segment, start);
    if (start + segment.length > text.length) return false;
    for (let index = 0; index < segment.length; index++) {
      const character = segment.charCodeAt(index);
      if (character !== QUESTION_MARK && character !== text.charCodeAt(start + index)) return false;
    }
    return true;
  }
}

const QUESTION_MARK = 63;

function firstWildcardIndex(pattern: string, singleCharacter: boolean): number {
  const star = pattern.indexOf('*');
  const question = singleCharacter ? pattern.indexOf('?') : -1;
  if (star < 0) return question;
  return question < 0 ? star : Math.min(star, question);
}

/** Whether `text` matches `pattern` (compiles the pattern each call: prefer `WildcardPattern` in loops). */
export function matchesWildcard(pattern: string, text: string, options: WildcardOptions = {}): boolean {
  return new WildcardPattern(pattern, options).matches(text);
}
