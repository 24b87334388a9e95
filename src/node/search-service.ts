/**
 * The search service: `_search` and `_count` (the routes of src/api/routes/search.ts). Every
 * search runs in its search lane (src/ops/lanes); both run as tracked requests.
 */
import type { SearchLanes } from '../ops/lanes/search-lanes.ts';
import type { NodeContext } from './node-context.ts';
import type { RequestTracker } from './request-tracker.ts';
import { count, search, type CountParams, type CountResponse, type SearchResponse } from './search.ts';
import type { QueryStringParams, SearchParams } from './search-body.ts';
import { multiSearch, type MultiSearchItem, type MultiSearchResult } from './multi-search.ts';
import { analyzeText, type AnalyzeToken } from './analyze.ts';
import { validateQuery, type ValidateQueryResponse } from './validate-query.ts';
import { clearScrolls, continueScroll, openScroll, type ClearScrollResponse, type ScrollResponse } from './scroll.ts';
import {
  createPointInTime,
  deleteEveryPointInTime,
  deletePointsInTime,
  listPointsInTime,
  readsPointInTime,
  searchPointInTime,
  type CreatedPointInTime,
  type ListedPointInTime,
  type PointInTimeResponse,
} from './point-in-time.ts';

/** Checks that the caller may read these collections (named by a scroll or point-in-time id). */
export type AuthorizeCollections = (collections: string[]) => void;

/** Search and count of the node; see the module comment. */
export class SearchService {
  constructor(
    private readonly context: NodeContext,
    private readonly requests: RequestTracker,
    private readonly lanes: SearchLanes,
  ) {}

  /** `GET|POST /{target}/_search`; target is a name, comma list, wildcard or `_all`. */
  search(target: string, body: unknown, params: SearchParams = {}): Promise<SearchResponse> {
    return this.requests.track(() => this.lanes.run({ lane: params.lane, target, body }, () => search(this.context, target, body, params)));
  }

  /** `GET|POST /{target}/_search?scroll=1m`: the first page of a scroll and its scroll id. */
  openScroll(target: string, body: unknown, params: SearchParams & { scroll: string }): Promise<ScrollResponse> {
    return this.requests.track(() => this.lanes.run({ lane: params.lane, target, body }, () => openScroll(this.context, target, body, params)));
  }

  /** `GET|POST /_search/scroll`: the next page of a scroll. */
  continueScroll(scrollId: string, scroll: string | undefined, params: Pick<SearchParams, 'restTotalHitsAsInt'>, authorize: AuthorizeCollections): Promise<ScrollResponse> {
    return this.requests.track(() => this.lanes.run({ lane: undefined, target: '_search/scroll', body: {} }, () => continueScroll(this.context, scrollId, scroll, params, authorize)));
  }

  /** `DELETE /_search/scroll`: frees scrolls by id, or all of them (`_all`). */
  clearScrolls(scrollIds: readonly string[] | '_all', authorize: AuthorizeCollections): Promise<ClearScrollResponse> {
    return this.requests.track(() => clearScrolls(this.context, scrollIds, authorize));
  }

  /** `POST /{target}/_search/point_in_time` and `POST /{target}/_pit`: opens a point in time. */
  createPointInTime(target: string, keepAlive: unknown, ignoreUnavailable?: boolean): Promise<CreatedPointInTime> {
    return this.requests.track(() => createPointInTime(this.context, target, keepAlive, ignoreUnavailable));
  }

  /** `GET|POST /_search` with `pit` in the body: a search on that point in time (`target` must be null: a point in time names its own). */
  searchPointInTime(target: string | null, body: Record<string, unknown>, params: SearchParams, authorize: AuthorizeCollections): Promise<PointInTimeResponse> {
    return this.requests.track(() => this.lanes.run({ lane: params.lane, target: '_search', body }, () => searchPointInTime(this.context, target, body, params, authorize)));
  }

  /** `DELETE /_search/point_in_time` and `DELETE /_pit`: closes points in time by id. */
  deletePointsInTime(ids: readonly string[], authorize: AuthorizeCollections): Promise<Array<{ id: string; freed: number }>> {
    return this.requests.track(() => deletePointsInTime(this.context, ids, authorize));
  }

  /** `DELETE /_search/point_in_time/_all`: closes every point in time; answers their ids. */
  deleteEveryPointInTime(): Promise<string[]> {
    return this.requests.track(() => deleteEveryPointInTime(this.context));
  }

  /** `GET /_search/point_in_time/_all`: the open points in time. */
  listPointsInTime(): Promise<ListedPointInTime[]> {
    return this.requests.track(() => listPointsInTime(this.context));
  }

  /** `GET|POST [/{target}]/_msearch`: each item runs as one `_search` (its lane, its own failure). */
  multiSearch(items: readonly MultiSearchItem[], authorize: AuthorizeCollections, maxConcurrent?: number): Promise<MultiSearchResult> {
    const runOne = (item: MultiSearchItem): Promise<SearchResponse> =>
      item.target === null || readsPointInTime(item.body)
        ? this.searchPointInTime(item.target, item.body as Record<string, unknown>, item.params, authorize)
        : this.search(item.target, item.body, item.params);
    return multiSearch(items, runOne, maxConcurrent);
  }

  /** `GET|POST [/{target}]/_validate/query`: whether the query parses against each collection. */
  validateQuery(target: string, body: unknown, params: { q?: string; qOptions?: QueryStringParams; explain?: boolean } = {}): Promise<ValidateQueryResponse> {
    return this.requests.track(async () => validateQuery(this.context, target, body, params));
  }

  /** `GET|POST [/{collection}]/_analyze`: the tokens of a text. */
  analyze(collection: string | undefined, body: unknown): Promise<{ tokens: AnalyzeToken[] }> {
    return this.requests.track(async () => analyzeText(this.context, collection, body));
  }

  /** `GET|POST /{target}/_count`. */
  count(target: string, body: unknown, params: CountParams = {}): Promise<CountResponse> {
    return this.requests.track(() => count(this.context, target, body, params));
  }
}
