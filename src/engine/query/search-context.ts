/**
 * One search over one shard: its leaves, its mapping and the BM25 statistics summed over the
 * leaves (deleted docs included, like Lucene), cached for the duration of the request.
 */
import type { FlatField } from '../mapping/mapping.ts';
import type { FieldStats, LeafReader } from '../segment/leaf-reader.ts';
import { tooManyClauses, MAX_CLAUSE_COUNT } from './query-limits.ts';

/** Shard-level view shared by every weight of one request. */
export class SearchContext {
  /** First global doc number of each leaf (leaf order), used for `_doc` sort values. */
  readonly docBases: number[] = [];
  private readonly fieldStatsCache = new Map<string, FieldStats>();
  private readonly docFreqCache = new Map<string, number>();
  /** Clauses multi-term queries added when they expanded against this shard. */
  private expandedClauses = 0;

  constructor(
    readonly leaves: readonly LeafReader[],
    readonly fields: ReadonlyMap<string, FlatField>,
  ) {
    let base = 0;
    for (const leaf of leaves) {
      this.docBases.push(base);
      base += leaf.maxDoc;
    }
  }

  /** The mapped field at a dotted path, or undefined. */
  field(path: string): FlatField | undefined {
    return this.fields.get(path);
  }

  /** Field statistics summed over the leaves, in leaf order. */
  fieldStats(field: string): FieldStats {
    let stats = this.fieldStatsCache.get(field);
    if (stats === undefined) {
      let docCount = 0;
      let sumTotalTermFreq = 0;
      for (const leaf of this.leaves) {
        const leafStats = leaf.fieldStats(field);
        docCount += leafStats.docCount;
        sumTotalTermFreq += leafStats.sumTotalTermFreq;
      }
      stats = { docCount, sumTotalTermFreq };
      this.fieldStatsCache.set(field, stats);
    }
    return stats;
  }

  /** Document frequency of a term summed over the leaves. */
  docFreq(field: string, term: string): number {
    const key = `${field}\u0000${term}`;
    let docFreq = this.docFreqCache.get(key);
    if (docFreq === undefined) {
      docFreq = 0;
      for (const leaf of this.leaves) docFreq += leaf.docFreq(field, term);
      this.docFreqCache.set(key, docFreq);
    }
    return docFreq;
  }

  /**
   * Counts `clauses` more leaf queries that a query expanded to against this shard (fuzzy terms);
   * past MAX_CLAUSE_COUNT in all, the too-many-clauses error.
   */
  chargeExpansions(clauses: number): void {
    this.expandedClauses += clauses;
    if (this.expandedClauses > MAX_CLAUSE_COUNT) throw tooManyClauses();
  }
}
