/**
 * Levenshtein automata for fuzzy matching: the NFA of every string within `maxEdits` edits of a
 * term (insertions, deletions, substitutions and, with `transpositions`, swaps of two adjacent
 * characters — the "optimal string alignment" distance Lucene uses), after an exact prefix of
 * `prefixLength` code points. It is determinized by automaton.ts under the same bounds as
 * `wildcard`/`regexp` patterns, so a term of the dictionary is matched in one pass over its code
 * points. `editDistance` then gives the exact distance of a matched term, for its boost.
 */
import { determinizeNfa, DEFAULT_MAX_DETERMINIZED_STATES, MAX_CODE_POINT, Nfa, type Dfa } from './automaton.ts';

/** Largest edit distance fuzzy queries support (as Lucene's LevenshteinAutomata). */
export const MAX_EDITS = 2;

/** DFA accepting the strings that start with the first `prefixLength` code points of `term` and are within `maxEdits` of it. */
export function levenshteinDfa(term: string, maxEdits: number, prefixLength: number, transpositions: boolean): Dfa {
  const codePoints = [...term].map((character) => character.codePointAt(0)!);
  const prefix = codePoints.slice(0, prefixLength);
  const rest = codePoints.slice(prefix.length);
  const nfa = new Nfa(DEFAULT_MAX_DETERMINIZED_STATES);
  const start = nfa.addState();
  let entry = start;
  for (const codePoint of prefix) {
    const next = nfa.addState();
    nfa.addRange(entry, codePoint, codePoint, next);
    entry = next;
  }
  const length = rest.length;
  // state(i, e): i code points of the rest read, e edits spent.
  const states: number[][] = [];
  for (let index = 0; index <= length; index++) {
    states.push([]);
    for (let edits = 0; edits <= maxEdits; edits++) states[index]!.push(nfa.addState());
  }
  const accept = nfa.addState();
  nfa.addEpsilon(entry, states[0]![0]!);
  for (let index = 0; index <= length; index++) {
    for (let edits = 0; edits <= maxEdits; edits++) {
      const state = states[index]![edits]!;
      if (index === length) nfa.addEpsilon(state, accept);
      if (index < length) nfa.addRange(state, rest[index]!, rest[index]!, states[index + 1]![edits]!);
      if (edits === maxEdits) continue;
      nfa.addRange(state, 0, MAX_CODE_POINT, states[index]![edits + 1]!);
      if (index === length) continue;
      nfa.addRange(state, 0, MAX_CODE_POINT, states[index + 1]![edits + 1]!);
      nfa.addEpsilon(state, states[index + 1]![edits + 1]!);
      if (transpositions && index + 1 < length && rest[index] !== rest[index + 1]) {
        const swapped = nfa.addState();
        nfa.addRange(state, rest[index + 1]!, rest[index + 1]!, swapped);
        nfa.addRange(swapped, rest[index]!, rest[index]!, states[index + 2]![edits + 1]!);
      }
    }
  }
  return determinizeNfa(nfa, start, accept);
}

/**
 * Edit distance between two strings (optimal string alignment with `transpositions`, else
 * Levenshtein), counted in code points; any distance above `max` is reported as `max + 1`.
 */
export function editDistance(left: string, right: string, max: number, transpositions: boolean): number {
  const a = [...left];
  const b = [...right];
  if (Math.abs(a.length - b.length) > max) return max + 1;
  let previousRow: number[] = [];
  let row = Array.from({ length: b.length + 1 }, (_, index) => index);
  for (let i = 1; i <= a.length; i++) {
    const next = [i];
    let rowMin = i;
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let value = Math.min(row[j]! + 1, next[j - 1]! + 1, row[j - 1]! + cost);
      if (transpositions && i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) value = Math.min(value, previousRow[j - 2]! + 1);
      next.push(value);
      rowMin = Math.min(rowMin, value);
    }
    if (rowMin > max) return max + 1;
    previousRow = row;
    row = next;
  }
  return Math.min(row[b.length]!, max + 1);
}
