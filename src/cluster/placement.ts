/**
 * Shard placement: which registered nodes hold each shard copy. Primaries go to the least loaded
 * node (fewest shard copies, ties by node id); replicas go to other nodes, never beside their
 * own primary or another copy of the same shard. Copies that find no node stay unassigned.
 */
import type { CollectionMeta, ShardPlacement } from './catalog.ts';

/** Number of shard copies (primary and replica) each node holds across the given collections. */
export function nodeLoad(collections: Iterable<CollectionMeta>, nodeIds: readonly string[]): Map<string, number> {
  const load = new Map<string, number>(nodeIds.map((id) => [id, 0]));
  for (const collection of collections) {
    for (const placement of collection.placements) {
      for (const nodeId of [placement.primary, ...placement.replicas]) {
        if (nodeId !== null && load.has(nodeId)) load.set(nodeId, (load.get(nodeId) ?? 0) + 1);
      }
    }
  }
  return load;
}

/** Default of `cluster.max_shards_per_node` (Elasticsearch's default too). */
export const DEFAULT_MAX_SHARDS_PER_NODE = 1000;

/** A node that would host more copies than the limit after a change, with its figures. */
export interface ShardLimitExcess {
  nodeId: string;
  /** Copies the node hosts before the change. */
  hosted: number;
  /** Copies the change would add to it. */
  added: number;
}

/**
 * The first node (by id) that `added` copies would take past `maxShardsPerNode` copies, or null.
 * Copies are counted as `nodeLoad` counts them: every primary and replica placed on a node.
 */
export function shardLimitExcess(
  before: ReadonlyMap<string, number>,
  added: readonly ShardPlacement[],
  maxShardsPerNode: number,
): ShardLimitExcess | null {
  const addedPerNode = new Map<string, number>();
  for (const placement of added) {
    for (const nodeId of [placement.primary, ...placement.replicas]) {
      if (nodeId !== null) addedPerNode.set(nodeId, (addedPerNode.get(nodeId) ?? 0) + 1);
    }
  }
  for (const nodeId of [...addedPerNode.keys()].sort()) {
    const hosted = before.get(nodeId) ?? 0;
    const count = addedPerNode.get(nodeId)!;
    if (hosted + count > maxShardsPerNode) return { nodeId, hosted, added: count };
  }
  return null;
}

/** The node with the fewest copies that is not in `exclude` (ties: lowest id), or null. */
export function leastLoaded(load: Map<string, number>, exclude: ReadonlySet<string>): string | null {
  let best: string | null = null;
  let bestLoad = Infinity;
  for (const [nodeId, count] of load) {
    if (exclude.has(nodeId)) continue;
    if (count < bestLoad || (count === bestLoad && best !== null && nodeId < best)) {
      best = nodeId;
      bestLoad = count;
    }
  }
  return best;
}

/** Placements for a new collection's shards; `load` is updated with the new copies. */
export function assignShards(
  numberOfShards: number,
  numberOfReplicas: number,
  load: Map<string, number>,
): ShardPlacement[] {
  const placements: ShardPlacement[] = [];
  for (let shard = 0; shard < numberOfShards; shard++) {
    const used = new Set<string>();
    const primary = leastLoaded(load, used);
    if (primary !== null) {
      used.add(primary);
      load.set(primary, (load.get(primary) ?? 0) + 1);
    }
    const replicas: string[] = [];
    for (let copy = 0; copy < numberOfReplicas; copy++) {
      const replica = primary === null ? null : leastLoaded(load, used);
      if (replica === null) break;
      used.add(replica);
      replicas.push(replica);
      load.set(replica, (load.get(replica) ?? 0) + 1);
    }
    placements.push({ shard, primary, replicas });
  }
  return placements;
}

/**
 * Gives every primary that is unassigned or placed on a node outside `liveNodeIds` a live node,
 * and drops replicas on unknown nodes. Returns the new placements, or null when nothing changed.
 * Used by the embedded coordinator, whose single node owns all data under its `path.data`.
 */
export function reassignOrphanedShards(
  collection: CollectionMeta,
  load: Map<string, number>,
): ShardPlacement[] | null {
  let changed = false;
  const placements = collection.placements.map((placement) => {
    const replicas = placement.replicas.filter((nodeId) => load.has(nodeId));
    let primary = placement.primary;
    if (primary === null || !load.has(primary)) {
      primary = leastLoaded(load, new Set(replicas));
      if (primary !== null) load.set(primary, (load.get(primary) ?? 0) + 1);
    }
    if (primary !== placement.primary || replicas.length !== placement.replicas.length) changed = true;
    const moved: ShardPlacement = { ...placement, primary, replicas };
    // A primary moved to another node starts a new in-sync set of its own.
    if (primary !== placement.primary) delete moved.inSync;
    else if (moved.inSync) moved.inSync = moved.inSync.filter((nodeId) => nodeId === primary || replicas.includes(nodeId));
    return moved;
  });
  return changed ? placements : null;
}
