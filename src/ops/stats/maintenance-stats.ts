/**
 * What epochs, merges and compaction jobs have done on this node, from the shards' own counters:
 * the `segments` and `compaction` sections of the node stats (epochs run, segments per shard,
 * last epoch time, merge backlog, job counts).
 */
import type { StartedShardStats } from '../../cluster/local-shards.ts';
import type { JobQueueStats } from '../../jobs/job-queue.ts';

/** Epoch and merge figures of one shard copy. */
export interface ShardMaintenanceStats {
  collection: string;
  shard: number;
  shard_uuid: string;
  segments: number;
  docs: number;
  deleted_docs: number;
  /** Documents in the mutable layer, not yet frozen into a segment. */
  mutable_docs: number;
  size_in_bytes: number;
  epochs: number;
  merges: number;
  /** ISO 8601 time of the shard's last epoch, or null before the first. */
  last_epoch_at: string | null;
  /** Epochs and merges queued or running. */
  pending_maintenance: number;
  /** Client writes held now because indexing outran epochs, and the total time writes were held. */
  writes_held: number;
  writes_held_ms: number;
}

/** The `segments` and `compaction` sections of the node stats. */
export interface MaintenanceStats {
  segments: {
    count: number;
    docs: number;
    deleted_docs: number;
    size_in_bytes: number;
    epochs: { total: number; last_at: string | null; writes_held: number; writes_held_ms: number };
    merges: { total: number; backlog: number };
    shards: ShardMaintenanceStats[];
  };
  compaction: {
    jobs: JobQueueStats['jobs'];
    /** Since the node started. */
    passes: { done: number; failed: number };
    deleted_docs_purged: number;
    bytes_before: number;
    bytes_after: number;
  };
}

/** The node-stats sections about segments, epochs, merges and compaction. */
export function maintenanceStats(started: readonly StartedShardStats[], jobs: JobQueueStats): MaintenanceStats {
  const shards: ShardMaintenanceStats[] = started.map(({ collection, shard, uuid, stats }) => ({
    collection,
    shard,
    shard_uuid: uuid,
    segments: stats.segments.length,
    docs: stats.docs,
    deleted_docs: stats.deletedDocs,
    mutable_docs: stats.mutableDocs,
    size_in_bytes: stats.segments.reduce((sum, segment) => sum + segment.bytes, 0),
    epochs: stats.epochs,
    merges: stats.merges,
    last_epoch_at: stats.lastEpochAt === null ? null : new Date(stats.lastEpochAt).toISOString(),
    pending_maintenance: stats.pendingMaintenance,
    writes_held: stats.heldWrites,
    writes_held_ms: stats.heldMs,
  }));
  const sum = (pick: (shard: ShardMaintenanceStats) => number): number => shards.reduce((total, shard) => total + pick(shard), 0);
  const lastEpoch = shards.reduce<string | null>((latest, shard) => (shard.last_epoch_at !== null && (latest === null || shard.last_epoch_at > latest) ? shard.last_epoch_at : latest), null);
  return {
    segments: {
      count: sum((shard) => shard.segments),
      docs: sum((shard) => shard.docs),
      deleted_docs: sum((shard) => shard.deleted_docs),
      size_in_bytes: sum((shard) => shard.size_in_bytes),
      epochs: {
        total: sum((shard) => shard.epochs),
        last_at: lastEpoch,
        writes_held: sum((shard) => shard.writes_held),
        writes_held_ms: sum((shard) => shard.writes_held_ms),
      },
      merges: { total: sum((shard) => shard.merges), backlog: sum((shard) => shard.pending_maintenance) },
      shards,
    },
    compaction: {
      jobs: jobs.jobs,
      passes: { done: jobs.passesDone, failed: jobs.passesFailed },
      deleted_docs_purged: jobs.deletedPurged,
      bytes_before: jobs.bytesBefore,
      bytes_after: jobs.bytesAfter,
    },
  };
}
