/**
 * Moving shard directories between `<path.data>/shards/` and a trash item, and building the
 * delete-time snapshot of a shard. A move is one `rename` (never a copy) followed by fsyncs of
 * both parent directories, so after a crash a shard directory is in exactly one of the two places.
 */
import { mkdir, rename, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { Logger } from 'pino';
import type { CollectionMeta } from '../cluster/catalog.ts';
import { fsyncDirectory } from '../engine/directory/atomic-file.ts';
import type { ShardHandle } from '../cluster/shard-handle.ts';
import type { EngineSettings } from '../engine/shard/shard.ts';
import { closeForTrash, reopenAndClose, type ClosedShardFigures } from './shard-close.ts';
import { inventoryShard } from '../engine/directory/shard-files.ts';
import type { TrashShardSnapshot } from './trash-manifest.ts';

/** Where shard data lives under `path.data`. */
export interface DataLayout {
  dataPath: string;
}

/** `<path.data>/shards/<uuid>`: a live shard copy. */
export function liveShardDir(layout: DataLayout, uuid: string): string {
  return join(layout.dataPath, 'shards', uuid);
}

/** `<path.data>/trash`: every item of this node. */
export function trashRoot(layout: DataLayout): string {
  return join(layout.dataPath, 'trash');
}

/** `<path.data>/trash/<item_id>`. */
export function itemDir(layout: DataLayout, itemId: string): string {
  return join(trashRoot(layout), itemId);
}

/** `<path.data>/trash/<item_id>/shards/<uuid>`: a trashed shard copy. */
export function trashedShardDir(layout: DataLayout, itemId: string, uuid: string): string {
  return join(itemDir(layout, itemId), 'shards', uuid);
}

/** True when `path` exists. */
export async function exists(path: string): Promise<boolean> {
  try {
    await stat(path);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw error;
  }
}

/** Renames a directory into another parent and makes both directory entries durable. */
export async function moveDirectory(from: string, to: string): Promise<void> {
  await mkdir(dirname(to), { recursive: true });
  await rename(from, to);
  await fsyncDirectory(dirname(to));
  await fsyncDirectory(dirname(from));
}

/** What `snapshotShard` needs to close a shard. */
export interface SnapshotSource {
  collection: CollectionMeta;
  shardId: number;
  /** The open engine shard, or null when the shard is closed (or never opened) on this node. */
  open: ShardHandle | null;
  settings: EngineSettings;
  logger: Logger;
}

/**
 * Closes the shard (its directory still under `shards/`; a shard a crash left open is opened
 * and closed to recover its WAL first) and records its snapshot. A shard that cannot be opened
 * keeps its files as they are; its document count is then unknown.
 */
export async function snapshotShard(layout: DataLayout, source: SnapshotSource): Promise<TrashShardSnapshot> {
  const { collection, shardId } = source;
  const uuid = collection.shards[shardId].uuid;
  const dir = liveShardDir(layout, uuid);
  let closed: ClosedShardFigures | null = null;
  try {
    closed = source.open
      ? await closeForTrash(source.open)
      : await reopenAndClose({ dir, uuid, mapping: collection.mapping, settings: source.settings, logger: source.logger });
  } catch (error) {
    source.logger.error({ err: error, collection: collection.name, shard: shardId, uuid }, 'could not open the shard; it goes to the trash as it is');
  }
  const inventory = await inventoryShard(dir).catch(() => ({ files: [], segments: 0, bytes: 0 }));
  return {
    collection: collection.name,
    collectionUuid: collection.uuid,
    shard: shardId,
    uuid,
    documents: closed?.documents ?? null,
    deletedDocuments: closed?.deletedDocuments ?? null,
    seqNo: closed?.seqNo ?? null,
    segments: inventory.segments,
    bytes: inventory.bytes,
    files: inventory.files,
  };
}
