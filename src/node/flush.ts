/**
 * `POST /_flush`, `POST /{target}/_flush` (Elasticsearch's flush): every copy of the selected
 * collections freezes its in-memory layer into a segment now (an epoch), the step Elasticsearch
 * calls a flush. Writes are already durable when acknowledged (each is fsynced to the write-ahead
 * log), so a flush changes no durability; it leaves the documents in a segment instead of the
 * log-backed layer. Answers `_shards` as Elasticsearch counts them: every copy the settings ask
 * for, of which those placed on a node and flushed are `successful`.
 */
import type { HostedCollection } from '../cluster/local-shards.ts';
import type { ShardHandle } from '../cluster/shard-handle.ts';
import type { NodeContext } from './node-context.ts';

/** The `_shards` header of a flush. */
export interface FlushShards {
  total: number;
  successful: number;
  failed: number;
}

/** Every placed copy of a collection, primary and replicas, wherever in the cluster. */
function copiesOf(context: NodeContext, hosted: HostedCollection): ShardHandle[] {
  const handles: ShardHandle[] = [];
  hosted.meta.placements.forEach((placement, shardId) => {
    const uuid = hosted.meta.shards[shardId]?.uuid;
    if (!placement || uuid === undefined) return;
    for (const nodeId of new Set([placement.primary, ...placement.replicas])) {
      if (nodeId === null) continue;
      const copy = context.router.copyOn(hosted.meta.name, shardId, nodeId, uuid);
      if (copy) handles.push(copy.handle);
    }
  });
  return handles;
}

/** Flushes every copy of `collections` (see the module comment). */
export async function flushCollections(context: NodeContext, collections: readonly HostedCollection[]): Promise<FlushShards> {
  const shards: FlushShards = { total: 0, successful: 0, failed: 0 };
  await Promise.all(
    collections.map(async (hosted) => {
      const { number_of_shards: count, number_of_replicas: replicas } = hosted.meta.settings;
      shards.total += count * (1 + replicas);
      const outcomes = await Promise.allSettled(copiesOf(context, hosted).map((handle) => handle.epoch()));
      for (const outcome of outcomes) {
        if (outcome.status === 'fulfilled') shards.successful++;
        else {
          shards.failed++;
          context.logger.warn({ err: outcome.reason, collection: hosted.meta.name }, 'flushing a shard copy failed');
        }
      }
    }),
  );
  return shards;
}
