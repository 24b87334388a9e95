/**
 * `_field_caps` routes: `GET|POST /_field_caps` and `GET|POST /{target}/_field_caps`, with
 * `fields` in the query string or the body, `include_unmapped` and an `index_filter` body
 * (src/node/field-caps.ts). A key limited to namespaces sees only the collections in them.
 */
import type { FastifyInstance } from 'fastify';
import { Type, type Static } from 'typebox';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { CollectionService } from '../../node/collection-service.ts';
import { parseFieldCapsRequest, type CollectionMatcher } from '../../node/field-caps.ts';
import type { SearchService } from '../../node/search-service.ts';
import { AnyObject, CollectionParams, FlagParam, flagSet, optionalBody, querySchema } from '../params.ts';

const FieldCapsQuery = querySchema({
  fields: Type.Optional(Type.String()),
  include_unmapped: Type.Optional(FlagParam),
  ignore_unavailable: Type.Optional(FlagParam),
  allow_no_indices: Type.Optional(Type.String()),
  expand_wildcards: Type.Optional(Type.String()),
});

/** What the routes need: the collections (mappings) and search (counts answering `index_filter`). */
export interface FieldCapsRouteOptions {
  collections: CollectionService;
  search: SearchService;
}

/** `_field_caps` routes. */
export async function fieldCapsRoutes(instance: FastifyInstance, options: FieldCapsRouteOptions): Promise<void> {
  const app = instance.withTypeProvider<TypeBoxTypeProvider>();
  const { collections, search } = options;
  const matches: CollectionMatcher = async (collection, query) => (await search.count(collection, { query })).count > 0;
  const answer = (target: string, query: Static<typeof FieldCapsQuery>, body: unknown) =>
    collections.fieldCaps(target, parseFieldCapsRequest(query.fields, flagSet(query.include_unmapped), body), matches, {
      ignoreUnavailable: flagSet(query.ignore_unavailable),
    });

  app.route({
    method: ['GET', 'POST'],
    url: '/_field_caps',
    config: { role: 'read' },
    schema: { querystring: FieldCapsQuery, body: optionalBody(AnyObject) },
    handler: async (request) => answer(request.authScope.narrowTarget('_all'), request.query, request.body),
  });

  app.route({
    method: ['GET', 'POST'],
    url: '/:collection/_field_caps',
    config: { role: 'read', collectionTarget: true },
    schema: { params: CollectionParams, querystring: FieldCapsQuery, body: optionalBody(AnyObject) },
    handler: async (request) => answer(request.params.collection, request.query, request.body),
  });
}
