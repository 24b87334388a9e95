/**
 * One node of the cluster, through any node: `GET /_node/{node_id}` (identity, addresses and the
 * `host` facts with warnings), `GET /_node/{node_id}/stats` (counters), and
 * `GET|PUT /_node/{node_id}/settings` (effective runtime settings with their sources; transient
 * overrides, `null` resets, all or nothing). `{node_id}` is `_local` (the receiving node), or a
 * registered node's id or name, whose own answer is fetched through the internal node API. `_local`
 * settings are served by the node itself, so they work even when the coordinator cannot be reached.
 *
 * A key limited to namespaces sees in the stats only the shards of its own collections (names and
 * shard UUIDs of other namespaces stay hidden); the node-level totals are the node's.
 */
import type { FastifyInstance } from 'fastify';
import { Type, type TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { ObservabilityService } from '../../node/observability-service.ts';
import type { NodeStats } from '../../ops/stats/node-stats.ts';
import type { AuthScope } from '../auth/auth-scope.ts';
import { AnyObject, querySchema } from '../params.ts';

/** What the node routes need: the observability service. */
export interface NodeRouteOptions {
  observability: ObservabilityService;
}

/** The stats as the caller may see them: per-shard rows of its own collections only. */
function visibleStats(stats: NodeStats, scope: AuthScope): NodeStats {
  if (scope.unrestricted) return stats;
  const shards = stats.segments.shards.filter((shard) => scope.allowsCollection(shard.collection));
  return { ...stats, segments: { ...stats.segments, shards } };
}

const NodeParams = Type.Object({ node_id: Type.String({ minLength: 1, maxLength: 512 }) });

/** Node info, stats and settings routes. */
export async function nodeRoutes(instance: FastifyInstance, options: NodeRouteOptions): Promise<void> {
  const app = instance.withTypeProvider<TypeBoxTypeProvider>();
  const { observability } = options;
  const NoQuery = querySchema({});
  const security = () => instance.security?.counters.snapshot() ?? null;
  const views = (target: string) => observability.nodeViews(target, security);

  app.get('/_node/:node_id', { config: { role: 'monitor' }, schema: { params: NodeParams, querystring: NoQuery } }, async (request) =>
    views(request.params.node_id).info(),
  );

  app.get('/_node/:node_id/stats', { config: { role: 'monitor' }, schema: { params: NodeParams, querystring: NoQuery } }, async (request) =>
    visibleStats(await views(request.params.node_id).stats(), request.authScope),
  );

  app.get('/_node/:node_id/settings', { config: { role: 'monitor' }, schema: { params: NodeParams, querystring: NoQuery } }, async (request) =>
    views(request.params.node_id).settings(),
  );

  app.put(
    '/_node/:node_id/settings',
    { config: { role: 'admin' }, schema: { params: NodeParams, querystring: NoQuery, body: AnyObject } },
    async (request) => {
      // Node settings act on every namespace: not for an admin key limited to some.
      request.authScope.requireUnrestricted('PUT /_node/{node_id}/settings');
      return views(request.params.node_id).putSettings(request.body as Record<string, unknown>);
    },
  );
}
