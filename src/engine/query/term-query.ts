/** Exact term in an inverted field (text or keyword), scored with BM25. */
import type { LeafReader, PostingsCursor } from '../segment/leaf-reader.ts';
import { Bm25Scoring, bm25Idf } from './bm25.ts';
import type { HighlightTerms, Query, Weight } from './scorer.ts';
import { addHighlightTerm, Scorer } from './scorer.ts';
import type { SearchContext } from './search-context.ts';

/** Matches docs whose `field` contains `term`. */
export class TermQuery implements Query {
  constructor(
    readonly field: string,
    readonly term: string,
    readonly boost = 1,
  ) {}

  createWeight(context: SearchContext, needsScores: boolean, boost: number): Weight {
    return new TermWeight(this, context, needsScores, boost * this.boost);
  }

  extractTerms(out: HighlightTerms): void {
    addHighlightTerm(out.terms, this.field, this.term);
  }
}

class TermWeight implements Weight {
  private readonly scoring: Bm25Scoring | null;
  private readonly lengthNormalised: boolean;

  constructor(
    private readonly query: TermQuery,
    context: SearchContext,
    needsScores: boolean,
    boost: number,
  ) {
    this.lengthNormalised = context.field(query.field)?.type === 'text';
    if (needsScores) {
      const docFreq = context.docFreq(query.field, query.term);
      const idf = bm25Idf(docFreq, Math.max(context.fieldStats(query.field).docCount, docFreq));
      this.scoring = Bm25Scoring.forField(context, query.field, idf, boost, this.lengthNormalised);
    } else {
      this.scoring = null;
    }
  }

  scorer(leaf: LeafReader): Scorer | null {
    const cursor = leaf.postings(this.query.field, this.query.term);
    if (cursor === null || cursor.docFreq === 0) return null;
    return new TermScorer(cursor, this.scoring, leaf, this.query.field, this.lengthNormalised);
  }

  disjunctionClauses(leaf: LeafReader): Scorer[] | null {
    const scorer = this.scorer(leaf);
    return scorer === null ? [] : [scorer];
  }

  count(leaf: LeafReader): number {
    return leaf.numLiveDocs() === leaf.maxDoc ? leaf.docFreq(this.query.field, this.query.term) : -1;
  }
}

/** Iterates one postings list; block-max bounds come from the cursor's skip data. */
export class TermScorer extends Scorer {
  private blockEnd = -1;
  private readonly globalBound: number;

  constructor(
    private readonly cursor: PostingsCursor,
    private readonly scoring: Bm25Scoring | null,
    private readonly leaf: LeafReader,
    private readonly field: string,
    private readonly lengthNormalised: boolean,
  ) {
    super();
    this.globalBound = scoring === null ? 0 : scoring.bound(cursor.maxFreq, lengthNormalised ? cursor.minNorm : 0);
  }

  nextDoc(): number {
    return (this.doc = this.cursor.next());
  }

  advance(target: number): number {
    return (this.doc = this.cursor.advance(target));
  }

  score(): number {
    if (this.scoring === null) return 0;
    const norm = this.lengthNormalised ? this.leaf.norm(this.field, this.doc) : 0;
    return this.scoring.score(this.cursor.freq(), norm);
  }

  cost(): number {
    return this.cursor.docFreq;
  }

  override shallowAdvance(target: number): number {
    return (this.blockEnd = this.cursor.shallowAdvance(target));
  }

  maxScore(upTo: number): number {
    if (this.scoring === null) return 0;
    if (upTo > this.blockEnd) return this.globalBound;
    const minNorm = this.lengthNormalised ? this.cursor.blockMinNorm() : 0;
    return this.scoring.bound(this.cursor.blockMaxFreq(), minNorm);
  }
}
