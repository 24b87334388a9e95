/**
 * Search across the shards of one or more collections, query-then-fetch: every shard runs the
 * query phase for its top `from + size` hits (with per-shard BM25 statistics, like ES
 * `query_then_fetch`), the shard results are merged into one global page, and only the winning
 * hits are fetched. Aggregation partials are merged across shards, then rendered once.
 */
import { setImmediate as nextTurn } from 'node:timers/promises';
import { mergeAggregations, mergeTopHits, mergeTotals, renderAggregations } from '../engine/collect/merge.ts';
import { highlight } from '../engine/query/highlight.ts';
import type { ShardQueryResult } from '../engine/query/search-request.ts';
import type { Searcher } from '../engine/shard/searcher.ts';
import { resolveCollections } from './collections.ts';
import type { HostedCollection } from './local-shards.ts';
import { startedShard, type NodeContext } from './node-context.ts';
import { NodeError } from './node-error.ts';
import { parseCount, parseSearch, type SearchParams } from './search-body.ts';
import { applySourceFilter } from './source-filter.ts';

/** `_shards` section of search and count responses. */
export interface SearchShardsHeader {
  total: number;
  successful: number;
  skipped: number;
  failed: number;
  /** Present when some shards could not take part. */
  failures?: Array<{ shard: number; index: string; reason: { type: string; reason: string } }>;
}

/** One rendered hit. */
export interface SearchHit {
  _index: string;
  _id: string;
  _score: number | null;
  _version?: number;
  _seq_no?: number;
  _primary_term?: number;
  _source?: Record<string, unknown>;
  sort?: unknown[];
  highlight?: Record<string, string[]>;
}

/** The complete Elasticsearch search response body. */
export interface SearchResponse {
  took: number;
  timed_out: boolean;
  _shards: SearchShardsHeader;
  hits: {
    total?: { value: number; relation: 'eq' | 'gte' };
    max_score: number | null;
    hits: SearchHit[];
  };
  aggregations?: Record<string, unknown>;
}

/** The Elasticsearch count response body. */
export interface CountResponse {
  count: number;
  _shards: SearchShardsHeader;
}

/** A shard taking part in a search: its collection and searcher. */
interface SearchTarget {
  hosted: HostedCollection;
  searcher: Searcher;
}

/** Opens a searcher on every available shard of the target; unavailable shards are reported. */
function openTargets(context: NodeContext, target: string): { targets: SearchTarget[]; header: SearchShardsHeader } {
  const header: SearchShardsHeader = { total: 0, successful: 0, skipped: 0, failed: 0 };
  const targets: SearchTarget[] = [];
  for (const hosted of resolveCollections(context, target)) {
    for (let shardId = 0; shardId < hosted.meta.settings.number_of_shards; shardId++) {
      header.total++;
      try {
        targets.push({ hosted, searcher: startedShard(hosted, shardId).searcher() });
        header.successful++;
      } catch (error) {
        if (!(error instanceof NodeError)) throw error;
        header.failed++;
        header.failures ??= [];
        header.failures.push({ shard: shardId, index: hosted.meta.name, reason: { type: 'unavailable_shards_exception', reason: error.message } });
      }
    }
  }
  if (header.total > 0 && header.successful === 0) {
    throw new NodeError('shard_unavailable', `all shards failed: ${header.failures?.[0]?.reason.reason ?? ''}`);
  }
  return { targets, header };
}

/**
 * Executes `_search` over a target (`name`, `a,b*`, `_all`). Yields to the event loop after each
 * shard's query phase, so concurrent searches interleave (search lanes bound how many) and a long
 * search does not hold up other requests for its whole duration.
 */
export async function search(context: NodeContext, target: string, body: unknown, params: SearchParams = {}): Promise<SearchResponse> {
  const started = performance.now();
  const request = parseSearch(body, params, context.settings()['search.default_timeout_ms']);
  const { targets, header } = openTargets(context, target);
  try {
    const deadline = request.timeoutMs === undefined ? undefined : started + request.timeoutMs;
    const results: ShardQueryResult[] = [];
    for (const shardTarget of targets) {
      const result = shardTarget.searcher.query({
        query: request.query,
        from: 0,
        size: request.from + request.size,
        sort: request.sort,
        searchAfter: request.searchAfter,
        aggs: request.aggs,
        trackTotalHits: request.trackTotalHits,
        minScore: request.minScore,
        timeoutMs: deadline === undefined ? undefined : Math.max(0, deadline - performance.now()),
      });
      results.push(result);
      await nextTurn();
    }
    const page = mergeTopHits(
      results.map((result, shard) => ({ shard, result })),
      { from: request.from, size: request.size, sort: request.sort },
    );
    const hits = page.map(({ shard, hit }): SearchHit => {
      const { hosted, searcher } = targets[shard];
      const document = searcher.fetch(hit);
      const rendered: SearchHit = { _index: hosted.meta.name, _id: document.id, _score: Number.isNaN(hit.score) ? null : hit.score };
      if (request.version) rendered._version = document.version;
      if (request.seqNoPrimaryTerm) {
        rendered._seq_no = document.seqNo;
        rendered._primary_term = document.primaryTerm;
      }
      const source = applySourceFilter(document.source, request.source);
      if (source !== undefined) rendered._source = source;
      if (hit.sort !== undefined) rendered.sort = hit.sort;
      if (request.highlight) {
        const fragments = highlight(document.source, request.highlight, request.query, hosted.fields);
        if (Object.keys(fragments).length > 0) rendered.highlight = fragments;
      }
      return rendered;
    });
    let maxScore: number | null = null;
    for (const result of results) {
      if (result.maxScore !== null && !Number.isNaN(result.maxScore) && (maxScore === null || result.maxScore > maxScore)) maxScore = result.maxScore;
    }
    const response: SearchResponse = {
      took: 0,
      timed_out: results.some((result) => result.timedOut),
      _shards: header,
      hits: { max_score: maxScore, hits },
    };
    if (request.trackTotalHits !== false) response.hits = { total: mergeTotals(results.map((result) => result.total), request.trackTotalHits), ...response.hits };
    if (request.aggs !== undefined) {
      const partials = mergeAggregations(results.map((result) => result.aggs).filter((aggs) => aggs !== undefined));
      response.aggregations = renderAggregations(partials, request.aggs);
    }
    response.took = Math.round(performance.now() - started);
    return response;
  } finally {
    for (const shardTarget of targets) shardTarget.searcher.release();
  }
}

/** Executes `_count` over a target. */
export function count(context: NodeContext, target: string, body: unknown, params: { q?: string } = {}): CountResponse {
  const query = parseCount(body, params);
  const { targets, header } = openTargets(context, target);
  try {
    let total = 0;
    for (const shardTarget of targets) total += shardTarget.searcher.count(query);
    return { count: total, _shards: header };
  } finally {
    for (const shardTarget of targets) shardTarget.searcher.release();
  }
}
