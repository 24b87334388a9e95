import { NO_MORE_DOCS, type PostingsCursor } from '../segment/leaf-reader.ts';

/**
 * In-memory postings of one term in the mutable layer: docs, freqs and positions, append-only.
 * Plain arrays (packed small integers for V8), not typed arrays: most terms have a handful of
 * postings, and a typed array per term costs far more to allocate than it saves.
 */
export class TermPostings {
  readonly docs: number[] = [];
  readonly freqs: number[] = [];
  /** Start offset of each posting's positions in `positions` (absent for fields without positions). */
  readonly positionStarts: number[] | null;
  readonly positions: number[] | null;
  maxFreq = 0;
  minNorm = 255;

  constructor(withPositions: boolean) {
    this.positionStarts = withPositions ? [] : null;
    this.positions = withPositions ? [] : null;
  }

  /** Appends a posting; docs arrive in increasing order. */
  add(doc: number, termPositions: readonly number[] | null, freq: number, norm: number): void {
    this.docs.push(doc);
    this.freqs.push(freq);
    if (this.positions && this.positionStarts) {
      this.positionStarts.push(this.positions.length);
      for (let index = 0; index < termPositions!.length; index++) this.positions.push(termPositions![index]!);
    }
    if (freq > this.maxFreq) this.maxFreq = freq;
    if (norm < this.minNorm) this.minNorm = norm;
  }

  /** A cursor over the postings present now (later appends are not seen). */
  cursor(): PostingsCursor {
    return new MutablePostingsCursor(this, this.docs.length);
  }
}

/** Cursor over a TermPostings snapshot; the whole list is one block for block-max purposes. */
class MutablePostingsCursor implements PostingsCursor {
  doc = -1;
  readonly docFreq: number;
  readonly maxFreq: number;
  readonly minNorm: number;
  private index = -1;
  private readonly docs: readonly number[];
  private readonly lastDoc: number;

  constructor(
    private readonly postings: TermPostings,
    private readonly length: number,
  ) {
    this.docFreq = length;
    this.docs = postings.docs;
    this.maxFreq = postings.maxFreq;
    this.minNorm = postings.minNorm;
    this.lastDoc = length > 0 ? this.docs[length - 1]! : NO_MORE_DOCS;
  }

  next(): number {
    this.index++;
    this.doc = this.index < this.length ? this.docs[this.index]! : NO_MORE_DOCS;
    return this.doc;
  }

  advance(target: number): number {
    // Galloping then binary search from the current index.
    let low = this.index + 1;
    let step = 1;
    let high = low;
    while (high < this.length && this.docs[high]! < target) {
      low = high + 1;
      high += step;
      step *= 2;
    }
    if (high > this.length) high = this.length;
    while (low < high) {
      const mid = (low + high) >>> 1;
      if (this.docs[mid]! < target) low = mid + 1;
      else high = mid;
    }
    this.index = low;
    this.doc = low < this.length ? this.docs[low]! : NO_MORE_DOCS;
    return this.doc;
  }

  freq(): number {
    return this.postings.freqs[this.index]!;
  }

  countBelow(doc: number): number {
    let low = 0;
    let high = this.length;
    while (low < high) {
      const mid = (low + high) >>> 1;
      if (this.docs[mid]! < doc) low = mid + 1;
      else high = mid;
    }
    return low;
  }

  positions(): ArrayLike<number> {
    const { positions, positionStarts } = this.postings;
    if (!positions || !positionStarts) return [];
    const start = positionStarts[this.index]!;
    return positions.slice(start, start + this.freq());
  }

  shallowAdvance(target: number): number {
    return target > this.lastDoc ? NO_MORE_DOCS : this.lastDoc;
  }

  blockMaxFreq(): number {
    return this.maxFreq;
  }

  blockMinNorm(): number {
    return this.minNorm;
  }
}
