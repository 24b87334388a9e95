/**
 * Aggregation profiling (ES `profile: true`, `profile.shards[].aggregations`): each aggregator of
 * the tree is wrapped so that it times its own calls — `initialize` (construction, sub-aggregators
 * included), `build_leaf_collector` (switching to a leaf), `collect` and `build_aggregation` (the
 * shard's partial) — and counts them. A node's time includes its children's, as in ES; `reduce`
 * happens on the coordinating node and `post_collection` has no work here, so both stay 0.
 */
import type { AggregationPartial } from './aggregation-partials.ts';
import type { Aggregator } from './aggregator.ts';
import type { BucketBudget } from './bucket-budget.ts';
import type { LeafReader } from '../segment/leaf-reader.ts';
import { ProfileNode, type ProfileTree } from '../query/profile-node.ts';

const TIMED = ['initialize', 'build_leaf_collector', 'collect', 'post_collection', 'build_aggregation', 'reduce'] as const;

/** One aggregator's profile, as ES renders it. */
export type AggregationProfile = ProfileTree;

/** The timings and call counts of one aggregator, and its children's nodes. */
export class AggregationProfileNode extends ProfileNode<(typeof TIMED)[number]> {
  constructor(name: string) {
    super('', name, TIMED);
  }
}

/** An aggregator that times its calls into a profile node. */
export class ProfiledAggregator implements Aggregator {
  readonly name: string;

  constructor(
    private readonly inner: Aggregator,
    private readonly node: AggregationProfileNode,
  ) {
    this.name = inner.name;
    node.type = inner.constructor.name;
  }

  setLeaf(leaf: LeafReader): void {
    const started = performance.now();
    this.inner.setLeaf(leaf);
    this.node.add('build_leaf_collector', started);
  }

  collect(doc: number, owner: number): void {
    const started = performance.now();
    this.inner.collect(doc, owner);
    this.node.add('collect', started);
  }

  partial(owner: number, budget: BucketBudget): AggregationPartial {
    const started = performance.now();
    const partial = this.inner.partial(owner, budget);
    this.node.add('build_aggregation', started);
    return partial;
  }
}
