/** Exact term in an inverted field (text or keyword), scored with BM25. */
import type { LeafReader, PostingsCursor } from '../segment/leaf-reader.ts';
import { Bm25Scoring, bm25Idf } from './bm25.ts';
import type { HighlightTerms, Query, Weight } from './scorer.ts';
import { addHighlightTerm, NO_SUB_QUERIES, Scorer } from './scorer.ts';
import type { SearchContext } from './search-context.ts';

/** Matches docs whose `field` contains `term`. */
export class TermQuery implements Query {
  constructor(
    readonly field: string,
    readonly term: string,
    readonly boost = 1,
    /** Document frequency to score with instead of the term's own (a fuzzy expansion's blended one). */
    readonly blendedDocFreq: number | null = null,
  ) {}

  createWeight(context: SearchContext, needsScores: boolean, boost: number): Weight {
    return new TermWeight(this, context, needsScores, boost * this.boost);
  }

  extractTerms(out: HighlightTerms): void {
    addHighlightTerm(out.terms, this.field, this.term);
  }

  subQueries(): readonly Query[] {
    return NO_SUB_QUERIES;
  }
}

class TermWeight implements Weight {
  private readonly scoring: Bm25Scoring | null;
  private readonly lengthNormalised: boolean;
  /**
   * Each leaf's cursor, opened once: its docFreq feeds the idf and the scorer then uses it
   * (one term-dictionary lookup per leaf). Null: the leaf lacks the term; undefined: handed out.
   */
  private readonly cursors: (PostingsCursor | null | undefined)[];

  constructor(
    private readonly query: TermQuery,
    context: SearchContext,
    needsScores: boolean,
    boost: number,
  ) {
    this.lengthNormalised = context.field(query.field)?.type === 'text';
    this.cursors = context.leaves.map((leaf) => leaf.postings(query.field, query.term));
    if (needsScores) {
      let docFreq = 0;
      for (const cursor of this.cursors) docFreq += cursor ? cursor.docFreq : 0;
      if (query.blendedDocFreq !== null) docFreq = query.blendedDocFreq;
      const idf = bm25Idf(docFreq, Math.max(context.fieldStats(query.field).docCount, docFreq));
      this.scoring = Bm25Scoring.forField(context, query.field, idf, boost, this.lengthNormalised);
    } else {
      this.scoring = null;
    }
  }

  scorer(leaf: LeafReader, leafIndex: number): Scorer | null {
    let cursor = this.cursors[leafIndex];
    if (cursor === undefined) cursor = leaf.postings(this.query.field, this.query.term);
    else this.cursors[leafIndex] = undefined;
    if (cursor === null || cursor.docFreq === 0) return null;
    return new TermScorer(cursor, this.scoring, leaf, this.query.field, this.lengthNormalised);
  }

  disjunctionClauses(leaf: LeafReader, leafIndex: number): Scorer[] | null {
    const scorer = this.scorer(leaf, leafIndex);
    return scorer === null ? [] : [scorer];
  }

  count(leaf: LeafReader, leafIndex: number): number {
    if (leaf.numLiveDocs() !== leaf.maxDoc) return -1;
    const cursor = this.cursors[leafIndex];
    return cursor !== undefined && cursor !== null ? cursor.docFreq : leaf.docFreq(this.query.field, this.query.term);
  }
}

/** Iterates one postings list; block-max bounds come from the cursor's skip data. */
export class TermScorer extends Scorer {
  private blockEnd = -1;
  private readonly globalBound: number;
  /** The impacts bound of the shallow block ending at `boundBlockEnd` (-1: none yet). */
  private blockBound = 0;
  private boundBlockEnd = -1;

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
    const cursor = this.cursor;
    if (!this.lengthNormalised || cursor.blockMaxBound === undefined) {
      return this.scoring.bound(cursor.blockMaxFreq(), this.lengthNormalised ? cursor.blockMinNorm() : 0);
    }
    if (this.boundBlockEnd !== this.blockEnd) {
      this.blockBound = cursor.blockMaxBound(this.scoring);
      this.boundBlockEnd = this.blockEnd;
    }
    return this.blockBound;
  }
}
