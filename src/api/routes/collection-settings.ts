/**
 * Collection settings routes (ES index settings): `GET /_settings`, `GET /{target}/_settings`
 * and `PUT /{target}/_settings`. The node applies the dynamic settings and refuses static ones
 * (src/node/collection-settings-api.ts).
 */
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { CollectionService } from '../../node/collection-service.ts';
import { AnyObject, CollectionParams, FlagParam, flagSet, querySchema } from '../params.ts';

const SettingsQuery = querySchema({
  ignore_unavailable: Type.Optional(FlagParam),
  allow_no_indices: Type.Optional(Type.String()),
  expand_wildcards: Type.Optional(Type.String()),
  flat_settings: Type.Optional(FlagParam),
  include_defaults: Type.Optional(FlagParam),
  local: Type.Optional(FlagParam),
  master_timeout: Type.Optional(Type.String()),
  cluster_manager_timeout: Type.Optional(Type.String()),
  timeout: Type.Optional(Type.String()),
  preserve_existing: Type.Optional(FlagParam),
});

/** What the settings routes need: the collection service. */
export interface CollectionSettingsRouteOptions {
  collections: CollectionService;
}

/** Collection settings routes. */
export async function collectionSettingsRoutes(instance: FastifyInstance, options: CollectionSettingsRouteOptions): Promise<void> {
  const app = instance.withTypeProvider<TypeBoxTypeProvider>();
  const { collections } = options;

  app.get('/_settings', { config: { role: 'read' }, schema: { querystring: SettingsQuery } }, async (request) =>
    collections.getSettings(request.authScope.narrowTarget('_all'), { ignoreUnavailable: flagSet(request.query.ignore_unavailable) }),
  );

  app.get(
    '/:collection/_settings',
    { config: { role: 'read', collectionTarget: true }, schema: { params: CollectionParams, querystring: SettingsQuery } },
    async (request) => collections.getSettings(request.params.collection, { ignoreUnavailable: flagSet(request.query.ignore_unavailable) }),
  );

  app.put(
    '/:collection/_settings',
    { config: { role: 'manage', collectionTarget: true }, schema: { params: CollectionParams, querystring: SettingsQuery, body: AnyObject } },
    async (request) => collections.putSettings(request.params.collection, request.body),
  );
}
