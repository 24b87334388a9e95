/**
 * Collection statistics routes (ES index stats): `GET /_stats[/{metric}]` and
 * `GET /{target}/_stats[/{metric}]`; every section by default, or those of the metric list
 * (src/node/collection-stats.ts).
 */
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { CollectionService } from '../../node/collection-service.ts';
import { parseStatsMetrics } from '../../node/collection-stats.ts';
import { CollectionParams, FlagParam, flagSet, querySchema } from '../params.ts';

const MetricParams = Type.Object({ metric: Type.String({ minLength: 1 }) });
const CollectionMetricParams = Type.Object({ collection: Type.String({ minLength: 1 }), metric: Type.String({ minLength: 1 }) });

/** The path of a request without its query string, as Elasticsearch names it in errors. */
function pathOf(url: string): string {
  const query = url.indexOf('?');
  return decodeURIComponent(query < 0 ? url : url.slice(0, query));
}

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

  app.get('/_stats/:metric', { config: { role: 'monitor' }, schema: { params: MetricParams, querystring: StatsQuery } }, async (request) => {
    const metrics = parseStatsMetrics(request.params.metric, pathOf(request.url));
    return collections.stats(request.authScope.narrowTarget('_all'), { ignoreUnavailable: flagSet(request.query.ignore_unavailable), metrics });
  });

  app.get(
    '/:collection/_stats/:metric',
    { config: { role: 'monitor', collectionTarget: true }, schema: { params: CollectionMetricParams, querystring: StatsQuery } },
    async (request) => {
      const metrics = parseStatsMetrics(request.params.metric, pathOf(request.url));
      return collections.stats(request.params.collection, { ignoreUnavailable: flagSet(request.query.ignore_unavailable), metrics });
    },
  );
}
