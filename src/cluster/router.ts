/**
 * The router: maps a collection and a document (or a shard number) to the shard handle that
 * serves it. Routes and the node layer reach shards only through it, so nothing above knows
 * whether a shard runs in this thread, in a worker thread, or on another node.
 */
import { buildAliasIndex, writeMember, type AliasIndex } from './aliases.ts';
import { inSyncOf, type NodeRecord } from './catalog.ts';
import { CatalogError } from './catalog-error.ts';
import type { HeapReleaseStats } from '../engine/memory/heap-release.ts';
import type { HostedCollection, LocalShards, StartedShardStats } from './local-shards.ts';
import { shardFor } from './routing.ts';
import type { ReaderUse, ShardHandle } from './shard-handle.ts';

/** One shard copy a request goes to. */
export interface ShardTarget {
  collection: HostedCollection;
  shardId: number;
  handle: ShardHandle;
  /** Whether the copy is on this node: a call to it crosses no network (a search plans its phases by it). */
  local: boolean;
  /** The reader context a scroll or point-in-time search reads on this copy (absent: a new point-in-time view per search). */
  reader?: ReaderUse;
}

/** A copy of a shard and the node that holds it (primary or replica). */
export interface PlacedCopy {
  collection: HostedCollection;
  shardId: number;
  nodeId: string;
  handle: ShardHandle;
}

/** A shard a search could not reach, with the reason. */
export interface ShardMiss {
  collection: HostedCollection;
  shardId: number;
  reason: string;
}

/** Where the router learns about other nodes and how it reaches their shard copies. */
export interface RemoteShards {
  /** The live node with this id, or undefined when it is not in the registry. */
  node(nodeId: string): NodeRecord | undefined;
  /** The handle of shard copy `uuid` on `node` (one handle per copy, reused). */
  handle(node: NodeRecord, uuid: string): ShardHandle;
}

/** See the module comment. */
export class Router {
  private aliasView: { revision: number; index: AliasIndex } | null = null;

  constructor(
    private readonly shards: LocalShards,
    private readonly nodeId: string,
    /** Absent in a single-node setup: every copy is local. */
    private readonly remote?: RemoteShards,
  ) {}

  /**
   * The collection as this node has applied it, or the one a write through alias `name` goes to
   * (aliases.ts `writeMember`); index_not_found when the catalog has neither.
   */
  collection(name: string): HostedCollection {
    const hosted = this.findCollection(name);
    if (!hosted) throw new CatalogError('index_not_found', `no such index [${name}]`);
    return hosted;
  }

  /** As `collection`, but undefined when the catalog (as applied) has no collection or alias by that name. */
  findCollection(name: string): HostedCollection | undefined {
    const hosted = this.shards.collection(name);
    if (hosted) return hosted;
    const members = this.aliases().get(name);
    return members ? this.shards.collection(writeMember(name, members).collection) : undefined;
  }

  /** Alias name → the collections it points to, as this node has applied the catalog. */
  aliases(): AliasIndex {
    const revision = this.shards.appliedRevision;
    if (this.aliasView?.revision !== revision) this.aliasView = { revision, index: buildAliasIndex(this.collections().map((hosted) => hosted.meta)) };
    return this.aliasView.index;
  }

  /**
   * The routing of a single-document request through `name`: the request's own, or the
   * `index_routing` of alias `name`; illegal_argument when both are given and differ (as ES).
   */
  writeRouting(name: string, routing: string | undefined): string | undefined {
    if (this.shards.collection(name)) return routing;
    const members = this.aliases().get(name);
    const aliasRouting = members ? writeMember(name, members).alias.index_routing : undefined;
    if (aliasRouting === undefined) return routing;
    if (routing !== undefined && routing !== aliasRouting) {
      throw new CatalogError('illegal_argument', `Alias [${name}] has index routing associated with it [${aliasRouting}], and was provided with routing value [${routing}], rejecting operation`);
    }
    return aliasRouting;
  }

  /** Every collection, sorted by name. */
  collections(): HostedCollection[] {
    return this.shards.collections();
  }

  /** Shard number of a document: `hash(routing ?? id) mod number_of_shards`. */
  shardOf(collection: HostedCollection, id: string, routing?: string): number {
    return shardFor(routing ?? id, collection.meta.settings.number_of_shards);
  }

  /** The primary copy of shard `shardId`, here or on its node; shard_unavailable when it cannot serve requests. */
  primary(collection: HostedCollection, shardId: number): ShardHandle {
    const handle = this.copy(collection, shardId);
    if (handle) return handle;
    throw new CatalogError('shard_unavailable', `[${collection.meta.name}][${shardId}] primary shard ${this.unavailableReason(collection, shardId)}`);
  }

  /** The primary copy's handle: the local one when it is placed here, else the remote one of its node. */
  private copy(collection: HostedCollection, shardId: number): ShardHandle | null {
    const placed = collection.meta.placements[shardId]?.primary ?? null;
    if (placed === null) return null;
    if (placed === this.nodeId) {
      const local = collection.shards[shardId];
      return local?.state === 'started' && local.handle ? local.handle : null;
    }
    const node = this.remote?.node(placed);
    const uuid = collection.meta.shards[shardId]?.uuid;
    return node && uuid ? this.remote!.handle(node, uuid) : null;
  }

  /** The primary copy serving a document. */
  document(collection: HostedCollection, id: string, routing?: string): ShardTarget {
    const shardId = this.shardOf(collection, id, routing);
    return { collection, shardId, handle: this.primary(collection, shardId), local: this.primaryIsHere(collection, shardId) };
  }

  private primaryIsHere(collection: HostedCollection, shardId: number): boolean {
    return collection.meta.placements[shardId]?.primary === this.nodeId;
  }

  /** One copy of every shard of the collections, and the shards no copy of which can serve. */
  searchShards(collections: readonly HostedCollection[]): { targets: ShardTarget[]; misses: ShardMiss[] } {
    const targets: ShardTarget[] = [];
    const misses: ShardMiss[] = [];
    for (const collection of collections) {
      for (let shardId = 0; shardId < collection.meta.settings.number_of_shards; shardId++) {
        const handle = this.copy(collection, shardId);
        if (handle) targets.push({ collection, shardId, handle, local: this.primaryIsHere(collection, shardId) });
        else misses.push({ collection, shardId, reason: `[${collection.meta.name}][${shardId}] primary shard ${this.unavailableReason(collection, shardId)}` });
      }
    }
    return { targets, misses };
  }

  /**
   * One copy of every shard for a search: this node's own copy when it is in sync (no hop; an
   * in-sync replica has applied every acknowledged write), else the primary; and the shards no
   * copy of which can serve.
   */
  searchCopies(collections: readonly HostedCollection[]): { targets: ShardTarget[]; misses: ShardMiss[] } {
    const { targets, misses } = this.searchShards(collections);
    const local = (collection: HostedCollection, shardId: number): ShardHandle | null => {
      const copy = collection.shards[shardId];
      const placement = collection.meta.placements[shardId];
      const inSyncHere = placement !== undefined && placement.primary !== this.nodeId && inSyncOf(placement).includes(this.nodeId);
      return inSyncHere && copy?.state === 'started' ? copy.handle : null;
    };
    const served = targets.map((target) => {
      const here = local(target.collection, target.shardId);
      return here ? { ...target, handle: here, local: true } : target;
    });
    const unserved: ShardMiss[] = [];
    for (const miss of misses) {
      const handle = local(miss.collection, miss.shardId);
      if (handle) served.push({ collection: miss.collection, shardId: miss.shardId, handle, local: true });
      else unserved.push(miss);
    }
    // Shard order as searchShards gives it (the merge breaks ties by it).
    served.sort((left, right) => collections.indexOf(left.collection) - collections.indexOf(right.collection) || left.shardId - right.shardId);
    return { targets: served, misses: unserved };
  }

  /** Node id of the copy a search target reads (this node's, or the primary's). */
  nodeOf(target: ShardTarget): string {
    return target.local ? this.nodeId : (target.collection.meta.placements[target.shardId]?.primary ?? this.nodeId);
  }

  /**
   * The copy of shard `shardId` of collection `name` on node `nodeId`, when it still exists there
   * as copy `uuid` (a started local copy, or one on a node of the registry); else null.
   */
  copyOn(name: string, shardId: number, nodeId: string, uuid: string): { collection: HostedCollection; handle: ShardHandle; local: boolean } | null {
    const collection = this.shards.collection(name);
    if (!collection || collection.meta.shards[shardId]?.uuid !== uuid) return null;
    if (nodeId === this.nodeId) {
      const local = collection.shards[shardId];
      return local?.state === 'started' && local.handle ? { collection, handle: local.handle, local: true } : null;
    }
    const node = this.remote?.node(nodeId);
    return node ? { collection, handle: this.remote!.handle(node, uuid), local: false } : null;
  }

  /** Every copy of every shard the catalog places (primaries and replicas), here and on the other nodes of the registry. */
  everyCopy(): PlacedCopy[] {
    const copies: PlacedCopy[] = [];
    for (const collection of this.collections()) {
      collection.meta.placements.forEach((placement, shardId) => {
        const uuid = collection.meta.shards[shardId]?.uuid;
        if (!placement || uuid === undefined) return;
        for (const nodeId of new Set([placement.primary, ...placement.replicas])) {
          if (nodeId === null) continue;
          const copy = this.copyOn(collection.meta.name, shardId, nodeId, uuid);
          if (copy) copies.push({ collection, shardId, nodeId, handle: copy.handle });
        }
      });
    }
    return copies;
  }

  /** The figures of every started shard copy this node serves. */
  startedStats(): Promise<StartedShardStats[]> {
    return this.shards.startedStats();
  }

  /** The heap releases of the threads this node's shard copies run in, besides this one. */
  shardThreadStats(): Promise<HeapReleaseStats[]> {
    return this.shards.threadStats();
  }

  private unavailableReason(collection: HostedCollection, shardId: number): string {
    const local = collection.shards[shardId];
    if (local?.state === 'failed') return `failed to open: ${local.failure}`;
    if (local?.state === 'opening') return 'is still opening';
    const placed = collection.meta.placements[shardId]?.primary ?? null;
    if (placed === null) return 'is unassigned';
    if (placed === this.nodeId) return 'is not open on this node';
    return `is placed on node [${placed}], which is not in the cluster's registry`;
  }

  /** Resolves once this node has applied catalog revision `revision`. */
  waitForRevision(revision: number): Promise<void> {
    return this.shards.waitForRevision(revision);
  }
}
