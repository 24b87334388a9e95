/**
 * `_msearch` routes: an NDJSON body of header/body line pairs, each pair one `_search`. A line
 * that is not JSON, a header that is not an object or names an unknown key, or a header without
 * its body line fails the whole request (400, nothing run), as in Elasticsearch; a search that
 * fails (unknown collection, bad query, a collection outside the key's namespaces) fails only its
 * entry, rendered with the error table under `responses[i]`.
 */
import type { FastifyInstance } from 'fastify';
import { Type, type Static } from 'typebox';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { AuthScope } from '../auth/auth-scope.ts';
import { installRawTextParser } from '../content-types.ts';
import { ApiError, renderError } from '../errors.ts';
import { EngineError } from '../../engine/errors.ts';
import { isBlank, parseJsonText, withExactSearchAfter } from '../json-body.ts';
import type { MultiSearchItem } from '../../node/multi-search.ts';
import { readsPointInTime } from '../../node/point-in-time.ts';
import type { SearchService } from '../../node/search-service.ts';
import { CollectionParams, FlagParam, flagSet, querySchema } from '../params.ts';

const MultiSearchQuery = querySchema({
  typed_keys: Type.Optional(FlagParam),
  rest_total_hits_as_int: Type.Optional(FlagParam),
  max_concurrent_searches: Type.Optional(Type.Integer({ minimum: 1 })),
  max_concurrent_shard_requests: Type.Optional(Type.Integer({ minimum: 1 })),
  pre_filter_shard_size: Type.Optional(Type.Integer({ minimum: 1 })),
  search_type: Type.Optional(Type.Literal('query_then_fetch')),
  ccs_minimize_roundtrips: Type.Optional(FlagParam),
});

type MultiSearchQueryType = Static<typeof MultiSearchQuery>;

/** Header keys of a search; the ones Trove acts on are `index` and `ignore_unavailable`. */
const HEADER_KEYS: ReadonlySet<string> = new Set([
  'index',
  'search_type',
  'preference',
  'routing',
  'request_cache',
  'ignore_unavailable',
  'allow_no_indices',
  'expand_wildcards',
  'ccs_minimize_roundtrips',
  'allow_partial_search_results',
]);

/** One header/body pair as read from the body. */
interface SearchPair {
  header: Record<string, unknown>;
  body: unknown;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** Splits the NDJSON body into header/body pairs (see the module comment for what fails the request). */
function parseMultiSearchBody(text: unknown): SearchPair[] {
  if (typeof text !== 'string' || isBlank(text)) throw new ApiError('bad_request', 'The msearch request must be terminated by a newline [\\n]');
  const lines = text.split('\n').map((line) => (line.endsWith('\r') ? line.slice(0, -1) : line));
  const pairs: SearchPair[] = [];
  let index = 0;
  const nextLine = (): { text: string; number: number } | null => {
    while (index < lines.length && isBlank(lines[index]!)) index++;
    return index < lines.length ? { text: lines[index]!, number: ++index } : null;
  };
  for (let header = nextLine(); header !== null; header = nextLine()) {
    const parsed = parseJsonText(header.text, `the header on line [${header.number}]`);
    if (!isPlainObject(parsed)) throw new ApiError('bad_request', `msearch header on line [${header.number}] must be an object`);
    for (const key of Object.keys(parsed)) {
      if (!HEADER_KEYS.has(key)) throw new ApiError('bad_request', `key [${key}] is not supported in the metadata section`);
    }
    const body = nextLine();
    if (body === null) throw new ApiError('bad_request', `msearch header on line [${header.number}] has no body line after it`);
    pairs.push({ header: parsed, body: withExactSearchAfter(parseJsonText(body.text, `the search body on line [${body.number}]`), body.text) });
  }
  if (pairs.length === 0) throw new ApiError('bad_request', 'msearch request must contain at least one search');
  return pairs;
}

/** The target of a header: its `index` (a string or a list), else the URL's collection, else null (every collection). */
function headerTarget(header: Record<string, unknown>, collection: string | undefined): string | null {
  const { index } = header;
  if (typeof index === 'string' && index !== '') return index;
  if (Array.isArray(index) && index.length > 0 && index.every((name) => typeof name === 'string')) return index.join(',');
  if (index !== undefined) throw new ApiError('bad_request', '[index] of an msearch header must be a string or an array of strings');
  return collection ?? null;
}

function headerFlag(header: Record<string, unknown>, key: string): boolean | undefined {
  const value = header[key];
  if (value === undefined) return undefined;
  if (typeof value === 'boolean') return value;
  if (value === 'true' || value === 'false') return value === 'true';
  throw new ApiError('bad_request', `[${key}] of an msearch header must be a boolean`);
}

/** What the msearch routes need: the search service. */
export interface MultiSearchRouteOptions {
  search: SearchService;
}

/** With `rest_total_hits_as_int` the whole request is refused when a search counts hits only up to a bound (as Elasticsearch). */
function checkAccurateTotal(body: unknown): void {
  const track = isPlainObject(body) ? body.track_total_hits : undefined;
  if (typeof track === 'number' && track < 2_147_483_647) {
    throw new EngineError('action_request_validation', `Validation Failed: 1: [rest_total_hits_as_int] cannot be used if the tracking of total hits is not accurate, got ${track};`);
  }
}

/** `_msearch` routes (an encapsulated context with the raw-text body parser). */
export async function multiSearchRoutes(instance: FastifyInstance, options: MultiSearchRouteOptions): Promise<void> {
  installRawTextParser(instance);
  const app = instance.withTypeProvider<TypeBoxTypeProvider>();
  const { search } = options;

  const run = async (collection: string | undefined, body: unknown, query: MultiSearchQueryType, scope: AuthScope) => {
    const pairs = parseMultiSearchBody(body);
    if (flagSet(query.rest_total_hits_as_int)) for (const pair of pairs) checkAccurateTotal(pair.body);
    const refused = new Map<number, unknown>();
    const items: MultiSearchItem[] = [];
    const positions: number[] = [];
    pairs.forEach((pair, position) => {
      const target = headerTarget(pair.header, collection);
      let narrowed: string | null;
      try {
        narrowed = target === null && readsPointInTime(pair.body) ? null : scope.narrowTarget(target ?? '_all');
      } catch (error) {
        refused.set(position, error);
        return;
      }
      const params = {
        typedKeys: flagSet(query.typed_keys),
        restTotalHitsAsInt: flagSet(query.rest_total_hits_as_int),
        ignoreUnavailable: headerFlag(pair.header, 'ignore_unavailable'),
        authorizeLookup: scope.requireCollections,
      };
      items.push({ target: narrowed, body: pair.body, params });
      positions.push(position);
    });
    const result = await search.multiSearch(items, scope.requireCollections, query.max_concurrent_searches);
    const responses: unknown[] = pairs.map((_, position) => renderError(refused.get(position)).body);
    result.outcomes.forEach((outcome, order) => {
      const position = positions[order]!;
      responses[position] = 'response' in outcome ? { ...outcome.response, status: 200 } : renderError(outcome.error, items[order]!.target ?? undefined).body;
    });
    return { took: result.took, responses };
  };

  app.route({
    method: ['GET', 'POST'],
    url: '/_msearch',
    config: { role: 'read' },
    schema: { querystring: MultiSearchQuery },
    handler: async (request) => run(undefined, request.body, request.query, request.authScope),
  });

  app.route({
    method: ['GET', 'POST'],
    url: '/:collection/_msearch',
    config: { role: 'read', collectionTarget: true },
    schema: { params: CollectionParams, querystring: MultiSearchQuery },
    handler: async (request) => run(request.params.collection, request.body, request.query, request.authScope),
  });
}
