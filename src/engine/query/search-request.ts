/** The query phase of a search as one shard sees it: request in, top hits and partials out. */
import type { AggregationPartials } from '../collect/aggregation-partials.ts';
import type { Explanation } from './explain.ts';
import type { AggregationProfile } from '../collect/aggregation-profile.ts';
import type { QueryProfile } from './profile.ts';

/** Hits counted exactly before the total becomes a lower bound (Elasticsearch's default). */
export const DEFAULT_TRACK_TOTAL_HITS = 10_000;

/** Largest from + size a search may ask for (Elasticsearch's index.max_result_window). */
export const MAX_RESULT_WINDOW = 10_000;

/** How a fetch reads `_source`: not at all, as text only, or parsed and as text (true). */
export type SourceFetch = boolean | 'text';

/** A search request for one shard. */
export interface ShardSearchRequest {
  /** Elasticsearch query DSL object (default match_all). */
  query?: unknown;
  /** Hits to skip; the shard returns the top from + size. */
  from: number;
  /** Hits to return after `from`. */
  size: number;
  /** The collection's `index.max_result_window` (default MAX_RESULT_WINDOW): from + size may not exceed it. */
  maxResultWindow?: number;
  /** ES sort syntax: "field", {field: "desc"}, {field: {order, missing, mode, unmapped_type}}, "_score", "_doc"; array or single. */
  sort?: unknown;
  /** Sort values of the last hit of the previous page; hits strictly after it are returned. */
  searchAfter?: unknown[];
  /** ES aggregations DSL. */
  aggs?: unknown;
  /** Same as `aggs` (the long ES spelling). */
  aggregations?: unknown;
  /** Count exactly up to this many hits (default 10 000); true = always exact, false = no count. */
  trackTotalHits?: boolean | number;
  /** Hits scoring below are dropped (and not counted or aggregated). */
  minScore?: number;
  /** Collection stops once exceeded; the result is then partial and `timedOut` is true. */
  timeoutMs?: number;
  /** Position of this shard in a point in time or scroll: `_shard_doc` sort values are `shardIndex * 2^32 + doc`; the sort key is refused without it. */
  shardIndex?: number;
  /**
   * Whether the fetch phase reads each hit's stored `_source` (default true: parsed and as text);
   * `'text'`: as text only (the caller renders it without reading it); false: id and doc meta only.
   */
  fetchSource?: SourceFetch;
  /** Each returned hit carries the explanation of its score (ES `explain`). */
  explain?: boolean;
  /** The result carries the query phase's profile (ES `profile`). */
  profile?: boolean;
}

/** The query phase's profile of one shard (ES `profile.shards[].searches[]`, less the fetch). */
export interface ShardQueryProfile {
  query: QueryProfile[];
  rewrite_time: number;
  collector: Array<{ name: string; reason: string; time_in_nanos: number }>;
  /** The aggregators' profiles (ES renders them beside `searches`, as `aggregations`). */
  aggregations: AggregationProfile[];
}

/** One hit of a shard: leaf index into the shard's leaves and doc id within the leaf. */
export interface ShardHit {
  leaf: number;
  doc: number;
  /** BM25 (or custom) score; NaN when the sort did not need scores (ES renders null). */
  score: number;
  /** Sort values when the request had a sort (numbers, strings, null for missing). */
  sort?: unknown[];
  /** How the score was computed, when the request asked to `explain`. */
  explanation?: Explanation;
}

/** Exact count, or a lower bound once the count passed track_total_hits. */
export interface TotalHits {
  value: number;
  relation: 'eq' | 'gte';
}

/** What the query phase of one shard returns. */
export interface ShardQueryResult {
  total: TotalHits;
  /** Best score among the hits (null when sorted by field or no hits were kept). */
  maxScore: number | null;
  /** The top from + size hits, in order. */
  hits: ShardHit[];
  /** Aggregation partials, mergeable across shards, when the request had aggregations. */
  aggs?: AggregationPartials;
  timedOut: boolean;
  /** The query phase's timings, when the request asked to `profile`. */
  profile?: ShardQueryProfile;
}
