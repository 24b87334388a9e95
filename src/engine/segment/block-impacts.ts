/**
 * Impacts of a postings block (format 7 on): the block's competitive (freq, norm) pairs, those
 * no other doc of the block dominates with a freq at least as high and a norm at least as low
 * (a field at most as long). Sorted by ascending freq their norms ascend too, so the first pair
 * holds the block's smallest norm and the last its largest freq. A block-max bound is the largest
 * score over the pairs, far tighter than the score of (largest freq, smallest norm) when those come
 * from different docs. At most MAX_BLOCK_IMPACTS pairs are kept: beyond that, neighbouring pairs
 * are merged into (the larger freq, the smaller norm), which still bounds both.
 *
 * Encoded after the block's `varint maxFreq − 1` and `u8 minNorm`: `varint count − 1`, then for
 * i = 1 .. count − 1 `varint freq[i−1] − freq[i−2] − 1` (freq[−1] = 0) and `u8 norm[i] − norm[i−1] − 1`.
 */
import { readVarintAt, varintEnd, type ByteSink } from './byte-io.ts';
import { decodeNorm } from './norms.ts';

/** Most (freq, norm) pairs a block records. */
export const MAX_BLOCK_IMPACTS = 12;

/** Upper bound of the bytes `writeImpacts` takes (varints of at most 8 bytes). */
export const MAX_IMPACTS_BYTES = 8 + (MAX_BLOCK_IMPACTS - 1) * 9;

/** A growable list of (freq, norm) pairs. */
export class ImpactList {
  freqs: Int32Array;
  norms: Uint8Array;
  size = 0;

  constructor(capacity = 64) {
    this.freqs = new Int32Array(Math.max(1, capacity));
    this.norms = new Uint8Array(Math.max(1, capacity));
  }

  /** Appends a pair. */
  push(freq: number, norm: number): void {
    if (this.size === this.freqs.length) {
      const freqs = new Int32Array(this.size * 2);
      freqs.set(this.freqs);
      this.freqs = freqs;
      const norms = new Uint8Array(this.size * 2);
      norms.set(this.norms);
      this.norms = norms;
    }
    this.freqs[this.size] = freq;
    this.norms[this.size] = norm;
    this.size++;
  }
}

/** Computes blocks' competitive pairs (reused from block to block). */
export class ImpactsBuilder {
  private readonly maxFreqByNorm = new Int32Array(256);
  /** One bit per norm met in the block. */
  private readonly seenNorms = new Int32Array(8);
  /** The last block's pairs, ascending (valid up to `count`). */
  readonly freqs = new Int32Array(256);
  readonly norms = new Uint8Array(256);
  count = 0;

  /** The pairs of the docs `docs[0, count)` with their freqs, norms read from `norms` (all 0 without). */
  compute(docs: Int32Array, freqs: Int32Array, count: number, norms: Uint8Array | null): number {
    if (norms === null) {
      let maxFreq = 0;
      for (let i = 0; i < count; i++) if (freqs[i]! > maxFreq) maxFreq = freqs[i]!;
      this.freqs[0] = maxFreq;
      this.norms[0] = 0;
      this.count = maxFreq > 0 ? 1 : 0;
      return this.count;
    }
    // Both are all zero between calls: the norms seen are cleared as the pairs are read out.
    const byNorm = this.maxFreqByNorm;
    const seen = this.seenNorms;
    for (let i = 0; i < count; i++) {
      const norm = norms[docs[i]!]!;
      const freq = freqs[i]!;
      if (freq > byNorm[norm]!) byNorm[norm] = freq;
      seen[norm >>> 5] |= 1 << (norm & 31);
    }
    let size = 0;
    let best = 0;
    for (let word = 0; word < 8; word++) {
      let bits = seen[word]!;
      if (bits === 0) continue;
      seen[word] = 0;
      while (bits !== 0) {
        const norm = (word << 5) | (31 - Math.clz32(bits & -bits));
        bits &= bits - 1;
        const freq = byNorm[norm]!;
        byNorm[norm] = 0;
        if (freq <= best) continue;
        this.freqs[size] = freq;
        this.norms[size] = norm;
        size++;
        best = freq;
      }
    }
    this.count = size;
    if (size > MAX_BLOCK_IMPACTS) this.cap(meanLength(docs, count, norms));
    return this.count;
  }

  /**
   * Merges neighbouring pairs until MAX_BLOCK_IMPACTS remain, each time the two whose merged pair
   * has the lowest BM25 score (k1 = 1.2, b = 0.75, the block's mean field length standing for the
   * average one), so that the largest score of the pairs, the block's bound, rises as little as
   * possible: it depends on the block's docs only, as a merge copying the block must find it.
   */
  private cap(meanLength: number): void {
    const freqs = this.freqs;
    const norms = this.norms;
    let size = this.count;
    const score = (freq: number, norm: number): number => freq / (freq + 0.3 + (0.9 * decodeNorm(norm)) / meanLength);
    while (size > MAX_BLOCK_IMPACTS) {
      let chosen = 0;
      let lowestCost = Infinity;
      for (let i = 0; i + 1 < size; i++) {
        const cost = score(freqs[i + 1]!, norms[i]!);
        if (cost < lowestCost) {
          lowestCost = cost;
          chosen = i;
        }
      }
      freqs[chosen] = freqs[chosen + 1]!;
      for (let i = chosen + 1; i + 1 < size; i++) {
        freqs[i] = freqs[i + 1]!;
        norms[i] = norms[i + 1]!;
      }
      size--;
    }
    this.count = size;
  }
}

/** The mean field length of the docs `docs[0, count)` (at least 1), their norms read from `norms`. */
function meanLength(docs: Int32Array, count: number, norms: Uint8Array): number {
  let lengths = 0;
  for (let i = 0; i < count; i++) lengths += decodeNorm(norms[docs[i]!]!);
  return Math.max(1, lengths / count);
}

/** Writes pairs `[start, start + count)` of `freqs` / `norms` after their block's max freq and min norm. */
export function writeImpacts(sink: ByteSink, freqs: Int32Array, norms: Uint8Array, start: number, count: number): void {
  sink.writeVarint(count - 1);
  let previousFreq = 0;
  for (let i = start + 1; i < start + count; i++) {
    sink.writeVarint(freqs[i - 1]! - previousFreq - 1);
    previousFreq = freqs[i - 1]!;
    sink.writeByte(norms[i]! - norms[i - 1]! - 1);
  }
}

/**
 * Decodes the pairs `writeImpacts` wrote at `data[position]` for a block of max freq `maxFreq`
 * and min norm `minNorm`, appending them to `out` (more than MAX_BLOCK_IMPACTS, freqs reaching
 * past maxFreq or norms past 255 are malformed). Returns the offset just past
 * them, or -1 when they are malformed.
 */
export function readImpacts(data: Uint8Array, position: number, maxFreq: number, minNorm: number, out: ImpactList): number {
  // A count below MAX_BLOCK_IMPACTS is a varint of one byte.
  const extra = data[position++]!;
  if (!(extra < MAX_BLOCK_IMPACTS)) return -1;
  let freq = 0;
  let norm = minNorm;
  for (let i = 0; i < extra; i++) {
    freq += readVarintAt(data, position) + 1;
    position = varintEnd;
    if (!(freq < maxFreq)) return -1;
    out.push(freq, norm);
    norm += data[position++]! + 1;
    if (!(norm <= 255)) return -1;
  }
  out.push(maxFreq, norm);
  return position;
}

/**
 * Offset just past the pairs `writeImpacts` wrote at `data[position]`, found without decoding
 * them (their bytes are scanned as `readImpacts` reads them); -1 when they count more than
 * MAX_BLOCK_IMPACTS. Their other checks are left to `readImpacts`.
 */
export function skipImpacts(data: Uint8Array, position: number): number {
  const extra = data[position++]!;
  if (!(extra < MAX_BLOCK_IMPACTS)) return -1;
  for (let i = 0; i < extra; i++) {
    const limit = position + 8;
    while (data[position++]! >= 0x80 && position < limit);
    position++;
  }
  return position;
}

