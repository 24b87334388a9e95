/**
 * Collection settings routes (ES index settings): `GET /_settings[/{names}]`,
 * `GET /{target}/_settings[/{names}]`, `PUT /_settings` and `PUT /{target}/_settings`. The node applies the dynamic settings and refuses static ones
 * (src/node/collection-settings-api.ts).
 */
import type { FastifyInstance } from 'fastify';
import { Type, type Static } from 'typebox';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { CollectionService } from '../../node/collection-service.ts';
import type { GetSettingsOptions } from '../../node/collection-settings-api.ts';
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

const NameParams = Type.Object({ name: Type.String() });
const CollectionNameParams = Type.Object({ collection: Type.String(), name: Type.String() });

/** What the settings routes need: the collection service. */
export interface CollectionSettingsRouteOptions {
  collections: CollectionService;
}

/** Collection settings routes. */
export async function collectionSettingsRoutes(instance: FastifyInstance, options: CollectionSettingsRouteOptions): Promise<void> {
  const app = instance.withTypeProvider<TypeBoxTypeProvider>();
  const { collections } = options;

  const readOptions = (query: Static<typeof SettingsQuery>, names?: string): GetSettingsOptions => ({
    ignoreUnavailable: flagSet(query.ignore_unavailable),
    flat: flagSet(query.flat_settings),
    includeDefaults: flagSet(query.include_defaults),
    names,
  });
  const getOptions = { config: { role: 'read' as const }, schema: { querystring: SettingsQuery } };
  const getTargetOptions = { config: { role: 'read' as const, collectionTarget: true }, schema: { params: CollectionParams, querystring: SettingsQuery } };

  app.get('/_settings', getOptions, async (request) => collections.getSettings(request.authScope.narrowTarget('_all'), readOptions(request.query)));

  app.get('/_settings/:name', { ...getOptions, schema: { ...getOptions.schema, params: NameParams } }, async (request) =>
    collections.getSettings(request.authScope.narrowTarget('_all'), readOptions(request.query, request.params.name)),
  );

  app.get('/:collection/_settings', getTargetOptions, async (request) => collections.getSettings(request.params.collection, readOptions(request.query)));

  app.get('/:collection/_settings/:name', { ...getTargetOptions, schema: { ...getTargetOptions.schema, params: CollectionNameParams } }, async (request) =>
    collections.getSettings(request.params.collection, readOptions(request.query, request.params.name)),
  );

  app.put(
    '/_settings',
    { config: { role: 'manage' }, schema: { querystring: SettingsQuery, body: AnyObject } },
    async (request) => collections.putSettings(request.authScope.narrowTarget('_all'), request.body),
  );

  app.put(
    '/:collection/_settings',
    { config: { role: 'manage', collectionTarget: true }, schema: { params: CollectionParams, querystring: SettingsQuery, body: AnyObject } },
    async (request) => collections.putSettings(request.params.collection, request.body),
  );
}
