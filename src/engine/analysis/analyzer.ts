/**
 * Text analysis: turns a field value or a query string into terms with positions and offsets.
 * Analyzers: `standard` (Unicode words, lowercased, ASCII folded), `english` (standard, then
 * possessives, stop words and Porter stemming), `whitespace` (split on whitespace, as is) and
 * `keyword` (the whole string as one term).
 */
import { EngineError } from '../errors.ts';
import type { AnalyzerName } from '../mapping/mapping.ts';
import { englishTerm } from './english.ts';
import { foldNonAsciiWord, foldText, isAscii, ownedString } from './folding.ts';
import { TokenSpans, scanWhitespaceSeparated, scanWords } from './word-scanner.ts';

/** One token: its term, its position, and where it came from in the original string. */
export interface Token {
  term: string;
  /** 0 for the first token; dropped tokens and stop words leave gaps. */
  position: number;
  /** Offset of the token's first UTF-16 unit in the original string. */
  startOffset: number;
  /** Offset just past the token's last UTF-16 unit. */
  endOffset: number;
}

/** Terms with their positions as parallel arrays: what indexing needs, without offsets. */
export interface AnalyzedTerms {
  terms: string[];
  positions: number[];
}

/** Longest token (in UTF-16 units) the word and whitespace analyzers keep; longer ones are dropped. */
export const MAX_TOKEN_LENGTH = 255;

/** Collects analysis output; the arrays it does not need stay null. */
class TokenSink {
  readonly terms: string[] = [];
  readonly positions: number[] | null;
  readonly startOffsets: number[] | null;
  readonly endOffsets: number[] | null;

  constructor(withPositions: boolean, withOffsets: boolean) {
    this.positions = withPositions ? [] : null;
    this.startOffsets = withOffsets ? [] : null;
    this.endOffsets = withOffsets ? [] : null;
  }

  add(term: string, position: number, startOffset: number, endOffset: number): void {
    this.terms.push(term);
    if (this.positions !== null) this.positions.push(position);
    if (this.startOffsets !== null) {
      this.startOffsets.push(startOffset);
      this.endOffsets!.push(endOffset);
    }
  }
}

/** Reused by every call: analysis is synchronous, so one scan is never interleaved with another. */
const spans = new TokenSpans();

/**
 * The one word loop of the `standard` and `english` analyzers: each word of `text`, its index in
 * the scan being its position, goes to `term` as a lowercased, folded (and for `english`, stemmed)
 * string, or, when `span` is given, a plain ASCII word of a non-english pass goes to `span` as a
 * range of the lowercased text instead (no string sliced). `owned`: term strings are copied out
 * of the text they were sliced from.
 */
function scanTerms(
  text: string,
  english: boolean,
  owned: boolean,
  term: (term: string, position: number, start: number, end: number) => void,
  span: ((text: string, start: number, end: number, position: number) => void) | null,
): void {
  const wholeTextAscii = isAscii(text);
  // Lowercasing keeps every UTF-16 offset except for U+0130 (İ → i + combining dot), so ASCII
  // words can be sliced from the lowercased text directly.
  const lowered = wholeTextAscii || !text.includes('\u0130') ? text.toLowerCase() : null;
  scanWords(wholeTextAscii ? lowered! : text, spans, wholeTextAscii);
  const { starts, ends, ascii, count } = spans;
  for (let position = 0; position < count; position++) {
    const start = starts[position]!;
    const end = ends[position]!;
    if (end - start > MAX_TOKEN_LENGTH) continue;
    if (span !== null && ascii[position] !== 0 && lowered !== null && !english) {
      span(lowered, start, end, position);
      continue;
    }
    let word: string;
    if (ascii[position] === 0) word = foldNonAsciiWord(text.slice(start, end));
    else if (lowered !== null) word = owned ? ownedString(lowered.slice(start, end)) : lowered.slice(start, end);
    else word = owned ? ownedString(text.slice(start, end).toLowerCase()) : text.slice(start, end).toLowerCase();
    if (english) {
      const englishForm = englishTerm(word);
      if (englishForm === null) continue;
      word = englishForm;
    }
    term(word, position, start, end);
  }
}

/** Emits the words of `text`, each span's index being its position. */
function emitWords(text: string, english: boolean, sink: TokenSink): void {
  scanTerms(text, english, true, (term, position, start, end) => sink.add(term, position, start, end), null);
}

/**
 * Receives the terms of an indexing pass in order, without a string sliced per token where it can
 * be avoided: a term is either a span of a string (`span`) or a string (`term`).
 */
export interface TermReceiver {
  /** A term that is `text.slice(start, end)`. */
  span(text: string, start: number, end: number, position: number): void;
  /** A term as a string. */
  term(term: string, position: number): void;
}

/** `emitWords` for indexing: ASCII words go out as spans of the lowercased text. */
function receiveWords(text: string, english: boolean, receiver: TermReceiver): void {
  scanTerms(
    text,
    english,
    false,
    (term, position) => receiver.term(term, position),
    (lowered, start, end, position) => receiver.span(lowered, start, end, position),
  );
}

/**
 * The indexing fast path: passes the terms of `text` with their positions to `receiver` (which
 * must copy, with `ownedString`, any term string it keeps), in the order `analyzeTermPositions`
 * returns them.
 */
export function receiveTerms(analyzer: AnalyzerName, text: string, receiver: TermReceiver): void {
  switch (analyzer) {
    case 'standard':
      receiveWords(text, false, receiver);
      return;
    case 'english':
      receiveWords(text, true, receiver);
      return;
    case 'whitespace': {
      scanWhitespaceSeparated(text, spans);
      const { starts, ends, count } = spans;
      for (let position = 0; position < count; position++) {
        const start = starts[position]!;
        const end = ends[position]!;
        if (end - start <= MAX_TOKEN_LENGTH) receiver.span(text, start, end, position);
      }
      return;
    }
    case 'keyword':
      receiver.term(text, 0);
      return;
    default:
      throw new EngineError('illegal_argument', `unknown analyzer [${String(analyzer)}]`);
  }
}

/** Emits the whitespace-separated runs of `text` unchanged. */
function emitWhitespaceSeparated(text: string, sink: TokenSink): void {
  scanWhitespaceSeparated(text, spans);
  const { starts, ends, count } = spans;
  for (let position = 0; position < count; position++) {
    const start = starts[position]!;
    const end = ends[position]!;
    if (end - start > MAX_TOKEN_LENGTH) continue;
    sink.add(ownedString(text.slice(start, end)), position, start, end);
  }
}

function run(analyzer: AnalyzerName, text: string, sink: TokenSink): void {
  switch (analyzer) {
    case 'standard':
      emitWords(text, false, sink);
      return;
    case 'english':
      emitWords(text, true, sink);
      return;
    case 'whitespace':
      emitWhitespaceSeparated(text, sink);
      return;
    case 'keyword':
      sink.add(text, 0, 0, text.length);
      return;
    default:
      throw new EngineError('illegal_argument', `unknown analyzer [${String(analyzer)}]`);
  }
}

/** Tokens of `text` with positions and offsets (for highlighting and phrase matching). */
export function analyze(analyzer: AnalyzerName, text: string): Token[] {
  const sink = new TokenSink(true, true);
  run(analyzer, text, sink);
  const { terms } = sink;
  const positions = sink.positions!;
  const startOffsets = sink.startOffsets!;
  const endOffsets = sink.endOffsets!;
  const tokens: Token[] = new Array(terms.length);
  for (let index = 0; index < terms.length; index++) {
    tokens[index] = {
      term: terms[index]!,
      position: positions[index]!,
      startOffset: startOffsets[index]!,
      endOffset: endOffsets[index]!,
    };
  }
  return tokens;
}

/** Terms of `text` in order, without positions or offsets. */
export function analyzeTerms(analyzer: AnalyzerName, text: string): string[] {
  const sink = new TokenSink(false, false);
  run(analyzer, text, sink);
  return sink.terms;
}

/** Terms of `text` with their positions: the indexing fast path. */
export function analyzeTermPositions(analyzer: AnalyzerName, text: string): AnalyzedTerms {
  const sink = new TokenSink(true, false);
  run(analyzer, text, sink);
  return { terms: sink.terms, positions: sink.positions! };
}

/**
 * One query term normalized as the analyzer would index it, without splitting (prefix, wildcard
 * and term-like queries on text fields): lowercased and folded for `standard` and `english`,
 * unchanged for `whitespace` and `keyword`.
 */
export function normalizeTerm(analyzer: AnalyzerName, text: string): string {
  switch (analyzer) {
    case 'standard':
    case 'english':
      return foldText(text);
    case 'whitespace':
    case 'keyword':
      return text;
    default:
      throw new EngineError('illegal_argument', `unknown analyzer [${String(analyzer)}]`);
  }
}
