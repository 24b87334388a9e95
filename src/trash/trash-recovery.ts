/**
 * Crash recovery of the trash. An item that is not `trashed` was interrupted; the catalog decides
 * which way it goes, because the catalog change is each operation's commit point:
 *
 * | state | the catalog holds the item's collections (or namespace) | it does not |
 * |---|---|---|
 * | `pending` | delete never committed: drop the intent, the item stays live | delete committed: close, move in, `trashed` |
 * | `moving` | (cannot happen) | finish moving in, `trashed` |
 * | `restoring` | restore committed: move every shard back, drop the item | restore never committed: back to `trashed` |
 *
 * So after any crash an item is either fully live or fully in the trash.
 */
import type { Catalog } from '../cluster/catalog.ts';
import type { TrashManifest } from './trash-manifest.ts';
import { moveItemIn, moveItemOut, type StoreContext } from './item-moves.ts';

/** How an interrupted item was resolved. */
export type RecoveryOutcome = 'unchanged' | 'rolled_back_to_live' | 'completed_to_trash' | 'completed_restore' | 'rolled_back_to_trash';

/** True when the catalog holds what the item describes (by UUID, so a new collection of the same name does not count). */
export function catalogHoldsItem(catalog: Catalog, manifest: TrashManifest): boolean {
  if (manifest.kind === 'namespace') {
    const namespace = Object.hasOwn(catalog.namespaces, manifest.name) ? catalog.namespaces[manifest.name] : undefined;
    if (namespace !== undefined && namespace.uuid === manifest.namespace.uuid) return true;
  }
  const live = new Set(Object.values(catalog.collections).map((collection) => collection.uuid));
  return manifest.collections.some((collection) => live.has(collection.uuid));
}

/** Resolves one interrupted item (see the module comment). */
export async function recoverItem(context: StoreContext, manifest: TrashManifest, catalog: Catalog): Promise<RecoveryOutcome> {
  const committedToCatalog = catalogHoldsItem(catalog, manifest);
  switch (manifest.state) {
    case 'pending':
    case 'moving':
      if (manifest.state === 'pending' && committedToCatalog) {
        await context.removeItem(manifest.itemId);
        return 'rolled_back_to_live';
      }
      await moveItemIn(context, manifest, new Map());
      return 'completed_to_trash';
    case 'restoring':
      if (committedToCatalog) {
        await moveItemOut(context, manifest);
        return 'completed_restore';
      }
      await context.save({ ...manifest, state: 'trashed' });
      return 'rolled_back_to_trash';
    case 'trashed':
      return 'unchanged';
  }
}
