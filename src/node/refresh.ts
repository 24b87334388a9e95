/**
 * Refresh, for collections whose writes become visible on refresh (`index.visibility: refresh`,
 * src/cluster/visibility.ts): `POST [/{target}]/_refresh` refreshes every copy of every shard, and
 * a write's `refresh` parameter acts on the copies of the shards it wrote: `true` refreshes them
 * before the answer, `wait_for` answers once each has refreshed past the write (after at most
 * `WAIT_FOR_LIMIT_MS` it refreshes them itself, so that a collection with no periodic refresh
 * cannot hold the answer for good). Every copy, primary or replica, here or on another node, keeps
 * and refreshes its own view. For a collection in the default mode (`immediate`) none of this
 * calls a shard: its writes are visible at once.
 */
import type { HostedCollection } from '../cluster/local-shards.ts';
import type { ShardHandle } from '../cluster/shard-handle.ts';
import { refreshesOnly } from '../cluster/visibility.ts';
import type { NodeContext } from './node-context.ts';

/** Longest a `refresh=wait_for` write waits for a periodic refresh before it refreshes itself (Elasticsearch's default write timeout). */
export const WAIT_FOR_LIMIT_MS = 60_000;

/** A document a request wrote: its target as the request named it (collection or alias), id and routing; no id: every shard of the target. */
export interface WrittenDocument {
  collection: string;
  id?: string;
  routing?: string;
}

/** `_shards` of a refresh: copies the settings ask for, copies refreshed, copies that failed. */
export interface RefreshShards {
  total: number;
  successful: number;
  failed: number;
}

/** What a write's `refresh` parameter asks: `true` (or bare), `wait_for`, or nothing (absent, `false`). */
export function refreshPolicyOf(value: string | undefined): 'true' | 'wait_for' | null {
  if (value === '' || value === 'true') return 'true';
  return value === 'wait_for' ? 'wait_for' : null;
}

/** The started copies (primary and replicas, on any node) of the given shards of a collection (null: every shard). */
function copiesOf(context: NodeContext, hosted: HostedCollection, shards: ReadonlySet<number> | null): ShardHandle[] {
  const handles: ShardHandle[] = [];
  hosted.meta.placements.forEach((placement, shardId) => {
    const uuid = hosted.meta.shards[shardId]?.uuid;
    if (!placement || uuid === undefined || (shards !== null && !shards.has(shardId))) return;
    for (const nodeId of new Set([placement.primary, ...placement.replicas])) {
      if (nodeId === null) continue;
      const copy = context.router.copyOn(hosted.meta.name, shardId, nodeId, uuid);
      if (copy) handles.push(copy.handle);
    }
  });
  return handles;
}

/** The collection a write to `name` went to (an alias without a write index has none). */
function findCollection(context: NodeContext, name: string): HostedCollection | undefined {
  try {
    return context.router.findCollection(name);
  } catch {
    return undefined;
  }
}

/** `POST [/{target}]/_refresh` over the resolved collections: `_shards` counts copies as Elasticsearch does. */
export async function refreshCollections(context: NodeContext, collections: readonly HostedCollection[]): Promise<RefreshShards> {
  const shards: RefreshShards = { total: 0, successful: 0, failed: 0 };
  await Promise.all(
    collections.map(async (hosted) => {
      const { number_of_shards: count, number_of_replicas: replicas } = hosted.meta.settings;
      shards.total += count * (1 + replicas);
      const copies = copiesOf(context, hosted, null);
      if (!refreshesOnly(hosted.meta.settings)) {
        shards.successful += copies.length;
        return;
      }
      const outcomes = await Promise.allSettled(copies.map((handle) => handle.refresh()));
      for (const outcome of outcomes) {
        if (outcome.status === 'fulfilled') shards.successful++;
        else {
          shards.failed++;
          context.logger.warn({ err: outcome.reason, collection: hosted.meta.name }, 'refreshing a shard copy failed');
        }
      }
    }),
  );
  return shards;
}

/**
 * Makes what a request wrote visible as its `refresh` parameter asks (see the module comment).
 * Targets that no longer resolve are left out; a copy that fails to refresh is logged, and the
 * write, already acknowledged by its copies, still answers.
 */
export async function refreshAfterWrites(context: NodeContext, refresh: string | undefined, written: readonly WrittenDocument[]): Promise<void> {
  const policy = refreshPolicyOf(refresh);
  if (policy === null || written.length === 0) return;
  const targets = new Map<HostedCollection, Set<number> | null>();
  for (const document of written) {
    const hosted = findCollection(context, document.collection);
    if (!hosted || !refreshesOnly(hosted.meta.settings)) continue;
    const known = targets.get(hosted);
    if (document.id === undefined) {
      targets.set(hosted, null);
      continue;
    }
    if (known === null) continue;
    const shard = context.router.shardOf(hosted, document.id, context.router.writeRouting(document.collection, document.routing));
    if (known) known.add(shard);
    else targets.set(hosted, new Set([shard]));
  }
  const copies = [...targets].flatMap(([hosted, shards]) => copiesOf(context, hosted, shards));
  await Promise.all(
    copies.map(async (handle) => {
      try {
        if (policy === 'wait_for' && (await handle.waitForRefresh(WAIT_FOR_LIMIT_MS))) return;
        await handle.refresh();
      } catch (error) {
        context.logger.warn({ err: error, shard: handle.uuid }, 'refreshing a shard copy after a write failed');
      }
    }),
  );
}
