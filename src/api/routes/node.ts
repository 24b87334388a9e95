/**
 * The local node: `GET /_node/_local` (identity, addresses and the `host` facts with warnings),
 * `GET /_node/_local/stats` (counters), and `GET|PUT /_node/_local/settings` (effective runtime
 * settings with their sources; transient overrides, `null` resets, all or nothing). Settings are
 * served by the node itself, so they work even when the coordinator cannot be reached.
 *
 * A key limited to namespaces sees in the stats only the shards of its own collections (names and
 * shard UUIDs of other namespaces stay hidden); the node-level totals are the node's.
 */
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
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

/** Node info, stats and settings routes. */
export async function nodeRoutes(instance: FastifyInstance, options: NodeRouteOptions): Promise<void> {
  const app = instance.withTypeProvider<TypeBoxTypeProvider>();
  const { observability } = options;
  const NoQuery = querySchema({});

  app.get('/_node/_local', { config: { role: 'monitor' }, schema: { querystring: NoQuery } }, async () => {
    const info = observability.info();
    const registered = observability.catalog().nodes[info.nodeId];
    const { host, warnings } = await observability.hostInfo();
    return {
      node_id: info.nodeId,
      name: info.nodeName,
      version: info.version,
      roles: registered?.roles ?? [],
      cluster_name: info.clusterName,
      cluster_uuid: info.clusterUuid,
      coordinator: info.coordinator,
      addresses: { http: info.address },
      process: { pid: process.pid, started_at: new Date(Date.now() - process.uptime() * 1000).toISOString(), node_version: process.version },
      host,
      warnings,
    };
  });

  app.get('/_node/_local/stats', { config: { role: 'monitor' }, schema: { querystring: NoQuery } }, async (request) =>
    visibleStats(await observability.nodeStats(instance.security?.counters.snapshot() ?? null), request.authScope),
  );

  app.get('/_node/_local/settings', { config: { role: 'monitor' }, schema: { querystring: NoQuery } }, async () => ({
    node_id: observability.nodeId,
    ...observability.settingsView(),
  }));

  app.put('/_node/_local/settings', { config: { role: 'admin' }, schema: { querystring: NoQuery, body: AnyObject } }, async (request) => {
    // Node settings act on every namespace: not for an admin key limited to some.
    request.authScope.requireUnrestricted('PUT /_node/_local/settings');
    const change = observability.applySettings(request.body as Record<string, unknown>);
    const { transient } = observability.settingsView();
    return {
      acknowledged: true,
      changed: Object.fromEntries(change.changed.map((key) => [key, change.values[key] ?? null])),
      transient,
    };
  });
}
