/**
 * ES `match_phrase_prefix` (and `multi_match` type `phrase_prefix`): a phrase whose last term is a
 * prefix. Like ES's MultiPhrasePrefixQuery the prefix is expanded when the query is bound to the
 * shard, to at most `maxExpansions` terms in term order; the last position then matches any of
 * them (their postings merged into one cursor) and the phrase is scored like Lucene's
 * MultiPhraseQuery: BM25 of the phrase freq with the idfs of every term, expansions included,
 * summed. A prefix alone becomes a `bool` of the expanded terms, as Lucene rewrites a one-position
 * MultiPhraseQuery.
 */
import type { LeafReader, PostingsCursor } from '../segment/leaf-reader.ts';
import { NO_MORE_DOCS } from '../segment/leaf-reader.ts';
import { MatchNoneQuery } from './basic-queries.ts';
import type { Bm25Scoring } from './bm25.ts';
import { BooleanQuery } from './boolean-query.ts';
import { PhraseScorer, phraseScoring } from './phrase-query.ts';
import type { HighlightTerms, Query, Scorer, Weight } from './scorer.ts';
import { addHighlightTerm, NO_SUB_QUERIES, SimpleWeight } from './scorer.ts';
import type { SearchContext } from './search-context.ts';
import { TermQuery } from './term-query.ts';

/** Default number of terms the prefix expands to (ES `max_expansions`). */
export const DEFAULT_PHRASE_PREFIX_EXPANSIONS = 50;

/** The phrase `terms` followed by any term starting with `prefix`. */
export class PhrasePrefixQuery implements Query {
  constructor(
    readonly field: string,
    readonly terms: readonly string[],
    readonly prefix: string,
    /** Position of each term, then of the prefix, relative to the first. */
    readonly positions: readonly number[],
    readonly slop: number,
    readonly maxExpansions: number,
    readonly boost = 1,
  ) {}

  createWeight(context: SearchContext, needsScores: boolean, boost: number): Weight {
    const expansions = expandPrefix(context.leaves, this.field, this.prefix, this.maxExpansions);
    if (expansions.length === 0) return new MatchNoneQuery().createWeight();
    if (this.terms.length === 0) {
      const should = expansions.map((term) => new TermQuery(this.field, term));
      return new BooleanQuery({ must: [], should, filter: [], mustNot: [] }, 1, this.boost).createWeight(context, needsScores, boost);
    }
    return new PhrasePrefixWeight(this, expansions, context, needsScores, boost * this.boost);
  }

  extractTerms(out: HighlightTerms): void {
    for (const term of this.terms) addHighlightTerm(out.terms, this.field, term);
    addHighlightTerm(out.prefixes, this.field, this.prefix);
  }

  subQueries(): readonly Query[] {
    return NO_SUB_QUERIES;
  }
}

/** The first `maxExpansions` terms of the shard starting with `prefix`, in term order. */
function expandPrefix(leaves: readonly LeafReader[], field: string, prefix: string, maxExpansions: number): string[] {
  const found = new Set<string>();
  for (const leaf of leaves) {
    const terms = leaf.terms(field, prefix);
    let taken = 0;
    for (let term = terms.next(); term !== null && taken < maxExpansions; term = terms.next()) {
      if (!term.startsWith(prefix)) break;
      found.add(term);
      taken++;
    }
  }
  return [...found].sort((left, right) => (left < right ? -1 : left > right ? 1 : 0)).slice(0, maxExpansions);
}

class PhrasePrefixWeight extends SimpleWeight {
  private readonly scoring: Bm25Scoring | null;

  constructor(
    private readonly query: PhrasePrefixQuery,
    private readonly expansions: readonly string[],
    context: SearchContext,
    needsScores: boolean,
    boost: number,
  ) {
    super();
    this.scoring = needsScores ? phraseScoring(context, query.field, [...query.terms, ...expansions], boost) : null;
  }

  scorer(leaf: LeafReader): Scorer | null {
    const { field, terms, prefix, positions, slop } = this.query;
    if (!leaf.hasPositions(field)) return null;
    const cursors: PostingsCursor[] = [];
    for (const term of terms) {
      const cursor = leaf.postings(field, term);
      if (cursor === null || cursor.docFreq === 0) return null;
      cursors.push(cursor);
    }
    const expanded: PostingsCursor[] = [];
    for (const term of this.expansions) {
      const cursor = leaf.postings(field, term);
      if (cursor !== null && cursor.docFreq > 0) expanded.push(cursor);
    }
    if (expanded.length === 0) return null;
    cursors.push(expanded.length === 1 ? expanded[0]! : new UnionPostingsCursor(expanded));
    // The prefix position is named apart from every real term so it never counts as a repeat.
    return new PhraseScorer(cursors, [...terms, `\u0000${prefix}*`], positions, slop, this.scoring, leaf, field);
  }
}

/** Postings of several terms read as one: docs in union, frequencies summed, positions merged. */
export class UnionPostingsCursor implements PostingsCursor {
  doc = -1;
  readonly docFreq: number;
  readonly maxFreq: number;
  readonly minNorm: number;

  constructor(private readonly cursors: readonly PostingsCursor[]) {
    this.docFreq = cursors.reduce((sum, cursor) => sum + cursor.docFreq, 0);
    this.maxFreq = cursors.reduce((sum, cursor) => sum + cursor.maxFreq, 0);
    this.minNorm = cursors.reduce((min, cursor) => Math.min(min, cursor.minNorm), Infinity);
  }

  next(): number {
    const current = this.doc;
    for (const cursor of this.cursors) if (cursor.doc <= current) cursor.next();
    return this.settle();
  }

  advance(target: number): number {
    for (const cursor of this.cursors) if (cursor.doc < target) cursor.advance(target);
    return this.settle();
  }

  private settle(): number {
    let min = NO_MORE_DOCS;
    for (const cursor of this.cursors) if (cursor.doc < min) min = cursor.doc;
    return (this.doc = min);
  }

  freq(): number {
    let sum = 0;
    for (const cursor of this.cursors) if (cursor.doc === this.doc) sum += cursor.freq();
    return sum;
  }

  positions(): ArrayLike<number> {
    const merged: number[] = [];
    for (const cursor of this.cursors) if (cursor.doc === this.doc) for (const position of Array.from(cursor.positions())) merged.push(position);
    return merged.sort((left, right) => left - right);
  }

  shallowAdvance(target: number): number {
    let end = NO_MORE_DOCS;
    for (const cursor of this.cursors) end = Math.min(end, cursor.shallowAdvance(target));
    return end;
  }

  blockMaxFreq(): number {
    return this.cursors.reduce((sum, cursor) => sum + cursor.blockMaxFreq(), 0);
  }

  blockMinNorm(): number {
    return this.cursors.reduce((min, cursor) => Math.min(min, cursor.blockMinNorm()), Infinity);
  }
}
