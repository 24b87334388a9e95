/**
 * The master's allocation: gives registered nodes the shard copies nobody holds yet, and nothing
 * else. A shard with no copy at all (created while no node was registered) gets a primary on the
 * node with the fewest primaries (then the fewest copies, then the smallest id), and replicas on
 * the least loaded other nodes; a shard whose primary is on a registered node gets its missing
 * replicas on nodes holding no copy of it, and loses replicas past `number_of_replicas` (those
 * outside the in-sync set first). An assigned primary never moves, and a shard whose primary node
 * is gone is left alone: promoting a replica is failover's decision (in-sync-rules.ts).
 */
import { inSyncOf, type Catalog, type CollectionMeta, type ShardPlacement } from '../catalog.ts';
import { leastLoaded, nodeLoad } from '../placement.ts';

function primaryLoad(collections: CollectionMeta[], load: Map<string, number>): Map<string, number> {
  const primaries = new Map<string, number>([...load.keys()].map((id) => [id, 0]));
  for (const collection of collections) {
    for (const { primary } of collection.placements) {
      if (primary !== null && primaries.has(primary)) primaries.set(primary, primaries.get(primary)! + 1);
    }
  }
  return primaries;
}

function fewestPrimaries(primaries: Map<string, number>, load: Map<string, number>): string | null {
  let best: string | null = null;
  for (const nodeId of primaries.keys()) {
    if (best === null) {
      best = nodeId;
      continue;
    }
    const [count, copies, bestCount, bestCopies] = [primaries.get(nodeId)!, load.get(nodeId)!, primaries.get(best)!, load.get(best)!];
    if (count < bestCount || (count === bestCount && (copies < bestCopies || (copies === bestCopies && nodeId < best)))) best = nodeId;
  }
  return best;
}


/** The placement with `wanted` replicas, dropping those outside the in-sync set first (fewer `number_of_replicas`). */
function withoutExtraReplicas(placement: ShardPlacement, wanted: number): ShardPlacement {
  const inSync = inSyncOf(placement);
  const kept = [...placement.replicas].sort((left, right) => Number(inSync.includes(right)) - Number(inSync.includes(left))).slice(0, wanted);
  const replicas = placement.replicas.filter((nodeId) => kept.includes(nodeId));
  return { ...placement, replicas, inSync: inSync.filter((nodeId) => nodeId === placement.primary || replicas.includes(nodeId)) };
}

/** Assigns the draft's unassigned shard copies to its registered nodes; true when anything changed. */
export function allocateUnassigned(draft: Catalog): boolean {
  const nodeIds = Object.keys(draft.nodes).sort();
  if (nodeIds.length === 0) return false;
  const collections = Object.keys(draft.collections)
    .sort()
    .map((name) => draft.collections[name]);
  const load = nodeLoad(collections, nodeIds);
  const primaries = primaryLoad(collections, load);
  const addCopy = (counts: Map<string, number>, nodeId: string): void => void counts.set(nodeId, counts.get(nodeId)! + 1);
  let anyChanged = false;
  for (const collection of collections) {
    const wanted = collection.settings.number_of_replicas;
    let changed = false;
    collection.placements = collection.placements.map((placement) => {
      let primary = placement.primary;
      if (primary === null) {
        if (placement.replicas.length > 0) return placement;
        primary = fewestPrimaries(primaries, load)!;
        addCopy(primaries, primary);
        addCopy(load, primary);
        changed = true;
      } else if (!load.has(primary)) {
        return placement;
      }
      if (placement.replicas.length > wanted) {
        changed = true;
        return withoutExtraReplicas(placement, wanted);
      }
      const holders = new Set([primary, ...placement.replicas]);
      const replicas = [...placement.replicas];
      while (replicas.length < wanted) {
        const nodeId = leastLoaded(load, holders);
        if (nodeId === null) break;
        holders.add(nodeId);
        replicas.push(nodeId);
        addCopy(load, nodeId);
        changed = true;
      }
      return primary === placement.primary && replicas.length === placement.replicas.length ? placement : { ...placement, primary, replicas };
    });
    if (changed) {
      collection.version += 1;
      anyChanged = true;
    }
  }
  return anyChanged;
}
