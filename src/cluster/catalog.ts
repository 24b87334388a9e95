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

/** Shard layout of a collection and its index limits (ES index settings names). */
export interface CollectionSettings {
  number_of_shards: number;
  number_of_replicas: number;
  /** Static, kept and shown (shards are never split); absent: number_of_shards. */
  number_of_routing_shards?: number;
  /** Dynamic: largest from + size of a search and page of a scroll; absent: 10000. */
  max_result_window?: number;
  /** Dynamic: most `docvalue_fields` entries of a search; absent: 100. */
  max_docvalue_fields_search?: number;
  max_script_fields?: number;
  /** Dynamic: most slices of a sliced scroll; absent: 1024. */
  max_slices_per_scroll?: number;
  /** Dynamic: most tokens one `_analyze` call may produce; absent: 10000. */
  'analyze.max_token_count'?: number;
  'highlight.max_analyzed_offset'?: number;
  /** Dynamic, kept and shown with no effect (writes are searchable at once); absent: 1s. */
  refresh_interval?: string;
  /** Static, only "true"; kept and shown when given. */
  'soft_deletes.enabled'?: string;
  /** Dynamic, kept and shown with no effect (Trove's log is not a translog). */
  'translog.retention.age'?: string;
  'translog.retention.size'?: string;
  /** Dynamic, kept and shown with no effect (each shard is searched segment by segment). */
  'search.concurrent_segment_search.mode'?: string;
}

/** One shard of a collection: its number within the collection and its UUID, fixed for life. */
export interface ShardMeta {
  id: number;
  uuid: string;
}

/**
 * Which nodes hold a shard: the primary copy's node (null while unassigned) and replica nodes,
 * with the primary term and the in-sync set of replication (src/cluster/replication). Catalogs
 * written before replication have neither: term 1, and only the primary in sync.
 */
export interface ShardPlacement {
  shard: number;
  primary: string | null;
  replicas: string[];
  /** Primary term: 1 at creation, one more at every promotion of a replica. */
  primaryTerm?: number;
  /** Nodes whose copy holds every acknowledged write (the primary's first); writes wait for each. */
  inSync?: string[];
}

/** The primary term of a placement. */
export function primaryTermOf(placement: ShardPlacement): number {
  return placement.primaryTerm ?? 1;
}

/** The nodes whose copies are in sync, the primary's node first (none while unassigned). */
export function inSyncOf(placement: ShardPlacement): string[] {
  if (placement.inSync) return placement.inSync;
  return placement.primary === null ? [] : [placement.primary];
}

/**
 * One alias of a collection (an Elasticsearch index alias), under the alias's name in the
 * collection's `aliases`; the field names are Elasticsearch's, so the API shows them as stored.
 */
export interface AliasMeta {
  /** Query DSL object ANDed into every read through the alias. */
  filter?: Record<string, unknown>;
  /** Routing value of writes through the alias (when they carry none). */
  index_routing?: string;
  /** Routing values (comma list) that limit searches through the alias to their shards. */
  search_routing?: string;
  /** Whether writes through an alias of several collections go to this one. */
  is_write_index?: boolean;
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
  /** Starts at 1, incremented by every change to the collection (mapping, placements, aliases). */
  version: number;
  /** Aliases of the collection by alias name; absent means none (catalogs written before aliases). */
  aliases?: Record<string, AliasMeta>;
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

/**
 * An API key as the catalog stores it: never the key itself, only a hash of it. The role and
 * namespace names are checked by the security layer (src/ops/security), not here.
 */
export interface ApiKeyRecord {
  id: string;
  name: string;
  /** Role the key grants (`monitor`, `read`, `write`, `manage`, `admin`). */
  role: string;
  /** Namespaces the key is limited to; null when it may reach every namespace. */
  namespaces: string[] | null;
  /** `hmac-sha256:<salt>:<hex>` of the whole key string (salted, see api-key-material.ts), or `sha256:<hex>` in records written by earlier versions. */
  hash: string;
  /** `issued`: generated by Trove, the key carries its id; `supplied`: chosen by the operator (`TROVE_API_KEY`). */
  origin: 'issued' | 'supplied';
  /** Creation time, epoch millis. */
  createdAt: number;
  /** Expiry, epoch millis; null when the key never expires. */
  expiresAt: number | null;
  /** Last successful authentication as last recorded (updates are batched), epoch millis. */
  lastUsedAt: number | null;
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
  /** API keys by id (hashes only); absent means none (catalogs written before keys existed). */
  apiKeys?: Record<string, ApiKeyRecord>;
}

/** One thing that changed between two catalog revisions. */
export type CatalogChange =
  | { kind: 'namespace_created'; namespace: NamespaceMeta }
  | { kind: 'namespace_deleted'; namespace: NamespaceMeta }
  | { kind: 'collection_created'; collection: CollectionMeta }
  | { kind: 'collection_updated'; collection: CollectionMeta; previous: CollectionMeta }
  | { kind: 'collection_deleted'; collection: CollectionMeta }
  | { kind: 'node_joined'; node: NodeRecord }
  | { kind: 'node_left'; node: NodeRecord }
  | { kind: 'api_key_created'; apiKey: ApiKeyRecord }
  | { kind: 'api_key_updated'; apiKey: ApiKeyRecord; previous: ApiKeyRecord }
  | { kind: 'api_key_deleted'; apiKey: ApiKeyRecord };

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
    apiKeys: {},
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
  const keysBefore = before.apiKeys ?? {};
  const keysAfter = after.apiKeys ?? {};
  for (const [id, apiKey] of Object.entries(keysBefore)) {
    if (!Object.hasOwn(keysAfter, id)) removed.push({ kind: 'api_key_deleted', apiKey });
  }
  for (const [id, apiKey] of Object.entries(keysAfter)) {
    const previous = Object.hasOwn(keysBefore, id) ? keysBefore[id] : undefined;
    if (!previous) added.push({ kind: 'api_key_created', apiKey });
    else if (JSON.stringify(previous) !== JSON.stringify(apiKey)) added.push({ kind: 'api_key_updated', apiKey, previous });
  }
  return [...removed, ...added];
}
