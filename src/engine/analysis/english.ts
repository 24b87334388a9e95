/**
 * English term filters: possessive stripping, the classic Lucene stop-word list and Porter
 * stemming (the `stemmer` package), applied to already folded terms.
 */
import { stemmer } from 'stemmer';
import { ownedString } from './folding.ts';

/** The 33 English stop words of Lucene's `EnglishAnalyzer`. */
export const ENGLISH_STOP_WORDS: ReadonlySet<string> = new Set([
  'a',
  'an',
  'and',
  'are',
  'as',
  'at',
  'be',
  'but',
  'by',
  'for',
  'if',
  'in',
  'into',
  'is',
  'it',
  'no',
  'not',
  'of',
  'on',
  'or',
  'such',
  'that',
  'the',
  'their',
  'then',
  'there',
  'these',
  'they',
  'this',
  'to',
  'was',
  'will',
  'with',
]);

/** Final term (or '' for a stop word) of recently seen folded terms; cleared when full. */
const englishTerms = new Map<string, string>();
const CACHE_LIMIT = 100_000;

/** Removes a trailing possessive `'s` (`john's` → `john`); expects `’` already folded to `'`. */
export function stripPossessive(term: string): string {
  const length = term.length;
  return length > 2 && term.charCodeAt(length - 1) === 0x73 && term.charCodeAt(length - 2) === 0x27
    ? term.slice(0, length - 2)
    : term;
}

/**
 * The English form of a lowercase, folded term: possessive stripped, then Porter stemmed; null for
 * a stop word. Results are cached (stemming runs a dozen regular expressions).
 */
export function englishTerm(folded: string): string | null {
  let result = englishTerms.get(folded);
  if (result === undefined) {
    const term = stripPossessive(folded);
    result = ENGLISH_STOP_WORDS.has(term) ? '' : ownedString(stemmer(term));
    if (englishTerms.size >= CACHE_LIMIT) englishTerms.clear();
    englishTerms.set(ownedString(folded), result);
  }
  return result === '' ? null : result;
}
