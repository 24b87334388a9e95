/**
 * Reader contexts seen from the coordinating node: a scroll or point in time is one reader context
 * per shard copy it reads (src/cluster/shard-handle.ts), all under one random id, on the node that
 * hosts each copy. A `ReaderGroup` names them: the id, the target it was opened on (whose alias
 * filters still apply) and, per shard in `_shard_doc` order, the collection, shard number, node
 * and copy uuid. Groups travel inside scroll and point-in-time ids, so any node can coordinate the
 * next page; a copy that is gone (its node left, the collection was deleted, the copy moved) is
 * `search_context_missing_exception`, as is a context that expired or was cleared.
 */
import { randomBytes } from 'node:crypto';
import type { PlacedCopy, ShardTarget } from '../cluster/router.ts';
import type { ReaderContextInfo, ReaderKind } from '../cluster/shard-handle.ts';
import { EngineError } from '../engine/errors.ts';
import type { NodeContext } from './node-context.ts';
import { parseTimeValue } from './search-body.ts';
import type { SearchShardsHeader } from './search.ts';

/** One shard of a group: where its reader context lives. */
export interface ReaderShard {
  collection: string;
  shard: number;
  node: string;
  /** The copy's uuid: a collection deleted and created again under the same name is another copy. */
  copy: string;
}

/** See the module comment. */
export interface ReaderGroup {
  id: string;
  /** The target (names, patterns, aliases) the group was opened on. */
  target: string;
  shards: ReaderShard[];
}

/** The targets of a search on a group's reader contexts, and its `_shards` header. */
export interface ReaderTargets {
  targets: ShardTarget[];
  header: SearchShardsHeader;
}

/** The error of a reader context that is gone. */
export function contextMissing(id: string): EngineError {
  return new EngineError('search_context_missing', `No search context found for id [${id}]`);
}

/**
 * A keep-alive (`1m`, `30s`, ms as a number) checked against `search.max_keep_alive_secs`;
 * `illegal_argument` past it, as Elasticsearch words it.
 */
export function parseKeepAlive(context: NodeContext, value: unknown, name: string): number {
  const keepAliveMs = parseTimeValue(value, name);
  if (keepAliveMs === undefined || keepAliveMs <= 0) throw new EngineError('illegal_argument', `[${name}] must be a positive time value, got [${String(value)}]`);
  const maxSecs = context.settings()['search.max_keep_alive_secs'];
  if (keepAliveMs > maxSecs * 1000) {
    throw new EngineError(
      'illegal_argument',
      `Keep alive for request (${String(value)}) is too large. It must be less than (${maxSecs}s). This limit can be set by changing the [search.max_keep_alive_secs] setting.`,
    );
  }
  return Math.round(keepAliveMs);
}

/**
 * Opens one reader context of `kind` on every target, under a new id; if one fails (the node's
 * limit, a copy gone), those already opened are closed and the failure is thrown.
 */
export async function openReaders(context: NodeContext, target: string, targets: readonly ShardTarget[], kind: ReaderKind, keepAliveMs: number): Promise<ReaderGroup & ReaderTargets> {
  const id = randomBytes(15).toString('base64url');
  const settled = await Promise.allSettled(targets.map((shard, shardIndex) => shard.handle.openReader({ id, kind, shardIndex, keepAliveMs })));
  const failure = settled.find((outcome): outcome is PromiseRejectedResult => outcome.status === 'rejected');
  if (failure) {
    await Promise.all(settled.map((outcome, index) => (outcome.status === 'fulfilled' ? targets[index]!.handle.closeReaders({ ids: [id] }).catch(() => 0) : 0)));
    throw failure.reason;
  }
  const shards = targets.map((shard) => ({ collection: shard.collection.meta.name, shard: shard.shardId, node: context.router.nodeOf(shard), copy: shard.collection.meta.shards[shard.shardId]!.uuid }));
  return { id, target, shards, targets: targets.map((shard) => ({ ...shard, reader: { id } })), header: fullHeader(targets.length) };
}

/** The copies of a group to search, each on its reader context (renewed to `keepAliveMs` when given); search_context_missing when one is gone. */
export function readerTargets(context: NodeContext, group: ReaderGroup, keepAliveMs?: number): ReaderTargets {
  const targets = group.shards.map((shard): ShardTarget => {
    const copy = context.router.copyOn(shard.collection, shard.shard, shard.node, shard.copy);
    if (copy === null) throw contextMissing(group.id);
    return { collection: copy.collection, shardId: shard.shard, handle: copy.handle, local: copy.local, reader: keepAliveMs === undefined ? { id: group.id } : { id: group.id, keepAliveMs } };
  });
  return { targets, header: fullHeader(targets.length) };
}

/** Closes a group's contexts; answers how many shard contexts were closed (copies gone count none). */
export async function closeGroup(context: NodeContext, group: ReaderGroup): Promise<number> {
  const closed = await Promise.all(
    group.shards.map(async (shard) => {
      const copy = context.router.copyOn(shard.collection, shard.shard, shard.node, shard.copy);
      return copy === null ? 0 : copy.handle.closeReaders({ ids: [group.id] }).catch(() => 0);
    }),
  );
  return closed.reduce((sum, count) => sum + count, 0);
}

/** Closes every context of a kind on every copy in the cluster; answers how many. */
export async function closeEveryReader(context: NodeContext, kind: ReaderKind): Promise<number> {
  const closed = await Promise.all(context.router.everyCopy().map((copy) => copy.handle.closeReaders({ kind }).catch(() => 0)));
  return closed.reduce((sum, count) => sum + count, 0);
}

/** A group found by listing the copies, with its oldest creation time and its keep-alive. */
export interface ListedGroup {
  group: ReaderGroup;
  createdAt: number;
  keepAliveMs: number;
}

/** The groups of a kind open in the cluster, rebuilt from what each copy lists (copies that do not answer are left out). */
export async function listGroups(context: NodeContext, kind: ReaderKind): Promise<ListedGroup[]> {
  const copies = context.router.everyCopy();
  const listed = await Promise.all(copies.map((copy) => copy.handle.listReaders().catch(() => [] as ReaderContextInfo[])));
  const groups = new Map<string, { readers: Array<{ copy: PlacedCopy; info: ReaderContextInfo }> }>();
  listed.forEach((readers, index) => {
    for (const info of readers) {
      if (info.kind !== kind) continue;
      let entry = groups.get(info.id);
      if (!entry) groups.set(info.id, (entry = { readers: [] }));
      entry.readers.push({ copy: copies[index]!, info });
    }
  });
  return [...groups].map(([id, { readers }]) => {
    readers.sort((left, right) => left.info.shardIndex - right.info.shardIndex);
    const shards = readers.map(({ copy }) => ({ collection: copy.collection.meta.name, shard: copy.shardId, node: copy.nodeId, copy: copy.collection.meta.shards[copy.shardId]!.uuid }));
    return {
      group: { id, target: [...new Set(shards.map((shard) => shard.collection))].join(','), shards },
      createdAt: Math.min(...readers.map(({ info }) => info.createdAt)),
      keepAliveMs: Math.max(...readers.map(({ info }) => info.keepAliveMs)),
    };
  });
}

/** A group as plain JSON (the payload of scroll and point-in-time ids). */
export function groupToJson(group: ReaderGroup): unknown[] {
  return [group.id, group.target, group.shards.map((shard) => [shard.collection, shard.shard, shard.node, shard.copy])];
}

/** A group read back from `groupToJson`'s form; null when it does not have that shape. */
export function groupFromJson(value: unknown): ReaderGroup | null {
  if (!Array.isArray(value) || value.length !== 3) return null;
  const [id, target, shards] = value as unknown[];
  if (typeof id !== 'string' || typeof target !== 'string' || !Array.isArray(shards) || shards.length === 0) return null;
  const parsed: ReaderShard[] = [];
  for (const shard of shards) {
    if (!Array.isArray(shard) || shard.length !== 4) return null;
    const [collection, number, node, copy] = shard as unknown[];
    if (typeof collection !== 'string' || !Number.isSafeInteger(number) || (number as number) < 0 || typeof node !== 'string' || typeof copy !== 'string') return null;
    parsed.push({ collection, shard: number as number, node, copy });
  }
  return { id, target, shards: parsed };
}

function fullHeader(count: number): SearchShardsHeader {
  return { total: count, successful: count, skipped: 0, failed: 0 };
}
