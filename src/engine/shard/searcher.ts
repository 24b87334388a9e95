import type { FlatField } from '../mapping/mapping.ts';
import type { LeafReader } from '../segment/leaf-reader.ts';
import { countQuery, startCount, startQuery, type QueryPhaseRun } from '../query/execute.ts';
import type { ShardHit, ShardQueryResult, ShardSearchRequest, SourceFetch } from '../query/search-request.ts';
import type { StoredDocument } from './operations.ts';
import { readSourceAndText, readSourceText } from './source-overlay.ts';

/** A hit's document as the fetch phase returns it: `source` is absent when the request did not read it. */
export type FetchedDocument = Omit<StoredDocument, 'source'> & { source?: Record<string, unknown> };

/**
 * A point-in-time view of a shard's leaves. Segments it references stay open (and on disk) until
 * `release()`, so a query phase and its fetch phase see the same documents even if a merge
 * replaces those segments in between.
 */
export class Searcher {
  private released = false;

  constructor(
    /** Leaves in search order: segments, then the layer being frozen, then the mutable layer. */
    readonly leaves: readonly LeafReader[],
    private readonly fields: ReadonlyMap<string, FlatField>,
    private readonly inplaceFields: readonly FlatField[],
    private readonly onRelease: () => void,
  ) {}

  /** Runs the query phase: top hits, total and aggregation partials. */
  query(request: ShardSearchRequest): ShardQueryResult {
    const run = this.startQuery(request);
    run.step(Infinity);
    return run.result();
  }

  /** Counts matching live documents. */
  count(query: unknown): number {
    return countQuery(this.leaves, this.fields, query);
  }

  /** Starts the query phase, to be run in slices (`runInSlices`) so that a long one yields. */
  startQuery(request: ShardSearchRequest): QueryPhaseRun {
    // `top_hits` loads its documents like the fetch phase does (in-place values overlaid).
    return startQuery(this.leaves, this.fields, request, { loadDocument: (leaf, doc, withSource) => this.fetch({ leaf, doc, score: NaN }, withSource) });
  }

  /** Starts a count, to be run in slices; its answer is the result's `total.value`. */
  startCount(query: unknown): QueryPhaseRun {
    return startCount(this.leaves, this.fields, query);
  }

  /**
   * Loads a hit's document: id, seq_no, version and primary term from the doc meta, and, unless
   * `withSource` is false, the stored `_source` with inplace values overlaid (the only part that
   * reads and decompresses a stored block).
   */
  fetch(hit: ShardHit, withSource: SourceFetch = true): FetchedDocument {
    const leaf = this.leaves[hit.leaf]!;
    const meta = leaf.meta(hit.doc);
    const document: FetchedDocument = { id: meta.id, seqNo: meta.seqNo, version: meta.version, primaryTerm: meta.primaryTerm };
    if (withSource === 'text') {
      document.sourceText = readSourceText(leaf, hit.doc, this.inplaceFields);
    } else if (withSource) {
      const { source, text } = readSourceAndText(leaf, hit.doc, this.inplaceFields);
      document.source = source;
      document.sourceText = text;
    }
    return document;
  }

  /** Ends the snapshot; must be called exactly once. */
  release(): void {
    if (this.released) return;
    this.released = true;
    this.onRelease();
  }
}
