/**
 * The cluster catalog as plain data: namespaces, collections with their shards and placements,
 * and the node registry. Every coordinator implementation stores and serves exactly this shape;
 * snapshots handed out are deeply frozen so no caller can change shared state by accident.
 */
import type { Mapping } from '../engine/mapping/mapping.ts';

/** Namespace every collection belongs to unless it names another one. */
export const DEFAULT_NAMESPACE = 'default';

/** A named group of collections. */
export interface NamespaceMeta {
  name: string;
  uuid: string;
  /** Creation time, epoch millis. */
  createdAt: number;
}

/** Shard layout of a collection, fixed at creation (ES index settings names). */
export interface CollectionSettings {
  number_of_shards: number;
  number_of_replicas: number;
}

/** One shard of a collection: its number within the collection and its UUID, fixed for life. */
export interface ShardMeta {
  id: number;
  uuid: string;
}

/** Which nodes hold a shard: the primary copy's node (null while unassigned) and replica nodes. */
export interface ShardPlacement {
  shard: number;
  primary: string | null;
  replicas: string[];
}

/** A collection (ES index) as the catalog records it. */
export interface CollectionMeta {
  name: string;
  uuid: string;
  namespace: string;
  settings: CollectionSettings;
  mapping: Mapping;
  shards: ShardMeta[];
  placements: ShardPlacement[];
  /** Creation time, epoch millis. */
  createdAt: number;
  /** Starts at 1, incremented by every change to the collection (mapping, placements). */
  version: number;
}

/** A live node in the registry; the record disappears when the node's lease ends. */
export interface NodeRecord {
  id: string;
  name: string;
  /** Base URL of the node's HTTP API, e.g. `http://127.0.0.1:9200`. */
  address: string;
  /** Trove version the node runs. */
  version: string;
  roles: string[];
  /** Epoch millis of registration; a re-registration gets a new value. */
  startedAt: number;
}

/** A consistent view of the whole catalog at one revision. */
export interface Catalog {
  clusterName: string;
  clusterUuid: string;
  /** Increases with every catalog change; never reused. */
  revision: number;
  namespaces: Record<string, NamespaceMeta>;
  collections: Record<string, CollectionMeta>;
  nodes: Record<string, NodeRecord>;
}

/** One thing that changed between two catalog revisions. */
export type CatalogChange =
  | { kind: 'namespace_created'; namespace: NamespaceMeta }
  | { kind: 'namespace_deleted'; namespace: NamespaceMeta }
  | { kind: 'collection_created'; collection: CollectionMeta }
  | { kind: 'collection_updated'; collection: CollectionMeta; previous: CollectionMeta }
  | { kind: 'collection_deleted'; collection: CollectionMeta }
  | { kind: 'node_joined'; node: NodeRecord }
  | { kind: 'node_left'; node: NodeRecord };

/** What watchers receive: the new revision, the catalog at that revision and what changed. */
export interface CatalogEvent {
  revision: number;
  catalog: Catalog;
  changes: CatalogChange[];
}

/** An empty catalog holding only the default namespace. */
export function emptyCatalog(clusterName: string, clusterUuid: string, now: number): Catalog {
  return {
    clusterName,
    clusterUuid,
    revision: 1,
    namespaces: { [DEFAULT_NAMESPACE]: { name: DEFAULT_NAMESPACE, uuid: crypto.randomUUID(), createdAt: now } },
    collections: {},
    nodes: {},
  };
}

/** Freezes a value and everything reachable from it; returns it for chaining. */
export function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}

/**
 * Lists what changed from `before` to `after`. A name whose UUID changed counts as a deletion
 * followed by a creation; a collection whose version changed is an update. Deletions come first,
 * so a consumer that applies changes in order never holds two collections with one name.
 */
export function diffCatalogs(before: Catalog, after: Catalog): CatalogChange[] {
  const removed: CatalogChange[] = [];
  const added: CatalogChange[] = [];
  for (const [name, collection] of Object.entries(before.collections)) {
    const next = after.collections[name];
    if (!next || next.uuid !== collection.uuid) removed.push({ kind: 'collection_deleted', collection });
  }
  for (const [name, namespace] of Object.entries(before.namespaces)) {
    const next = after.namespaces[name];
    if (!next || next.uuid !== namespace.uuid) removed.push({ kind: 'namespace_deleted', namespace });
  }
  for (const [id, node] of Object.entries(before.nodes)) {
    const next = after.nodes[id];
    if (!next || next.startedAt !== node.startedAt) removed.push({ kind: 'node_left', node });
  }
  for (const [name, namespace] of Object.entries(after.namespaces)) {
    const previous = before.namespaces[name];
    if (!previous || previous.uuid !== namespace.uuid) added.push({ kind: 'namespace_created', namespace });
  }
  for (const [name, collection] of Object.entries(after.collections)) {
    const previous = before.collections[name];
    if (!previous || previous.uuid !== collection.uuid) added.push({ kind: 'collection_created', collection });
    else if (previous.version !== collection.version) {
      added.push({ kind: 'collection_updated', collection, previous });
    }
  }
  for (const [id, node] of Object.entries(after.nodes)) {
    const previous = before.nodes[id];
    if (!previous || previous.startedAt !== node.startedAt) added.push({ kind: 'node_joined', node });
  }
  return [...removed, ...added];
}
