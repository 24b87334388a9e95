/**
 * `_search` and `_count` on one collection, a comma list / wildcard of collections, or all
 * (`/_search`). URL parameters override the body as in Elasticsearch; `lane` picks the search
 * lane the search runs in (PRODUCT.md 4.6, src/ops/lanes): a full lane answers 429.
 */
import type { FastifyInstance } from 'fastify';
import { Type, type Static } from 'typebox';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { SearchParams } from '../../node/node-service.ts';
import type { CountParams } from '../../node/search.ts';
import type { QueryStringParams } from '../../node/search-body.ts';
import type { SearchService } from '../../node/search-service.ts';
import type { AuthScope } from '../auth/auth-scope.ts';
import { EngineError } from '../../engine/errors.ts';
import { AnyObject, CollectionParams, FlagParam, SOURCE_QUERY, commaList, flagSet, optionalBody, querySchema } from '../params.ts';
import { receivedText } from '../content-types.ts';
import { withExactSearchAfter } from '../json-body.ts';

const TARGET_QUERY = {
  routing: Type.Optional(Type.String()),
  preference: Type.Optional(Type.String()),
  ignore_unavailable: Type.Optional(FlagParam),
  allow_no_indices: Type.Optional(Type.String()),
  expand_wildcards: Type.Optional(Type.String()),
};

/** `q` and the parameters that go with it (also on `_validate/query` and `_explain`). */
export const Q_QUERY = {
  q: Type.Optional(Type.String()),
  df: Type.Optional(Type.String({ minLength: 1 })),
  default_operator: Type.Optional(Type.String()),
  analyzer: Type.Optional(Type.String()),
  lenient: Type.Optional(FlagParam),
  analyze_wildcard: Type.Optional(FlagParam),
};

const SearchQuery = querySchema({
  ...TARGET_QUERY,
  ...SOURCE_QUERY,
  ...Q_QUERY,
  // Negative values reach search-body.ts, which refuses them in Elasticsearch's words.
  from: Type.Optional(Type.Integer()),
  size: Type.Optional(Type.Integer()),
  sort: Type.Optional(Type.String({ minLength: 1 })),
  track_total_hits: Type.Optional(Type.Union([Type.Literal('true'), Type.Literal('false'), Type.Integer()])),
  timeout: Type.Optional(Type.String()),
  lane: Type.Optional(Type.String({ minLength: 1 })),
  search_type: Type.Optional(Type.Literal('query_then_fetch')),
  typed_keys: Type.Optional(FlagParam),
  rest_total_hits_as_int: Type.Optional(FlagParam),
  version: Type.Optional(FlagParam),
  scroll: Type.Optional(Type.String({ minLength: 1 })),
  explain: Type.Optional(FlagParam),
  stored_fields: Type.Optional(Type.String()),
  docvalue_fields: Type.Optional(Type.String()),
  // Accepted for client compatibility; they tune Elasticsearch's own execution (caches, batching, concurrency) and change no answer.
  request_cache: Type.Optional(FlagParam),
  max_concurrent_shard_requests: Type.Optional(Type.Integer({ minimum: 1 })),
  pre_filter_shard_size: Type.Optional(Type.Integer({ minimum: 1 })),
  batched_reduce_size: Type.Optional(Type.Integer({ minimum: 2 })),
  ccs_minimize_roundtrips: Type.Optional(FlagParam),
  include_named_queries_score: Type.Optional(FlagParam),
});

const CountQuery = querySchema({ ...TARGET_QUERY, ...Q_QUERY });

/** The `qOptions` of a search, count, validation or explanation from the URL (`df`, `default_operator`, `analyzer`, `lenient`, `analyze_wildcard`). */
export function qOptions(query: { df?: string; default_operator?: string; analyzer?: string; lenient?: string; analyze_wildcard?: string }): QueryStringParams {
  const options: QueryStringParams = { df: query.df, defaultOperator: query.default_operator, analyzer: query.analyzer };
  if (query.lenient !== undefined) options.lenient = flagSet(query.lenient);
  if (query.analyze_wildcard !== undefined) options.analyzeWildcard = flagSet(query.analyze_wildcard);
  return options;
}

const SearchBody = Type.Object(
  {
    query: Type.Optional(AnyObject),
    from: Type.Optional(Type.Integer()),
    size: Type.Optional(Type.Integer()),
    sort: Type.Optional(Type.Unknown()),
    search_after: Type.Optional(Type.Array(Type.Unknown())),
    aggs: Type.Optional(AnyObject),
    aggregations: Type.Optional(AnyObject),
    track_total_hits: Type.Optional(Type.Union([Type.Boolean(), Type.Integer()])),
    min_score: Type.Optional(Type.Number()),
    timeout: Type.Optional(Type.String()),
    _source: Type.Optional(Type.Unknown()),
    highlight: Type.Optional(AnyObject),
    version: Type.Optional(Type.Boolean()),
    seq_no_primary_term: Type.Optional(Type.Boolean()),
    pit: Type.Optional(AnyObject),
    // Sliced scroll and point in time (src/node/search-slice.ts).
    slice: Type.Optional(AnyObject),
    explain: Type.Optional(Type.Boolean()),
    profile: Type.Optional(Type.Boolean()),
    collapse: Type.Optional(AnyObject),
    stored_fields: Type.Optional(Type.Unknown()),
    docvalue_fields: Type.Optional(Type.Array(Type.Unknown())),
    fields: Type.Optional(Type.Array(Type.Unknown())),
    script_fields: Type.Optional(Type.Unknown()),
    indices_boost: Type.Optional(Type.Unknown()),
  },
  { additionalProperties: false },
);

const CountBody = Type.Object({ query: Type.Optional(AnyObject) }, { additionalProperties: false });

function countParams(query: Static<typeof CountQuery>): CountParams {
  return { q: query.q, qOptions: qOptions(query), ignoreUnavailable: flagSet(query.ignore_unavailable) };
}

function searchParams(query: Static<typeof SearchQuery>): SearchParams {
  const params: SearchParams = {
    q: query.q,
    qOptions: qOptions(query),
    from: query.from,
    size: query.size,
    sort: query.sort,
    sourceIncludes: commaList(query._source_includes),
    sourceExcludes: commaList(query._source_excludes),
    timeout: query.timeout,
    lane: query.lane,
    typedKeys: flagSet(query.typed_keys),
    ignoreUnavailable: flagSet(query.ignore_unavailable),
    restTotalHitsAsInt: flagSet(query.rest_total_hits_as_int),
  };
  if (query.version !== undefined) params.version = flagSet(query.version);
  if (query.explain !== undefined) params.explain = flagSet(query.explain);
  if (query.stored_fields !== undefined) params.storedFields = commaList(query.stored_fields);
  if (query.docvalue_fields !== undefined) params.docvalueFields = commaList(query.docvalue_fields);
  if (query.scroll !== undefined) params.scroll = query.scroll;
  if (query.request_cache !== undefined) params.requestCache = flagSet(query.request_cache);
  if (query.include_named_queries_score !== undefined) params.includeNamedQueriesScore = flagSet(query.include_named_queries_score);
  if (query._source !== undefined) params.source = query._source === '' ? true : query._source;
  const track = query.track_total_hits;
  if (track !== undefined) params.trackTotalHits = track === 'true' ? true : track === 'false' ? false : track;
  return params;
}

/** What the search and count routes need: the search service. */
export interface SearchRouteOptions {
  search: SearchService;
}

/** Search and count routes. */
export async function searchRoutes(instance: FastifyInstance, options: SearchRouteOptions): Promise<void> {
  const app = instance.withTypeProvider<TypeBoxTypeProvider>();
  const { search } = options;

  app.route({
    method: ['GET', 'POST'],
    url: '/_search',
    config: { role: 'read' },
    schema: { querystring: SearchQuery, body: optionalBody(SearchBody) },
    handler: async (request) => readerSearch(request.authScope, null, exactBody(request.body), searchParams(request.query)),
  });

  app.route({
    method: ['GET', 'POST'],
    url: '/:collection/_search',
    config: { role: 'read', collectionTarget: true },
    schema: { params: CollectionParams, querystring: SearchQuery, body: optionalBody(SearchBody) },
    handler: async (request) => readerSearch(request.authScope, request.params.collection, exactBody(request.body), searchParams(request.query)),
  });

  /** The search body (an empty one when none was sent), its `search_after` integers beyond 2^53 as sent. */
  function exactBody(body: Record<string, unknown> | null | undefined): Record<string, unknown> {
    return body === undefined || body === null ? {} : withExactSearchAfter(body, receivedText(body));
  }

  /** A search, a search on a point in time (`pit` in the body) or the first page of a scroll (`?scroll=`); `target` null for `/_search`. */
  function readerSearch(scope: AuthScope, target: string | null, body: Record<string, unknown>, params: SearchParams): Promise<unknown> {
    // `params` is this request's own (searchParams): set in place, since copying its many keys is a measurable part of a small search.
    params.authorizeLookup = scope.requireCollections;
    if (body.pit !== undefined) {
      if (params.scroll !== undefined) throw new EngineError('action_request_validation', 'Validation Failed: 1: using [point in time] is not allowed in a scroll context;');
      return search.searchPointInTime(target, body, params, scope.requireCollections);
    }
    const resolved = target ?? scope.narrowTarget('_all');
    if (params.scroll !== undefined) return search.openScroll(resolved, body, { ...params, scroll: params.scroll });
    if (body.slice !== undefined) throw new EngineError('action_request_validation', 'Validation Failed: 1: [slice] can only be used with [scroll] or [point-in-time] requests;');
    return search.search(resolved, body, params);
  }

  app.route({
    method: ['GET', 'POST'],
    url: '/_count',
    config: { role: 'read' },
    schema: { querystring: CountQuery, body: optionalBody(CountBody) },
    handler: async (request) => search.count(request.authScope.narrowTarget('_all'), request.body ?? {}, { ...countParams(request.query), authorizeLookup: request.authScope.requireCollections }),
  });

  app.route({
    method: ['GET', 'POST'],
    url: '/:collection/_count',
    config: { role: 'read', collectionTarget: true },
    schema: { params: CollectionParams, querystring: CountQuery, body: optionalBody(CountBody) },
    handler: async (request) => search.count(request.params.collection, request.body ?? {}, { ...countParams(request.query), authorizeLookup: request.authScope.requireCollections }),
  });
}
