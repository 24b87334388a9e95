/** Builds the shard aggregator tree for parsed aggregation specs. */
import type { AggregationSpec } from './aggregation-spec.ts';
import type { Aggregator } from './aggregator.ts';
import { AggregatorGroup } from './aggregator.ts';
import { CardinalityAggregator, StatsAggregator, ValueCountAggregator } from './metric-aggregators.ts';
import { HistogramAggregator, RangeAggregator } from './numeric-bucket-aggregators.ts';
import { TermsAggregator } from './terms-aggregator.ts';

/** Aggregators for sibling specs, their sub-aggregations built recursively. */
export function createAggregators(specs: readonly AggregationSpec[]): AggregatorGroup {
  return new AggregatorGroup(specs.map(createAggregator));
}

function createAggregator(spec: AggregationSpec): Aggregator {
  switch (spec.type) {
    case 'terms':
      return new TermsAggregator(spec, createAggregators(spec.subs));
    case 'range':
      return new RangeAggregator(spec, createAggregators(spec.subs));
    case 'histogram':
    case 'date_histogram':
      return new HistogramAggregator(spec, createAggregators(spec.subs));
    case 'value_count':
      return new ValueCountAggregator(spec);
    case 'cardinality':
      return new CardinalityAggregator(spec);
    default:
      return new StatsAggregator(spec);
  }
}
