/**
 * `GET /_cluster/health`: status and shard counts as Elasticsearch reports them, from the catalog
 * and the shard states this node sees. A shard is red when its primary copy is not started
 * (unassigned, still opening, failed to open, or on a node that left the registry), yellow when a
 * replica copy is missing, else green; collections, namespaces and the cluster take the worst
 * status below them. `level` adds nested detail: namespaces, then their collections, then their
 * shards. `coordinator` says whether this node reaches the catalog's store (etcd): a node cut off
 * from it answers from the last catalog it saw and says so there.
 */
import type { Catalog, CollectionMeta } from '../../cluster/catalog.ts';
import type { CoordinatorConnectivity } from '../../cluster/coordinator.ts';

/** Health status, best to worst. */
export type HealthStatus = 'green' | 'yellow' | 'red';

/** How deep the response goes. */
export type HealthLevel = 'cluster' | 'namespaces' | 'collections' | 'shards';

/** Levels, shallowest first. */
export const HEALTH_LEVELS: readonly HealthLevel[] = ['cluster', 'namespaces', 'collections', 'shards'];

/** State of one shard copy. */
export type CopyState = 'started' | 'initializing' | 'unassigned';

/** State of a shard copy as the node hosting it reports it. */
export type LocalCopyState = 'opening' | 'recovering' | 'started' | 'failed';

/** Shard counts shared by every level. */
export interface ShardCounts {
  active_primary_shards: number;
  active_shards: number;
  relocating_shards: number;
  initializing_shards: number;
  unassigned_shards: number;
}

/** One shard at `level=shards`. */
export interface ShardHealth {
  status: HealthStatus;
  primary_active: boolean;
  active_shards: number;
  relocating_shards: number;
  initializing_shards: number;
  unassigned_shards: number;
}

/** One collection at `level=collections` and deeper. */
export interface CollectionHealth extends ShardCounts {
  status: HealthStatus;
  number_of_shards: number;
  number_of_replicas: number;
  shards?: Record<string, ShardHealth>;
}

/** One namespace at `level=namespaces` and deeper. */
export interface NamespaceHealth extends ShardCounts {
  status: HealthStatus;
  number_of_collections: number;
  collections?: Record<string, CollectionHealth>;
}

/** The response body. */
export interface ClusterHealth extends ShardCounts {
  cluster_name: string;
  status: HealthStatus;
  timed_out: false;
  /** Whether a master is known: the catalog's store is reachable (Elasticsearch's name, and OpenSearch's `discovered_cluster_manager`). */
  discovered_master: boolean;
  discovered_cluster_manager: boolean;
  number_of_nodes: number;
  number_of_data_nodes: number;
  number_of_namespaces: number;
  number_of_collections: number;
  delayed_unassigned_shards: number;
  number_of_pending_tasks: number;
  number_of_in_flight_fetch: number;
  task_max_waiting_in_queue_millis: number;
  active_shards_percent_as_number: number;
  /** Whether this node reaches the catalog's store (etcd) now; while it does not, the rest is its last known view. */
  coordinator: { available: boolean; reason?: string; unavailable_since?: string };
  namespaces?: Record<string, NamespaceHealth>;
  /** At `level=collections` (ES `indices`) and deeper: every collection's health by name, flat, as Elasticsearch shows `indices`. */
  indices?: Record<string, CollectionHealth>;
}

/** What health and state need to know beyond the catalog. */
export interface HealthInputs {
  catalog: Catalog;
  /** This node's id. */
  nodeId: string;
  /** State of a shard copy hosted here (`opening`, `recovering` → initializing); undefined when it is not here. */
  localShardState(collection: string, shard: number): LocalCopyState | undefined;
  /**
   * State of copy `uuid` as node `nodeId` (another node) reported it; undefined when that node did
   * not report it or did not answer. Absent: a copy on a registered node counts as started.
   */
  remoteShardState?: (nodeId: string, uuid: string) => LocalCopyState | undefined;
  /** Limits namespaces (a key scoped to namespaces sees only those); all when absent. */
  allowsNamespace?: (namespace: string) => boolean;
  /** Whether the coordinator reaches its store; available when absent. */
  connectivity?: CoordinatorConnectivity;
  /**
   * `GET /_cluster/health/{target}`: only these collections count; `missing` (a concrete name of
   * the target that does not exist) makes the status red, as Elasticsearch answers. All when absent.
   */
  selection?: { collections: ReadonlySet<string>; missing: boolean };
}

const RANK: Record<HealthStatus, number> = { green: 0, yellow: 1, red: 2 };

function worst(left: HealthStatus, right: HealthStatus): HealthStatus {
  return RANK[right] > RANK[left] ? right : left;
}

function emptyCounts(): ShardCounts {
  return { active_primary_shards: 0, active_shards: 0, relocating_shards: 0, initializing_shards: 0, unassigned_shards: 0 };
}

function addCounts(target: ShardCounts, source: ShardCounts): void {
  target.active_primary_shards += source.active_primary_shards;
  target.active_shards += source.active_shards;
  target.initializing_shards += source.initializing_shards;
  target.unassigned_shards += source.unassigned_shards;
}

/** State of a copy placed on `nodeId` (null: not placed anywhere). */
export function copyState(inputs: HealthInputs, collection: string, shard: number, nodeId: string | null): CopyState {
  if (nodeId === null) return 'unassigned';
  if (nodeId === inputs.nodeId) {
    const local = inputs.localShardState(collection, shard);
    return local === 'started' ? 'started' : local === 'opening' || local === 'recovering' ? 'initializing' : 'unassigned';
  }
  if (!Object.hasOwn(inputs.catalog.nodes, nodeId)) return 'unassigned';
  if (inputs.remoteShardState === undefined) return 'started';
  const uuid = Object.hasOwn(inputs.catalog.collections, collection) ? inputs.catalog.collections[collection].shards[shard]?.uuid : undefined;
  const remote = uuid === undefined ? undefined : inputs.remoteShardState(nodeId, uuid);
  return remote === 'started' ? 'started' : remote === 'opening' || remote === 'recovering' ? 'initializing' : 'unassigned';
}

function collectionHealth(inputs: HealthInputs, meta: CollectionMeta, withShards: boolean): CollectionHealth {
  const health: CollectionHealth = {
    status: 'green',
    number_of_shards: meta.settings.number_of_shards,
    number_of_replicas: meta.settings.number_of_replicas,
    ...emptyCounts(),
  };
  const shards: Record<string, ShardHealth> = {};
  for (const placement of meta.placements) {
    const primary = copyState(inputs, meta.name, placement.shard, placement.primary);
    const replicas: CopyState[] = placement.replicas.map((node) => copyState(inputs, meta.name, placement.shard, node));
    while (replicas.length < meta.settings.number_of_replicas) replicas.push('unassigned');
    const copies = [primary, ...replicas];
    const shard: ShardHealth = {
      status: primary !== 'started' ? 'red' : replicas.every((state) => state === 'started') ? 'green' : 'yellow',
      primary_active: primary === 'started',
      active_shards: copies.filter((state) => state === 'started').length,
      relocating_shards: 0,
      initializing_shards: copies.filter((state) => state === 'initializing').length,
      unassigned_shards: copies.filter((state) => state === 'unassigned').length,
    };
    shards[String(placement.shard)] = shard;
    health.status = worst(health.status, shard.status);
    health.active_primary_shards += shard.primary_active ? 1 : 0;
    health.active_shards += shard.active_shards;
    health.initializing_shards += shard.initializing_shards;
    health.unassigned_shards += shard.unassigned_shards;
  }
  if (withShards) health.shards = shards;
  return health;
}

function coordinatorHealth(connectivity: CoordinatorConnectivity): ClusterHealth['coordinator'] {
  if (connectivity.available) return { available: true };
  return { available: false, reason: connectivity.reason, unavailable_since: new Date(connectivity.since).toISOString() };
}

/** Computes cluster health down to `level`. */
export function clusterHealth(inputs: HealthInputs, level: HealthLevel): ClusterHealth {
  const { catalog } = inputs;
  const depth = HEALTH_LEVELS.indexOf(level);
  const allowed = inputs.allowsNamespace ?? (() => true);
  const namespaces: Record<string, NamespaceHealth> = {};
  for (const name of Object.keys(catalog.namespaces).sort()) {
    if (allowed(name)) namespaces[name] = { status: 'green', number_of_collections: 0, ...emptyCounts(), ...(depth >= 2 ? { collections: {} } : {}) };
  }
  const totals = emptyCounts();
  const indices: Record<string, CollectionHealth> = {};
  let status: HealthStatus = 'green';
  let collectionCount = 0;
  for (const name of Object.keys(catalog.collections).sort()) {
    const meta = catalog.collections[name];
    const namespace = namespaces[meta.namespace];
    if (namespace === undefined || (inputs.selection && !inputs.selection.collections.has(name))) continue;
    const health = collectionHealth(inputs, meta, depth >= 3);
    collectionCount++;
    namespace.number_of_collections++;
    namespace.status = worst(namespace.status, health.status);
    addCounts(namespace, health);
    if (namespace.collections) namespace.collections[name] = health;
    if (depth >= 2) indices[name] = health;
    addCounts(totals, health);
    status = worst(status, health.status);
  }
  if (inputs.selection?.missing) status = 'red';
  const copies = totals.active_shards + totals.initializing_shards + totals.unassigned_shards;
  const nodes = Object.values(catalog.nodes);
  const connectivity = inputs.connectivity ?? { available: true };
  const response: ClusterHealth = {
    cluster_name: catalog.clusterName,
    status,
    timed_out: false,
    discovered_master: connectivity.available,
    discovered_cluster_manager: connectivity.available,
    number_of_nodes: nodes.length,
    number_of_data_nodes: nodes.filter((node) => node.roles.includes('data')).length,
    number_of_namespaces: Object.keys(namespaces).length,
    number_of_collections: collectionCount,
    ...totals,
    delayed_unassigned_shards: 0,
    number_of_pending_tasks: 0,
    number_of_in_flight_fetch: 0,
    task_max_waiting_in_queue_millis: 0,
    active_shards_percent_as_number: copies === 0 ? 100 : Math.round((totals.active_shards / copies) * 10_000) / 100,
    coordinator: coordinatorHealth(connectivity),
  };
  if (depth >= 1) response.namespaces = namespaces;
  if (depth >= 2) response.indices = indices;
  return response;
}
