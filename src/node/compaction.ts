/**
 * Manual compaction of a collection (`POST /{collection}/_compact`): every node that hosts a
 * primary copy of the collection queues one batch job with a merge pass per started local
 * primary, and answers with one row. Rows are collected through `CompactionNode`, one per hosting
 * node, all at once; a node that fails (or cannot be reached) yields a failed row while the other
 * rows stand. This node is `LocalCompactionNode`; another node of the cluster is
 * `RemoteCompactionNode`, which asks that node's `LocalCompactionNode` through the internal node API.
 */
import type { CollectionMeta, NodeRecord } from '../cluster/catalog.ts';
import { EngineError } from '../engine/errors.ts';
import type { JobQueue, PassTask } from '../jobs/job-queue.ts';
import type { NodeFaults } from './faults.ts';
import type { NodeContext } from './node-context.ts';
import { NodeError } from './node-error.ts';
import type { PeerNode } from '../cluster/remote/peer-nodes.ts';

/** Options of a compaction request. */
export interface CompactOptions {
  /** Segments each shard is merged down to (at least 1). */
  maxSegments: number;
}

/** What a hosting node answers when it queued its job. */
export interface QueuedCompaction {
  jobId: string;
  /** Local primary copies the job covers (one merge pass each). */
  primaryPasses: number;
}

/** A node that compacts its own primary copies of a collection. */
export interface CompactionNode {
  readonly nodeId: string;
  /** Queues a job over this node's started primaries of `collection`; rejects when it cannot. */
  compact(collection: CollectionMeta, options: CompactOptions): Promise<QueuedCompaction>;
}

/** Finds the `CompactionNode` for a node id; null when this node has no way to reach it. */
export type CompactionNodeLookup = (nodeId: string) => CompactionNode | null;

/** One hosting node's row: its queued job, or the error that failed the row. */
export type CompactionRow =
  | { nodeId: string; nodeName: string; queued: QueuedCompaction; error?: undefined }
  | { nodeId: string; nodeName: string; queued?: undefined; error: unknown };

/** The outcome of a compaction request: one row per hosting node, ordered by node name. */
export interface CompactionResult {
  collection: string;
  rows: CompactionRow[];
}

/** Ids of the nodes holding a primary copy of the collection (unassigned primaries have none). */
export function primaryNodeIds(collection: CollectionMeta): string[] {
  const ids = new Set<string>();
  for (const placement of collection.placements) if (placement.primary !== null) ids.add(placement.primary);
  return [...ids];
}

/** Asks every hosting node to queue its job; each node's failure stays in its own row. */
export async function compactAcrossNodes(
  collection: CollectionMeta,
  registry: readonly NodeRecord[],
  lookup: CompactionNodeLookup,
  options: CompactOptions,
): Promise<CompactionResult> {
  const names = new Map(registry.map((record) => [record.id, record.name]));
  const rows = await Promise.all(
    primaryNodeIds(collection).map(async (nodeId): Promise<CompactionRow> => {
      const nodeName = names.get(nodeId) ?? nodeId;
      try {
        const node = lookup(nodeId);
        if (!node) throw new NodeError('shard_unavailable', `node [${nodeName}] hosts primaries of [${collection.name}] but cannot be reached from this node`);
        return { nodeId, nodeName, queued: await node.compact(collection, options) };
      } catch (error) {
        return { nodeId, nodeName, error };
      }
    }),
  );
  rows.sort((left, right) => (left.nodeName < right.nodeName ? -1 : left.nodeName > right.nodeName ? 1 : 0));
  return { collection: collection.name, rows };
}

/** This node as a `CompactionNode`: one job in the local queue, one pass per started primary. */
export class LocalCompactionNode implements CompactionNode {
  constructor(
    private readonly context: NodeContext,
    private readonly jobs: JobQueue,
    private readonly faults: NodeFaults,
  ) {}

  /** This node's id. */
  get nodeId(): string {
    return this.context.nodeId;
  }

  /** See `CompactionNode.compact`. */
  async compact(collection: CollectionMeta, options: CompactOptions): Promise<QueuedCompaction> {
    if (this.faults.failCompaction) throw new EngineError('fault_injected', `injected failure: node [${this.nodeId}] refuses compaction requests`);
    const hosted = this.context.router.findCollection(collection.name);
    if (!hosted || hosted.meta.uuid !== collection.uuid) throw new NodeError('index_not_found', `no such index [${collection.name}] on node [${this.nodeId}]`);
    const passes: PassTask[] = [];
    for (const local of hosted.shards) {
      if (local?.state !== 'started' || !local.handle) continue;
      const { shardId, uuid } = local;
      passes.push({ shard: shardId, shardUuid: uuid, run: () => this.mergePass(collection, shardId, uuid, options.maxSegments) });
    }
    if (passes.length === 0) {
      throw new NodeError('shard_unavailable', `[${collection.name}] has no started primary copy on node [${this.nodeId}]`);
    }
    const job = await this.jobs.submit({
      type: 'compaction',
      collection: collection.name,
      collectionUuid: collection.uuid,
      maxSegments: options.maxSegments,
      passes,
    });
    return { jobId: job.id, primaryPasses: passes.length };
  }

  /** One pass, run when the job gets to it: the shard is looked up again, as it may be gone by then. */
  private async mergePass(collection: CollectionMeta, shardId: number, shardUuid: string, maxSegments: number) {
    const hosted = this.context.router.findCollection(collection.name);
    if (!hosted || hosted.meta.uuid !== collection.uuid) {
      throw new NodeError('index_not_found', `no such index [${collection.name}]: it was deleted before this compaction pass ran`);
    }
    const shard = this.context.router.primary(hosted, shardId);
    if (shard.uuid !== shardUuid) throw new NodeError('shard_unavailable', `[${collection.name}][${shardId}] is no longer the shard the job was queued for`);
    return shard.forceMerge({ maxSegments });
  }
}

/** Another node of the cluster as a `CompactionNode`: its own `LocalCompactionNode` answers, through the internal node API. */
export class RemoteCompactionNode implements CompactionNode {
  constructor(private readonly peer: PeerNode) {}

  /** That node's id. */
  get nodeId(): string {
    return this.peer.nodeId;
  }

  /** See `CompactionNode.compact`. */
  async compact(collection: CollectionMeta, options: CompactOptions): Promise<QueuedCompaction> {
    return (await this.peer.call('compact', [collection, options])) as QueuedCompaction;
  }
}
