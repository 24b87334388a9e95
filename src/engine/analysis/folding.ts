/**
 * Lowercasing and ASCII folding of words: compatibility decomposition, removal of the combining
 * diacritical marks used by Latin, Greek and Cyrillic, and the special letters that do not
 * decompose (ß → ss, æ → ae, ø → o, œ → oe, ł → l, đ → d, þ → th, …).
 */

/** Combining diacritical marks (the blocks Latin, Greek and Cyrillic use) and format characters. */
const REMOVED_MARKS = /[\u0300-\u036f\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f\p{Cf}]/gu;

/** Letters that do not decompose into an ASCII base letter, after lowercasing. */
const SPECIAL_LETTERS: Readonly<Record<string, string>> = {
  ß: 'ss',
  æ: 'ae',
  ø: 'o',
  œ: 'oe',
  ł: 'l',
  đ: 'd',
  ð: 'd',
  þ: 'th',
  ı: 'i',
  ħ: 'h',
  ŧ: 't',
  ς: 'σ',
  '’': "'",
};
const SPECIAL_LETTER_PATTERN = new RegExp(`[${Object.keys(SPECIAL_LETTERS).join('')}]`, 'g');

const NON_ASCII = /[^\x00-\x7f]/;

/** Folded forms of recently seen non-ASCII words; cleared when full to bound memory. */
const foldedWords = new Map<string, string>();
const FOLD_CACHE_LIMIT = 50_000;

/** Strings this long or longer may be slices that keep their whole source string alive in V8. */
const SLICE_MIN_LENGTH = 13;

function replaceSpecialLetter(letter: string): string {
  return SPECIAL_LETTERS[letter]!;
}

/** Lowercases and folds a word known to contain non-ASCII characters. */
export function foldNonAsciiWord(word: string): string {
  const cached = foldedWords.get(word);
  if (cached !== undefined) return cached;
  const folded = word
    .normalize('NFKD')
    .replace(REMOVED_MARKS, '')
    .toLowerCase()
    .replace(SPECIAL_LETTER_PATTERN, replaceSpecialLetter)
    .normalize('NFC');
  if (foldedWords.size >= FOLD_CACHE_LIMIT) foldedWords.clear();
  foldedWords.set(ownedString(word), folded);
  return folded;
}

/** Lowercases and folds any string (a word, or a whole query term with spaces). */
export function foldText(text: string): string {
  return NON_ASCII.test(text) ? foldNonAsciiWord(text) : text.toLowerCase();
}

/** True when `text` is pure ASCII. */
export function isAscii(text: string): boolean {
  return !NON_ASCII.test(text);
}

/**
 * A copy of `text` that does not keep a larger string alive: a slice of a long document must not
 * pin the document in memory for as long as an index holds the term.
 */
export function ownedString(text: string): string {
  return text.length < SLICE_MIN_LENGTH ? text : (' ' + text).slice(1);
}
