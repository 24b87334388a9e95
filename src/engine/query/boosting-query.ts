/**
 * ES `boosting`: the docs of `positive`, each scoring its positive score, times `negativeBoost`
 * when it also matches `negative` (Lucene's FunctionScoreQuery.boostByQuery). Without scores it
 * is just `positive`; `negative` is run without scores and only ever advanced to the current doc.
 */
import type { LeafReader } from '../segment/leaf-reader.ts';
import type { HighlightTerms, Query, Weight } from './scorer.ts';
import { Scorer, SimpleWeight } from './scorer.ts';
import type { SearchContext } from './search-context.ts';

/** Docs of `positive`; scores of those also matching `negative` multiplied by `negativeBoost`. */
export class BoostingQuery implements Query {
  constructor(
    readonly positive: Query,
    readonly negative: Query,
    readonly negativeBoost: number,
    readonly boost = 1,
  ) {}

  createWeight(context: SearchContext, needsScores: boolean, boost: number): Weight {
    const positive = this.positive.createWeight(context, needsScores, boost * this.boost);
    if (!needsScores) return positive;
    return new BoostingWeight(positive, this.negative.createWeight(context, false, 1), this.negativeBoost);
  }

  extractTerms(out: HighlightTerms): void {
    this.positive.extractTerms(out);
  }

  subQueries(): readonly Query[] {
    return [this.positive, this.negative];
  }
}

class BoostingWeight extends SimpleWeight {
  constructor(
    private readonly positive: Weight,
    private readonly negative: Weight,
    private readonly negativeBoost: number,
  ) {
    super();
  }

  scorer(leaf: LeafReader, leafIndex: number): Scorer | null {
    const positive = this.positive.scorer(leaf, leafIndex);
    if (positive === null) return null;
    const negative = this.negative.scorer(leaf, leafIndex);
    return negative === null ? positive : new BoostingScorer(positive, negative, this.negativeBoost);
  }

  override count(leaf: LeafReader, leafIndex: number): number {
    return this.positive.count(leaf, leafIndex);
  }
}

/** Iterates `positive`; demotes the docs `negative` also matches. */
class BoostingScorer extends Scorer {
  constructor(
    private readonly positive: Scorer,
    private readonly negative: Scorer,
    private readonly negativeBoost: number,
  ) {
    super();
  }

  nextDoc(): number {
    return (this.doc = this.positive.nextDoc());
  }

  advance(target: number): number {
    return (this.doc = this.positive.advance(target));
  }

  score(): number {
    const score = this.positive.score();
    if (this.negative.doc < this.doc) this.negative.advance(this.doc);
    return this.negative.doc === this.doc ? score * this.negativeBoost : score;
  }

  cost(): number {
    return this.positive.cost();
  }

  override shallowAdvance(target: number): number {
    return this.positive.shallowAdvance(target);
  }

  maxScore(upTo: number): number {
    return this.positive.maxScore(upTo) * Math.max(1, this.negativeBoost);
  }
}
