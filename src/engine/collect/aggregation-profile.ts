/**
 * Aggregation profiling (ES `profile: true`, `profile.shards[].aggregations`): each aggregator of
 * the tree is wrapped so that it times its own calls — `initialize` (construction, sub-aggregators
 * included), `build_leaf_collector` (switching to a leaf), `collect` and `build_aggregation` (the
 * shard's partial) — and counts them. A node's time includes its children's, as in ES; `reduce`
 * happens on the coordinating node and `post_collection` has no work here, so both stay 0.
 */
import type { AggregationPartial } from './aggregation-partials.ts';
import type { Aggregator } from './aggregator.ts';
import type { AggregationSpec } from './aggregation-spec.ts';
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

/**
 * The `type` Elasticsearch's profile gives the collector of an aggregation, where clients and
 * tests read it (histograms and terms); null: the collector's own class name.
 */
export function profileType(spec: AggregationSpec): string | null {
  if (spec.type === 'histogram') return 'NumericHistogramAggregator';
  if (spec.type === 'date_histogram') return 'DateHistogramAggregator';
  if (spec.type !== 'terms') return null;
  if (spec.source.kind === 'numeric') return 'NumericTermsAggregator';
  return spec.mapHint ? 'MapStringTermsAggregator' : 'GlobalOrdinalsStringTermsAggregator';
}

/** An aggregator that times its calls into a profile node. */
export class ProfiledAggregator implements Aggregator {
  readonly name: string;

  constructor(
    private readonly inner: Aggregator,
    private readonly node: AggregationProfileNode,
    /** The collector's name as Elasticsearch's profile shows it (`profileType`); the class name by default. */
    type: string = inner.constructor.name,
  ) {
    this.name = inner.name;
    node.type = type;
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
