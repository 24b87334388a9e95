/**
 * The search service: `_search` and `_count` (the routes of src/api/routes/search.ts). Every
 * search runs in its search lane (src/ops/lanes); both run as tracked requests.
 */
import type { SearchLanes } from '../ops/lanes/search-lanes.ts';
import type { NodeContext } from './node-context.ts';
import type { RequestTracker } from './request-tracker.ts';
import { count, search, type CountParams, type CountResponse, type SearchResponse } from './search.ts';
import type { SearchParams } from './search-body.ts';
import { multiSearch, type MultiSearchItem, type MultiSearchResult } from './multi-search.ts';
import { analyzeText, type AnalyzeToken } from './analyze.ts';
import { validateQuery, type ValidateQueryResponse } from './validate-query.ts';

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

  /** `GET|POST [/{target}]/_msearch`: each item runs as one `_search` (its lane, its own failure). */
  multiSearch(items: readonly MultiSearchItem[], maxConcurrent?: number): Promise<MultiSearchResult> {
    return multiSearch(items, (item) => this.search(item.target, item.body, item.params), maxConcurrent);
  }

  /** `GET|POST [/{target}]/_validate/query`: whether the query parses against each collection. */
  validateQuery(target: string, body: unknown, params: { q?: string; explain?: boolean } = {}): Promise<ValidateQueryResponse> {
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
