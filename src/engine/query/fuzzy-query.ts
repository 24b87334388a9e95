/**
 * Fuzzy matching (ES `fuzzy`, and `fuzziness` of `match`, `multi_match`, `match_bool_prefix`,
 * `simple_query_string` and `query_string`). `fuzziness` is read as Elasticsearch does: 0, 1, 2
 * edits, `AUTO` (= `AUTO:3,6`: terms shorter than 3 code points match exactly, shorter than 6 with
 * one edit, else two) or `AUTO:low,high`.
 *
 * A `FuzzyQuery` is expanded when it is bound to a shard, as Lucene's FuzzyQuery with its default
 * `top_terms_blended_freqs` rewrite: the shard's terms of the field within the edit distance
 * (a Levenshtein DFA, fuzzy-automaton.ts, run over the term dictionary from the exact prefix on)
 * each get the boost `1 − distance / min(term length, query term length)`; the best
 * `max_expansions` by boost (then term order) are kept, and scored as a disjunction of term
 * queries that all use the largest document frequency among them (BlendedTermQuery), each times
 * its boost. Expansions count against the clause limit (SearchContext.chargeExpansions).
 */
import type { LeafReader } from '../segment/leaf-reader.ts';
import { addHighlightAutomaton, forEachAcceptedTerm } from './multi-term-query.ts';
import { MatchNoneQuery } from './basic-queries.ts';
import { BooleanQuery } from './boolean-query.ts';
import type { Dfa } from './automaton.ts';
import { EngineError } from '../errors.ts';
import { dslError, readInteger, readScalarText } from './dsl-reader.ts';
import { editDistance, levenshteinDfa, MAX_EDITS } from './fuzzy-automaton.ts';
import type { HighlightTerms, Query, Weight } from './scorer.ts';
import { addHighlightTerm, NO_SUB_QUERIES } from './scorer.ts';
import type { SearchContext } from './search-context.ts';
import { TermQuery } from './term-query.ts';

/** A fuzziness setting: a fixed number of edits, or AUTO with its two length thresholds. */
export type Fuzziness = { kind: 'fixed'; edits: number } | { kind: 'auto'; low: number; high: number };

/** Default `max_expansions` of fuzzy queries. */
export const DEFAULT_FUZZY_MAX_EXPANSIONS = 50;

/** How a term is matched fuzzily. */
export interface FuzzyOptions {
  fuzziness: Fuzziness;
  /** Leading code points that must match exactly. */
  prefixLength: number;
  /** Most terms one fuzzy term expands to. */
  maxExpansions: number;
  /** Whether swapping two adjacent characters counts as one edit. */
  transpositions: boolean;
}

/** Reads a `fuzziness` value (0, 1, 2, "AUTO", "AUTO:low,high"). */
export function parseFuzziness(value: unknown, owner: string): Fuzziness {
  const text = readScalarText(value, 'fuzziness', owner).trim();
  const upper = text.toUpperCase();
  if (upper === 'AUTO') return { kind: 'auto', low: 3, high: 6 };
  if (upper.startsWith('AUTO:')) {
    const match = /^AUTO:(\d+),(\d+)$/.exec(upper);
    const low = match === null ? NaN : Number(match[1]);
    const high = match === null ? NaN : Number(match[2]);
    if (!(low >= 0 && high >= low)) throw dslError(`[${owner}] failed to find low and high distance values in fuzziness [${text}]`);
    return { kind: 'auto', low, high };
  }
  const number = text === '' ? NaN : Number(text);
  if (!Number.isFinite(number) || number < 0) throw dslError(`[${owner}] invalid fuzziness value: [${text}]`);
  if (!Number.isInteger(number) || number > MAX_EDITS) throw dslError(`[${owner}] Valid edit distances are [0, 1, 2] but was [${text}]`);
  return { kind: 'fixed', edits: number };
}

/** Edits allowed for `term` under a fuzziness setting. */
export function editsFor(fuzziness: Fuzziness, term: string): number {
  if (fuzziness.kind === 'fixed') return fuzziness.edits;
  const length = [...term].length;
  return length < fuzziness.low ? 0 : length < fuzziness.high ? 1 : 2;
}

/** Reads `prefix_length`, `max_expansions` and the transpositions flag next to a fuzziness. */
export function readFuzzyOptions(fuzziness: Fuzziness, prefixLength: unknown, maxExpansions: unknown, transpositions: boolean | undefined, owner: string): FuzzyOptions {
  return {
    fuzziness,
    prefixLength: prefixLength === undefined ? 0 : readInteger(prefixLength, 'prefix_length', owner),
    maxExpansions: maxExpansions === undefined ? DEFAULT_FUZZY_MAX_EXPANSIONS : readInteger(maxExpansions, 'max_expansions', owner, 1),
    transpositions: transpositions ?? true,
  };
}

/** Longest term (in code points, after the exact prefix) matched fuzzily: its automaton stays small and quick to build. */
export const MAX_FUZZY_TERM_LENGTH = 256;

/** The exact term when its fuzziness allows no edit, else a fuzzy query of it. */
export function fuzzyTermQuery(field: string, term: string, options: FuzzyOptions, boost = 1): Query {
  const edits = editsFor(options.fuzziness, term);
  const length = [...term].length;
  if (edits === 0 || options.prefixLength >= length) return new TermQuery(field, term, boost);
  if (length - options.prefixLength > MAX_FUZZY_TERM_LENGTH) {
    throw new EngineError('too_complex_to_determinize', `Term too complex: [${term.slice(0, 64)}...]: a fuzzy term may have at most ${MAX_FUZZY_TERM_LENGTH} characters after its prefix_length`);
  }
  return new FuzzyQuery(field, term, edits, options, boost);
}

/** Most Levenshtein DFAs kept for reuse (a multi-field query builds the same one per field; searches repeat). */
const MAX_CACHED_AUTOMATA = 256;
const automata = new Map<string, Dfa>();

/** The Levenshtein DFA of a term, built once while it stays among the most recently used. */
function cachedLevenshteinDfa(term: string, maxEdits: number, prefixLength: number, transpositions: boolean): Dfa {
  const key = `${maxEdits}\u0000${prefixLength}\u0000${transpositions ? 1 : 0}\u0000${term}`;
  let automaton = automata.get(key);
  if (automaton !== undefined) {
    automata.delete(key);
  } else {
    automaton = levenshteinDfa(term, maxEdits, prefixLength, transpositions);
    if (automata.size >= MAX_CACHED_AUTOMATA) automata.delete(automata.keys().next().value!);
  }
  automata.set(key, automaton);
  return automaton;
}

/** Terms of `field` within `maxEdits` of `term`; see the module comment. */
export class FuzzyQuery implements Query {
  private readonly automaton: Dfa;
  private readonly literalPrefix: string;

  constructor(
    readonly field: string,
    readonly term: string,
    readonly maxEdits: number,
    readonly options: FuzzyOptions,
    readonly boost = 1,
  ) {
    this.automaton = cachedLevenshteinDfa(term, maxEdits, options.prefixLength, options.transpositions);
    this.literalPrefix = [...term].slice(0, options.prefixLength).join('');
  }

  createWeight(context: SearchContext, needsScores: boolean, boost: number): Weight {
    return this.rewrite(context).createWeight(context, needsScores, boost);
  }

  /** The query this one stands for on the shard: its expansions as blended term queries (counted against the clause limit). */
  rewrite(context: SearchContext): Query {
    const expansions = this.expand(context.leaves);
    if (expansions.length === 0) return new MatchNoneQuery();
    context.chargeExpansions(expansions.length - 1);
    let maxDocFreq = 0;
    for (const { term } of expansions) maxDocFreq = Math.max(maxDocFreq, context.docFreq(this.field, term));
    const should = expansions.map(({ term, boost: similarity }) => new TermQuery(this.field, term, similarity, maxDocFreq));
    return new BooleanQuery({ must: [], should, filter: [], mustNot: [] }, 1, this.boost);
  }

  /** The best `maxExpansions` terms of the shard by boost, then term order. */
  expand(leaves: readonly LeafReader[]): Array<{ term: string; boost: number }> {
    const found = new Map<string, number>();
    const queryLength = [...this.term].length;
    for (const leaf of leaves) {
      forEachAcceptedTerm(leaf, this.field, this.automaton, this.literalPrefix, (_terms, term) => {
        if (found.has(term)) return;
        const distance = editDistance(term, this.term, this.maxEdits, this.options.transpositions);
        const similarity = distance === 0 ? 1 : 1 - distance / Math.min([...term].length, queryLength);
        found.set(term, Math.max(0, similarity));
      });
    }
    return [...found]
      .map(([term, boost]) => ({ term, boost }))
      .sort((left, right) => right.boost - left.boost || (left.term < right.term ? -1 : left.term > right.term ? 1 : 0))
      .slice(0, this.options.maxExpansions);
  }

  extractTerms(out: HighlightTerms): void {
    addHighlightTerm(out.terms, this.field, this.term);
    addHighlightAutomaton(out, this.field, this.automaton);
  }

  subQueries(): readonly Query[] {
    return NO_SUB_QUERIES;
  }
}
