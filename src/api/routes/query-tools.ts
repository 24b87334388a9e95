/**
 * `_validate/query`, `_explain` and `_analyze` routes: whether a query parses
 * (src/node/validate-query.ts), how a document scores (src/node/explain-api.ts) and the tokens of
 * a text (src/node/analyze.ts), as Elasticsearch answers them.
 */
import type { FastifyInstance } from 'fastify';
import { Type, type Static } from 'typebox';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { SearchService } from '../../node/search-service.ts';
import { explainDocument } from '../../node/explain-api.ts';
import { Q_QUERY, qOptions } from './search.ts';
import { AnyObject, CollectionParams, DocumentParams, FlagParam, SOURCE_QUERY, flagSet, optionalBody, querySchema, sourceOptions } from '../params.ts';
import type { SourceOptions } from '../../node/source-filter.ts';

const ValidateQuery = querySchema({
  ...Q_QUERY,
  explain: Type.Optional(FlagParam),
  rewrite: Type.Optional(FlagParam),
  all_shards: Type.Optional(FlagParam),
  ignore_unavailable: Type.Optional(Type.String()),
  allow_no_indices: Type.Optional(Type.String()),
  expand_wildcards: Type.Optional(Type.String()),
});

/** Any object: a key other than `query` makes the answer `valid: false` (validate-query.ts), as in Elasticsearch. */
const ValidateBody = AnyObject;

const ExplainQuery = querySchema({
  ...Q_QUERY,
  ...SOURCE_QUERY,
  routing: Type.Optional(Type.String()),
  preference: Type.Optional(Type.String()),
});

/** The `_source` of a search body for the URL's source options (undefined: none given). */
function sourceBody(options: SourceOptions | undefined): unknown {
  if (options === undefined) return undefined;
  const { source } = options;
  if (options.includes === undefined && options.excludes === undefined) {
    if (source === true || source === 'true') return true;
    if (source === 'false') return false;
    return typeof source === 'string' ? source.split(',').map((part) => part.trim()).filter((part) => part !== '') : undefined;
  }
  return { includes: options.includes ?? [], excludes: options.excludes ?? [] };
}

/** What the routes need: the search service. */
export interface QueryToolRouteOptions {
  search: SearchService;
}

/** `_validate/query` and `_analyze` routes. */
export async function queryToolRoutes(instance: FastifyInstance, options: QueryToolRouteOptions): Promise<void> {
  const app = instance.withTypeProvider<TypeBoxTypeProvider>();
  const { search } = options;
  const validateParams = (query: Static<typeof ValidateQuery>) => ({ q: query.q, qOptions: qOptions(query), explain: flagSet(query.explain) });

  app.route({
    method: ['GET', 'POST'],
    url: '/_validate/query',
    config: { role: 'read' },
    schema: { querystring: ValidateQuery, body: optionalBody(ValidateBody) },
    handler: async (request) => search.validateQuery(request.authScope.narrowTarget('_all'), request.body ?? {}, validateParams(request.query)),
  });

  app.route({
    method: ['GET', 'POST'],
    url: '/:collection/_validate/query',
    config: { role: 'read', collectionTarget: true },
    schema: { params: CollectionParams, querystring: ValidateQuery, body: optionalBody(ValidateBody) },
    handler: async (request) => search.validateQuery(request.params.collection, request.body ?? {}, validateParams(request.query)),
  });

  app.route({
    method: ['GET', 'POST'],
    url: '/:collection/_explain/:id',
    config: { role: 'read', collectionTarget: true },
    schema: { params: DocumentParams, querystring: ExplainQuery, body: optionalBody(ValidateBody) },
    handler: async (request, reply) => {
      const { collection, id } = request.params;
      const params = { q: request.query.q, qOptions: qOptions(request.query), source: sourceBody(sourceOptions(request.query)) };
      const { found, response } = await explainDocument(collection, id, request.body ?? {}, params, (body) => search.search(collection, body));
      if (!found) reply.code(404);
      return response;
    },
  });

  app.route({
    method: ['GET', 'POST'],
    url: '/_analyze',
    config: { role: 'read' },
    schema: { querystring: querySchema({}), body: AnyObject },
    handler: async (request) => search.analyze(undefined, request.body),
  });

  app.route({
    method: ['GET', 'POST'],
    url: '/:collection/_analyze',
    config: { role: 'read' },
    schema: { params: CollectionParams, querystring: querySchema({}), body: AnyObject },
    handler: async (request) => {
      request.authScope.requireCollection(request.params.collection);
      return search.analyze(request.params.collection, request.body);
    },
  });
}
