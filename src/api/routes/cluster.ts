/**
 * Cluster reads: `GET /_cluster/health` (`level=cluster|namespaces|collections|shards`) and
 * `GET /_cluster/state[/{sections}]` (comma list of `nodes, namespaces, collections, shards,
 * master, metadata`; an unknown section is a 400 listing the valid ones). A key limited to
 * namespaces sees only those namespaces and their collections.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { HEALTH_LEVELS, clusterHealth, type HealthLevel } from '../../ops/cluster/cluster-health.ts';
import { STATE_SECTIONS, clusterState, parseStateSections, type StateInputs } from '../../ops/cluster/cluster-state.ts';
import { ApiError } from '../errors.ts';
import type { ObservabilityService } from '../../node/observability-service.ts';
import { querySchema } from '../params.ts';

const HealthQuery = querySchema({
  level: Type.Optional(Type.Union(HEALTH_LEVELS.map((level) => Type.Literal(level)))),
});

const StateParams = Type.Object({ sections: Type.String({ minLength: 1 }) });

/** Catalog, local shard states and the caller's namespace limits. */
function inputs(observability: ObservabilityService, request: FastifyRequest): StateInputs {
  const scope = request.authScope;
  const hosted = new Map(observability.hostedCollections().map((collection) => [collection.meta.name, collection]));
  return {
    catalog: observability.catalog(),
    nodeId: observability.nodeId,
    coordinator: observability.coordinatorKind,
    masterId: observability.masterId(),
    connectivity: observability.connectivity(),
    localShardState: (collection, shard) => hosted.get(collection)?.shards[shard]?.state,
    allowsNamespace: scope && !scope.unrestricted ? (namespace) => scope.allows(namespace) : undefined,
  };
}

/** What the cluster routes need: the observability service. */
export interface ClusterRouteOptions {
  observability: ObservabilityService;
}

/** Cluster health and state routes. */
export async function clusterRoutes(instance: FastifyInstance, options: ClusterRouteOptions): Promise<void> {
  const app = instance.withTypeProvider<TypeBoxTypeProvider>();
  const { observability } = options;

  app.get('/_cluster/health', { config: { role: 'monitor' }, schema: { querystring: HealthQuery } }, async (request) =>
    clusterHealth(inputs(observability, request), (request.query.level ?? 'cluster') as HealthLevel),
  );

  app.get('/_cluster/state', { config: { role: 'monitor' }, schema: { querystring: querySchema({}) } }, async (request) =>
    clusterState(inputs(observability, request), STATE_SECTIONS),
  );

  app.get(
    '/_cluster/state/:sections',
    { config: { role: 'monitor' }, schema: { params: StateParams, querystring: querySchema({}) } },
    async (request) => {
      const parsed = parseStateSections(request.params.sections);
      if ('unknown' in parsed) {
        throw new ApiError(
          'invalid_parameter',
          `unknown cluster state section${parsed.unknown.length > 1 ? 's' : ''} [${parsed.unknown.join(', ')}]; valid sections: [_all, ${STATE_SECTIONS.join(', ')}]`,
        );
      }
      return clusterState(inputs(observability, request), parsed.sections);
    },
  );
}
