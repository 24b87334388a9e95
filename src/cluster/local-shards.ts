/**
 * The shard copies this node hosts, kept in step with the catalog. Every catalog event is applied
 * by reconciliation: shards placed on this node are opened under `<path.data>/shards/<uuid>/`,
 * shards placed elsewhere are closed, mapping changes reach open shards through `setMapping`,
 * and collections that left the catalog are handed, with their open shards, to the custodian (the
 * trash) through `retireCollections`. Events are applied one at a time, in revision order;
 * `waitForRevision` lets a caller wait for its own change.
 */
import { readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from 'pino';
import type { Catalog, CatalogEvent, CollectionMeta } from './catalog.ts';
import type { Coordinator } from './coordinator.ts';
import { flattenMapping, type FlatField } from '../engine/mapping/mapping.ts';
import type { HeapReleaseStats } from '../engine/memory/heap-release.ts';
import type { ShardFaultSpec } from '../engine/shard/fault-points.ts';
import type { EngineSettings, ShardStats } from '../engine/shard/shard.ts';
import { BudgetedReaders, type ReaderBudget } from './reader-budget.ts';
import type { ShardHandle, ShardHost } from './shard-handle.ts';
import { copyRoleOf, CopyRoles, type CopyRole, type ReplicationEnvironment } from './replication/copy-roles.ts';
import { engineVisibilityOf } from './visibility.ts';

/** Lifecycle of a local shard copy (`recovering`: a replica catching up with its primary). */
export type LocalShardState = 'opening' | 'recovering' | 'started' | 'failed';

/** One shard copy hosted here. */
export interface LocalShard {
  /** Shard number within its collection. */
  shardId: number;
  uuid: string;
  dir: string;
  state: LocalShardState;
  /** Whether the catalog places the shard's primary or a replica here. */
  role: CopyRole;
  /** The open shard copy, wrapped for its role (replication.ts); null until open. */
  handle: ShardHandle | null;
  /** Why opening failed, when `state` is `failed`. */
  failure: string | null;
}

/** A collection as this node sees it: catalog metadata, flattened fields, and its local shards. */
export interface HostedCollection {
  meta: CollectionMeta;
  fields: Map<string, FlatField>;
  /** Indexed by shard number; null where the shard is placed on another node (or nowhere). */
  shards: Array<LocalShard | null>;
}

/** A collection that left the catalog, with the shard copies this node still had open for it. */
export interface DepartedCollection {
  meta: CollectionMeta;
  /** Open shard copies by shard number; null where no copy is open here. */
  openShards: Array<ShardHandle | null>;
}

/** A started shard copy with its figures, as stats and listings read them. */
export interface StartedShardStats {
  collection: string;
  shard: number;
  uuid: string;
  stats: ShardStats;
}

/**
 * Keeper of the data of collections that leave the catalog (the trash, src/ops/trash): it takes
 * their shards over, and gives a shard directory back when a restore returns it to the catalog.
 */
export interface ShardCustodian {
  /** Takes over the shards of collections that left the catalog; it closes the open ones. */
  retire(departed: DepartedCollection[]): Promise<void>;
  /** Runs before a shard opens: puts its directory back under `shards/` when a restore brings it back. */
  reclaim(uuid: string): Promise<void>;
}

/** Options of `LocalShards`. */
export interface LocalShardsOptions {
  dataPath: string;
  nodeId: string;
  engineSettings: EngineSettings;
  /** Where shard copies run: in this thread or in worker threads. */
  host: ShardHost;
  logger: Logger;
  /** Where the data of deleted collections goes (and where restored shards come back from). */
  custodian: ShardCustodian;
  /** Fault points armed on a shard UUID (tests only, see src/node/faults.ts). */
  faults?: (shardUuid: string) => ShardFaultSpec | undefined;
  /** Fault point (tests only): how long answers to `replica.position` are delayed. */
  replicaPositionDelayMs?: number;
  /** The node's count of open scroll and point-in-time reader contexts, which every copy opened here counts in (absent: not counted). */
  readerBudget?: ReaderBudget;
  /** How copies reach the other nodes for replication; absent on a single node. */
  replication?: ReplicationEnvironment;
}

/** See the module comment. */
export class LocalShards {
  private readonly hosted = new Map<string, HostedCollection>();
  private readonly waiters: Array<{ revision: number; resolve: () => void }> = [];
  private events: Promise<void> = Promise.resolve();
  private applied = 0;
  private stopWatching: (() => void) | null = null;
  private engineSettings: EngineSettings;
  /** Role wrappers, replica recovery and the node methods of replication. */
  readonly roles: CopyRoles;

  constructor(private readonly options: LocalShardsOptions) {
    this.engineSettings = options.engineSettings;
    this.roles = new CopyRoles({
      nodeId: options.nodeId,
      logger: options.logger,
      environment: options.replication,
      collections: () => this.hosted.values(),
      reopen: (hosted, local, replace) => this.reopenShard(hosted, local, replace),
      replicaPositionDelayMs: options.replicaPositionDelayMs,
    });
  }

  /** Subscribes to the coordinator, applies its current catalog and removes orphaned shard data. */
  async start(coordinator: Coordinator): Promise<void> {
    this.stopWatching = coordinator.watch((event) => this.enqueue(event));
    const catalog = coordinator.catalog();
    this.enqueue({ revision: catalog.revision, catalog, changes: [] });
    await this.events;
    await this.removeOrphanedShardData(coordinator.catalog());
  }

  /** Highest catalog revision fully applied. */
  get appliedRevision(): number {
    return this.applied;
  }

  /** Resolves once the catalog revision `revision` (or a later one) has been applied. */
  waitForRevision(revision: number): Promise<void> {
    if (this.applied >= revision) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push({ revision, resolve }));
  }

  /** The hosted view of a collection, or undefined when the catalog (as applied) has none. */
  collection(name: string): HostedCollection | undefined {
    return this.hosted.get(name);
  }

  /** Every hosted collection, sorted by name. */
  collections(): HostedCollection[] {
    return [...this.hosted.values()].sort((left, right) => (left.meta.name < right.meta.name ? -1 : 1));
  }

  /** Applies new engine tunables to every open shard and to shards opened later. */
  updateEngineSettings(settings: Partial<EngineSettings>): void {
    this.engineSettings = { ...this.engineSettings, ...settings };
    for (const hosted of this.hosted.values()) {
      for (const local of hosted.shards) local?.handle?.updateSettings(settings).catch((error: unknown) => this.logShardError(local, error, 'updating engine settings failed'));
    }
  }

  /** The heap releases of the threads the shard host runs copies in, besides this one. */
  threadStats(): Promise<HeapReleaseStats[]> {
    return this.options.host.threadStats();
  }

  /** The figures of every started local shard copy, ordered by collection and shard. */
  async startedStats(): Promise<StartedShardStats[]> {
    const started: Array<{ collection: string; local: LocalShard; handle: ShardHandle }> = [];
    for (const hosted of this.collections()) {
      for (const local of hosted.shards) {
        if (local?.state === 'started' && local.handle) started.push({ collection: hosted.meta.name, local, handle: local.handle });
      }
    }
    const figures = await Promise.all(started.map(({ handle }) => handle.stats().catch(() => null)));
    return started.flatMap(({ collection, local }, index) => {
      const stats = figures[index];
      return stats ? [{ collection, shard: local.shardId, uuid: local.uuid, stats }] : [];
    });
  }

  /** Stops reacting to the catalog and closes every shard (syncing its WAL). */
  async close(): Promise<void> {
    this.stopWatching?.();
    this.stopWatching = null;
    await this.events;
    const closing: Array<Promise<void>> = [];
    for (const hosted of this.hosted.values()) {
      for (const local of hosted.shards) if (local) closing.push(this.closeShard(hosted, local));
    }
    await Promise.all(closing);
    this.hosted.clear();
    await this.options.host.close();
  }

  private logShardError(local: LocalShard, error: unknown, message: string): void {
    this.options.logger.error({ err: error, uuid: local.uuid, shard: local.shardId }, message);
  }

  private enqueue(event: CatalogEvent): void {
    this.events = this.events
      .then(() => this.apply(event))
      .catch((error: unknown) => this.options.logger.error({ err: error, revision: event.revision }, 'applying catalog change failed'));
  }

  private async apply(event: CatalogEvent): Promise<void> {
    if (event.revision <= this.applied) return;
    const { collections } = event.catalog;
    try {
      const departed = [...this.hosted.values()].filter((hosted) => {
        const current = Object.hasOwn(collections, hosted.meta.name) ? collections[hosted.meta.name] : undefined;
        return !current || current.uuid !== hosted.meta.uuid;
      });
      if (departed.length > 0) await this.retireCollections(departed);
      await Promise.all(Object.values(collections).map((meta) => this.reconcile(meta)));
    } finally {
      // Even a partly failed application (logged by the caller) must not leave requests waiting forever.
      this.applied = event.revision;
      for (let index = this.waiters.length - 1; index >= 0; index--) {
        if (this.waiters[index].revision <= this.applied) this.waiters.splice(index, 1)[0].resolve();
      }
    }
  }

  private async reconcile(meta: CollectionMeta): Promise<void> {
    // Visibility changes are applied to the open copies before the revision counts as applied (PUT _settings waits for it).
    const settled: Array<Promise<unknown>> = [];
    let hosted = this.hosted.get(meta.name);
    if (!hosted) {
      hosted = { meta, fields: flattenMapping(meta.mapping), shards: meta.shards.map(() => null) };
      this.hosted.set(meta.name, hosted);
    } else if (hosted.meta.version !== meta.version) {
      if (JSON.stringify(hosted.meta.mapping) !== JSON.stringify(meta.mapping)) {
        hosted.fields = flattenMapping(meta.mapping);
        for (const local of hosted.shards) local?.handle?.setMapping(meta.mapping).catch((error: unknown) => this.logShardError(local, error, 'updating the mapping failed'));
      }
      const visibility = engineVisibilityOf(meta.settings);
      if (JSON.stringify(engineVisibilityOf(hosted.meta.settings)) !== JSON.stringify(visibility)) {
        for (const local of hosted.shards) {
          if (local?.handle) settled.push(local.handle.updateSettings(visibility).catch((error: unknown) => this.logShardError(local, error, 'updating visibility failed')));
        }
      }
      hosted.meta = meta;
    }
    const work: Array<Promise<void>> = [];
    for (const placement of meta.placements) {
      const local = hosted.shards[placement.shard];
      const role = copyRoleOf(placement, this.options.nodeId);
      if (role && !local) work.push(this.openShard(hosted, placement.shard, role));
      if (!role && local) work.push(this.closeShard(hosted, local));
      if (role && local && local.state !== 'opening' && local.state !== 'failed') work.push(this.roles.apply(hosted, local, role));
    }
    await Promise.all([...work, ...settled]);
  }

  private async openShard(hosted: HostedCollection, shardId: number, role: CopyRole): Promise<void> {
    const { uuid } = hosted.meta.shards[shardId];
    const dir = join(this.options.dataPath, 'shards', uuid);
    const local: LocalShard = { shardId, uuid, dir, state: 'opening', role, handle: null, failure: null };
    hosted.shards[shardId] = local;
    const logger = this.options.logger.child({ collection: hosted.meta.name, shard: shardId });
    try {
      await this.options.custodian.reclaim(uuid);
      const copy = await this.openCopy(hosted, local);
      await this.roles.adopt(hosted, local, copy);
    } catch (error) {
      local.state = 'failed';
      local.failure = (error as Error).message;
      logger.error({ err: error, uuid }, 'shard failed to open');
    }
  }

  private async openCopy(hosted: HostedCollection, local: LocalShard): Promise<ShardHandle> {
    const visibility = engineVisibilityOf(hosted.meta.settings);
    const handle = await this.options.host.open({
      dir: local.dir,
      uuid: local.uuid,
      mapping: hosted.meta.mapping,
      settings: { ...this.engineSettings, ...visibility },
      bindings: { collection: hosted.meta.name, shard: local.shardId },
      faults: this.options.faults?.(local.uuid),
      primaryTerm: this.roles.termOf(hosted, local.shardId),
    });
    // A settings change applied while the copy opened (it had no handle to reach) is applied now.
    const now = engineVisibilityOf(hosted.meta.settings);
    if (JSON.stringify(now) !== JSON.stringify(visibility)) await handle.updateSettings(now);
    const budget = this.options.readerBudget;
    return budget ? new BudgetedReaders(handle, budget) : handle;
  }

  /** Closes a copy, runs `replace` on its directory, and opens it again (file-based recovery). */
  private async reopenShard(hosted: HostedCollection, local: LocalShard, replace: () => Promise<void>): Promise<ShardHandle> {
    const handle = local.handle;
    local.handle = null;
    if (handle) await handle.close();
    await replace();
    return this.openCopy(hosted, local);
  }

  private async closeShard(hosted: HostedCollection, local: LocalShard): Promise<void> {
    if (hosted.shards[local.shardId] === local) hosted.shards[local.shardId] = null;
    const handle = local.handle;
    local.handle = null;
    if (handle) await handle.close();
  }

  /**
   * The one place where deleted collections' local data leaves: they stop being served at once,
   * and their shards (still open, so the custodian can seal them) go to the custodian.
   */
  private async retireCollections(departed: HostedCollection[]): Promise<void> {
    for (const hosted of departed) this.hosted.delete(hosted.meta.name);
    await this.options.custodian.retire(
      departed.map((hosted) => {
        const openShards = hosted.shards.map((local) => local?.handle ?? null);
        for (const local of hosted.shards) if (local) local.handle = null;
        return { meta: hosted.meta, openShards };
      }),
    );
    this.options.logger.info({ collections: departed.map((hosted) => hosted.meta.name) }, 'collections left the catalog');
  }

  /**
   * Removes shard directories that neither the catalog nor the trash references. The trash has
   * recovered interrupted deletes and restores before this runs, so these are leftovers of a
   * shard that never belonged to a committed collection.
   */
  private async removeOrphanedShardData(catalog: Catalog): Promise<void> {
    const known = new Set<string>();
    for (const collection of Object.values(catalog.collections)) for (const shard of collection.shards) known.add(shard.uuid);
    const root = join(this.options.dataPath, 'shards');
    const entries = await readdir(root).catch(() => [] as string[]);
    for (const entry of entries) {
      if (known.has(entry)) continue;
      this.options.logger.warn({ uuid: entry }, 'removing data of a shard the catalog no longer has');
      await rm(join(root, entry), { recursive: true, force: true });
    }
  }
}
