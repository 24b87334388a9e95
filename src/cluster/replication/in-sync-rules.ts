/**
 * Catalog changes of replication, applied to a draft like the rules of catalog-rules.ts: a copy
 * joins the in-sync set, copies leave it, and the master promotes an in-sync replica when a
 * primary's node has left. The first two are asked for by the primary and compared on its term,
 * so a deposed primary can neither add nor drop copies; a refusal is `catalog_conflict`.
 */
import { inSyncOf, primaryTermOf, type Catalog, type CollectionMeta, type ShardPlacement } from '../catalog.ts';
import { CatalogError } from '../catalog-error.ts';

/** A shard as replication names it: the collection by name and UUID (a name can be reused), and the shard number. */
export interface ShardAddress {
  collection: string;
  collectionUuid: string;
  shard: number;
}

function placementOf(draft: Catalog, address: ShardAddress, term: number): { collection: CollectionMeta; placement: ShardPlacement } {
  const collection = Object.hasOwn(draft.collections, address.collection) ? draft.collections[address.collection] : undefined;
  if (!collection || collection.uuid !== address.collectionUuid) {
    throw new CatalogError('catalog_conflict', `collection [${address.collection}] is no longer in the catalog`);
  }
  const placement = collection.placements[address.shard];
  if (!placement) throw new CatalogError('catalog_conflict', `[${address.collection}][${address.shard}] has no placement`);
  if (primaryTermOf(placement) !== term) {
    throw new CatalogError(
      'catalog_conflict',
      `[${address.collection}][${address.shard}] primary term is ${primaryTermOf(placement)}, the request carries ${term}`,
    );
  }
  return { collection, placement };
}

/** Adds the copy on `nodeId` to the in-sync set; it must still be a replica of the shard under `term`. */
export function markInSyncIn(draft: Catalog, address: ShardAddress, nodeId: string, term: number): CollectionMeta {
  const { collection, placement } = placementOf(draft, address, term);
  if (!placement.replicas.includes(nodeId)) {
    throw new CatalogError('catalog_conflict', `[${address.collection}][${address.shard}] has no replica on node [${nodeId}]`);
  }
  const inSync = inSyncOf(placement);
  if (inSync.includes(nodeId)) return collection;
  placement.inSync = [...inSync, nodeId];
  collection.version += 1;
  return collection;
}

/** Removes the copies on `nodeIds` from the in-sync set (never the primary's). */
export function markStaleIn(draft: Catalog, address: ShardAddress, nodeIds: readonly string[], term: number): CollectionMeta {
  const { collection, placement } = placementOf(draft, address, term);
  const inSync = inSyncOf(placement);
  const remaining = inSync.filter((nodeId) => nodeId === placement.primary || !nodeIds.includes(nodeId));
  if (remaining.length === inSync.length) return collection;
  placement.inSync = remaining;
  collection.version += 1;
  return collection;
}

/**
 * The master's failover: every shard whose primary's node is gone (`gone`: not registered, and
 * known to have left rather than not yet back after a cluster restart) gets the first (by
 * id) registered in-sync replica as primary, under the next term; only it is in sync then, so the
 * other replicas recover from it before they count again (this is how they are resynced: a copy
 * that holds writes the new primary never acknowledged is rebuilt). Replicas on nodes that are
 * gone leave the placement and the in-sync set, so allocation replaces them. A shard
 * with no registered in-sync copy keeps its primary: promoting a copy that may lack acknowledged
 * writes would lose them; it stays red until that node returns. True when anything changed.
 */
export function promoteReplicas(draft: Catalog, gone: (nodeId: string) => boolean): boolean {
  const registered = (nodeId: string): boolean => Object.hasOwn(draft.nodes, nodeId);
  const kept = (nodeId: string): boolean => registered(nodeId) || !gone(nodeId);
  let anyChanged = false;
  for (const collection of Object.values(draft.collections)) {
    let changed = false;
    collection.placements = collection.placements.map((placement) => {
      if (placement.primary === null) return placement;
      const inSync = inSyncOf(placement);
      if (!kept(placement.primary)) {
        const candidate = inSync.filter((nodeId) => nodeId !== placement.primary && registered(nodeId) && placement.replicas.includes(nodeId)).sort()[0];
        if (candidate === undefined) return placement;
        changed = true;
        return {
          shard: placement.shard,
          primary: candidate,
          replicas: placement.replicas.filter((nodeId) => nodeId !== candidate && kept(nodeId)),
          primaryTerm: primaryTermOf(placement) + 1,
          inSync: [candidate],
        };
      }
      const replicas = placement.replicas.filter(kept);
      if (replicas.length === placement.replicas.length) return placement;
      changed = true;
      return { ...placement, replicas, inSync: inSync.filter((nodeId) => nodeId === placement.primary || replicas.includes(nodeId)) };
    });
    if (changed) {
      collection.version += 1;
      anyChanged = true;
    }
  }
  return anyChanged;
}
