/**
 * Cross-shard reduction used by the search coordinator: the global page of hits (same order as
 * the shard collectors, ties broken by shard index, then leaf, then doc), totals, and the
 * aggregation merge and rendering (re-exported from their modules).
 */
import type { ShardHit, ShardQueryResult, TotalHits } from '../query/search-request.ts';
import { DEFAULT_TRACK_TOTAL_HITS } from '../query/search-request.ts';
import { compareSortValues, parseSort, type SortValue } from './sort-spec.ts';

export { mergeAggregations } from './aggregation-partials.ts';
export { renderAggregations } from './render-aggregations.ts';

/** A hit of the global page with the shard it came from. */
export interface MergedHit {
  shard: number;
  hit: ShardHit;
}

/** The hits from `from` to `from + size` of the global order over every shard's top hits. */
export function mergeTopHits(
  perShard: readonly { shard: number; result: ShardQueryResult }[],
  request: { from: number; size: number; sort?: unknown },
): MergedHit[] {
  const all: MergedHit[] = [];
  for (const { shard, result } of perShard) for (const hit of result.hits) all.push({ shard, hit });
  const keys = request.sort === undefined ? null : parseSort(request.sort, null);
  all.sort((left, right) => {
    let result: number;
    if (keys === null) result = right.hit.score - left.hit.score;
    else result = compareSortValues(keys, (left.hit.sort ?? []) as SortValue[], (right.hit.sort ?? []) as SortValue[]);
    return result || left.shard - right.shard || left.hit.leaf - right.hit.leaf || left.hit.doc - right.hit.doc;
  });
  return all.slice(request.from, request.from + request.size);
}

/**
 * Sums shard totals. The sum is a lower bound when any shard's was; it is capped at
 * track_total_hits (default 10 000) with relation `gte`, like Elasticsearch.
 */
export function mergeTotals(totals: readonly TotalHits[], trackTotalHits?: boolean | number): TotalHits {
  let value = 0;
  let lowerBound = false;
  for (const total of totals) {
    value += total.value;
    if (total.relation === 'gte') lowerBound = true;
  }
  const limit =
    trackTotalHits === true ? Infinity : trackTotalHits === false ? 0 : (trackTotalHits ?? DEFAULT_TRACK_TOTAL_HITS);
  if (value > limit) return { value: limit, relation: 'gte' };
  return { value, relation: lowerBound ? 'gte' : 'eq' };
}
