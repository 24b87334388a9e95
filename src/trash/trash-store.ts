/**
 * One node's trash: `<path.data>/trash/<item_id>/` holding `manifest.json` and the moved shard
 * directories (`shards/<shard uuid>/`). The store keeps every manifest in memory, runs all its
 * changes one at a time, and implements the node's half of each trash operation:
 *
 * - delete: `prepareDelete` writes the intent (`pending`); once the catalog change is durable,
 *   LocalShards hands the departing shards to `retire`, which closes them, records their snapshots
 *   (`moving`), renames their directories into the item and marks it `trashed`;
 * - restore: `prepareRestore` marks the item `restoring`; once the catalog holds the collections
 *   again, LocalShards calls `reclaim` before opening each shard, which renames its directory
 *   back; `finishRestore` moves anything left and removes the item;
 * - purge: the item directory is renamed to `.purging-<item_id>` (the commit point), then removed.
 *
 * `recover` (at start, before shards open) finishes or undoes whatever a crash interrupted, by
 * comparing each unfinished item with the catalog, the single source of truth: see trash-recovery.ts.
 */
import { mkdir, readdir, rename, rm, rmdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from 'pino';
import type { Catalog } from '../cluster/catalog.ts';
import { fsyncDirectory, TEMP_SUFFIX } from '../engine/directory/atomic-file.ts';
import type { EngineSettings } from '../engine/shard/shard.ts';
import type { DepartedCollection, ShardCustodian } from '../cluster/local-shards.ts';
import { verifyShard, type ShardCheck } from '../engine/directory/shard-verify.ts';
import { exists, itemDir, liveShardDir, moveDirectory, snapshotShard, trashedShardDir, trashRoot } from './shard-moves.ts';
import { TrashError, trashItemNotFound } from './trash-error.ts';
import type { TrashFaults } from './trash-faults.ts';
import { MANIFEST_FILE, readTrashManifest, writeTrashManifest, TRASH_FORMAT, TRASH_FORMAT_VERSION, type TrashManifest } from './trash-manifest.ts';
import { moveItemIn, moveItemOut, type StoreContext } from './item-moves.ts';
import { recoverItem } from './trash-recovery.ts';

/** Prefix of an item directory whose purge has committed; such a directory is always removed. */
const PURGING_PREFIX = '.purging-';

/** What `prepareDelete` records: the manifest minus what the node fills in. */
export type TrashIntent = Omit<TrashManifest, 'format' | 'version' | 'nodeId' | 'state' | 'shards'>;

/** An item directory whose manifest cannot be used (it can still be purged). */
export interface UnreadableItem {
  itemId: string;
  reason: string;
}

/** What one node freed when it purged an item. */
export interface PurgedItem {
  itemId: string;
  shards: number;
  bytes: number;
}

/** Options of `TrashStore.open`. */
export interface TrashStoreOptions {
  dataPath: string;
  nodeId: string;
  /** Engine tunables for shards the store must open to recover their WAL (after a crash). */
  engineSettings: EngineSettings;
  logger: Logger;
  faults: TrashFaults;
}

/** See the module comment. */
export class TrashStore implements ShardCustodian {
  private readonly manifests = new Map<string, TrashManifest>();
  private readonly unreadable = new Map<string, string>();
  private queue: Promise<unknown> = Promise.resolve();

  private constructor(private readonly options: TrashStoreOptions) {}

  /** Opens the trash of `path.data`: finishes interrupted purges and loads every manifest. */
  static async open(options: TrashStoreOptions): Promise<TrashStore> {
    const store = new TrashStore(options);
    const root = trashRoot(options);
    await mkdir(root, { recursive: true });
    for (const entry of (await readdir(root)).sort()) {
      const dir = join(root, entry);
      if (entry.startsWith(PURGING_PREFIX)) {
        await rm(dir, { recursive: true, force: true });
        continue;
      }
      try {
        const manifest = await readTrashManifest(dir, entry);
        if (manifest !== null) store.manifests.set(entry, manifest);
        else if ((await readdir(dir)).length === 0) await rm(dir, { recursive: true, force: true });
        else store.unreadable.set(entry, 'the item directory has no manifest');
      } catch (error) {
        store.unreadable.set(entry, (error as Error).message);
      }
    }
    for (const [itemId, reason] of store.unreadable) options.logger.error({ itemId, reason }, 'trash item is unreadable');
    return store;
  }

  /** Finishes or undoes operations a crash interrupted, judged against the catalog (call before shards open). */
  recover(catalog: Catalog): Promise<void> {
    return this.exclusive(async () => {
      for (const manifest of [...this.manifests.values()]) {
        if (manifest.state === 'trashed') continue;
        const outcome = await recoverItem(this.context(), manifest, catalog);
        this.options.logger.warn({ itemId: manifest.itemId, state: manifest.state, outcome }, 'recovered an interrupted trash operation');
      }
    });
  }

  /** Every readable item of this node. */
  items(): TrashManifest[] {
    return [...this.manifests.values()];
  }

  /** Item directories whose manifest cannot be read. */
  unreadableItems(): UnreadableItem[] {
    return [...this.unreadable].map(([itemId, reason]) => ({ itemId, reason }));
  }

  /** Delete, step 1: records the intent to move the item's shards here (state `pending`). */
  prepareDelete(intent: TrashIntent): Promise<void> {
    return this.exclusive(async () => {
      if (this.manifests.has(intent.itemId) || this.unreadable.has(intent.itemId)) {
        throw new TrashError('trash_item_busy', `trash item [${intent.itemId}] already exists`);
      }
      const manifest: TrashManifest = {
        format: TRASH_FORMAT,
        version: TRASH_FORMAT_VERSION,
        ...structuredClone(intent),
        nodeId: this.options.nodeId,
        state: 'pending',
        shards: [],
      };
      await this.createItem(manifest.itemId, async () => {
        this.options.faults.failAt('trash.delete.fail_intent');
        await fsyncDirectory(trashRoot(this.options));
        await this.save(manifest);
      });
    });
  }

  /** Delete failed before the catalog changed: forgets the intent. */
  abortDelete(itemId: string): Promise<void> {
    return this.exclusive(async () => {
      const manifest = this.manifests.get(itemId);
      if (manifest?.state !== 'pending') return;
      await this.removeItem(itemId);
    });
  }

  /** Delete, step 2 (from LocalShards, once the catalog change is durable): see the module comment. */
  retire(departed: DepartedCollection[]): Promise<void> {
    return this.exclusive(async () => {
      const context = this.context();
      const kept: DepartedCollection[] = [];
      for (const collection of departed) {
        const holdsData = collection.openShards.some((shard) => shard !== null) ||
          (await Promise.all(collection.meta.shards.map((shard) => exists(liveShardDir(this.options, shard.uuid))))).includes(true);
        const manifest = this.itemFor(collection) ?? (holdsData ? await this.adoptOrphan(collection) : undefined);
        if (!manifest) continue;
        kept.push(collection);
        const index = manifest.collections.findIndex((known) => known.uuid === collection.meta.uuid);
        // The last applied metadata wins over the intent's copy (a mapping may have grown since).
        if (index >= 0) manifest.collections[index] = structuredClone(collection.meta);
        else manifest.collections.push(structuredClone(collection.meta));
      }
      const items = new Set(kept.map((collection) => this.itemFor(collection)!));
      for (const manifest of items) {
        const open = new Map<string, DepartedCollection['openShards'][number]>();
        for (const collection of kept) {
          collection.meta.shards.forEach((shard, shardId) => open.set(shard.uuid, collection.openShards[shardId] ?? null));
        }
        await moveItemIn(context, manifest, open);
      }
    });
  }

  /**
   * Delete, last step (once this node applied the catalog change): completes the item if `retire`
   * had nothing to hand over, as for an empty namespace or a collection with no data here.
   */
  finishDelete(itemId: string): Promise<void> {
    return this.exclusive(async () => {
      const manifest = this.manifests.get(itemId);
      if (manifest?.state === 'pending' || manifest?.state === 'moving') await moveItemIn(this.context(), manifest, new Map());
    });
  }

  /** Restore, step 1: marks the item `restoring` (it must be `trashed`). */
  prepareRestore(itemId: string): Promise<void> {
    return this.exclusive(async () => {
      const manifest = this.requireState(itemId, 'trashed');
      await this.save({ ...manifest, state: 'restoring' });
    });
  }

  /** Restore failed before the catalog changed: back to `trashed`. */
  abortRestore(itemId: string): Promise<void> {
    return this.exclusive(async () => {
      const manifest = this.manifests.get(itemId);
      if (manifest?.state === 'restoring') await this.save({ ...manifest, state: 'trashed' });
    });
  }

  /** Restore, step 2 (from LocalShards, before a shard opens): moves a restored shard's directory back. */
  reclaim(uuid: string): Promise<void> {
    const holder = this.items().find((manifest) => manifest.state === 'restoring' && manifest.shards.some((shard) => shard.uuid === uuid));
    if (!holder) return Promise.resolve();
    return this.exclusive(async () => {
      const from = trashedShardDir(this.options, holder.itemId, uuid);
      if (!(await exists(from))) return;
      this.options.faults.crashAt('trash.restore.after_commit');
      await moveDirectory(from, liveShardDir(this.options, uuid));
      this.options.faults.crashAt('trash.restore.mid_move');
    });
  }

  /** Restore, step 3: moves whatever is left back and removes the item. */
  finishRestore(itemId: string): Promise<void> {
    return this.exclusive(async () => {
      const manifest = this.manifests.get(itemId);
      if (manifest?.state !== 'restoring') return;
      await moveItemOut(this.context(), manifest);
    });
  }

  /** Purges one item of this node; null when this node does not hold it. */
  async purge(itemId: string): Promise<PurgedItem | null> {
    const committed = await this.exclusive(async () => this.commitPurge(itemId));
    return committed && this.removePurged(committed);
  }

  /** Purges every `trashed` item whose `deletedAt + retentionSecs` has passed; returns their ids. */
  async purgeExpired(retentionSecs: number, now: number): Promise<string[]> {
    const expired = this.items().filter((manifest) => manifest.state === 'trashed' && manifest.deletedAt + retentionSecs * 1000 <= now);
    const purged: string[] = [];
    for (const manifest of expired) {
      // An item that changed state meanwhile (a restore began) is refused by commitPurge and stays.
      const committed = await this.exclusive(async () => this.commitPurge(manifest.itemId)).catch((error: unknown) => {
        if (!(error instanceof TrashError)) this.options.logger.error({ err: error, itemId: manifest.itemId }, 'could not purge an expired trash item');
        return null;
      });
      if (committed) purged.push((await this.removePurged(committed)).itemId);
    }
    return purged;
  }

  /** Read-only check of every shard this node holds for the item; null when it holds no such item. */
  async verify(itemId: string): Promise<{ manifest: TrashManifest; shards: ShardCheck[] } | null> {
    const manifest = this.manifests.get(itemId);
    if (!manifest) return null;
    const shards: ShardCheck[] = [];
    for (const snapshot of manifest.shards) shards.push(await verifyShard(trashedShardDir(this.options, itemId, snapshot.uuid), snapshot));
    return { manifest, shards };
  }

  /** A purge's commit point (under the store's lock): the item directory is renamed away. */
  private async commitPurge(itemId: string): Promise<{ itemId: string; dir: string; manifest: TrashManifest | undefined } | null> {
    const manifest = this.manifests.get(itemId);
    if (!manifest && !this.unreadable.has(itemId)) return null;
    if (manifest && manifest.state !== 'trashed') {
      throw new TrashError('trash_item_busy', `trash item [${itemId}] is ${manifest.state}; try again once that finishes`);
    }
    const dir = join(trashRoot(this.options), `${PURGING_PREFIX}${itemId}`);
    await rename(itemDir(this.options, itemId), dir);
    await fsyncDirectory(trashRoot(this.options));
    this.manifests.delete(itemId);
    this.unreadable.delete(itemId);
    return { itemId, dir, manifest };
  }

  /** Removes a committed purge's directory, outside the lock: deleting a large item does not hold up moves. */
  private async removePurged(committed: { itemId: string; dir: string; manifest: TrashManifest | undefined }): Promise<PurgedItem> {
    const { itemId, dir, manifest } = committed;
    this.options.faults.crashAt('trash.purge.after_commit');
    const shardDirs = await readdir(join(dir, 'shards')).catch(() => [] as string[]);
    for (const uuid of shardDirs) {
      await rm(join(dir, 'shards', uuid), { recursive: true, force: true });
      this.options.faults.crashAt('trash.purge.mid_remove');
    }
    await rm(dir, { recursive: true, force: true });
    this.options.logger.info({ itemId }, 'purged trash item');
    return {
      itemId,
      shards: manifest?.shards.length ?? shardDirs.length,
      bytes: manifest?.shards.reduce((sum, shard) => sum + shard.bytes, 0) ?? 0,
    };
  }

  private requireState(itemId: string, state: TrashManifest['state']): TrashManifest {
    const manifest = this.manifests.get(itemId);
    if (!manifest) throw trashItemNotFound(itemId);
    if (manifest.state !== state) throw new TrashError('trash_item_busy', `trash item [${itemId}] is ${manifest.state}, not ${state}`);
    return manifest;
  }

  /** The unfinished delete this departing collection belongs to. */
  private itemFor(collection: DepartedCollection): TrashManifest | undefined {
    const unfinished = this.items().filter((manifest) => manifest.state === 'pending' || manifest.state === 'moving');
    return (
      unfinished.find((manifest) => manifest.collections.some((known) => known.uuid === collection.meta.uuid)) ??
      unfinished.find((manifest) => manifest.kind === 'namespace' && manifest.name === collection.meta.namespace)
    );
  }

  /** A collection left the catalog without an intent here (a node that missed the delete): keep its data anyway. */
  private async adoptOrphan(collection: DepartedCollection): Promise<TrashManifest> {
    const manifest: TrashManifest = {
      format: TRASH_FORMAT,
      version: TRASH_FORMAT_VERSION,
      itemId: crypto.randomUUID(),
      kind: 'collection',
      name: collection.meta.name,
      namespace: { name: collection.meta.namespace, uuid: '', createdAt: 0 },
      deletedAt: Date.now(),
      nodeId: this.options.nodeId,
      state: 'pending',
      collections: [structuredClone(collection.meta)],
      shards: [],
    };
    this.options.logger.warn({ collection: collection.meta.name, itemId: manifest.itemId }, 'collection left the catalog without a trash intent; keeping its data as a new item');
    await this.createItem(manifest.itemId, () => this.save(manifest));
    return manifest;
  }

  private context(): StoreContext {
    return {
      options: this.options,
      save: (manifest) => this.save(manifest),
      removeItem: (itemId) => this.removeItem(itemId),
    };
  }

  private async save(manifest: TrashManifest): Promise<void> {
    await mkdir(itemDir(this.options, manifest.itemId), { recursive: true });
    await writeTrashManifest(itemDir(this.options, manifest.itemId), manifest);
    this.manifests.set(manifest.itemId, manifest);
  }

  /**
   * Makes the directory of a new item and runs `record` (which saves its first manifest). When
   * `record` fails (EMFILE, a full disk, an injected fault) the directory and whatever `record`
   * left in it are removed before the error goes on, so that a failed step leaves no item behind;
   * the removal needs no descriptor (unlink, rmdir), so it works when descriptors ran out.
   */
  private async createItem(itemId: string, record: () => Promise<void>): Promise<void> {
    const dir = itemDir(this.options, itemId);
    await mkdir(dir, { recursive: true });
    try {
      await record();
    } catch (error) {
      this.manifests.delete(itemId);
      try {
        for (const name of [MANIFEST_FILE, MANIFEST_FILE + TEMP_SUFFIX]) await rm(join(dir, name), { force: true });
        await rmdir(dir);
      } catch (cleanup) {
        // The next start removes an empty item directory and recovers one holding a pending intent.
        this.options.logger.error({ itemId, err: cleanup }, 'could not remove the directory of a trash item that failed to start');
      }
      throw error;
    }
  }

  private async removeItem(itemId: string): Promise<void> {
    await rm(itemDir(this.options, itemId), { recursive: true, force: true });
    await fsyncDirectory(trashRoot(this.options));
    this.manifests.delete(itemId);
  }

  private exclusive<T>(task: () => Promise<T>): Promise<T> {
    const run = this.queue.then(task, task);
    this.queue = run.catch(() => undefined);
    return run;
  }
}
