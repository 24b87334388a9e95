/**
 * Search across the shards of one or more collections, query-then-fetch: every shard runs the
 * query phase for its top `from + size` hits (with per-shard BM25 statistics, like ES
 * `query_then_fetch`), the shard results are merged into one global page, and only the winning
 * hits are fetched; a search of one shard takes one call (query-and-fetch). Aggregation partials
 * are merged across shards, then rendered once.
 */
import { stampTopHitsIndex } from '../engine/collect/top-hits.ts';
import type { ShardTarget } from '../cluster/router.ts';
import type { QueryPhase } from '../cluster/shard-handle.ts';
import { mergeAggregations, mergeTopHits, mergeTotals, renderAggregations, type MergedHit } from '../engine/collect/merge.ts';
import type { ShardQueryResult, ShardSearchRequest } from '../engine/query/search-request.ts';
import type { FetchedDocument } from '../engine/shard/searcher.ts';
import { filteredQuery, resolveReadTargets, type ResolveOptions } from './read-targets.ts';
import type { NodeContext } from './node-context.ts';
import { searchLimitsOf } from './index-limits.ts';
import { NodeError } from './node-error.ts';
import { parseCount, parseSearch, type ParsedSearch, type QueryStringParams, type SearchParams } from './search-body.ts';
import { resolveCollections } from './collections.ts';
import { resolveTermsLookups, type TermsLookupSource } from './terms-lookup.ts';
import { hitKey, matchedQueries, namedQueries } from './named-queries.ts';
import { getDocument } from './documents.ts';
import { plainJson } from './raw-json.ts';
import type { HostedCollection } from '../cluster/local-shards.ts';
import { addInnerHits, checkCollapseField, collapsePhases, decorateHits, featuresNeedSource, parseSearchFeatures, renderProfile } from './search-features.ts';
import { exactJsonNumber, renderSearchHit, topHitRenderer, type HitOptions, type SearchHit } from './search-hit.ts';

/** `_shards` section of search and count responses. */
export interface SearchShardsHeader {
  total: number;
  successful: number;
  skipped: number;
  failed: number;
  /** Present when some shards could not take part. */
  failures?: Array<{ shard: number; index: string; reason: { type: string; reason: string } }>;
}

export type { SearchHit } from './search-hit.ts';

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
  /** Per-shard timings, when the request asked to `profile`. */
  profile?: { shards: unknown[] };
}

/** The Elasticsearch count response body. */
export interface CountResponse {
  count: number;
  _shards: SearchShardsHeader;
}

/** Query-string parameters of `_count`. */
export interface CountParams {
  /** Query string in Lucene syntax, run as a `query_string` query (with `qOptions`). */
  q?: string;
  /** `df`, `default_operator`, `analyzer`, `lenient`, `analyze_wildcard` for `q`. */
  qOptions?: QueryStringParams;
  /** ES `ignore_unavailable`: unknown collections of the target are left out instead of a 404. */
  ignoreUnavailable?: boolean;
  /** As for a search: who may read the collections a terms lookup names. */
  authorizeLookup?: (collections: string[]) => void;
}

/**
 * A search on reader contexts (a scroll's or a point in time's, see reader-contexts.ts): `targets`
 * gives the copies to read, each with its reader context, from the copies the target resolves to.
 */
export interface ReaderSearch {
  targets(resolved: readonly ShardTarget[]): Promise<{ targets: ShardTarget[]; header: SearchShardsHeader }> | { targets: ShardTarget[]; header: SearchShardsHeader };
}

/**
 * What the phases need of a search request to cut the page; when profiling, every shard queries
 * then fetches (so the fetch is timed apart) and `fetchNanos` receives each shard's fetch time.
 */
type PageRequest = { from: number; size: number; sort?: unknown; profile?: boolean; fetchNanos?: number[] };

/**
 * The shard copies a search goes to (those its aliases' `search_routing` selects), the `_shards`
 * header that reports the others, and the query each copy runs (with its aliases' filter).
 */
export function openTargets(context: NodeContext, target: string, options: ResolveOptions): { targets: ShardTarget[]; header: SearchShardsHeader; queryOf: (target: ShardTarget, query: unknown) => unknown } {
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

/** Where the terms lookups of a search read their documents: realtime gets and searches of this node, after `authorize`. */
export function termsLookupSource(context: NodeContext, authorize: ((collections: string[]) => void) | undefined): TermsLookupSource {
  const check = (collection: string): void => {
    if (authorize === undefined) throw new NodeError('illegal_argument', 'a terms lookup is not available in this request');
    authorize([collection]);
  };
  return {
    byId: async (collection, id, routing) => {
      check(collection);
      const found = await getDocument(context, collection, id, { routing });
      return found.found && found._source !== undefined ? plainJson(found._source) : null;
    },
    byQuery: async (collection, query, size) => {
      check(collection);
      const found = await search(context, collection, { query, size, _source: true }, { authorizeLookup: authorize });
      return found.hits.hits.map((hit) => plainJson(hit._source));
    },
  };
}

/** Adds `matched_queries` to the hits of a page (see named-queries.ts): one search per named clause, restricted to the page. */
async function addMatchedQueries(context: NodeContext, target: string, query: unknown, hits: SearchHit[], params: SearchParams): Promise<void> {
  if (hits.length === 0) return;
  const named = namedQueries(query);
  if (named.length === 0) return;
  const ids = [...new Set(hits.flatMap((hit) => (hit._id === undefined ? [] : [hit._id])))];
  if (ids.length === 0) return;
  const matches = new Map<string, Map<string, number>>();
  for (const { name, query: clause } of named) {
    const body = { query: { bool: { must: [clause], filter: [{ ids: { values: ids } }] } }, size: ids.length, _source: false };
    const found = await search(context, target, body, { ignoreUnavailable: params.ignoreUnavailable, authorizeLookup: params.authorizeLookup, namedQueries: false });
    matches.set(name, new Map(found.hits.hits.map((hit) => [hitKey(hit._index, hit._id), hit._score ?? 0])));
  }
  for (const hit of hits) {
    if (hit._id === undefined) continue;
    const matched = matchedQueries(hitKey(hit._index, hit._id), matches, params.includeNamedQueriesScore === true);
    if (matched !== undefined) hit.matched_queries = matched;
  }
}

/**
 * The score factor of each collection an `indices_boost` entry names (the first entry naming one
 * wins, as Elasticsearch); with `ignore_unavailable`, an entry naming nothing is left out.
 */
function indicesBoostOf(context: NodeContext, entries: ParsedSearch['indicesBoost'], options: ResolveOptions): Map<HostedCollection, number> {
  const boosts = new Map<HostedCollection, number>();
  for (const { target, boost } of entries) {
    for (const hosted of resolveCollections(context, target, options)) if (!boosts.has(hosted)) boosts.set(hosted, boost);
  }
  return boosts;
}

/** A shard's query with its collection's `indices_boost` factor applied to every score. */
function boostedQuery(query: unknown, boost: number | undefined): unknown {
  return boost === undefined ? query : { bool: { must: [query ?? { match_all: {} }], boost } };
}

/** Runs `phase` on every target concurrently; if any fails, undoes the others with `undo` and throws the first failure. */
async function everyShard<T>(targets: readonly ShardTarget[], phase: (target: ShardTarget) => Promise<T>, undo: (target: ShardTarget, value: T) => Promise<void>): Promise<T[]> {
  // One shard: nothing to undo when it fails.
  if (targets.length === 1) return [await phase(targets[0]!)];
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
export async function search(context: NodeContext, target: string, body: unknown, params: SearchParams = {}, reading?: ReaderSearch): Promise<SearchResponse> {
  const started = performance.now();
  const limits = searchLimitsOf(context, target, { ignoreUnavailable: params.ignoreUnavailable });
  const request = parseSearch(body, params, context.settings()['search.default_timeout_ms'], limits);
  request.query = await resolveTermsLookups(request.query, termsLookupSource(context, params.authorizeLookup));
  const features = parseSearchFeatures(body, params, sourceRequested(body, params));
  const opened = openTargets(context, target, { ignoreUnavailable: params.ignoreUnavailable });
  const { queryOf } = opened;
  const { targets, header } = reading ? await reading.targets(opened.targets) : opened;
  if (features.collapse !== null) checkCollapseField(features.collapse, targets.map((shard) => shard.collection));
  const shardRequest: ShardSearchRequest = {
    query: request.query,
    from: 0,
    size: request.from + request.size,
    maxResultWindow: limits.maxResultWindow,
    sort: request.sort,
    searchAfter: request.searchAfter,
    aggs: request.aggs,
    trackTotalHits: request.trackTotalHits,
    minScore: request.minScore,
    timeoutMs: request.timeoutMs === undefined ? undefined : Math.max(0, started + request.timeoutMs - performance.now()),
    // Only `_source` and highlighting read the stored source; ids and versions come from the doc meta.
    // Highlighting, fields and collapse read its values; a shown `_source` only needs its text.
    fetchSource: request.highlight !== undefined || featuresNeedSource(features) ? true : request.source.kind !== 'none' ? 'text' : false,
    explain: features.explain,
    profile: features.profile,
  };
  const fetchNanos = targets.map(() => 0);
  const boostOf = indicesBoostOf(context, request.indicesBoost, { ignoreUnavailable: params.ignoreUnavailable });
  const shardQuery = (shard: ShardTarget): unknown => boostedQuery(queryOf(shard, shardRequest.query), boostOf.get(shard.collection));
  const phasesFor = (pageSize: number, from: number): Promise<SearchPhases> =>
    searchPhases(targets, (shard) => ({ ...shardRequest, size: from + pageSize, query: shardQuery(shard) }), { from, size: pageSize, sort: request.sort, profile: features.profile, fetchNanos });
  const collapsed = features.collapse === null ? null : await collapsePhases(features.collapse, request.from, request.size, (pageSize) => phasesFor(pageSize, 0));
  const { results, page, documents } = collapsed ?? (await phasesFor(request.size, request.from));
  const hitOptions: HitOptions = {
    version: request.version,
    seqNoPrimaryTerm: request.seqNoPrimaryTerm,
    source: request.source,
    highlight: request.highlight,
    query: request.query,
    sort: request.sort,
  };
  const hits = page.map(({ shard, hit }, position): SearchHit =>
    renderSearchHit(targets[shard]!.collection, documents[position]!, Number.isNaN(hit.score) ? null : hit.score, hit.sort, hitOptions),
  );
  const nodeOf = (shard: ShardTarget): string => context.router.nodeOf(shard);
  decorateHits(hits, page, documents, targets, features, nodeOf, collapsed?.keys);
  if (reading === undefined && params.namedQueries !== false) await addMatchedQueries(context, target, request.query, hits, params);
  if (collapsed !== null && features.collapse !== null) {
    await addInnerHits(hits, collapsed.keys, features.collapse, request.query, (inner) => search(context, target, inner, { ignoreUnavailable: params.ignoreUnavailable, restTotalHitsAsInt: params.restTotalHitsAsInt }, reading));
  }
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
    // Each shard's top_hits learn the collection they came from before the merge.
    const shardPartials = results.flatMap((result, shard) => (result.aggs === undefined ? [] : [stampTopHitsIndex(result.aggs, targets[shard]!.collection.meta.name)]));
    response.aggregations = renderAggregations(mergeAggregations(shardPartials), request.aggs, {
      typedKeys: params.typedKeys,
      renderTopHit: topHitRenderer(targets.map((target) => target.collection), request.query),
      exactNumber: exactJsonNumber,
    });
  }
  if (features.profile) response.profile = renderProfile(results, targets, fetchNanos, nodeOf);
  response.took = Math.round(performance.now() - started);
  return response;
}

/** Whether a search asks for `_source` explicitly (body or URL). */
function sourceRequested(body: unknown, params: SearchParams): boolean {
  const explicit = body !== null && typeof body === 'object' && (body as { _source?: unknown })._source !== undefined;
  return explicit || params.source !== undefined || (params.sourceIncludes?.length ?? 0) > 0 || (params.sourceExcludes?.length ?? 0) > 0;
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
  const fetchesAtOnce = (target: ShardTarget): boolean => request.profile !== true && (targets.length === 1 || (!target.local && pageSize <= REMOTE_QUERY_AND_FETCH_MAX_PAGE));
  const phases = await everyShard<ShardPhase>(
    targets,
    (target) => (fetchesAtOnce(target) ? target.handle.queryAndFetch(shardRequest(target), target.reader) : target.handle.query(shardRequest(target), target.reader)),
    (target, phase) => (phase.context === undefined ? Promise.resolve() : target.handle.freeContext(phase.context)),
  );
  const results = phases.map((phase) => phase.result);
  const page = mergeTopHits(results.map((result, shard) => ({ shard, result })), request);
  return { results, page, documents: await fetchWinners(targets, phases, page, request.fetchNanos) };
}

/** The documents of the page's hits, in page order: kept from query-and-fetch, else fetched; shards without a winner free their context. */
async function fetchWinners(targets: readonly ShardTarget[], phases: readonly ShardPhase[], page: readonly MergedHit[], fetchNanos?: number[]): Promise<FetchedDocument[]> {
  const positions: number[][] = targets.map(() => []);
  page.forEach(({ shard }, position) => positions[shard]!.push(position));
  const documents: FetchedDocument[] = new Array(page.length);
  const fetching: Array<{ index: number; context: number }> = [];
  phases.forEach((phase, index) => {
    if (phase.documents === undefined) {
      fetching.push({ index, context: phase.context });
      return;
    }
    const documentOf = new Map(phase.result.hits.map((hit, order) => [hit, phase.documents[order]!]));
    for (const position of positions[index]!) documents[position] = documentOf.get(page[position]!.hit)!;
  });
  if (fetching.length === 0) return documents;
  await Promise.all(
    fetching.map(async ({ index, context }) => {
      const shard = targets[index]!;
      if (positions[index]!.length === 0) return shard.handle.freeContext(context);
      const fetchStarted = performance.now();
      const fetched = await shard.handle.fetch(context, positions[index]!.map((position) => page[position]!.hit));
      if (fetchNanos !== undefined) fetchNanos[index] = Math.round((performance.now() - fetchStarted) * 1e6);
      positions[index]!.forEach((position, order) => (documents[position] = fetched[order]!));
    }),
  );
  return documents;
}

/** Executes `_count` over a target. */
export async function count(context: NodeContext, target: string, body: unknown, params: CountParams = {}): Promise<CountResponse> {
  const query = await resolveTermsLookups(parseCount(body, params), termsLookupSource(context, params.authorizeLookup));
  const { targets, header, queryOf } = openTargets(context, target, { ignoreUnavailable: params.ignoreUnavailable });
  const counts = await everyShard(targets, (shard) => shard.handle.count(queryOf(shard, query)), async () => undefined);
  return { count: counts.reduce((sum, value) => sum + value, 0), _shards: header };
}
