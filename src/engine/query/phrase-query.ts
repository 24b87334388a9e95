/**
 * Phrase matching: a conjunction over the terms' postings (rarest leads), then a position check.
 * Exact phrases (slop 0) count occurrences where every term sits at its relative position; over
 * segment postings the phrase starts are narrowed term by term as the conjunction lines them up.
 * Sloppy phrases count, like Lucene, minimal windows whose "match length" (spread of the
 * terms' offset-adjusted positions) is at most `slop`, each weighted 1 / (1 + length).
 * The phrase freq is scored with BM25; the idf is the sum of the terms' idfs.
 */
import { alignConjunction } from './leapfrog.ts';
import type { LeafReader, PostingsCursor } from '../segment/leaf-reader.ts';
import { NO_MORE_DOCS } from '../segment/leaf-reader.ts';
import { Bm25Scoring, bm25Idf } from './bm25.ts';
import type { HighlightTerms, Query, Weight } from './scorer.ts';
import { addHighlightTerm, NO_SUB_QUERIES, Scorer, SimpleWeight } from './scorer.ts';
import type { SearchContext } from './search-context.ts';

/** Postings that can tell a doc's position count cheaply and match phrase starts against its positions in place (segments). */
interface BoundedPositions {
  positionsByteLength(): number;
  positionStartsInto(out: Int32Array, offset: number): number;
  keepStartsAt(starts: Int32Array, count: number, offset: number): number;
}

function boundedPositions(cursor: PostingsCursor): cursor is PostingsCursor & BoundedPositions {
  return typeof (cursor as Partial<BoundedPositions>).keepStartsAt === 'function';
}

/** Terms at relative positions within `slop` moves of each other. */
export class PhraseQuery implements Query {
  constructor(
    readonly field: string,
    readonly terms: readonly string[],
    /** Position of each term relative to the first (gaps where stopwords were removed). */
    readonly positions: readonly number[],
    readonly slop: number,
    readonly boost = 1,
  ) {}

  createWeight(context: SearchContext, needsScores: boolean, boost: number): Weight {
    return new PhraseWeight(this, context, needsScores, boost * this.boost);
  }

  extractTerms(out: HighlightTerms): void {
    for (const term of this.terms) addHighlightTerm(out.terms, this.field, term);
  }

  subQueries(): readonly Query[] {
    return NO_SUB_QUERIES;
  }
}

/** BM25 scoring of a phrase over `terms`: the sum of their idf, as Lucene weighs a phrase. */
export function phraseScoring(context: SearchContext, field: string, terms: readonly string[], boost: number): Bm25Scoring {
  const docCount = context.fieldStats(field).docCount;
  let idf = 0;
  for (const term of terms) {
    const docFreq = context.docFreq(field, term);
    idf += bm25Idf(docFreq, Math.max(docCount, docFreq));
  }
  return Bm25Scoring.forField(context, field, idf, boost, true);
}

class PhraseWeight extends SimpleWeight {
  private readonly scoring: Bm25Scoring | null;

  constructor(
    private readonly query: PhraseQuery,
    context: SearchContext,
    needsScores: boolean,
    boost: number,
  ) {
    super();
    this.scoring = needsScores ? phraseScoring(context, query.field, query.terms, boost) : null;
  }

  scorer(leaf: LeafReader): Scorer | null {
    const cursors: PostingsCursor[] = [];
    for (const term of this.query.terms) {
      const cursor = leaf.postings(this.query.field, term);
      if (cursor === null || cursor.docFreq === 0) return null;
      cursors.push(cursor);
    }
    if (!leaf.hasPositions(this.query.field)) return null;
    return new PhraseScorer(cursors, this.query.terms, this.query.positions, this.query.slop, this.scoring, leaf, this.query.field);
  }
}

/**
 * Iterates docs containing the phrase; `freq` of the current doc is computed while matching.
 * `terms` name the cursors (equal names mark a repeated term sharing its positions).
 */
export class PhraseScorer extends Scorer {
  private readonly byCost: PostingsCursor[];
  private readonly pointers: Int32Array;
  private readonly lengths: Int32Array;
  private readonly positionLists: ArrayLike<number>[];
  /** Index of the first occurrence of each term in the phrase (equal for repeated terms). */
  private readonly termGroup: Int32Array;
  private readonly hasRepeats: boolean;
  private readonly globalBound: number;
  /** Whether every cursor is BoundedPositions (exact phrases are then matched by `matchExact`). */
  private readonly bounded: boolean;
  /** Term index of each cursor of `byCost`. */
  private readonly costTerms: Int32Array;
  /** Phrase starts still matching every term checked so far. */
  private starts = new Int32Array(16);
  /** Last doc of the window the cursors' current blocks share (for block-max bounds). */
  private blockEnd = -1;
  private phraseFreq = 0;

  constructor(
    private readonly cursors: PostingsCursor[],
    terms: readonly string[],
    private readonly offsets: readonly number[],
    private readonly slop: number,
    private readonly scoring: Bm25Scoring | null,
    private readonly leaf: LeafReader,
    private readonly field: string,
  ) {
    super();
    const costOrder = cursors.map((_, term) => term).sort((left, right) => cursors[left]!.docFreq - cursors[right]!.docFreq);
    this.byCost = costOrder.map((term) => cursors[term]!);
    this.costTerms = Int32Array.from(costOrder);
    this.pointers = new Int32Array(cursors.length);
    this.lengths = new Int32Array(cursors.length);
    this.positionLists = new Array<ArrayLike<number>>(cursors.length);
    this.termGroup = new Int32Array(cursors.length);
    let hasRepeats = false;
    for (let i = 0; i < terms.length; i++) {
      const first = terms.indexOf(terms[i]!);
      this.termGroup[i] = first;
      if (first !== i) hasRepeats = true;
    }
    this.hasRepeats = hasRepeats;
    this.bounded = cursors.every(boundedPositions);
    let freqBound = slop === 0 ? Infinity : 0;
    let minNorm = 0;
    for (const cursor of cursors) {
      freqBound = slop === 0 ? Math.min(freqBound, cursor.maxFreq) : freqBound + cursor.maxFreq;
      minNorm = Math.max(minNorm, cursor.minNorm);
    }
    this.globalBound = scoring === null ? 0 : scoring.bound(freqBound, minNorm);
  }

  nextDoc(): number {
    return this.matchFrom(this.byCost[0]!.next());
  }

  advance(target: number): number {
    return this.matchFrom(this.byCost[0]!.advance(target));
  }

  private matchFrom(candidate: number): number {
    if (this.slop === 0 && this.bounded) return this.matchExact(candidate);
    const lead = this.byCost[0]!;
    let doc = alignConjunction(this.byCost, candidate);
    while (doc !== NO_MORE_DOCS) {
      const freq = this.slop !== 0 ? this.sloppyFreq() : this.exactFreq();
      if (freq > 0) {
        this.phraseFreq = freq;
        return (this.doc = doc);
      }
      doc = alignConjunction(this.byCost, lead.next());
    }
    return (this.doc = NO_MORE_DOCS);
  }

  private loadPositions(): void {
    for (let i = 0; i < this.cursors.length; i++) {
      const positions = this.cursors[i]!.positions();
      this.positionLists[i] = positions;
      this.lengths[i] = positions.length;
      this.pointers[i] = 0;
    }
  }

  /** Exact occurrences; a term's positions are decoded only once every earlier term lined up. */
  private exactFreq(): number {
    const lists = this.positionLists;
    const pointers = this.pointers;
    const lengths = this.lengths;
    const offsets = this.offsets;
    const first = this.cursors[0]!.positions();
    let loaded = 1;
    let count = 0;
    candidates: for (let p = 0; p < first.length; p++) {
      const base = first[p]! - offsets[0]!;
      for (let i = 1; i < offsets.length; i++) {
        if (i === loaded) {
          const positions = this.cursors[i]!.positions();
          lists[i] = positions;
          lengths[i] = positions.length;
          pointers[i] = 0;
          loaded++;
        }
        const list = lists[i]!;
        const target = base + offsets[i]!;
        let pointer = pointers[i]!;
        while (pointer < lengths[i]! && list[pointer]! < target) pointer++;
        pointers[i] = pointer;
        if (pointer >= lengths[i]!) break candidates;
        if (list[pointer] !== target) continue candidates;
      }
      count++;
    }
    return count;
  }

  /**
   * Exact phrases over segment postings: the conjunction is built term by term (rarest first), and
   * the phrase starts are narrowed as each term lines up, so that a doc the rarer terms already
   * rule out never moves the commoner terms (whose blocks are then often skipped whole). The
   * starts come from whichever of the two rarest terms has fewer position bytes in the doc.
   */
  private matchExact(candidate: number): number {
    const members = this.byCost as (PostingsCursor & BoundedPositions)[];
    const lead = members[0]!;
    let doc = candidate;
    candidates: while (doc !== NO_MORE_DOCS) {
      let count = members.length === 1 ? lead.positions().length : 0;
      for (let i = 1; i < members.length; i++) {
        const other = members[i]!;
        let otherDoc = other.doc;
        if (otherDoc < doc) otherDoc = other.advance(doc);
        if (otherDoc > doc) {
          if (otherDoc === NO_MORE_DOCS) break candidates;
          doc = lead.advance(otherDoc);
          continue candidates;
        }
        count = i === 1 ? this.seedStarts(lead, other) : other.keepStartsAt(this.starts, count, this.offsets[this.costTerms[i]!]!);
        if (count === 0) {
          doc = lead.next();
          continue candidates;
        }
      }
      this.phraseFreq = count;
      return (this.doc = doc);
    }
    return (this.doc = NO_MORE_DOCS);
  }

  /** Phrase starts of the two rarest terms (both on the current doc), from the one with fewer position bytes. */
  private seedStarts(first: PostingsCursor & BoundedPositions, second: PostingsCursor & BoundedPositions): number {
    const firstBytes = first.positionsByteLength();
    const secondBytes = second.positionsByteLength();
    const firstFewer = firstBytes <= secondBytes;
    const bytes = firstFewer ? firstBytes : secondBytes;
    if (this.starts.length < bytes) this.starts = new Int32Array(Math.max(bytes, this.starts.length * 2));
    const costTerms = this.costTerms;
    const offsets = this.offsets;
    const count = (firstFewer ? first : second).positionStartsInto(this.starts, offsets[costTerms[firstFewer ? 0 : 1]!]!);
    if (count === 0) return 0;
    return (firstFewer ? second : first).keepStartsAt(this.starts, count, offsets[costTerms[firstFewer ? 1 : 0]!]!);
  }

  private adjusted(term: number): number {
    return this.positionLists[term]![this.pointers[term]!]! - this.offsets[term]!;
  }

  private sloppyFreq(): number {
    this.loadPositions();
    const termCount = this.cursors.length;
    const pointers = this.pointers;
    if (this.hasRepeats) {
      // Occurrences of a repeated term start on distinct positions of the (shared) list.
      for (let i = 0; i < termCount; i++) {
        for (let j = 0; j < i; j++) if (this.termGroup[j] === this.termGroup[i]) pointers[i]!++;
        if (pointers[i]! >= this.lengths[i]!) return 0;
      }
    }
    let end = -Infinity;
    for (let i = 0; i < termCount; i++) end = Math.max(end, this.adjusted(i));
    let freq = 0;
    let current = this.minimumTerm(-1);
    let next = this.minimumAdjusted(current);
    let matchLength = end - this.adjusted(current);
    while (this.step(current)) {
      const position = this.adjusted(current);
      if (position > end) end = position;
      if (position > next) {
        if (matchLength <= this.slop) freq += 1 / (1 + matchLength);
        current = this.minimumTerm(-1);
        next = this.minimumAdjusted(current);
        matchLength = end - this.adjusted(current);
      } else if (end - position < matchLength) {
        matchLength = end - position;
      }
    }
    if (matchLength <= this.slop) freq += 1 / (1 + matchLength);
    return freq;
  }

  /** Moves a term to its next position (never onto one another occurrence of the same term holds). */
  private step(term: number): boolean {
    const pointers = this.pointers;
    pointers[term]!++;
    if (this.hasRepeats) {
      while (pointers[term]! < this.lengths[term]! && this.collides(term)) pointers[term]!++;
    }
    return pointers[term]! < this.lengths[term]!;
  }

  private collides(term: number): boolean {
    const group = this.termGroup[term];
    for (let j = 0; j < this.termGroup.length; j++) {
      if (j !== term && this.termGroup[j] === group && this.pointers[j] === this.pointers[term]) return true;
    }
    return false;
  }

  /** Term with the smallest adjusted position, skipping `except`. */
  private minimumTerm(except: number): number {
    let best = -1;
    let bestPosition = Infinity;
    for (let i = 0; i < this.cursors.length; i++) {
      if (i === except) continue;
      const position = this.adjusted(i);
      if (position < bestPosition) {
        bestPosition = position;
        best = i;
      }
    }
    return best;
  }

  private minimumAdjusted(except: number): number {
    const term = this.minimumTerm(except);
    return term < 0 ? Infinity : this.adjusted(term);
  }

  /** The phrase frequency of the current doc (sloppy matches weigh 1 / (1 + match length)). */
  get freq(): number {
    return this.phraseFreq;
  }

  score(): number {
    if (this.scoring === null) return 0;
    return this.scoring.score(this.phraseFreq, this.leaf.norm(this.field, this.doc));
  }

  cost(): number {
    return this.byCost[0]!.docFreq;
  }

  override shallowAdvance(target: number): number {
    let end = NO_MORE_DOCS;
    for (const cursor of this.cursors) end = Math.min(end, cursor.shallowAdvance(target));
    return (this.blockEnd = end);
  }

  /** Within the shared block window, the bound of the terms' block max freqs and min norms. */
  maxScore(upTo: number): number {
    if (this.scoring === null) return 0;
    if (upTo > this.blockEnd) return this.globalBound;
    let freqBound = this.slop === 0 ? Infinity : 0;
    let minNorm = 0;
    for (const cursor of this.cursors) {
      const blockMaxFreq = cursor.blockMaxFreq();
      freqBound = this.slop === 0 ? Math.min(freqBound, blockMaxFreq) : freqBound + blockMaxFreq;
      minNorm = Math.max(minNorm, cursor.blockMinNorm());
    }
    return this.scoring.bound(freqBound, minNorm);
  }
}
