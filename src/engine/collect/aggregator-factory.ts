/** Builds the shard aggregator tree for parsed aggregation specs (pipelines have none). */
import { AggregationProfileNode, ProfiledAggregator, profileType } from './aggregation-profile.ts';
import type { AggregationSpec } from './aggregation-spec.ts';
import type { Aggregator } from './aggregator.ts';
import { AggregatorGroup, type AggregationContext } from './aggregator.ts';
import { CompositeAggregator } from './composite-aggregator.ts';
import { IpRangeAggregator } from './ip-range.ts';
import { FilterAggregator, FiltersAggregator, MissingAggregator } from './filter-aggregators.ts';
import { CardinalityAggregator, PercentilesAggregator, StatsAggregator, ValueCountAggregator } from './metric-aggregators.ts';
import { HistogramAggregator, RangeAggregator } from './numeric-bucket-aggregators.ts';
import type { PipelineSpec } from './pipeline-spec.ts';
import { isPipeline } from './pipelines.ts';
import { SignificantTermsAggregator } from './significant-terms.ts';
import { TermsAggregator } from './terms-aggregator.ts';
import { TopHitsAggregator, topHitsNeedScores } from './top-hits.ts';

/**
 * Aggregators for sibling specs, their sub-aggregations built recursively. With `profile` (the
 * list the siblings' profile nodes go to), each aggregator is wrapped to time its calls.
 */
export function createAggregators(specs: readonly AggregationSpec[], context: AggregationContext, profile: AggregationProfileNode[] | null = null): AggregatorGroup {
  // Pipelines read no document: they run on the merged output (pipelines.ts).
  const collecting = specs.filter((spec): spec is Exclude<AggregationSpec, PipelineSpec> => !isPipeline(spec));
  return new AggregatorGroup(
    collecting.map((spec) => {
      if (profile === null) return createAggregator(spec, context, null);
      const node = new AggregationProfileNode(spec.name);
      profile.push(node);
      const started = performance.now();
      const inner = createAggregator(spec, context, node.children);
      const aggregator = new ProfiledAggregator(inner, node, profileType(spec) ?? inner.constructor.name);
      node.add('initialize', started);
      return aggregator;
    }),
    context,
  );
}

/** Whether any aggregation of the tree needs the query's scores (`top_hits` by score). */
export function aggregationsNeedScores(specs: readonly AggregationSpec[]): boolean {
  return specs.some((spec) => (spec.type === 'top_hits' ? topHitsNeedScores(spec) : aggregationsNeedScores(spec.subs)));
}

function createAggregator(spec: Exclude<AggregationSpec, PipelineSpec>, context: AggregationContext, profile: AggregationProfileNode[] | null): Aggregator {
  const subs = (): AggregatorGroup => createAggregators(spec.subs, context, profile);
  switch (spec.type) {
    case 'terms':
      return new TermsAggregator(spec, subs());
    case 'range':
      return new RangeAggregator(spec, subs());
    case 'histogram':
    case 'date_histogram':
      return new HistogramAggregator(spec, subs());
    case 'filter':
      return new FilterAggregator(spec, subs());
    case 'filters':
      return new FiltersAggregator(spec, subs());
    case 'missing':
      return new MissingAggregator(spec, subs());
    case 'composite':
      return new CompositeAggregator(spec, subs());
    case 'percentiles':
    case 'percentile_ranks':
      return new PercentilesAggregator(spec);
    case 'ip_range':
      return new IpRangeAggregator(spec, subs());
    case 'significant_terms':
      return new SignificantTermsAggregator(spec, subs(), context);
    case 'top_hits':
      return new TopHitsAggregator(spec, context);
    case 'value_count':
      return new ValueCountAggregator(spec);
    case 'cardinality':
      return new CardinalityAggregator(spec);
    default:
      return new StatsAggregator(spec);
  }
}
