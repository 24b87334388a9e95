/**
 * The replication roles of the shard copies this node hosts, kept in step with the catalog by
 * LocalShards: a primary copy is wrapped to ship its records (ReplicatedPrimary), a replica copy
 * to refuse client writes and fence stale primaries (ReplicaCopy), and a replica outside the
 * in-sync set recovers from its primary until it is in (replica-recovery.ts). A promoted replica
 * takes the new primary term before it serves a write; a deposed primary fails what waits on it.
 *
 * Also the node's side of the replication methods other nodes call (internal node API): records
 * and positions for replicas, tracking for primaries, and the files a primary holds for a
 * file-based recovery. On a single node (no environment) a primary is its own handle.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { isAbsolute, normalize } from 'node:path';
import type { Logger } from 'pino';
import { inSyncOf, primaryTermOf, type ShardPlacement } from '../catalog.ts';
import { CatalogError } from '../catalog-error.ts';
import type { Coordinator } from '../coordinator.ts';
import type { HostedCollection, LocalShard } from '../local-shards.ts';
import type { HistoryPosition, ReplicationRecord, ShardHandle } from '../shard-handle.ts';
import type { ShardAddress } from './in-sync-rules.ts';
import { ReplicaCopy } from './replica-copy.ts';
import { recoverReplica, type RecoveryReport } from './replica-recovery.ts';
import { ReplicatedPrimary } from './replicated-primary.ts';
import type { ReplicaPeers } from './replication-wire.ts';

/** What the catalog makes of this node's copy of a shard. */
export type CopyRole = 'primary' | 'replica';

/** The role of `nodeId`'s copy in `placement`, or null when it holds none. */
export function copyRoleOf(placement: ShardPlacement, nodeId: string): CopyRole | null {
  if (placement.primary === nodeId) return 'primary';
  return placement.replicas.includes(nodeId) ? 'replica' : null;
}

/** How copies reach the rest of the cluster. */
export interface ReplicationEnvironment {
  coordinator: Pick<Coordinator, 'markInSync' | 'markStale' | 'leaseValidUntil'>;
  peers: ReplicaPeers;
  /** The handle of copy `uuid` on node `nodeId`, or null when that node is not registered. */
  remoteCopy(nodeId: string, uuid: string): ShardHandle | null;
  /** Copies the first `bytes` bytes of file `path` held under `hold` by copy `uuid` on `nodeId`. */
  fetchFile(nodeId: string, uuid: string, hold: number, path: string, bytes: number, destination: string): Promise<void>;
}

/** Options of `CopyRoles`. */
export interface CopyRolesOptions {
  nodeId: string;
  logger: Logger;
  environment?: ReplicationEnvironment;
  /** The collections this node hosts now. */
  collections: () => Iterable<HostedCollection>;
  /** Closes a copy, runs `replace` on its directory and opens it again. */
  reopen: (hosted: HostedCollection, local: LocalShard, replace: () => Promise<void>) => Promise<ShardHandle>;
  /** Fault point (tests only): answers to `replica.position` are delayed this long (src/node/faults.ts). */
  replicaPositionDelayMs?: number;
}

/** A recovery of a replica copy on this node (`GET /{collection}/_recovery`). */
export interface CopyRecovery extends RecoveryReport {
  collection: string;
  shard: number;
  /** This node. */
  target: string;
}

/** Longest pause between two recovery attempts. */
const RECOVERY_BACKOFF_MS = 5_000;

/** See the module comment. */
export class CopyRoles {
  private readonly recovering = new Set<LocalShard>();
  /** The last recovery of each replica copy recovered here since the node started, by shard UUID. */
  private readonly reports = new Map<string, CopyRecovery>();

  constructor(private readonly options: CopyRolesOptions) {}

  /** The primary term of a shard as this node's catalog says. */
  termOf(hosted: HostedCollection, shardId: number): number {
    const placement = hosted.meta.placements[shardId];
    return placement ? primaryTermOf(placement) : 1;
  }

  /** Wraps a just opened copy for its role and starts it (or its recovery). */
  async adopt(hosted: HostedCollection, local: LocalShard, copy: ShardHandle): Promise<void> {
    const placement = hosted.meta.placements[local.shardId];
    if (local.role === 'primary' || !this.options.environment) {
      local.handle = await this.primary(hosted, local, copy);
      local.state = 'started';
      return;
    }
    local.handle = new ReplicaCopy(copy, addressOf(hosted, local), primaryTermOf(placement));
    this.replicaStep(hosted, local, placement);
  }

  /** Applies a catalog change to an open copy: role changes, the in-sync set, the term. */
  async apply(hosted: HostedCollection, local: LocalShard, role: CopyRole): Promise<void> {
    const placement = hosted.meta.placements[local.shardId];
    const handle = local.handle;
    if (handle === null) return;
    if (role === 'primary') {
      if (handle instanceof ReplicatedPrimary && handle.primaryTerm === primaryTermOf(placement)) {
        handle.refreshTargets();
        return;
      }
      if (handle instanceof ReplicatedPrimary || handle instanceof ReplicaCopy) {
        const copy = unwrap(handle, 'the copy changed role');
        local.role = 'primary';
        local.handle = await this.primary(hosted, local, copy);
        local.state = 'started';
        this.options.logger.info({ collection: hosted.meta.name, shard: local.shardId, term: primaryTermOf(placement) }, 'shard copy is now the primary');
      }
      return;
    }
    if (handle instanceof ReplicatedPrimary || !(handle instanceof ReplicaCopy)) {
      local.role = 'replica';
      local.handle = new ReplicaCopy(unwrap(handle, 'this copy is no longer the primary'), addressOf(hosted, local), primaryTermOf(placement));
    }
    this.replicaStep(hosted, local, placement);
  }

  private async primary(hosted: HostedCollection, local: LocalShard, copy: ShardHandle): Promise<ShardHandle> {
    const environment = this.options.environment;
    if (!environment) return copy;
    const term = this.termOf(hosted, local.shardId);
    await copy.setPrimaryTerm(term);
    const position = await copy.historyPosition();
    return new ReplicatedPrimary(
      copy,
      {
        address: addressOf(hosted, local),
        uuid: local.uuid,
        nodeId: this.options.nodeId,
        // Read on every write: the hosted collection's own placement, no search through the node's collections.
        placement: () => (hosted.shards[local.shardId] === local ? (hosted.meta.placements[local.shardId] ?? null) : null),
        coordinator: environment.coordinator,
        peers: environment.peers,
        logger: this.options.logger,
      },
      position.lastSeq,
    );
  }

  /** A replica in the in-sync set serves; one outside it recovers. */
  private replicaStep(hosted: HostedCollection, local: LocalShard, placement: ShardPlacement): void {
    (local.handle as ReplicaCopy).observeTerm(primaryTermOf(placement));
    if (inSyncOf(placement).includes(this.options.nodeId)) {
      local.state = 'started';
      return;
    }
    local.state = 'recovering';
    if (!this.recovering.has(local)) void this.recover(hosted, local);
  }

  /** Recovers until the copy is in sync, stops being a replica here, or closes; bounded per attempt. */
  private async recover(hosted: HostedCollection, local: LocalShard): Promise<void> {
    const environment = this.options.environment!;
    const logger = this.options.logger.child({ collection: hosted.meta.name, shard: local.shardId });
    const abandoned = (): boolean => hosted.shards[local.shardId] !== local || local.role !== 'replica' || this.currentHosted(hosted) === null;
    this.recovering.add(local);
    try {
      for (let attempt = 0; attempt < 100_000 && !abandoned(); attempt++) {
        const placement = this.currentPlacement(local);
        if (placement && inSyncOf(placement).includes(this.options.nodeId)) break;
        try {
          const report = await recoverReplica({
            address: addressOf(hosted, local),
            uuid: local.uuid,
            nodeId: this.options.nodeId,
            dir: local.dir,
            primary: () => {
              const now = this.currentPlacement(local);
              return now?.primary ? { nodeId: now.primary, term: primaryTermOf(now) } : null;
            },
            primaryHandle: (nodeId) => environment.remoteCopy(nodeId, local.uuid),
            replica: () => {
              if (!(local.handle instanceof ReplicaCopy)) throw new CatalogError('shard_unavailable', 'the copy is not open as a replica');
              return local.handle;
            },
            reopen: async (replace) => {
              const copy = await this.options.reopen(hosted, local, replace);
              const replica = new ReplicaCopy(copy, addressOf(hosted, local), this.termOf(hosted, local.shardId));
              local.handle = replica;
              return replica;
            },
            fetchFile: (nodeId, hold, path, bytes, destination) => environment.fetchFile(nodeId, local.uuid, hold, path, bytes, destination),
            peers: environment.peers,
            logger,
            abandoned,
          });
          this.reports.set(local.uuid, { ...report, collection: hosted.meta.name, shard: local.shardId, target: this.options.nodeId });
          logger.info({ ...report }, 'replica recovered and in sync');
          break;
        } catch (error) {
          if (abandoned()) break;
          logger.warn({ err: error, attempt }, 'replica recovery failed; retrying');
          await sleep(Math.min(RECOVERY_BACKOFF_MS, 250 * 2 ** Math.min(attempt, 5)));
        }
      }
    } finally {
      this.recovering.delete(local);
    }
  }

  /** Node method `node.recoveries`: the last recovery of each replica copy recovered here. */
  recoveries(): CopyRecovery[] {
    return [...this.reports.values()];
  }

  /** Node method `replica.apply`: records of the primary of `term` for the replica copy `uuid`. */
  replicaApply(uuid: string, term: number, records: readonly ReplicationRecord[]): Promise<HistoryPosition> {
    return this.replicaCopy(uuid).applyFromPrimary(term, records);
  }

  /** Node method `replica.position`: where the replica copy `uuid` stands. */
  async replicaPosition(uuid: string, term: number): Promise<HistoryPosition> {
    if (this.options.replicaPositionDelayMs) await sleep(this.options.replicaPositionDelayMs);
    return this.replicaCopy(uuid).position(term);
  }

  /** Node method `primary.track`: resolves once the recovering replica on `nodeId` is in sync. */
  primaryTrack(uuid: string, nodeId: string, seq: number, term: number): Promise<void> {
    const primary = this.primaryCopy(uuid);
    if (primary.primaryTerm !== term) {
      return Promise.reject(new CatalogError('catalog_conflict', `primary of [${uuid}] is at term ${primary.primaryTerm}, the replica recovered under ${term}`));
    }
    return primary.track(nodeId, seq);
  }

  /** The directory and byte count of a file the primary copy `uuid` holds for a recovery. */
  heldFile(uuid: string, hold: number, path: string): { dir: string; bytes: number } {
    const local = this.find(uuid);
    const handle = local?.handle;
    if (!local || !(handle instanceof ReplicatedPrimary)) throw new CatalogError('shard_unavailable', `no primary copy [${uuid}] on this node`);
    const clean = normalize(path);
    const bytes = handle.heldFile(hold, clean);
    if (bytes === undefined || isAbsolute(clean) || clean.startsWith('..')) {
      throw new CatalogError('shard_unavailable', `file [${path}] is not held under [${hold}] by copy [${uuid}]`);
    }
    return { dir: local.dir, bytes };
  }

  private replicaCopy(uuid: string): ReplicaCopy {
    const handle = this.find(uuid)?.handle;
    if (!(handle instanceof ReplicaCopy)) throw new CatalogError('shard_unavailable', `no open replica copy [${uuid}] on this node`);
    return handle;
  }

  private primaryCopy(uuid: string): ReplicatedPrimary {
    const handle = this.find(uuid)?.handle;
    if (!(handle instanceof ReplicatedPrimary)) throw new CatalogError('shard_unavailable', `no primary copy [${uuid}] on this node`);
    return handle;
  }

  private find(uuid: string): LocalShard | undefined {
    for (const hosted of this.options.collections()) {
      for (const local of hosted.shards) if (local?.uuid === uuid) return local;
    }
    return undefined;
  }

  private currentHosted(hosted: HostedCollection): HostedCollection | null {
    for (const current of this.options.collections()) if (current === hosted) return current;
    return null;
  }

  private currentPlacement(local: LocalShard): ShardPlacement | null {
    for (const hosted of this.options.collections()) {
      if (hosted.shards[local.shardId] === local) return hosted.meta.placements[local.shardId] ?? null;
    }
    return null;
  }
}

function addressOf(hosted: HostedCollection, local: LocalShard): ShardAddress {
  return { collection: hosted.meta.name, collectionUuid: hosted.meta.uuid, shard: local.shardId };
}

/** The copy's own handle out of its role wrapper; a primary wrapper fails what waits on it. */
function unwrap(handle: ShardHandle, reason: string): ShardHandle {
  if (handle instanceof ReplicatedPrimary) {
    handle.stop(new CatalogError('shard_unavailable', reason));
    return handle.inner;
  }
  return handle instanceof ReplicaCopy ? handle.inner : handle;
}
