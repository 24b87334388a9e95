/**
 * The two directions an item's shards travel: into the trash once a delete committed (close,
 * snapshot, rename), and back out once a restore committed. Both are idempotent, so the store's
 * normal path and crash recovery run the same code.
 */
import type { DepartedCollection } from '../cluster/local-shards.ts';
import { exists, liveShardDir, moveDirectory, snapshotShard, trashedShardDir } from './shard-moves.ts';
import type { TrashManifest } from './trash-manifest.ts';
import type { TrashStoreOptions } from './trash-store.ts';

/** What the move and recovery functions may do with the store. */
export interface StoreContext {
  options: TrashStoreOptions;
  save(manifest: TrashManifest): Promise<void>;
  removeItem(itemId: string): Promise<void>;
}

/**
 * Closes and snapshots the item's shards still under `shards/` (state `pending` → `moving`),
 * renames them into the item, and marks it `trashed`. Safe to run again after a crash at any point.
 */
export async function moveItemIn(
  context: StoreContext,
  manifest: TrashManifest,
  open: ReadonlyMap<string, DepartedCollection['openShards'][number]>,
): Promise<void> {
  const { options } = context;
  options.faults.crashAt('trash.delete.after_commit');
  let current = manifest;
  if (current.state === 'pending') {
    const shards = [...current.shards];
    for (const collection of current.collections) {
      for (let shardId = 0; shardId < collection.shards.length; shardId++) {
        const uuid = collection.shards[shardId].uuid;
        if (shards.some((shard) => shard.uuid === uuid) || !(await exists(liveShardDir(options, uuid)))) continue;
        const logger = options.logger.child({ collection: collection.name, shard: shardId });
        shards.push(await snapshotShard(options, { collection, shardId, open: open.get(uuid) ?? null, settings: options.engineSettings, logger }));
      }
    }
    current = { ...current, state: 'moving', shards };
    await context.save(current);
  }
  for (const shard of current.shards) {
    const from = liveShardDir(options, shard.uuid);
    if (!(await exists(from))) continue;
    await moveDirectory(from, trashedShardDir(options, current.itemId, shard.uuid));
    options.faults.crashAt('trash.delete.mid_move');
  }
  await context.save({ ...current, state: 'trashed' });
  options.logger.info({ itemId: current.itemId, kind: current.kind, name: current.name, shards: current.shards.length }, 'moved to the trash');
}

/** Moves every shard of a `restoring` item back under `shards/` and removes the item. */
export async function moveItemOut(context: StoreContext, manifest: TrashManifest): Promise<void> {
  const { options } = context;
  for (const shard of manifest.shards) {
    const from = trashedShardDir(options, manifest.itemId, shard.uuid);
    if (await exists(from)) await moveDirectory(from, liveShardDir(options, shard.uuid));
  }
  await context.removeItem(manifest.itemId);
  options.logger.info({ itemId: manifest.itemId, kind: manifest.kind, name: manifest.name }, 'restored from the trash');
}
