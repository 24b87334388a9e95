/**
 * A node's trash, assembled: the store under `<path.data>/trash/` (which LocalShards uses as the
 * custodian of deleted shards), the cluster-wide service the node's requests go through, and the
 * retention sweeper. Opening happens in two steps because the store must recover interrupted
 * operations before any shard opens, while the service needs the running shards.
 */
import type { Logger } from 'pino';
import type { Catalog } from '../cluster/catalog.ts';
import type { Coordinator } from '../cluster/coordinator.ts';
import type { EngineSettings } from '../engine/shard/shard.ts';
import { LocalNodeTrash, type NodeTrash } from './node-trash.ts';
import type { TrashFaults } from './trash-faults.ts';
import { TrashService } from './trash-service.ts';
import { TrashStore } from './trash-store.ts';
import { TrashSweeper } from './trash-sweeper.ts';

/** Options of `Trash.open`. */
export interface TrashOpenOptions {
  dataPath: string;
  nodeId: string;
  engineSettings: EngineSettings;
  logger: Logger;
  faults: TrashFaults;
  /** The catalog at start, against which interrupted deletes and restores are resolved. */
  catalog: Catalog;
}

/** Options of `Trash.start`. */
export interface TrashStartOptions {
  coordinator: Coordinator;
  nodeName: string;
  /** Resolves once this node applied a catalog revision. */
  waitForRevision: (revision: number) => Promise<void>;
  /** The current `trash.retention_secs` (read at every sweep and listing). */
  retentionSecs: () => number;
  /** Subscribes to changes of `trash.retention_secs` (a new value is applied at once); returns the unsubscribe. */
  onRetentionChange?: (listener: () => void) => () => void;
  /** The trash of the other nodes of the cluster (none on a single node). */
  peers?: () => NodeTrash[];
}

/** See the module comment. */
export class Trash {
  private sweeper: TrashSweeper | null = null;
  private localTrash: LocalNodeTrash | null = null;
  private unsubscribe: (() => void) | null = null;

  private constructor(
    readonly store: TrashStore,
    private readonly options: TrashOpenOptions,
  ) {}

  /** Opens the store and finishes or undoes whatever a crash interrupted (call before shards open). */
  static async open(options: TrashOpenOptions): Promise<Trash> {
    const store = await TrashStore.open({
      dataPath: options.dataPath,
      nodeId: options.nodeId,
      engineSettings: options.engineSettings,
      logger: options.logger,
      faults: options.faults,
    });
    await store.recover(options.catalog);
    return new Trash(store, options);
  }

  /** Starts the retention sweeper and returns the cluster-wide service. */
  start(options: TrashStartOptions): TrashService {
    const local = new LocalNodeTrash(this.options.nodeId, options.nodeName, this.store, options.waitForRevision);
    this.localTrash = local;
    this.sweeper = new TrashSweeper({ store: this.store, retentionSecs: options.retentionSecs, logger: this.options.logger });
    this.sweeper.start();
    const sweeper = this.sweeper;
    this.unsubscribe = options.onRetentionChange?.(() => void sweeper.sweep().catch(() => undefined)) ?? null;
    return new TrashService({
      coordinator: options.coordinator,
      nodes: () => [local, ...(options.peers?.() ?? [])],
      waitForRevision: options.waitForRevision,
      retentionSecs: options.retentionSecs,
      faults: this.options.faults,
      logger: this.options.logger,
    });
  }

  /** This node's trash as the cluster-wide service reaches it (what the internal node API serves); after `start`. */
  get local(): LocalNodeTrash {
    if (this.localTrash === null) throw new Error('the trash has not been started');
    return this.localTrash;
  }

  /** Stops the sweeper (waiting for a sweep in progress). */
  async close(): Promise<void> {
    this.unsubscribe?.();
    await this.sweeper?.stop();
  }
}
