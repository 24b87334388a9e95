/**
 * Cluster reads: `GET /_cluster/health` (`level=cluster|namespaces|collections|shards`; the
 * `wait_for_*` conditions and `timeout` of src/ops/cluster/health-wait.ts, 408 when it runs out) and
 * `GET /_cluster/state[/{sections}]` (comma list of `nodes, namespaces, collections, shards,
 * master, metadata`; an unknown section is a 400 listing the valid ones). A key limited to
 * namespaces sees only those namespaces and their collections. Also the cluster settings,
 * `GET|PUT /_cluster/settings` (src/node/cluster-settings.ts).
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { Type, type Static } from 'typebox';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { HEALTH_LEVELS, clusterHealth, type HealthLevel } from '../../ops/cluster/cluster-health.ts';
import { STATE_SECTIONS, clusterState, parseStateSections, type StateInputs } from '../../ops/cluster/cluster-state.ts';
import { ApiError } from '../errors.ts';
import type { ObservabilityService } from '../../node/observability-service.ts';
import type { ClusterSettingsService } from '../../node/cluster-settings.ts';
import { AnyObject, CollectionParams, FlagParam, flagSet, querySchema } from '../params.ts';
import { aliasIndexOf } from '../../cluster/aliases.ts';
import type { Catalog } from '../../cluster/catalog.ts';
import { resolveTarget } from '../../cluster/names.ts';
import { DEFAULT_HEALTH_TIMEOUT_MS, parseNodesCondition, waitForHealth, type HealthWait } from '../../ops/cluster/health-wait.ts';
import { parseTimeValue } from '../../node/search-body.ts';

const HealthQuery = querySchema({
  level: Type.Optional(Type.Union([...HEALTH_LEVELS, 'indices'].map((level) => Type.Literal(level)))),
  wait_for_status: Type.Optional(Type.Union([Type.Literal('green'), Type.Literal('yellow'), Type.Literal('red')])),
  wait_for_nodes: Type.Optional(Type.String({ minLength: 1 })),
  wait_for_active_shards: Type.Optional(Type.Union([Type.Literal('all'), Type.Integer({ minimum: 0 })])),
  wait_for_no_initializing_shards: Type.Optional(FlagParam),
  wait_for_no_relocating_shards: Type.Optional(FlagParam),
  wait_for_events: Type.Optional(Type.String()),
  timeout: Type.Optional(Type.String()),
  master_timeout: Type.Optional(Type.String()),
  cluster_manager_timeout: Type.Optional(Type.String()),
  local: Type.Optional(FlagParam),
});

/** The waits a health request asks for (src/ops/cluster/health-wait.ts); a malformed one is a 400 naming it. */
function healthWaitOf(query: Static<typeof HealthQuery>): HealthWait {
  const wait: HealthWait = { timeoutMs: DEFAULT_HEALTH_TIMEOUT_MS };
  if (query.timeout !== undefined) wait.timeoutMs = parseTimeValue(query.timeout, 'timeout') ?? DEFAULT_HEALTH_TIMEOUT_MS;
  if (query.wait_for_status !== undefined) wait.status = query.wait_for_status;
  if (query.wait_for_nodes !== undefined) {
    const nodes = parseNodesCondition(query.wait_for_nodes);
    if (nodes === null) throw new ApiError('invalid_parameter', `parameter [wait_for_nodes] must be N, >=N, <=N, >N, <N, ge(N), le(N), gt(N) or lt(N), got [${query.wait_for_nodes}]`);
    wait.nodes = nodes;
  }
  if (query.wait_for_active_shards !== undefined) wait.activeShards = query.wait_for_active_shards;
  if (query.wait_for_no_initializing_shards !== undefined) wait.noInitializingShards = flagSet(query.wait_for_no_initializing_shards);
  if (query.wait_for_no_relocating_shards !== undefined) wait.noRelocatingShards = flagSet(query.wait_for_no_relocating_shards);
  return wait;
}

/** The collections a health target selects (aliases stand for theirs); a missing concrete name is reported, not refused. */
function healthSelection(catalog: Catalog, target: string): NonNullable<StateInputs['selection']> {
  const aliases = aliasIndexOf(catalog.collections);
  const resolved = resolveTarget(target, Object.keys(catalog.collections), [...aliases.keys()]);
  const collections = new Set(resolved.names.flatMap((name) => aliases.get(name)?.map((member) => member.collection) ?? [name]));
  return { collections, missing: resolved.missing.length > 0 };
}

const StateParams = Type.Object({ sections: Type.String({ minLength: 1 }) });

/** Catalog, local shard states and the caller's namespace limits. */
async function inputs(observability: ObservabilityService, request: FastifyRequest): Promise<StateInputs> {
  const scope = request.authScope;
  const hosted = new Map(observability.hostedCollections().map((collection) => [collection.meta.name, collection]));
  return {
    catalog: observability.catalog(),
    nodeId: observability.nodeId,
    coordinator: observability.coordinatorKind,
    masterId: observability.masterId(),
    connectivity: observability.connectivity(),
    localShardState: (collection, shard) => hosted.get(collection)?.shards[shard]?.state,
    remoteShardState: await observability.peerShardStates(),
    allowsNamespace: scope && !scope.unrestricted ? (namespace) => scope.allows(namespace) : undefined,
  };
}

/** What the cluster routes need: the observability service. */
export interface ClusterRouteOptions {
  observability: ObservabilityService;
  clusterSettings: ClusterSettingsService;
}

const ClusterSettingsQuery = querySchema({
  flat_settings: Type.Optional(FlagParam),
  include_defaults: Type.Optional(FlagParam),
  timeout: Type.Optional(Type.String()),
  master_timeout: Type.Optional(Type.String()),
  cluster_manager_timeout: Type.Optional(Type.String()),
  local: Type.Optional(FlagParam),
});

/** Cluster health and state routes. */
export async function clusterRoutes(instance: FastifyInstance, options: ClusterRouteOptions): Promise<void> {
  const app = instance.withTypeProvider<TypeBoxTypeProvider>();
  const { observability, clusterSettings } = options;

  app.get('/_cluster/settings', { config: { role: 'monitor' }, schema: { querystring: ClusterSettingsQuery } }, async (request) =>
    clusterSettings.view({ flat: flagSet(request.query.flat_settings), includeDefaults: flagSet(request.query.include_defaults) }),
  );
  app.put('/_cluster/settings', { config: { role: 'admin' }, schema: { querystring: ClusterSettingsQuery, body: AnyObject } }, async (request) => {
    request.authScope.requireUnrestricted('change the cluster settings');
    return clusterSettings.update(request.body, { flat: flagSet(request.query.flat_settings) });
  });

  const health = async (request: FastifyRequest, query: Static<typeof HealthQuery>, target: string | undefined) => {
    const level = (query.level === 'indices' ? 'collections' : (query.level ?? 'cluster')) as HealthLevel;
    return waitForHealth(async () => {
      const evaluated = await inputs(observability, request);
      if (target !== undefined) evaluated.selection = healthSelection(evaluated.catalog, target);
      return clusterHealth(evaluated, level);
    }, healthWaitOf(query));
  };
  app.get('/_cluster/health', { config: { role: 'monitor' }, schema: { querystring: HealthQuery } }, async (request, reply) => {
    const answer = await health(request, request.query, undefined);
    return reply.status(answer.timed_out ? 408 : 200).send(answer);
  });
  app.get(
    '/_cluster/health/:collection',
    { config: { role: 'monitor', collectionTarget: true }, schema: { params: CollectionParams, querystring: HealthQuery } },
    async (request, reply) => {
      const answer = await health(request, request.query, request.params.collection);
      return reply.status(answer.timed_out ? 408 : 200).send(answer);
    },
  );

  app.get('/_cluster/state', { config: { role: 'monitor' }, schema: { querystring: querySchema({}) } }, async (request) =>
    clusterState(await inputs(observability, request), STATE_SECTIONS),
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
      return clusterState(await inputs(observability, request), parsed.sections);
    },
  );
}
