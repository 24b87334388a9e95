/**
 * Shard-side aggregation. Every aggregator sees each matching live doc with the ordinal of the
 * bucket that owns it (0 at the top level); bucket aggregators pass their own bucket ordinals
 * down to their sub-aggregators. `partial(owner, budget)` then reports one owner's state, counting
 * the buckets it builds against the request's bucket budget.
 */
import type { LeafReader } from '../segment/leaf-reader.ts';
import type { Explanation } from '../query/explain.ts';
import { putPartial, type AggregationPartial, type AggregationPartials } from './aggregation-partials.ts';
import type { BucketBudget } from './bucket-budget.ts';

/** One aggregation collecting on a shard. */
export interface Aggregator {
  readonly name: string;
  /** Switches to another leaf (columns and ordinals are per leaf). */
  setLeaf(leaf: LeafReader): void;
  /** Collects a doc into the bucket tree under `owner`. */
  collect(doc: number, owner: number): void;
  /** The partial result for one owner bucket; bucket aggregators count the buckets they build in `budget`. */
  partial(owner: number, budget: BucketBudget): AggregationPartial;
}

/** A document as `top_hits` returns it: its meta, and its source when asked for. */
export interface LoadedDocument {
  id: string;
  seqNo: number;
  version: number;
  primaryTerm: number;
  source?: Record<string, unknown>;
  /** `source` as the JSON text the response shows (stored bytes as sent), when loaded. */
  sourceText?: string;
}

/** Loads a doc of the shard's leaves (by leaf index), with its source or not. */
export type DocumentLoader = (leafIndex: number, doc: number, withSource: boolean) => LoadedDocument;

/** Reads docs straight from the leaves (the shard searcher passes one that also overlays in-place values). */
export function leafDocumentLoader(leaves: readonly LeafReader[]): DocumentLoader {
  return (leafIndex, doc, withSource) => {
    const leaf = leaves[leafIndex]!;
    const meta = leaf.meta(doc);
    const loaded: LoadedDocument = { id: meta.id, seqNo: meta.seqNo, version: meta.version, primaryTerm: meta.primaryTerm };
    if (withSource) {
      loaded.sourceText = leaf.source(doc).toString('utf8');
      loaded.source = JSON.parse(loaded.sourceText) as Record<string, unknown>;
    }
    return loaded;
  };
}

/**
 * What the shard collector tells every aggregator of one request besides the doc: where it is
 * (leaf index and first doc number of the leaf) and the doc's score, and how to load documents.
 */
export class AggregationContext {
  leafIndex = -1;
  docBase = 0;
  /** Score of the doc being collected (NaN when the query computes none). */
  score = NaN;

  constructor(
    readonly loadDocument: DocumentLoader,
    /** Every leaf of the shard, in search order (the background of `significant_terms`). */
    readonly leaves: readonly LeafReader[],
    /** How the search's query scored a doc (`top_hits` with `explain`); null: not available. */
    readonly explain: ((leafIndex: number, doc: number) => Explanation | null) | null = null,
  ) {}
}

/** Sibling aggregators (the top level, or the sub-aggregations of a bucket aggregation). */
export class AggregatorGroup {
  constructor(
    readonly aggregators: readonly Aggregator[],
    /** Shared by every group of the request's aggregator tree. */
    readonly context: AggregationContext,
  ) {}

  /** Whether the group has no aggregator. */
  get empty(): boolean {
    return this.aggregators.length === 0;
  }

  /** Switches every aggregator to another leaf. */
  setLeaf(leaf: LeafReader): void {
    for (const aggregator of this.aggregators) aggregator.setLeaf(leaf);
  }

  /** Collects a doc into every aggregator. */
  collect(doc: number, owner: number): void {
    const aggregators = this.aggregators;
    for (let i = 0; i < aggregators.length; i++) aggregators[i]!.collect(doc, owner);
  }

  /** Partials of every aggregator for one owner, their buckets counted in `budget`. */
  partials(owner: number, budget: BucketBudget): AggregationPartials {
    const partials: AggregationPartials = {};
    for (const aggregator of this.aggregators) putPartial(partials, aggregator.name, aggregator.partial(owner, budget));
    return partials;
  }
}
