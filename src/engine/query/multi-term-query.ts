/**
 * Queries over a set of terms of one inverted field (terms, prefix, term range, wildcard and
 * regexp through an automaton), executed like
 * Elasticsearch's constant-score rewrite: the postings of every matching term are ORed into a
 * per-leaf bitset and every doc scores the query's boost.
 */
import type { LeafReader, PostingsCursor, TermsIterator } from '../segment/leaf-reader.ts';
import type { Dfa } from './automaton.ts';
import { BitSetScorer, DocBitSet } from './doc-set-scorers.ts';
import type { HighlightTerms, Query, Scorer, Weight } from './scorer.ts';
import { addHighlightTerm, NO_SUB_QUERIES, SimpleWeight } from './scorer.ts';
import type { SearchContext } from './search-context.ts';

/** Most terms a prefix query expands to per leaf (like ES's max_expansions ceiling). */
export const MAX_PREFIX_EXPANSIONS = 1024;

/** Base of constant-score term-union queries. */
abstract class TermUnionQuery implements Query {
  constructor(
    readonly field: string,
    readonly boost: number,
  ) {}

  /** ORs the postings of the matching terms of the leaf into `bits`; false when no term matched. */
  abstract fillLeaf(leaf: LeafReader, bits: DocBitSet): boolean;

  abstract extractTerms(out: HighlightTerms): void;

  subQueries(): readonly Query[] {
    return NO_SUB_QUERIES;
  }

  createWeight(_context: SearchContext, needsScores: boolean, boost: number): Weight {
    return new TermUnionWeight(this, needsScores ? boost * this.boost : 0);
  }
}

class TermUnionWeight extends SimpleWeight {
  constructor(
    private readonly query: TermUnionQuery,
    private readonly constantScore: number,
  ) {
    super();
  }

  scorer(leaf: LeafReader): Scorer | null {
    const bits = new DocBitSet(leaf.maxDoc);
    if (!this.query.fillLeaf(leaf, bits)) return null;
    return new BitSetScorer(bits, this.constantScore);
  }
}

/** Docs containing any of the given exact terms (ES `terms` on text and keyword fields). */
export class TermSetQuery extends TermUnionQuery {
  constructor(
    field: string,
    readonly terms: readonly string[],
    boost = 1,
  ) {
    super(field, boost);
  }

  fillLeaf(leaf: LeafReader, bits: DocBitSet): boolean {
    let found = false;
    for (const term of this.terms) {
      const cursor = leaf.postings(this.field, term);
      if (cursor === null) continue;
      bits.addPostings(cursor);
      found = true;
    }
    return found;
  }

  extractTerms(out: HighlightTerms): void {
    for (const term of this.terms) addHighlightTerm(out.terms, this.field, term);
  }
}

/** Docs containing a term that starts with `prefix` (at most MAX_PREFIX_EXPANSIONS terms). */
export class PrefixQuery extends TermUnionQuery {
  constructor(
    field: string,
    readonly prefix: string,
    boost = 1,
  ) {
    super(field, boost);
  }

  fillLeaf(leaf: LeafReader, bits: DocBitSet): boolean {
    const terms = leaf.terms(this.field, this.prefix);
    let expansions = 0;
    let cursor: PostingsCursor | undefined;
    for (let term = terms.next(); term !== null && expansions < MAX_PREFIX_EXPANSIONS; term = terms.next()) {
      if (!term.startsWith(this.prefix)) break;
      bits.addPostings((cursor = terms.postings(cursor)));
      expansions++;
    }
    return expansions > 0;
  }

  extractTerms(out: HighlightTerms): void {
    addHighlightTerm(out.prefixes, this.field, this.prefix);
  }
}

/** Bounds of a range over strings; null means unbounded. */
export interface TermBounds {
  lower: string | null;
  upper: string | null;
  includeLower: boolean;
  includeUpper: boolean;
}

/** Whether a term lies within string bounds (UTF-16 code unit order, like the term dictionary). */
export function termInBounds(term: string, bounds: TermBounds): boolean {
  if (bounds.lower !== null && (term < bounds.lower || (!bounds.includeLower && term === bounds.lower))) return false;
  if (bounds.upper !== null && (term > bounds.upper || (!bounds.includeUpper && term === bounds.upper))) return false;
  return true;
}

/** Docs containing a term within the bounds (range on text fields). */
export class TermRangeQuery extends TermUnionQuery {
  constructor(
    field: string,
    readonly bounds: TermBounds,
    boost = 1,
  ) {
    super(field, boost);
  }

  fillLeaf(leaf: LeafReader, bits: DocBitSet): boolean {
    const { lower, upper } = this.bounds;
    const terms = lower === null ? leaf.terms(this.field) : leaf.terms(this.field, lower);
    let found = false;
    let cursor: PostingsCursor | undefined;
    for (let term = terms.next(); term !== null; term = terms.next()) {
      if (upper !== null && term > upper) break;
      if (!termInBounds(term, this.bounds)) continue;
      bits.addPostings((cursor = terms.postings(cursor)));
      found = true;
    }
    return found;
  }

  extractTerms(): void {}
}

/**
 * Docs containing a term the automaton accepts (ES `wildcard` and `regexp`): the leaf's terms from
 * the automaton's literal prefix on are each run through the DFA, in time linear in their length.
 */
export class AutomatonQuery extends TermUnionQuery {
  private readonly prefix: string;

  constructor(
    field: string,
    readonly automaton: Dfa,
    /** The pattern as given, for highlighting and explanations. */
    readonly pattern: string,
    boost = 1,
  ) {
    super(field, boost);
    this.prefix = automaton.literalPrefix();
  }

  fillLeaf(leaf: LeafReader, bits: DocBitSet): boolean {
    let found = false;
    let cursor: PostingsCursor | undefined;
    forEachAcceptedTerm(leaf, this.field, this.automaton, this.prefix, (terms) => {
      bits.addPostings((cursor = terms.postings(cursor)));
      found = true;
    });
    return found;
  }

  extractTerms(out: HighlightTerms): void {
    addHighlightAutomaton(out, this.field, this.automaton);
  }
}

/** Adds a term automaton to a highlight collection (when it takes automata). */
export function addHighlightAutomaton(out: HighlightTerms, field: string, automaton: Dfa): void {
  if (out.automata === undefined) return;
  let set = out.automata.get(field);
  if (set === undefined) out.automata.set(field, (set = new Set()));
  set.add(automaton);
}

/**
 * Calls `visit` with the iterator on each term of the leaf's field that the automaton accepts, in
 * term order, from `prefix` on (every accepted term starts with it). A rejected term sends the scan
 * to the automaton's next candidate (`Dfa.nextCandidate`): the terms before it cannot match; a few
 * are read past, a longer run is skipped by seeking the dictionary there. When candidates skip
 * nothing (a leading `*`), they are asked for less and less often, so the scan costs about what
 * reading every term does.
 */
export function forEachAcceptedTerm(leaf: LeafReader, field: string, automaton: Dfa, prefix: string, visit: (terms: TermsIterator, term: string) => void): void {
  if (!automaton.matchesAnything) return;
  let terms = prefix === '' ? leaf.terms(field) : leaf.terms(field, prefix);
  let term = terms.next();
  // Rejected terms to read before asking for a candidate again; doubled each time one skips nothing.
  let patience = 0;
  let backoff = 1;
  while (term !== null && term.startsWith(prefix)) {
    if (automaton.matches(term)) {
      visit(terms, term);
      term = terms.next();
      continue;
    }
    if (patience > 0) {
      patience--;
      term = terms.next();
      continue;
    }
    const target = automaton.nextCandidate(term);
    if (target === null) return;
    term = terms.next();
    if (target === undefined) continue;
    // Reading on is cheaper than seeking over a few terms: seek only past a longer run.
    let read = 0;
    while (term !== null && term < target && read < SEEK_AFTER_TERMS) {
      term = terms.next();
      read++;
    }
    if (term !== null && term < target) {
      terms = leaf.terms(field, target);
      term = terms.next();
      backoff = 1;
    } else if (read === 0) {
      backoff = Math.min(backoff * 2, MAX_CANDIDATE_BACKOFF);
      patience = backoff;
    }
  }
}

/** Most rejected terms read before the automaton is asked for a seek target again (patterns such as `*x*` never skip). */
const MAX_CANDIDATE_BACKOFF = 256;

/** Terms read one by one towards a seek target before the dictionary is sought to it instead. */
const SEEK_AFTER_TERMS = 16;
