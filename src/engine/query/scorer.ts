/**
 * The `Query → Weight → Scorer` model: a parsed `Query` is leaf-independent; `createWeight`
 * binds it to one shard's statistics; `Weight.scorer` iterates the matching docs of one leaf.
 */
import type { LeafReader } from '../segment/leaf-reader.ts';
import { NO_MORE_DOCS } from '../segment/leaf-reader.ts';
import type { Dfa } from './automaton.ts';
import type { SearchContext } from './search-context.ts';

/**
 * Relative slack added to score upper bounds so that float rounding in the real score can never
 * exceed a bound that pruning relies on.
 */
export const BOUND_SLACK = 1 + 1e-9;

/** Iterates one leaf's matching docs in increasing order and scores the current one. */
export abstract class Scorer {
  /** Current doc; -1 before the first `nextDoc`/`advance`, NO_MORE_DOCS when exhausted. */
  doc = -1;

  /** Moves to the next matching doc and returns it. */
  abstract nextDoc(): number;

  /** Moves to the first matching doc >= target (target > doc) and returns it. */
  abstract advance(target: number): number;

  /** Score of the current doc (0 when the weight was created without scores). */
  abstract score(): number;

  /** Estimated number of matching docs, used to order conjunctions (cheapest leads). */
  abstract cost(): number;

  /**
   * Moves the block pointer to the block containing `target` and returns the last doc of the
   * window for which `maxScore` gives a bound. Default: one window for the whole leaf.
   */
  shallowAdvance(_target: number): number {
    return NO_MORE_DOCS;
  }

  /** Upper bound of the scores of docs from the last shallow target up to `upTo` inclusive. */
  abstract maxScore(upTo: number): number;
}

/** A query bound to one shard's statistics; produces a scorer per leaf. */
export interface Weight {
  /** Scorer over the leaf's matching docs (deleted docs included), or null when none can match. */
  scorer(leaf: LeafReader, leafIndex: number): Scorer | null;
  /**
   * When the weight is a pure scoring disjunction (or a single term) the per-clause scorers, so
   * the top-k loop can prune with block-max bounds; null otherwise.
   */
  disjunctionClauses(leaf: LeafReader, leafIndex: number): Scorer[] | null;
  /** Exact number of live docs of the leaf that match, when known without iterating; else -1. */
  count(leaf: LeafReader, leafIndex: number): number;
}

/** Field → terms (and prefixes, and automata: wildcard, regexp, fuzzy) a query matches, for highlighting. */
export interface HighlightTerms {
  terms: Map<string, Set<string>>;
  prefixes: Map<string, Set<string>>;
  /** Term automata by field; absent when the collector does not take them. */
  automata?: Map<string, Set<Dfa>>;
}

/** A parsed, leaf-independent query. */
export interface Query {
  /** Binds the query to the shard; `boost` is the product of enclosing boosts. */
  createWeight(context: SearchContext, needsScores: boolean, boost: number): Weight;
  /** Adds the terms this query matches to `out` (positive clauses only). */
  extractTerms(out: HighlightTerms): void;
  /** The queries this one combines (none for a leaf query), walked by the clause-count limit. */
  subQueries(): readonly Query[];
}

/** The `subQueries` of a leaf query. */
export const NO_SUB_QUERIES: readonly Query[] = Object.freeze([]);

/** Weight helper for queries that are never a disjunction. */
export abstract class SimpleWeight implements Weight {
  abstract scorer(leaf: LeafReader, leafIndex: number): Scorer | null;

  disjunctionClauses(): Scorer[] | null {
    return null;
  }

  count(_leaf: LeafReader, _leafIndex: number): number {
    return -1;
  }
}

/** Adds a term to a highlight map. */
export function addHighlightTerm(map: Map<string, Set<string>>, field: string, term: string): void {
  let set = map.get(field);
  if (set === undefined) {
    set = new Set();
    map.set(field, set);
  }
  set.add(term);
}
