/**
 * Scroll (Elasticsearch `?scroll=1m`, `_search/scroll`): a search that opens a reader context on
 * every shard copy it reads (reader-contexts.ts) and pages through their snapshots. Each page is
 * the search again on the same snapshots, after the last hit of the page before: the sort gets the
 * `_shard_doc` tiebreaker (after `_score` when the search has no sort), so the order is total and
 * no hit repeats or is skipped, whatever writes and merges happen meanwhile. Where the scroll
 * stands lives in the server-side context, in its first shard's reader context (a compare and
 * set moves it), so the scroll id stays the same for its whole life and every call with it gets
 * the next page, as in Elasticsearch; two calls at once get two different pages. The id carries
 * the group and the search, so any node can serve it. Aggregations are answered on the first page
 * only, as Elasticsearch does. A sliced scroll (`slice`) opens contexts on its slice's shards only
 * (search-slice.ts).
 */
import { deflateRawSync, inflateRawSync } from 'node:zlib';
import { EngineError } from '../engine/errors.ts';
import type { ShardHandle } from '../cluster/shard-handle.ts';
import type { NodeContext } from './node-context.ts';
import { closeEveryReader, closeGroup, contextMissing, groupFromJson, groupToJson, openReaders, parseKeepAlive, readerTargets, type ReaderGroup } from './reader-contexts.ts';
import type { SearchParams } from './search-body.ts';
import { openTargets, search, termsLookupSource, type SearchResponse } from './search.ts';
import { checkScrollSlices, readSlice, slicePlan, withSliceFilter } from './search-slice.ts';
import { resolveTermsLookups } from './terms-lookup.ts';

/** Longest scroll id accepted (characters); a real one is far shorter. */
const MAX_SCROLL_ID_LENGTH = 1 << 20;

/** A search response with its scroll id first, as Elasticsearch orders it. */
export type ScrollResponse = { _scroll_id: string } & SearchResponse;

/** The answer of clearing scrolls. */
export interface ClearScrollResponse {
  succeeded: boolean;
  num_freed: number;
}

/** How many times a page is searched again because another call moved the scroll meanwhile. */
const MAX_PAGE_ATTEMPTS = 50;

/** What a scroll id holds. */
interface ScrollState {
  group: ReaderGroup;
  /** The search body, with the effective sort and without `from`, `search_after` or aggregations. */
  body: Record<string, unknown>;
  /** URL parameters that shape every page (those of the first request, but for `scroll`, `from` and `size`, which `body` holds). */
  params: SearchParams;
  /** Whether hits show their sort values (the search had a sort of its own). */
  showSort: boolean;
}

/** Searches `target` and opens a scroll on it (`?scroll=`): the first page and its scroll id. */
export async function openScroll(context: NodeContext, target: string, body: unknown, params: SearchParams & { scroll: string }): Promise<ScrollResponse> {
  const keepAliveMs = parseKeepAlive(context, params.scroll, 'scroll');
  const { slice: sliceValue, ...given } = scrollBody(body);
  const slice = readSlice(sliceValue);
  if (slice !== null) checkScrollSlices(context, target, slice);
  // Terms lookups are read once, at the open: every page searches the same terms.
  const request = given.query === undefined ? given : { ...given, query: await resolveTermsLookups(given.query, termsLookupSource(context, params.authorizeLookup)) };
  // Every problem is listed, numbered, as Elasticsearch's validation does.
  const problems: string[] = [];
  if ((params.from ?? request.from ?? 0) !== 0) problems.push('using [from] is not allowed in a scroll context');
  if (request.search_after !== undefined) problems.push('[search_after] cannot be used in a scroll context');
  if (params.requestCache === true) problems.push('[request_cache] cannot be used in a scroll context');
  if ((params.size ?? request.size) === 0) problems.push('[size] cannot be [0] in a scroll context');
  if (problems.length > 0) throw new EngineError('action_request_validation', `Validation Failed: ${problems.map((problem, index) => `${index + 1}: ${problem};`).join('')}`);
  const userSort = params.sort !== undefined ? params.sort.split(',').map((part) => part.trim()).filter((part) => part !== '') : request.sort;
  const { scroll: _scroll, from: _from, sort: _sort, size, requestCache: _cache, ...pageParams } = params;
  // A slice reads some of the shards (and of one shard, some documents): see search-slice.ts.
  const plan = slice === null ? null : slicePlan(slice, openTargets(context, target, { ignoreUnavailable: params.ignoreUnavailable }).targets.length);
  const pageBody: Record<string, unknown> = { ...withSliceFilter(request, plan?.filter ?? null), sort: withTiebreaker(userSort), size: size ?? request.size ?? 10 };
  delete pageBody.from;
  const opened: { group?: ReaderGroup } = {};
  const response = await search(context, target, pageBody, pageParams, {
    targets: async (resolved) => {
      const chosen = plan === null ? resolved : plan.positions.flatMap((position) => (position < resolved.length ? [resolved[position]!] : []));
      return (opened.group = await openReaders(context, target, chosen, 'scroll', keepAliveMs));
    },
  });
  const { aggs: _aggs, aggregations: _aggregations, ...laterBody } = pageBody;
  const state: ScrollState = { group: opened.group!, body: laterBody, params: pageParams, showSort: userSort !== undefined };
  const last = response.hits.hits.at(-1);
  if (last?.sort) await positionHolder(context, state.group).readerPosition(state.group.id, { version: 0, after: last.sort });
  return scrollPage(state, response);
}

/**
 * The next page of a scroll (`_search/scroll`), from where its context stands, which then moves
 * past it; `scroll` renews the keep-alive (absent: the one it had).
 */
export async function continueScroll(context: NodeContext, scrollId: string, scroll: string | undefined, params: Pick<SearchParams, 'restTotalHitsAsInt'>, authorize: (collections: string[]) => void): Promise<ScrollResponse> {
  const state = decodeScrollId(scrollId);
  authorize(state.group.shards.map((shard) => shard.collection));
  const keepAliveMs = scroll === undefined ? undefined : parseKeepAlive(context, scroll, 'scroll');
  const pageParams = { ...state.params, restTotalHitsAsInt: params.restTotalHitsAsInt ?? state.params.restTotalHitsAsInt };
  try {
    for (let attempt = 0; attempt < MAX_PAGE_ATTEMPTS; attempt++) {
      const holder = positionHolder(context, state.group);
      const position = await holder.readerPosition(state.group.id);
      const body = position.after === null ? state.body : { ...state.body, search_after: position.after };
      const response = await search(context, state.group.target, body, pageParams, { targets: () => readerTargets(context, state.group, keepAliveMs) });
      const last = response.hits.hits.at(-1);
      if (!last?.sort) return scrollPage(state, response);
      const moved = await holder.readerPosition(state.group.id, { version: position.version, after: last.sort });
      // Another call took this page first: search again from where that one left the scroll.
      if (moved.moved) return scrollPage(state, response);
    }
  } catch (error) {
    // The collections the scroll read are gone from the catalog: so are their contexts.
    if (error instanceof Error && 'code' in error && error.code === 'index_not_found') throw contextMissing(state.group.id);
    throw error;
  }
  throw new EngineError('search_context_missing', `scroll [${state.group.id}] kept moving under ${MAX_PAGE_ATTEMPTS} calls at once; try again`);
}

/** The handle of the copy whose reader context keeps where a scroll stands (its first shard). */
function positionHolder(context: NodeContext, group: ReaderGroup): ShardHandle {
  return readerTargets(context, { ...group, shards: group.shards.slice(0, 1) }).targets[0]!.handle;
}

/** Clears scrolls by id (`DELETE /_search/scroll`), or every scroll of the cluster with `_all`. */
export async function clearScrolls(context: NodeContext, scrollIds: readonly string[] | '_all', authorize: (collections: string[]) => void): Promise<ClearScrollResponse> {
  if (scrollIds === '_all') return { succeeded: true, num_freed: await closeEveryReader(context, 'scroll') };
  const groups = scrollIds.map((id) => decodeScrollId(id).group);
  for (const group of groups) authorize(group.shards.map((shard) => shard.collection));
  const freed = await Promise.all(groups.map((group) => closeGroup(context, group)));
  return { succeeded: true, num_freed: freed.reduce((sum, count) => sum + count, 0) };
}

/** The sort of a scroll page: the search's own (or `_score`), then `_shard_doc` unless it is there. */
export function withTiebreaker(sort: unknown): unknown[] {
  const keys = sort === undefined ? [{ _score: 'desc' }] : Array.isArray(sort) ? [...sort] : [sort];
  const named = (key: unknown): string | undefined => (typeof key === 'string' ? key.split(':')[0] : key !== null && typeof key === 'object' ? Object.keys(key)[0] : undefined);
  if (!keys.some((key) => named(key) === '_shard_doc')) keys.push('_shard_doc');
  return keys;
}

function scrollBody(body: unknown): Record<string, unknown> {
  if (body === undefined || body === null) return {};
  if (typeof body !== 'object' || Array.isArray(body)) throw new EngineError('parsing', 'the search body must be a JSON object');
  if ('pit' in body) throw new EngineError('action_request_validation', 'Validation Failed: 1: using [point in time] is not allowed in a scroll context;');
  if ('collapse' in body) throw new EngineError('action_request_validation', 'Validation Failed: 1: cannot use `collapse` in a scroll context;');
  return body as Record<string, unknown>;
}

/** The response of a page with the scroll id of the next; hits show the search's own sort values only. */
function scrollPage(state: ScrollState, response: SearchResponse): ScrollResponse {
  for (const hit of response.hits.hits) {
    if (state.showSort && hit.sort) hit.sort = hit.sort.slice(0, -1);
    else delete hit.sort;
  }
  return { _scroll_id: encodeScrollId(state), ...response };
}

function encodeScrollId(state: ScrollState): string {
  const json = JSON.stringify([2, groupToJson(state.group), state.body, state.params, state.showSort]);
  return deflateRawSync(json).toString('base64url');
}

function decodeScrollId(scrollId: string): ScrollState {
  const invalid = (): EngineError => new EngineError('illegal_argument', 'Cannot parse scroll id');
  if (typeof scrollId !== 'string' || scrollId.length === 0 || scrollId.length > MAX_SCROLL_ID_LENGTH || !/^[A-Za-z0-9_-]+$/.test(scrollId)) throw invalid();
  let value: unknown;
  try {
    value = JSON.parse(inflateRawSync(Buffer.from(scrollId, 'base64url'), { maxOutputLength: 4 * MAX_SCROLL_ID_LENGTH }).toString('utf8'));
  } catch {
    throw invalid();
  }
  if (!Array.isArray(value) || value.length !== 5 || value[0] !== 2) throw invalid();
  const [, groupJson, body, params, showSort] = value as unknown[];
  const group = groupFromJson(groupJson);
  const isObject = (item: unknown): item is Record<string, unknown> => item !== null && typeof item === 'object' && !Array.isArray(item);
  if (group === null || !isObject(body) || !isObject(params) || typeof showSort !== 'boolean') throw invalid();
  return { group, body, params: params as SearchParams, showSort };
}
