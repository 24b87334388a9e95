/**
 * Ordering of keyed buckets by count, key or a metric sub-aggregation. Shards use it to pick
 * their shard_size buckets and rendering uses it again after the merge, so both agree.
 */
import type { BucketOrder } from './aggregation-options.ts';
import type { AggregationPartial, BucketKey, KeyedBucketPartial } from './aggregation-partials.ts';
import { cardinalityValue, partialNamed } from './aggregation-partials.ts';
import { extendedStatValue } from './extended-stats.ts';
import { compareExactAware } from './exact-sort-values.ts';

/** Value of a metric partial for ordering and rendering (null when it has no value). */
export function metricValue(partial: AggregationPartial | undefined, stat: string): number | null {
  if (partial === undefined) return null;
  switch (partial.type) {
    case 'stats':
      switch (stat) {
        case 'min':
          return partial.min;
        case 'max':
          return partial.max;
        case 'sum':
          return partial.sum;
        case 'avg':
          return partial.count === 0 ? null : partial.sum / partial.count;
        case 'count':
          return partial.count;
        default:
          return null;
      }
    case 'extended_stats':
      return extendedStatValue(partial, stat);
    case 'value_count':
      return partial.count;
    case 'cardinality':
      return cardinalityValue(partial);
    case 'single_bucket':
      return stat === 'doc_count' ? partial.docCount : null;
    default:
      return null;
  }
}

function compareKeys(left: BucketKey, right: BucketKey): number {
  if (typeof left === 'number' && typeof right === 'number') return left - right;
  const exact = compareExactAware(left, right);
  if (exact !== null) return exact;
  const leftText = String(left);
  const rightText = String(right);
  return leftText < rightText ? -1 : leftText > rightText ? 1 : 0;
}

/** Compares two buckets under a list of orders (negative: `left` comes first). */
export function compareBuckets(orders: readonly BucketOrder[], left: KeyedBucketPartial, right: KeyedBucketPartial): number {
  for (const order of orders) {
    let result: number;
    if (order.by === '_count') result = left.docCount - right.docCount;
    else if (order.by === '_key') result = compareKeys(left.key, right.key);
    else {
      const leftValue = metricValue(partialNamed(left.aggs, order.aggregation), order.stat!);
      const rightValue = metricValue(partialNamed(right.aggs, order.aggregation), order.stat!);
      if (leftValue === null || rightValue === null) {
        // Buckets without a metric value go last whatever the direction.
        if (leftValue !== rightValue) return leftValue === null ? 1 : -1;
        continue;
      }
      result = leftValue - rightValue;
    }
    if (result !== 0) return order.direction === 'asc' ? result : -result;
  }
  return 0;
}

/** Whether ordering needs the buckets' sub-aggregation partials. */
export function ordersByMetric(orders: readonly BucketOrder[]): boolean {
  return orders.some((order) => order.by === 'metric');
}
