/**
 * Shard-side aggregation. Every aggregator sees each matching live doc with the ordinal of the
 * bucket that owns it (0 at the top level); bucket aggregators pass their own bucket ordinals
 * down to their sub-aggregators. `partial(owner, budget)` then reports one owner's state, counting
 * the buckets it builds against the request's bucket budget.
 */
import type { LeafReader } from '../segment/leaf-reader.ts';
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

/** Sibling aggregators (the top level, or the sub-aggregations of a bucket aggregation). */
export class AggregatorGroup {
  constructor(readonly aggregators: readonly Aggregator[]) {}

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
