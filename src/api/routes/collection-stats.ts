/**
 * Collection statistics routes (ES index stats): `GET /_stats` and `GET /{target}/_stats`; every
 * section Trove has is returned (src/node/collection-stats.ts).
 */
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { CollectionService } from '../../node/collection-service.ts';
import { CollectionParams, FlagParam, flagSet, querySchema } from '../params.ts';

const StatsQuery = querySchema({
  level: Type.Optional(Type.Union([Type.Literal('cluster'), Type.Literal('indices'), Type.Literal('shards')])),
  ignore_unavailable: Type.Optional(FlagParam),
  allow_no_indices: Type.Optional(Type.String()),
  expand_wildcards: Type.Optional(Type.String()),
  include_segment_file_sizes: Type.Optional(FlagParam),
  include_unloaded_segments: Type.Optional(FlagParam),
  forbid_closed_indices: Type.Optional(FlagParam),
  fields: Type.Optional(Type.String()),
  completion_fields: Type.Optional(Type.String()),
  fielddata_fields: Type.Optional(Type.String()),
  groups: Type.Optional(Type.String()),
});

/** What the stats routes need: the collection service. */
export interface CollectionStatsRouteOptions {
  collections: CollectionService;
}

/** Collection statistics routes. */
export async function collectionStatsRoutes(instance: FastifyInstance, options: CollectionStatsRouteOptions): Promise<void> {
  const app = instance.withTypeProvider<TypeBoxTypeProvider>();
  const { collections } = options;

  app.get('/_stats', { config: { role: 'monitor' }, schema: { querystring: StatsQuery } }, async (request) =>
    collections.stats(request.authScope.narrowTarget('_all'), { ignoreUnavailable: flagSet(request.query.ignore_unavailable) }),
  );

  app.get(
    '/:collection/_stats',
    { config: { role: 'monitor', collectionTarget: true }, schema: { params: CollectionParams, querystring: StatsQuery } },
    async (request) => collections.stats(request.params.collection, { ignoreUnavailable: flagSet(request.query.ignore_unavailable) }),
  );
}
