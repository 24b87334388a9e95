/** Constant-score scorers over simple doc sets: all docs, bitsets, column scans, wrappers. */
import { NO_MORE_DOCS } from '../segment/leaf-reader.ts';
import type { PostingsCursor } from '../segment/leaf-reader.ts';
import { Scorer } from './scorer.ts';

/** Every doc id of a leaf, each with the same score. */
export class AllDocsScorer extends Scorer {
  constructor(
    private readonly maxDoc: number,
    private readonly constantScore: number,
  ) {
    super();
  }

  nextDoc(): number {
    return this.advance(this.doc + 1);
  }

  advance(target: number): number {
    return (this.doc = target < this.maxDoc ? target : NO_MORE_DOCS);
  }

  score(): number {
    return this.constantScore;
  }

  cost(): number {
    return this.maxDoc;
  }

  maxScore(): number {
    return this.constantScore;
  }
}

/**
 * Docs whose per-document values satisfy `matches`, found by scanning doc ids: used for filters
 * on columns (numeric ranges, keyword ordinal ranges, exists). `advance` checks the target
 * first, so inside a conjunction led by a selective clause it costs one check per candidate.
 */
export abstract class ScanScorer extends Scorer {
  constructor(
    protected readonly maxDoc: number,
    private readonly constantScore: number,
    /** Estimated matches (default: every doc), for ordering conjunctions. */
    private readonly costEstimate = maxDoc,
  ) {
    super();
  }

  /** Whether the doc belongs to the set. */
  protected abstract matches(doc: number): boolean;

  nextDoc(): number {
    return this.advance(this.doc + 1);
  }

  advance(target: number): number {
    let doc = target;
    const maxDoc = this.maxDoc;
    while (doc < maxDoc && !this.matches(doc)) doc++;
    return (this.doc = doc < maxDoc ? doc : NO_MORE_DOCS);
  }

  score(): number {
    return this.constantScore;
  }

  cost(): number {
    return this.costEstimate;
  }

  maxScore(): number {
    return this.constantScore;
  }
}

/** A set of doc ids of one leaf as a bitset. */
export class DocBitSet {
  readonly words: Uint32Array;

  constructor(readonly maxDoc: number) {
    this.words = new Uint32Array((maxDoc + 31) >>> 5);
  }

  /** Adds a doc. */
  add(doc: number): void {
    this.words[doc >>> 5]! |= 1 << (doc & 31);
  }

  /** Adds every doc of a postings list. */
  addPostings(cursor: PostingsCursor): void {
    const words = this.words;
    for (let doc = cursor.next(); doc !== NO_MORE_DOCS; doc = cursor.next()) {
      words[doc >>> 5]! |= 1 << (doc & 31);
    }
  }

  /** Whether the doc is in the set. */
  has(doc: number): boolean {
    return (this.words[doc >>> 5]! & (1 << (doc & 31))) !== 0;
  }

  /** Number of docs in the set. */
  cardinality(): number {
    let count = 0;
    for (let i = 0; i < this.words.length; i++) {
      let word = this.words[i]!;
      word = word - ((word >>> 1) & 0x55555555);
      word = (word & 0x33333333) + ((word >>> 2) & 0x33333333);
      count += (((word + (word >>> 4)) & 0x0f0f0f0f) * 0x01010101) >>> 24;
    }
    return count;
  }
}

/** Iterates the docs of a bitset with a constant score. */
export class BitSetScorer extends Scorer {
  private readonly costEstimate: number;

  constructor(
    private readonly bits: DocBitSet,
    private readonly constantScore: number,
  ) {
    super();
    this.costEstimate = bits.cardinality();
  }

  nextDoc(): number {
    return this.advance(this.doc + 1);
  }

  advance(target: number): number {
    const words = this.bits.words;
    if (target >= this.bits.maxDoc) return (this.doc = NO_MORE_DOCS);
    let index = target >>> 5;
    let word = words[index]! & (0xffffffff << (target & 31));
    while (word === 0) {
      index++;
      if (index >= words.length) return (this.doc = NO_MORE_DOCS);
      word = words[index]!;
    }
    return (this.doc = (index << 5) + (31 - Math.clz32(word & -word)));
  }

  score(): number {
    return this.constantScore;
  }

  cost(): number {
    return this.costEstimate;
  }

  maxScore(): number {
    return this.constantScore;
  }
}

/** Iterates a sorted list of doc ids with a constant score. */
export class DocListScorer extends Scorer {
  private index = -1;

  constructor(
    private readonly docs: Int32Array,
    private readonly constantScore: number,
  ) {
    super();
  }

  nextDoc(): number {
    this.index++;
    return (this.doc = this.index < this.docs.length ? this.docs[this.index]! : NO_MORE_DOCS);
  }

  advance(target: number): number {
    let doc = this.nextDoc();
    while (doc < target) doc = this.nextDoc();
    return doc;
  }

  score(): number {
    return this.constantScore;
  }

  cost(): number {
    return this.docs.length;
  }

  maxScore(): number {
    return this.constantScore;
  }
}

/** Wraps a scorer, replacing its score with a constant. */
export class ConstantScoreScorer extends Scorer {
  constructor(
    private readonly inner: Scorer,
    private readonly constantScore: number,
  ) {
    super();
  }

  nextDoc(): number {
    return (this.doc = this.inner.nextDoc());
  }

  advance(target: number): number {
    return (this.doc = this.inner.advance(target));
  }

  score(): number {
    return this.constantScore;
  }

  cost(): number {
    return this.inner.cost();
  }

  maxScore(): number {
    return this.constantScore;
  }
}
