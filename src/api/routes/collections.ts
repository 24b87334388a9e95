/**
 * Collection routes (ES index APIs): create, get, exists, delete, mappings, and `_refresh` (a no-op
 * for a collection whose writes are searchable once acknowledged, the default; it refreshes the
 * copies of one with `index.visibility: refresh`).
 */
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { DEFAULT_NAMESPACE } from '../../cluster/catalog.ts';
import type { CollectionService } from '../../node/collection-service.ts';
import { AnyObject, CollectionParams, flagSet, optionalBody, querySchema } from '../params.ts';

const CreateBody = Type.Object(
  {
    namespace: Type.Optional(Type.String({ minLength: 1 })),
    settings: Type.Optional(AnyObject),
    mappings: Type.Optional(AnyObject),
    aliases: Type.Optional(AnyObject),
  },
  { additionalProperties: false },
);

const MappingBody = Type.Object(
  {
    dynamic: Type.Optional(Type.Unknown()),
    dynamic_templates: Type.Optional(Type.Unknown()),
    date_detection: Type.Optional(Type.Unknown()),
    numeric_detection: Type.Optional(Type.Unknown()),
    properties: Type.Optional(AnyObject),
  },
  { additionalProperties: false },
);

const ADMIN_QUERY = {
  timeout: Type.Optional(Type.String()),
  master_timeout: Type.Optional(Type.String()),
  cluster_manager_timeout: Type.Optional(Type.String()),
  wait_for_active_shards: Type.Optional(Type.String()),
};

const TARGET_QUERY = {
  ignore_unavailable: Type.Optional(Type.String()),
  allow_no_indices: Type.Optional(Type.String()),
  expand_wildcards: Type.Optional(Type.String()),
};

/** What the collection routes need: the collection service. */
export interface CollectionRouteOptions {
  collections: CollectionService;
}

/** Collection admin routes. */
export async function collectionRoutes(instance: FastifyInstance, options: CollectionRouteOptions): Promise<void> {
  const app = instance.withTypeProvider<TypeBoxTypeProvider>();
  const { collections } = options;

  app.put(
    '/:collection',
    { config: { role: 'manage' }, schema: { params: CollectionParams, querystring: querySchema(ADMIN_QUERY), body: optionalBody(CreateBody) } },
    async (request) => {
      request.authScope.requireNamespace(request.body?.namespace ?? DEFAULT_NAMESPACE);
      return collections.createCollection(request.params.collection, request.body ?? {});
    },
  );

  app.get(
    '/:collection',
    { config: { role: 'read', collectionTarget: true }, schema: { params: CollectionParams, querystring: querySchema({ ...ADMIN_QUERY, ...TARGET_QUERY }) } },
    async (request) => collections.getCollection(request.params.collection),
  );

  app.head(
    '/:collection',
    { config: { role: 'read', collectionTarget: true }, schema: { params: CollectionParams, querystring: querySchema(TARGET_QUERY) } },
    async (request, reply) => {
      const found = await collections.getCollection(request.params.collection).then(
        (collections) => Object.keys(collections).length > 0,
        () => false,
      );
      return reply.status(found ? 200 : 404).send();
    },
  );

  app.delete(
    '/:collection',
    { config: { role: 'manage' }, schema: { params: CollectionParams, querystring: querySchema({ ...ADMIN_QUERY, ...TARGET_QUERY }) } },
    async (request) => collections.deleteCollection(request.params.collection),
  );

  app.get(
    '/_mapping',
    { config: { role: 'read' }, schema: { querystring: querySchema(ADMIN_QUERY) } },
    async (request) => shownMappings(await collections.getMapping(request.authScope.narrowTarget('_all'))),
  );

  app.get(
    '/:collection/_mapping',
    { config: { role: 'read', collectionTarget: true }, schema: { params: CollectionParams, querystring: querySchema({ ...ADMIN_QUERY, ...TARGET_QUERY }) } },
    async (request) => shownMappings(await collections.getMapping(request.params.collection, { ignoreUnavailable: flagSet(request.query.ignore_unavailable) })),
  );

  app.route({
    method: ['PUT', 'POST'],
    url: '/:collection/_mapping',
    config: { role: 'manage', collectionTarget: true },
    schema: { params: CollectionParams, querystring: querySchema({ ...ADMIN_QUERY, ...TARGET_QUERY }), body: MappingBody },
    handler: async (request) => collections.putMapping(request.params.collection, request.body),
  });

  // Refreshes the copies of collections with `index.visibility: refresh`; `_shards` counts copies as Elasticsearch does.
  const refresh = (target: string, query: { ignore_unavailable?: string }) => collections.refresh(target, { ignoreUnavailable: flagSet(query.ignore_unavailable) });
  app.route({
    method: ['GET', 'POST'],
    url: '/_refresh',
    config: { role: 'write' },
    schema: { querystring: querySchema(TARGET_QUERY) },
    handler: async (request) => refresh(request.authScope.narrowTarget('_all'), request.query),
  });
  app.route({
    method: ['GET', 'POST'],
    url: '/:collection/_refresh',
    config: { role: 'write', collectionTarget: true },
    schema: { params: CollectionParams, querystring: querySchema(TARGET_QUERY) },
    handler: async (request) => refresh(request.params.collection, request.query),
  });
}

/** `GET _mapping` as Elasticsearch shows it: a collection whose mapping has no fields or options shows `mappings: {}`. */
function shownMappings(byName: Record<string, { mappings: object }>): Record<string, { mappings: object }> {
  const shown: Record<string, { mappings: object }> = {};
  for (const [name, { mappings }] of Object.entries(byName)) {
    const { properties, ...rest } = mappings as { properties?: object };
    shown[name] = { mappings: properties !== undefined && Object.keys(properties).length === 0 ? rest : mappings };
  }
  return shown;
}
