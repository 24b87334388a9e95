/**
 * Search across the shards of one or more collections, query-then-fetch: every shard runs the
 * query phase for its top `from + size` hits (with per-shard BM25 statistics, like ES
 * `query_then_fetch`), the shard results are merged into one global page, and only the winning
 * hits are fetched; a search of one shard takes one call (query-and-fetch). Aggregation partials
 * are merged across shards, then rendered once.
 */
import { displaySortValues } from '../engine/collect/sort-spec.ts';
import type { ShardTarget } from '../cluster/router.ts';
import type { QueryPhase } from '../cluster/shard-handle.ts';
import { mergeAggregations, mergeTopHits, mergeTotals, renderAggregations, type MergedHit } from '../engine/collect/merge.ts';
import { highlight } from '../engine/query/highlight.ts';
import type { ShardQueryResult, ShardSearchRequest } from '../engine/query/search-request.ts';
import type { FetchedDocument } from '../engine/shard/searcher.ts';
import { documentSeqNo } from '../engine/shard/seq-no.ts';
import { filteredQuery, resolveReadTargets, type ResolveOptions } from './read-targets.ts';
import type { NodeContext } from './node-context.ts';
import { NodeError } from './node-error.ts';
import { parseCount, parseSearch, type SearchParams } from './search-body.ts';
import { applySourceFilter, mappedSourceView } from './source-filter.ts';

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
    /** A number with `rest_total_hits_as_int`. */
    total?: { value: number; relation: 'eq' | 'gte' } | number;
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

/** Query-string parameters of `_count`. */
export interface CountParams {
  /** Query string, run as a `simple_query_string` over all fields. */
  q?: string;
  /** ES `ignore_unavailable`: unknown collections of the target are left out instead of a 404. */
  ignoreUnavailable?: boolean;
}

/** What the phases need of a search request to cut the page. */
type PageRequest = { from: number; size: number; sort?: unknown };

/**
 * The shard copies a search goes to (those its aliases' `search_routing` selects), the `_shards`
 * header that reports the others, and the query each copy runs (with its aliases' filter).
 */
function openTargets(context: NodeContext, target: string, options: ResolveOptions): { targets: ShardTarget[]; header: SearchShardsHeader; queryOf: (target: ShardTarget, query: unknown) => unknown } {
  const selected = new Map(resolveReadTargets(context, target, options).map((read) => [read.hosted, read]));
  const inRouting = (shard: { collection: ShardTarget['collection']; shardId: number }): boolean => selected.get(shard.collection)?.shards?.has(shard.shardId) ?? true;
  const copies = context.router.searchCopies([...selected.keys()]);
  const targets = copies.targets.filter(inRouting);
  const misses = copies.misses.filter(inRouting);
  const queryOf = (shard: ShardTarget, query: unknown): unknown => filteredQuery(query, selected.get(shard.collection) ?? { filter: null });
  const header: SearchShardsHeader = { total: targets.length + misses.length, successful: targets.length, skipped: 0, failed: misses.length };
  if (misses.length > 0) {
    header.failures = misses.map((miss) => ({ shard: miss.shardId, index: miss.collection.meta.name, reason: { type: 'unavailable_shards_exception', reason: miss.reason } }));
  }
  if (header.total > 0 && header.successful === 0) {
    throw new NodeError('shard_unavailable', `all shards failed: ${header.failures?.[0]?.reason.reason ?? ''}`);
  }
  return { targets, header, queryOf };
}

/** Runs `phase` on every target concurrently; if any fails, undoes the others with `undo` and throws the first failure. */
async function everyShard<T>(targets: readonly ShardTarget[], phase: (target: ShardTarget) => Promise<T>, undo: (target: ShardTarget, value: T) => Promise<void>): Promise<T[]> {
  const settled = await Promise.allSettled(targets.map(phase));
  const failure = settled.find((outcome): outcome is PromiseRejectedResult => outcome.status === 'rejected');
  if (!failure) return settled.map((outcome) => (outcome as PromiseFulfilledResult<T>).value);
  await Promise.all(settled.map((outcome, index) => (outcome.status === 'fulfilled' ? undo(targets[index]!, outcome.value).catch(() => undefined) : undefined)));
  throw failure.reason;
}

/**
 * Executes `_search` over a target (`name`, `a,b*`, `_all`): the query phase runs on one copy of
 * every shard concurrently, the pages are merged, then each shard holding winning hits fetches
 * just those (the others free their search context).
 */
export async function search(context: NodeContext, target: string, body: unknown, params: SearchParams = {}): Promise<SearchResponse> {
  const started = performance.now();
  const request = parseSearch(body, params, context.settings()['search.default_timeout_ms']);
  const { targets, header, queryOf } = openTargets(context, target, { ignoreUnavailable: params.ignoreUnavailable });
  const shardRequest: ShardSearchRequest = {
    query: request.query,
    from: 0,
    size: request.from + request.size,
    sort: request.sort,
    searchAfter: request.searchAfter,
    aggs: request.aggs,
    trackTotalHits: request.trackTotalHits,
    minScore: request.minScore,
    timeoutMs: request.timeoutMs === undefined ? undefined : Math.max(0, started + request.timeoutMs - performance.now()),
    // Only `_source` and highlighting read the stored source; ids and versions come from the doc meta.
    fetchSource: request.source.kind !== 'none' || request.highlight !== undefined,
  };
  const { results, page, documents } = await searchPhases(targets, (shard) => ({ ...shardRequest, query: queryOf(shard, shardRequest.query) }), request);
  const hits = page.map(({ shard, hit }, position): SearchHit => {
    const { collection } = targets[shard]!;
    const document = documents[position]!;
    const rendered: SearchHit = { _index: collection.meta.name, _id: document.id, _score: Number.isNaN(hit.score) ? null : hit.score };
    if (request.version) rendered._version = document.version;
    if (request.seqNoPrimaryTerm) {
      rendered._seq_no = documentSeqNo(document.seqNo);
      rendered._primary_term = document.primaryTerm;
    }
    const visible = document.source === undefined ? undefined : mappedSourceView(document.source, collection.meta.mapping._source);
    const source = visible === undefined ? undefined : applySourceFilter(visible, request.source);
    if (source !== undefined) rendered._source = source;
    if (hit.sort !== undefined) rendered.sort = displaySortValues(hit.sort, request.sort, collection.fields);
    if (request.highlight && document.source) {
      const fragments = highlight(document.source, request.highlight, request.query, collection.fields);
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
  if (request.trackTotalHits !== false) {
    const total = mergeTotals(results.map((result) => result.total), request.trackTotalHits);
    response.hits = { total: params.restTotalHitsAsInt ? total.value : total, ...response.hits };
  } else if (params.restTotalHitsAsInt) {
    response.hits = { total: -1, ...response.hits };
  }
  if (request.aggs !== undefined) {
    const partials = mergeAggregations(results.map((result) => result.aggs).filter((aggs) => aggs !== undefined));
    response.aggregations = renderAggregations(partials, request.aggs, { typedKeys: params.typedKeys });
  }
  response.took = Math.round(performance.now() - started);
  return response;
}

/** What the search phases give the rendering: each shard's result, the page, and its documents in page order. */
interface SearchPhases {
  results: ShardQueryResult[];
  page: MergedHit[];
  documents: FetchedDocument[];
}

/** Largest page (`from + size`) for which a copy on another node queries and fetches in one call. */
export const REMOTE_QUERY_AND_FETCH_MAX_PAGE = 20;

/** A shard's query phase: its search context to fetch from later, or the documents it fetched at once. */
type ShardPhase = { result: ShardQueryResult; context: number; documents?: undefined } | { result: ShardQueryResult; context?: undefined; documents: FetchedDocument[] };

/**
 * The query and fetch phases, planned per shard. A shard queries and fetches its own top hits in
 * one call (ES's query-and-fetch) when it is the only one (its hits are the page), or when it is
 * on another node and the page is small (a network round trip costs more than fetching a few hits
 * the page drops); the others run the query phase, then fetch just the page's winners, and free
 * their search context when they have none (query-then-fetch; with several shards in this node's
 * threads, fetching hits the page drops costs more than the second call, measured on e-mails).
 */
async function searchPhases(targets: readonly ShardTarget[], shardRequest: (target: ShardTarget) => ShardSearchRequest, request: PageRequest): Promise<SearchPhases> {
  const pageSize = request.from + request.size;
  const fetchesAtOnce = (target: ShardTarget): boolean => targets.length === 1 || (!target.local && pageSize <= REMOTE_QUERY_AND_FETCH_MAX_PAGE);
  const phases = await everyShard<ShardPhase>(
    targets,
    (target) => (fetchesAtOnce(target) ? target.handle.queryAndFetch(shardRequest(target)) : target.handle.query(shardRequest(target))),
    (target, phase) => (phase.context === undefined ? Promise.resolve() : target.handle.freeContext(phase.context)),
  );
  const results = phases.map((phase) => phase.result);
  const page = mergeTopHits(results.map((result, shard) => ({ shard, result })), request);
  return { results, page, documents: await fetchWinners(targets, phases, page) };
}

/** The documents of the page's hits, in page order: kept from query-and-fetch, else fetched; shards without a winner free their context. */
async function fetchWinners(targets: readonly ShardTarget[], phases: readonly ShardPhase[], page: readonly MergedHit[]): Promise<FetchedDocument[]> {
  const positions: number[][] = targets.map(() => []);
  page.forEach(({ shard }, position) => positions[shard]!.push(position));
  const documents: FetchedDocument[] = new Array(page.length);
  await Promise.all(
    targets.map(async (shard, index) => {
      const phase = phases[index]!;
      if (phase.documents !== undefined) {
        const documentOf = new Map(phase.result.hits.map((hit, order) => [hit, phase.documents[order]!]));
        for (const position of positions[index]!) documents[position] = documentOf.get(page[position]!.hit)!;
        return;
      }
      if (positions[index]!.length === 0) return shard.handle.freeContext(phase.context);
      const fetched = await shard.handle.fetch(phase.context, positions[index]!.map((position) => page[position]!.hit));
      positions[index]!.forEach((position, order) => (documents[position] = fetched[order]!));
    }),
  );
  return documents;
}

/** Executes `_count` over a target. */
export async function count(context: NodeContext, target: string, body: unknown, params: CountParams = {}): Promise<CountResponse> {
  const query = parseCount(body, params);
  const { targets, header, queryOf } = openTargets(context, target, { ignoreUnavailable: params.ignoreUnavailable });
  const counts = await everyShard(targets, (shard) => shard.handle.count(queryOf(shard, query)), async () => undefined);
  return { count: counts.reduce((sum, value) => sum + value, 0), _shards: header };
}
