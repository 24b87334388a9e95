/**
 * What the node's request handlers (documents, bulk, search, collections) share: the coordinator,
 * the local shards, the dynamic-mapping updater and the current settings. Plus the lookups every
 * handler starts with: a collection by name, and a started shard of it.
 */
import type { Logger } from 'pino';
import type { Coordinator } from '../cluster/coordinator.ts';
import type { NodeSettingValues } from '../config/load-config.ts';
import type { Shard } from '../engine/shard/shard.ts';
import type { NodeCounters } from '../ops/stats/node-counters.ts';
import type { HostedCollection, LocalShards } from './local-shards.ts';
import type { MappingUpdater } from './mapping-updater.ts';
import { NodeError, collectionNotFound } from './node-error.ts';

/** Shared state of the request handlers. */
export interface NodeContext {
  readonly nodeId: string;
  readonly coordinator: Coordinator;
  readonly shards: LocalShards;
  readonly mappings: MappingUpdater;
  readonly logger: Logger;
  /** The node's current setting values (dynamic settings may change between calls). */
  settings(): Readonly<NodeSettingValues>;
  /** Counters of writes, updates and bulk requests for node stats (src/ops/stats). */
  readonly stats: NodeCounters;
}

/** The hosted collection with this name; index_not_found when there is none. */
export function requireCollection(context: NodeContext, name: string): HostedCollection {
  const hosted = context.shards.collection(name);
  if (!hosted) throw collectionNotFound(name);
  return hosted;
}

/** The started engine shard `shardId` of a collection; shard_unavailable when it is not open here. */
export function startedShard(hosted: HostedCollection, shardId: number): Shard {
  const local = hosted.shards[shardId];
  if (local?.state === 'started' && local.shard) return local.shard;
  const placement = hosted.meta.placements[shardId];
  const reason =
    local?.state === 'failed'
      ? `failed to open: ${local.failure}`
      : local?.state === 'opening'
        ? 'is still opening'
        : placement?.primary
          ? `is placed on node [${placement.primary}]`
          : 'is unassigned';
  throw new NodeError('shard_unavailable', `[${hosted.meta.name}][${shardId}] primary shard ${reason}`);
}
