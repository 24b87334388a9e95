/**
 * What epochs, merges and compaction jobs have done on this node, from the shards' own counters:
 * one row per segment for `_cat/segments`, and the `segments` and `compaction` sections of the
 * node stats (epochs run, segments per shard, last epoch time, merge backlog, job counts).
 */
import type { ShardStats } from '../engine/shard/shard.ts';
import type { JobQueueStats } from '../jobs/job-queue.ts';
import type { NodeContext } from './node-context.ts';

/** One segment of a local shard copy. */
export interface SegmentRow {
  collection: string;
  shard: number;
  shardUuid: string;
  /** Always true today: a node holds primary copies only. */
  primary: boolean;
  nodeId: string;
  nodeName: string;
  segment: string;
  /** The segment's number (`seg_000012` → 12); later segments have higher numbers. */
  generation: number;
  docs: number;
  deletedDocs: number;
  bytes: number;
}

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
}

/** The `segments` and `compaction` sections of the node stats. */
export interface MaintenanceStats {
  segments: {
    count: number;
    docs: number;
    deleted_docs: number;
    size_in_bytes: number;
    epochs: { total: number; last_at: string | null };
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

/** Every started local shard copy with its stats, ordered by collection and shard. */
function startedShards(context: NodeContext): Array<{ collection: string; shard: number; uuid: string; stats: ShardStats }> {
  const out = [];
  for (const hosted of context.shards.collections()) {
    for (const local of hosted.shards) {
      if (local?.state !== 'started' || !local.shard) continue;
      out.push({ collection: hosted.meta.name, shard: local.shardId, uuid: local.uuid, stats: local.shard.stats() });
    }
  }
  return out;
}

/** One row per segment of every started local shard copy. */
export function segmentRows(context: NodeContext, nodeName: string): SegmentRow[] {
  return startedShards(context).flatMap(({ collection, shard, uuid, stats }) =>
    stats.segments.map((segment) => ({
      collection,
      shard,
      shardUuid: uuid,
      primary: true,
      nodeId: context.nodeId,
      nodeName,
      segment: segment.name,
      generation: Number(/(\d+)$/.exec(segment.name)?.[1] ?? 0),
      docs: segment.docs,
      deletedDocs: segment.deletedDocs,
      bytes: segment.bytes,
    })),
  );
}

/** The node-stats sections about segments, epochs, merges and compaction. */
export function maintenanceStats(context: NodeContext, jobs: JobQueueStats): MaintenanceStats {
  const shards: ShardMaintenanceStats[] = startedShards(context).map(({ collection, shard, uuid, stats }) => ({
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
  }));
  const sum = (pick: (shard: ShardMaintenanceStats) => number): number => shards.reduce((total, shard) => total + pick(shard), 0);
  const lastEpoch = shards.reduce<string | null>((latest, shard) => (shard.last_epoch_at !== null && (latest === null || shard.last_epoch_at > latest) ? shard.last_epoch_at : latest), null);
  return {
    segments: {
      count: sum((shard) => shard.segments),
      docs: sum((shard) => shard.docs),
      deleted_docs: sum((shard) => shard.deleted_docs),
      size_in_bytes: sum((shard) => shard.size_in_bytes),
      epochs: { total: sum((shard) => shard.epochs), last_at: lastEpoch },
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
