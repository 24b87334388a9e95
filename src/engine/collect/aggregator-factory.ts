/** Builds the shard aggregator tree for parsed aggregation specs (pipelines have none). */
import type { AggregationSpec } from './aggregation-spec.ts';
import type { Aggregator } from './aggregator.ts';
import { AggregatorGroup } from './aggregator.ts';
import { CompositeAggregator } from './composite-aggregator.ts';
import { FilterAggregator, FiltersAggregator, MissingAggregator } from './filter-aggregators.ts';
import { CardinalityAggregator, PercentilesAggregator, StatsAggregator, ValueCountAggregator } from './metric-aggregators.ts';
import { HistogramAggregator, RangeAggregator } from './numeric-bucket-aggregators.ts';
import type { PipelineSpec } from './pipeline-spec.ts';
import { isPipeline } from './pipelines.ts';
import { TermsAggregator } from './terms-aggregator.ts';

/** Aggregators for sibling specs, their sub-aggregations built recursively. */
export function createAggregators(specs: readonly AggregationSpec[]): AggregatorGroup {
  // Pipelines read no document: they run on the merged output (pipelines.ts).
  return new AggregatorGroup(specs.filter((spec): spec is Exclude<AggregationSpec, PipelineSpec> => !isPipeline(spec)).map(createAggregator));
}

function createAggregator(spec: Exclude<AggregationSpec, PipelineSpec>): Aggregator {
  switch (spec.type) {
    case 'terms':
      return new TermsAggregator(spec, createAggregators(spec.subs));
    case 'range':
      return new RangeAggregator(spec, createAggregators(spec.subs));
    case 'histogram':
    case 'date_histogram':
      return new HistogramAggregator(spec, createAggregators(spec.subs));
    case 'filter':
      return new FilterAggregator(spec, createAggregators(spec.subs));
    case 'filters':
      return new FiltersAggregator(spec, createAggregators(spec.subs));
    case 'missing':
      return new MissingAggregator(spec, createAggregators(spec.subs));
    case 'composite':
      return new CompositeAggregator(spec, createAggregators(spec.subs));
    case 'percentiles':
    case 'percentile_ranks':
      return new PercentilesAggregator(spec);
    case 'value_count':
      return new ValueCountAggregator(spec);
    case 'cardinality':
      return new CardinalityAggregator(spec);
    default:
      return new StatsAggregator(spec);
  }
}
