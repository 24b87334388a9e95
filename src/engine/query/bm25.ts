/**
 * BM25 as Elasticsearch computes it (k1 = 1.2, b = 0.75, including the (k1 + 1) factor ES keeps):
 *
 *   score = boost · idf · (k1 + 1) · tf / (tf + k1 · (1 − b + b · dl / avgdl))
 *   idf   = ln(1 + (N − df + 0.5) / (df + 0.5))
 *
 * N is the field's docCount, df the term's docFreq, both summed over the shard's leaves; dl is
 * the decoded norm of the doc's field. Keyword fields have no length normalisation (dl = 1).
 */
import { decodeNorm } from '../segment/norms.ts';
import { BOUND_SLACK } from './scorer.ts';
import type { SearchContext } from './search-context.ts';

/** BM25 term-frequency saturation. */
export const BM25_K1 = 1.2;
/** BM25 length normalisation. */
export const BM25_B = 0.75;

/** Inverse document frequency of a term with `docFreq` among `docCount` docs. */
export function bm25Idf(docFreq: number, docCount: number): number {
  return Math.log(1 + (docCount - docFreq + 0.5) / (docFreq + 0.5));
}

/** Length-factor tables by average field length (negative key: not length-normalised), reused across searches. */
const lengthFactorTables = new Map<number, Float64Array>();
const MAX_CACHED_TABLES = 256;

/** k1 · (1 − b + b · dl / avgdl) for every norm byte. */
function lengthFactorTable(avgFieldLength: number, lengthNormalised: boolean): Float64Array {
  const key = lengthNormalised ? avgFieldLength : -avgFieldLength;
  let table = lengthFactorTables.get(key);
  if (table === undefined) {
    table = new Float64Array(256);
    for (let norm = 0; norm < 256; norm++) {
      const length = lengthNormalised ? decodeNorm(norm) : 1;
      table[norm] = BM25_K1 * (1 - BM25_B + (BM25_B * length) / avgFieldLength);
    }
    if (lengthFactorTables.size >= MAX_CACHED_TABLES) lengthFactorTables.clear();
    lengthFactorTables.set(key, table);
  }
  return table;
}

/** Precomputed BM25 scoring of one term (or phrase) in one field. */
export class Bm25Scoring {
  /** boost · idf · (k1 + 1). */
  readonly weight: number;
  /** k1 · (1 − b + b · dl / avgdl) for every norm byte. */
  private readonly lengthFactor: Float64Array;

  constructor(boost: number, idf: number, avgFieldLength: number, lengthNormalised: boolean) {
    this.weight = boost * idf * (BM25_K1 + 1);
    this.lengthFactor = lengthFactorTable(avgFieldLength, lengthNormalised);
  }

  /** Score of a doc with term frequency `freq` and norm byte `norm`. */
  score(freq: number, norm: number): number {
    return (this.weight * freq) / (freq + this.lengthFactor[norm]!);
  }

  /** Upper bound for docs with at most `maxFreq` occurrences and a norm of at least `minNorm`. */
  bound(maxFreq: number, minNorm: number): number {
    return this.score(maxFreq, minNorm < 0 ? 0 : minNorm > 255 ? 255 : minNorm) * BOUND_SLACK;
  }

  /**
   * Scoring for terms of `field` whose summed idf is `idf`, with the shard's average field length.
   * `lengthNormalised` is false for keyword fields.
   */
  static forField(
    context: SearchContext,
    field: string,
    idf: number,
    boost: number,
    lengthNormalised: boolean,
  ): Bm25Scoring {
    const stats = context.fieldStats(field);
    const avgFieldLength =
      stats.docCount > 0 && stats.sumTotalTermFreq > 0 ? stats.sumTotalTermFreq / stats.docCount : 1;
    return new Bm25Scoring(boost, idf, avgFieldLength, lengthNormalised);
  }
}
