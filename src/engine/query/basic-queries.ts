/** Structural queries: match_all, match_none, ids, constant_score and dis_max. */
import type { LeafReader } from '../segment/leaf-reader.ts';
import { DisMaxScorer } from './boolean-scorers.ts';
import { AllDocsScorer, ConstantScoreScorer, DocListScorer } from './doc-set-scorers.ts';
import type { HighlightTerms, Query, Scorer, Weight } from './scorer.ts';
import { NO_SUB_QUERIES, SimpleWeight } from './scorer.ts';
import type { SearchContext } from './search-context.ts';

/** Every doc, scoring the boost. */
export class MatchAllQuery implements Query {
  constructor(readonly boost = 1) {}

  createWeight(_context: SearchContext, needsScores: boolean, boost: number): Weight {
    return new MatchAllWeight(needsScores ? boost * this.boost : 0);
  }

  extractTerms(): void {}

  subQueries(): readonly Query[] {
    return NO_SUB_QUERIES;
  }
}

class MatchAllWeight extends SimpleWeight {
  constructor(private readonly constantScore: number) {
    super();
  }

  scorer(leaf: LeafReader): Scorer | null {
    return leaf.maxDoc === 0 ? null : new AllDocsScorer(leaf.maxDoc, this.constantScore);
  }

  override count(leaf: LeafReader): number {
    return leaf.numLiveDocs();
  }
}

/** No doc (unknown fields, empty analysis results). */
export class MatchNoneQuery implements Query {
  createWeight(): Weight {
    return new MatchNoneWeight();
  }

  extractTerms(): void {}

  subQueries(): readonly Query[] {
    return NO_SUB_QUERIES;
  }
}

class MatchNoneWeight extends SimpleWeight {
  scorer(): Scorer | null {
    return null;
  }

  override count(): number {
    return 0;
  }
}

/** Docs with one of the given `_id`s, scoring the boost. */
export class IdsQuery implements Query {
  constructor(
    readonly ids: readonly string[],
    readonly boost = 1,
  ) {}

  createWeight(_context: SearchContext, needsScores: boolean, boost: number): Weight {
    return new IdsWeight(this.ids, needsScores ? boost * this.boost : 0);
  }

  extractTerms(): void {}

  subQueries(): readonly Query[] {
    return NO_SUB_QUERIES;
  }
}

class IdsWeight extends SimpleWeight {
  constructor(
    private readonly ids: readonly string[],
    private readonly constantScore: number,
  ) {
    super();
  }

  scorer(leaf: LeafReader): Scorer | null {
    const docs: number[] = [];
    for (const id of this.ids) {
      const doc = leaf.lookupId(id);
      if (doc >= 0) docs.push(doc);
    }
    if (docs.length === 0) return null;
    const sorted = Int32Array.from(new Set(docs)).sort();
    return new DocListScorer(sorted, this.constantScore);
  }
}

/** Matches like `filter` (evaluated without scores) and scores the boost. */
export class ConstantScoreQuery implements Query {
  constructor(
    readonly filter: Query,
    readonly boost = 1,
  ) {}

  createWeight(context: SearchContext, needsScores: boolean, boost: number): Weight {
    return new ConstantScoreWeight(this.filter.createWeight(context, false, 1), needsScores ? boost * this.boost : 0);
  }

  extractTerms(out: HighlightTerms): void {
    this.filter.extractTerms(out);
  }

  subQueries(): readonly Query[] {
    return [this.filter];
  }
}

class ConstantScoreWeight extends SimpleWeight {
  constructor(
    private readonly inner: Weight,
    private readonly constantScore: number,
  ) {
    super();
  }

  scorer(leaf: LeafReader, leafIndex: number): Scorer | null {
    const inner = this.inner.scorer(leaf, leafIndex);
    return inner === null ? null : new ConstantScoreScorer(inner, this.constantScore);
  }

  override count(leaf: LeafReader, leafIndex: number): number {
    return this.inner.count(leaf, leafIndex);
  }
}

/** Docs matching any clause; score = best clause + tieBreaker · the others. */
export class DisMaxQuery implements Query {
  constructor(
    readonly queries: readonly Query[],
    readonly tieBreaker: number,
    readonly boost = 1,
  ) {}

  createWeight(context: SearchContext, needsScores: boolean, boost: number): Weight {
    const weights = this.queries.map((query) => query.createWeight(context, needsScores, boost * this.boost));
    return new DisMaxWeight(weights, this.tieBreaker);
  }

  extractTerms(out: HighlightTerms): void {
    for (const query of this.queries) query.extractTerms(out);
  }

  subQueries(): readonly Query[] {
    return this.queries;
  }
}

class DisMaxWeight extends SimpleWeight {
  constructor(
    private readonly weights: readonly Weight[],
    private readonly tieBreaker: number,
  ) {
    super();
  }

  scorer(leaf: LeafReader, leafIndex: number): Scorer | null {
    const scorers: Scorer[] = [];
    for (const weight of this.weights) {
      const scorer = weight.scorer(leaf, leafIndex);
      if (scorer !== null) scorers.push(scorer);
    }
    if (scorers.length === 0) return null;
    return scorers.length === 1 ? scorers[0]! : new DisMaxScorer(scorers, this.tieBreaker);
  }
}
