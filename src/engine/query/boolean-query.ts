/** `bool` with must / should / filter / must_not and minimum_should_match. */
import type { LeafReader } from '../segment/leaf-reader.ts';
import { ConjunctionScorer, DisjunctionScorer, ReqExclScorer, ReqOptScorer } from './boolean-scorers.ts';
import { AllDocsScorer } from './doc-set-scorers.ts';
import type { HighlightTerms, Query, Scorer, Weight } from './scorer.ts';
import type { SearchContext } from './search-context.ts';

/** Clauses of a boolean query. */
export interface BooleanClauses {
  must: Query[];
  should: Query[];
  filter: Query[];
  mustNot: Query[];
}

/**
 * Boolean combination. Score = sum of must scores + sum of matching should scores, times boost.
 * `minimumShouldMatch` is already resolved against the number of should clauses.
 */
export class BooleanQuery implements Query {
  constructor(
    readonly clauses: BooleanClauses,
    readonly minimumShouldMatch: number,
    readonly boost = 1,
  ) {}

  createWeight(context: SearchContext, needsScores: boolean, boost: number): Weight {
    return new BooleanWeight(this, context, needsScores, boost * this.boost);
  }

  extractTerms(out: HighlightTerms): void {
    for (const query of this.clauses.must) query.extractTerms(out);
    for (const query of this.clauses.should) query.extractTerms(out);
    for (const query of this.clauses.filter) query.extractTerms(out);
  }

  subQueries(): readonly Query[] {
    const { must, should, filter, mustNot } = this.clauses;
    return [...must, ...should, ...filter, ...mustNot];
  }
}

/** Scorers of weights on one leaf, dropping leaves where a clause cannot match. */
function leafScorers(weights: readonly Weight[], leaf: LeafReader, leafIndex: number): Scorer[] {
  const scorers: Scorer[] = [];
  for (const weight of weights) {
    const scorer = weight.scorer(leaf, leafIndex);
    if (scorer !== null) scorers.push(scorer);
  }
  return scorers;
}

class BooleanWeight implements Weight {
  private readonly must: Weight[];
  private readonly should: Weight[];
  private readonly filter: Weight[];
  private readonly mustNot: Weight[];
  private readonly emptyScore: number;

  constructor(
    private readonly query: BooleanQuery,
    context: SearchContext,
    private readonly needsScores: boolean,
    boost: number,
  ) {
    const { clauses } = query;
    this.must = clauses.must.map((clause) => clause.createWeight(context, needsScores, boost));
    this.should = clauses.should.map((clause) => clause.createWeight(context, needsScores, boost));
    this.filter = clauses.filter.map((clause) => clause.createWeight(context, false, boost));
    this.mustNot = clauses.mustNot.map((clause) => clause.createWeight(context, false, boost));
    const hasPositive = this.must.length + this.should.length + this.filter.length > 0;
    // An empty bool matches everything with score 1 (like match_all); a pure must_not scores 0.
    this.emptyScore = needsScores && !hasPositive && this.mustNot.length === 0 ? boost : 0;
  }

  scorer(leaf: LeafReader, leafIndex: number): Scorer | null {
    const required: Scorer[] = [];
    for (const weight of this.must) {
      const scorer = weight.scorer(leaf, leafIndex);
      if (scorer === null) return null;
      required.push(scorer);
    }
    for (const weight of this.filter) {
      const scorer = weight.scorer(leaf, leafIndex);
      if (scorer === null) return null;
      required.push(scorer);
    }
    const minimumShouldMatch = this.query.minimumShouldMatch;
    let optional: Scorer[] = [];
    if (minimumShouldMatch > 0 || this.needsScores) optional = leafScorers(this.should, leaf, leafIndex);
    if (optional.length < minimumShouldMatch) return null;
    if (minimumShouldMatch > 0) {
      required.push(
        optional.length === 1 ? optional[0]! : new DisjunctionScorer(optional, minimumShouldMatch),
      );
      optional = [];
    }
    let main: Scorer;
    if (required.length === 0) {
      if (optional.length > 0) {
        main = optional.length === 1 ? optional[0]! : new DisjunctionScorer(optional);
        optional = [];
      } else if (this.should.length > 0) {
        return null;
      } else {
        main = new AllDocsScorer(leaf.maxDoc, this.emptyScore);
      }
    } else {
      main = required.length === 1 ? required[0]! : new ConjunctionScorer(required);
    }
    if (optional.length > 0) {
      main = new ReqOptScorer(main, optional.length === 1 ? optional[0]! : new DisjunctionScorer(optional));
    }
    const prohibited = leafScorers(this.mustNot, leaf, leafIndex);
    if (prohibited.length > 0) {
      main = new ReqExclScorer(main, prohibited.length === 1 ? prohibited[0]! : new DisjunctionScorer(prohibited));
    }
    return main;
  }

  count(leaf: LeafReader, leafIndex: number): number {
    if (this.mustNot.length > 0) return -1;
    const positive = [...this.must, ...this.filter, ...this.should];
    if (positive.length === 0) return leaf.numLiveDocs();
    return positive.length === 1 ? positive[0]!.count(leaf, leafIndex) : -1;
  }

  disjunctionClauses(leaf: LeafReader, leafIndex: number): Scorer[] | null {
    const pureDisjunction =
      this.needsScores &&
      this.must.length === 0 &&
      this.filter.length === 0 &&
      this.mustNot.length === 0 &&
      this.should.length > 0 &&
      this.query.minimumShouldMatch <= 1;
    if (!pureDisjunction) return null;
    if (this.should.length === 1) {
      const nested = this.should[0]!.disjunctionClauses(leaf, leafIndex);
      if (nested !== null) return nested;
    }
    return leafScorers(this.should, leaf, leafIndex);
  }
}
