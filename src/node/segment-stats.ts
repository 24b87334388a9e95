/**
 * The segments of this node's shard copies, one row per segment, for `_cat/segments` (the node
 * stats' maintenance sections are in src/ops/stats/maintenance-stats.ts).
 */
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

/** One row per segment of every started local shard copy. */
export async function segmentRows(context: NodeContext, nodeName: string): Promise<SegmentRow[]> {
  return (await context.router.startedStats()).flatMap(({ collection, shard, uuid, stats }) =>
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
