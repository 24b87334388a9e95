/**
 * Parsing of a `_search` / `_count` request: the ES JSON body plus the query-string parameters
 * that override it (`size`, `from`, `sort`, `q` with `df` etc., `_source*`, `track_total_hits`, `timeout`).
 * Shape errors are EngineError('parsing') or ('illegal_argument'), so they surface as 400.
 */
import { EngineError } from '../engine/errors.ts';
import { DEFAULT_SEARCH_LIMITS, type SearchLimits } from './index-limits.ts';
import { parseSourceFilter, type SourceFilter } from './source-filter.ts';

/** The URL parameters that go with `q` (ES `df`, `default_operator`, `analyzer`, `lenient`, `analyze_wildcard`). */
export interface QueryStringParams {
  df?: string;
  defaultOperator?: string;
  analyzer?: string;
  lenient?: boolean;
  analyzeWildcard?: boolean;
}

/** The query the `q` URL parameter stands for: a `query_string` query with its companion parameters. */
export function queryFromQ(q: string, params: QueryStringParams = {}): Record<string, unknown> {
  const options: Record<string, unknown> = { query: q };
  if (params.df !== undefined) options.default_field = params.df;
  if (params.defaultOperator !== undefined) options.default_operator = params.defaultOperator;
  if (params.analyzer !== undefined) options.analyzer = params.analyzer;
  if (params.lenient !== undefined) options.lenient = params.lenient;
  if (params.analyzeWildcard !== undefined) options.analyze_wildcard = params.analyzeWildcard;
  return { query_string: options };
}

/** Query-string parameters of `_search` (already typed by the HTTP layer). */
export interface SearchParams {
  /** Query string in Lucene syntax, run as a `query_string` query (with `qOptions`). */
  q?: string;
  /** `request_cache` (Trove caches no shard results; a scroll refuses `true`, as Elasticsearch). */
  requestCache?: boolean;
  /** ES `include_named_queries_score`: `matched_queries` maps each name to its clause's score. */
  includeNamedQueriesScore?: boolean;
  /** False for the searches that answer `matched_queries` themselves (they do not look for names again). */
  namedQueries?: boolean;
  /** Checks the caller may read the collections a terms lookup names; absent, a query with a lookup is refused. */
  authorizeLookup?: (collections: string[]) => void;
  /** `df`, `default_operator`, `analyzer`, `lenient`, `analyze_wildcard` for `q`. */
  qOptions?: QueryStringParams;
  from?: number;
  size?: number;
  /** `field:asc,other:desc` or `field` (comma list). */
  sort?: string;
  /** `_source` query parameter: `true`, `false` or a comma list of patterns. */
  source?: string | boolean;
  sourceIncludes?: string[];
  sourceExcludes?: string[];
  trackTotalHits?: boolean | number;
  /** ES time value such as `500ms` or `2s`. */
  timeout?: string;
  /** Search lane to run in (src/ops/lanes); the default lane when absent. */
  lane?: string;
  /** ES `typed_keys`: aggregation names in the response are `<type>#<name>`. */
  typedKeys?: boolean;
  /** ES `ignore_unavailable`: unknown collections of the target are left out instead of a 404. */
  ignoreUnavailable?: boolean;
  /** ES `rest_total_hits_as_int`: `hits.total` is a number, counted exactly. */
  restTotalHitsAsInt?: boolean;
  /** ES `scroll` keep-alive (`1m`): the search opens a scroll (src/node/scroll.ts). */
  scroll?: string;
  /** ES `version` query parameter: hits carry `_version` (overrides the body's `version`). */
  version?: boolean;
  /** ES `explain` query parameter: hits carry `_explanation` (overrides the body's `explain`). */
  explain?: boolean;
  /** ES `stored_fields` query parameter (comma list; overrides the body's). */
  storedFields?: string[];
  /** ES `docvalue_fields` query parameter (comma list; overrides the body's). */
  docvalueFields?: string[];
}

/** A validated search, ready for the query and fetch phases. */
export interface ParsedSearch {
  query: unknown;
  from: number;
  size: number;
  sort: unknown;
  searchAfter: unknown[] | undefined;
  aggs: unknown;
  trackTotalHits: boolean | number | undefined;
  minScore: number | undefined;
  /** Milliseconds, or undefined for no timeout. */
  timeoutMs: number | undefined;
  source: SourceFilter;
  highlight: Record<string, unknown> | undefined;
  /** Include `_version` in hits. */
  version: boolean;
  /** Include `_seq_no` and `_primary_term` in hits. */
  seqNoPrimaryTerm: boolean;
  /** `indices_boost`: score factors by collection, alias or pattern, in order (the first that names a collection applies). */
  indicesBoost: { target: string; boost: number }[];
}

/** Reads `indices_boost`: `[{name: boost}, ...]`, or the older `{name: boost, ...}`. */
function parseIndicesBoost(value: unknown): { target: string; boost: number }[] {
  if (value === undefined) return [];
  const entries = Array.isArray(value) ? value : isPlainObject(value) ? Object.entries(value).map(([target, boost]) => ({ [target]: boost })) : null;
  if (entries === null) throw new EngineError('parsing', '[indices_boost] must be an array of {index: boost} objects');
  return entries.map((entry) => {
    if (!isPlainObject(entry) || Object.keys(entry).length !== 1) throw new EngineError('parsing', '[indices_boost] entries must be objects with one index name and its boost');
    const [target, boost] = Object.entries(entry)[0]!;
    if (typeof boost !== 'number' || !Number.isFinite(boost) || boost < 0) throw new EngineError('parsing', `[indices_boost] boost of [${target}] must be a non-negative number`);
    return { target, boost };
  });
}

const SEARCH_KEYS = new Set([
  'query',
  'from',
  'size',
  'sort',
  'search_after',
  'aggs',
  'aggregations',
  'track_total_hits',
  'min_score',
  'timeout',
  '_source',
  'highlight',
  'version',
  'seq_no_primary_term',
  // Read by search-features.ts.
  'explain',
  'profile',
  'collapse',
  'stored_fields',
  'docvalue_fields',
  'fields',
  // Counted against index.max_script_fields, then refused: Trove runs no scripts.
  'script_fields',
  'indices_boost',
]);

const TIME_UNITS: Record<string, number> = { nanos: 1e-6, micros: 1e-3, ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** Parses an ES time value (`250ms`, `2s`, `1m`; a bare number is milliseconds; `-1` is none). */
export function parseTimeValue(value: unknown, name: string): number | undefined {
  if (typeof value === 'number' && Number.isFinite(value)) return value < 0 ? undefined : value;
  if (typeof value === 'string') {
    if (value.trim() === '-1') return undefined;
    // Trimmed first: two `\s*` around the optional unit backtrack quadratically on `1   …   x`.
    const match = /^(\d+(?:\.\d+)?)\s*(nanos|micros|ms|s|m|h|d)?$/.exec(value.trim());
    if (match) return Number(match[1]) * TIME_UNITS[match[2] ?? 'ms'];
  }
  throw new EngineError('parsing', `failed to parse setting [${name}] with value [${String(value)}] as a time value: unit is missing or unrecognized`);
}

function nonNegativeInteger(value: unknown, name: string): number {
  if (typeof value !== 'number' || !Number.isInteger(value)) {
    throw new EngineError('parsing', `[${name}] must be an integer, got ${JSON.stringify(value)}`);
  }
  if (value < 0) throw new EngineError('illegal_argument', `[${name}] parameter cannot be negative, found [${value}]`);
  return value;
}

/** `track_total_hits`: a boolean or a count to track up to; -1 is Elasticsearch's "disabled". */
function trackTotalHitsValue(value: unknown): boolean | number {
  if (typeof value === 'boolean') return value;
  if (typeof value === 'number' && Number.isInteger(value) && value < -1) {
    throw new EngineError('illegal_argument', `[track_total_hits] parameter must be positive or equals to -1, got ${value}`);
  }
  if (typeof value === 'number' && Number.isInteger(value)) return value === -1 ? false : value;
  throw new EngineError('parsing', `[track_total_hits] must be a boolean or a non-negative integer, got ${JSON.stringify(value)}`);
}

/** Validates a search body and merges the query-string overrides into it. */
export function parseSearch(body: unknown, params: SearchParams, defaultTimeoutMs: number, limits: SearchLimits = DEFAULT_SEARCH_LIMITS): ParsedSearch {
  const request = body === undefined || body === null ? {} : body;
  if (!isPlainObject(request)) throw new EngineError('parsing', 'the search body must be a JSON object');
  for (const key of Object.keys(request)) {
    if (!SEARCH_KEYS.has(key)) throw new EngineError('parsing', `Unknown key for a search request [${key}]`);
  }
  const from = nonNegativeInteger(params.from ?? request.from ?? 0, 'from');
  const size = nonNegativeInteger(params.size ?? request.size ?? 10, 'size');
  if (from + size > limits.maxResultWindow) {
    throw new EngineError(
      'illegal_argument',
      `Result window is too large, from + size must be less than or equal to: [${limits.maxResultWindow}] but was [${from + size}]. See the scroll api for a more efficient way to request large data sets. This limit can be set by changing the [index.max_result_window] index level setting.`,
    );
  }
  const docvalueFields = request.docvalue_fields === undefined ? 0 : Array.isArray(request.docvalue_fields) ? request.docvalue_fields.length : 1;
  if (docvalueFields > limits.maxDocvalueFields) {
    throw new EngineError(
      'illegal_argument',
      `Trying to retrieve too many docvalue_fields. Must be less than or equal to: [${limits.maxDocvalueFields}] but was [${docvalueFields}]. This limit can be set by changing the [index.max_docvalue_fields_search] index level setting.`,
    );
  }
  if (request.script_fields !== undefined) {
    const scriptFields = isPlainObject(request.script_fields) ? Object.keys(request.script_fields).length : 0;
    if (scriptFields > limits.maxScriptFields) {
      throw new EngineError(
        'illegal_argument',
        `Trying to retrieve too many script_fields. Must be less than or equal to: [${limits.maxScriptFields}] but was [${scriptFields}]. This limit can be set by changing the [index.max_script_fields] index level setting.`,
      );
    }
    throw new EngineError('illegal_argument', '[script_fields] are not supported: Trove runs no scripts; use [fields] or [docvalue_fields]');
  }
  const query = params.q !== undefined ? queryFromQ(params.q, params.qOptions) : request.query;
  if (query !== undefined && !isPlainObject(query)) throw new EngineError('parsing', '[query] must be an object');
  const sort = params.sort !== undefined ? params.sort.split(',').map((part) => part.trim()).filter((part) => part !== '') : request.sort;
  const searchAfter = request.search_after;
  if (searchAfter !== undefined) {
    if (!Array.isArray(searchAfter)) throw new EngineError('parsing', '[search_after] must be an array of sort values');
    if (from > 0) throw new EngineError('illegal_argument', '[from] parameter must be set to 0 when [search_after] is used');
    if (sort === undefined) throw new EngineError('illegal_argument', '[search_after] requires a [sort]');
  }
  const aggs = request.aggs ?? request.aggregations;
  if (aggs !== undefined && !isPlainObject(aggs)) throw new EngineError('parsing', '[aggs] must be an object');
  const highlight = request.highlight;
  if (highlight !== undefined && !isPlainObject(highlight)) throw new EngineError('parsing', '[highlight] must be an object');
  const minScore = request.min_score;
  if (minScore !== undefined && (typeof minScore !== 'number' || !Number.isFinite(minScore))) {
    throw new EngineError('parsing', '[min_score] must be a number');
  }
  // rest_total_hits_as_int renders a bare number, which cannot say `gte`: count exactly (as ES).
  const trackTotalHits = params.trackTotalHits ?? request.track_total_hits ?? (params.restTotalHitsAsInt ? true : undefined);
  if (params.restTotalHitsAsInt === true && typeof trackTotalHits === 'number' && trackTotalHits < 2_147_483_647) {
    throw new EngineError('action_request_validation', `Validation Failed: 1: [rest_total_hits_as_int] cannot be used if the tracking of total hits is not accurate, got ${trackTotalHits};`);
  }
  const timeoutRaw = params.timeout ?? request.timeout;
  const timeoutMs = timeoutRaw === undefined ? (defaultTimeoutMs > 0 ? defaultTimeoutMs : undefined) : parseTimeValue(timeoutRaw, 'timeout');
  for (const flag of ['version', 'seq_no_primary_term'] as const) {
    if (request[flag] !== undefined && typeof request[flag] !== 'boolean') throw new EngineError('parsing', `[${flag}] must be a boolean`);
  }
  return {
    query,
    from,
    size,
    sort,
    searchAfter: searchAfter as unknown[] | undefined,
    aggs,
    trackTotalHits: trackTotalHits === undefined ? undefined : trackTotalHitsValue(trackTotalHits),
    minScore: minScore as number | undefined,
    timeoutMs,
    source: parseSourceFilter({
      source: params.source ?? request._source,
      includes: params.sourceIncludes,
      excludes: params.sourceExcludes,
    }),
    highlight: highlight as Record<string, unknown> | undefined,
    version: params.version ?? request.version === true,
    seqNoPrimaryTerm: request.seq_no_primary_term === true,
    indicesBoost: parseIndicesBoost(request.indices_boost),
  };
}

/** Validates a `_count` body (`{query}`) and the `q` override; returns the query. */
export function parseCount(body: unknown, params: { q?: string; qOptions?: QueryStringParams }): unknown {
  const request = body === undefined || body === null ? {} : body;
  if (!isPlainObject(request)) throw new EngineError('parsing', 'the count body must be a JSON object');
  for (const key of Object.keys(request)) {
    if (key !== 'query') throw new EngineError('parsing', `request does not support [${key}]`);
  }
  const query = params.q !== undefined ? queryFromQ(params.q, params.qOptions) : request.query;
  if (query !== undefined && !isPlainObject(query)) throw new EngineError('parsing', '[query] must be an object');
  return query;
}
