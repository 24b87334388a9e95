/**
 * The coordinator owns the cluster catalog (namespaces, collections, shards, placements) and the
 * node registry. Two implementations fit behind it: the embedded `local` one (single node, a file
 * under `path.data`) and an etcd one (leases, watches, transactions). Callers never learn which
 * one they hold: every catalog change goes through these methods, and components react to
 * catalog changes only through `watch`, never through in-process side channels.
 *
 * Reads (`catalog`, `getCollection`, ...) are synchronous and served from the coordinator's view of
 * the catalog; after a mutating call resolves, that view already includes the change. Watchers may
 * be notified asynchronously (an etcd watch is), so a component that must act on its own change
 * waits until it has processed the returned revision.
 */
import type { Mapping } from '../engine/mapping/mapping.ts';
import type { AliasAction } from './alias-rules.ts';
import type {
  AliasMeta,
  ApiKeyRecord,
  Catalog,
  CatalogEvent,
  ClusterSettingsMeta,
  CollectionMeta,
  CollectionSettings,
  NamespaceMeta,
  NodeRecord,
} from './catalog.ts';
import type { ShardAddress } from './replication/in-sync-rules.ts';

/** What `createCollection` needs; UUIDs, shards and placements are assigned by the coordinator. */
export interface CreateCollectionRequest {
  name: string;
  /** Defaults to the `default` namespace; the namespace must exist. */
  namespace?: string;
  settings: CollectionSettings;
  mapping: Mapping;
  /** Aliases the collection starts with (the `aliases` of `PUT /{collection}`), by alias name. */
  aliases?: Record<string, AliasMeta>;
}

/**
 * What `restoreCollections` puts back, exactly as recorded when it left the catalog: collections
 * keep their UUIDs, shards (with shard UUIDs), mappings, settings and placements. `namespace` is
 * set when a whole namespace comes back.
 */
export interface RestoreCollectionsRequest {
  namespace?: NamespaceMeta;
  collections: CollectionMeta[];
}

/** The settings of a collection that may change after its creation (`PUT /{collection}/_settings`). */
export interface DynamicCollectionSettings {
  number_of_replicas?: number;
  /** A new value, or null to go back to the default. */
  max_result_window?: number | null;
  max_docvalue_fields_search?: number | null;
  max_script_fields?: number | null;
  max_slices_per_scroll?: number | null;
  'analyze.max_token_count'?: number | null;
  'highlight.max_analyzed_offset'?: number | null;
  refresh_interval?: string | null;
  'translog.retention.age'?: string | null;
  'translog.retention.size'?: string | null;
  'search.concurrent_segment_search.mode'?: string | null;
  'dual_write.index_name'?: string | null;
  'dual_write.soft_deletes_enabled'?: string | null;
  visibility?: string | null;
}

/** Options of `putMapping`. */
export interface PutMappingOptions {
  /**
   * Compare-and-set: apply only if the collection's `version` still equals this value, else fail
   * with `catalog_conflict` (the caller re-reads and retries).
   */
  expectedVersion?: number;
}

/** A node's announcement of itself to the registry. */
export interface NodeRegistration {
  id: string;
  name: string;
  /** Base URL of the node's HTTP API. */
  address: string;
  version: string;
  roles: string[];
}

/** Options of `registerNode`. */
export interface RegisterNodeOptions {
  /** Lease time-to-live: a node that stops heartbeating leaves the registry after this long. */
  ttlMs?: number;
}

/** A registered node's lease; the coordinator heartbeats it until `revoke` or `close`. */
export interface NodeLease {
  readonly nodeId: string;
  /** Ends the lease now: the node leaves the registry (a `node_left` change). */
  revoke(): Promise<void>;
}

/** Whether the coordinator reaches the store of its catalog now (etcd); why not, and since when. */
export type CoordinatorConnectivity = { available: true } | { available: false; reason: string; since: number };

/** Receives catalog events in revision order. A returned promise is not awaited by the coordinator. */
export type CatalogListener = (event: CatalogEvent) => void | Promise<void>;

/** Catalog and node registry of a cluster; see the module comment for the contract. */
export interface Coordinator {
  /** Which implementation this is, for `GET /` and logs only. */
  readonly kind: 'local' | 'etcd';
  /** Revision of the catalog view `catalog()` returns. */
  readonly revision: number;

  /** The current catalog view (deeply frozen). */
  catalog(): Catalog;
  /** Replaces the cluster settings (`PUT /_cluster/settings`, validated by the caller); answers them. */
  updateClusterSettings(settings: ClusterSettingsMeta): Promise<ClusterSettingsMeta>;

  /** A namespace by name, or null. */
  getNamespace(name: string): NamespaceMeta | null;
  /** All namespaces, sorted by name. */
  listNamespaces(): NamespaceMeta[];
  /** Creates a namespace; `resource_already_exists` when the name is taken. */
  createNamespace(name: string): Promise<NamespaceMeta>;
  /**
   * Deletes a namespace and every collection in it in one catalog change. Returns what was
   * removed. The default namespace cannot be deleted (`illegal_argument`).
   */
  deleteNamespace(name: string): Promise<{ namespace: NamespaceMeta; collections: CollectionMeta[] }>;

  /** A collection by name, or null. */
  getCollection(name: string): CollectionMeta | null;
  /** All collections (optionally of one namespace), sorted by name. */
  listCollections(namespace?: string): CollectionMeta[];
  /** Creates a collection with a UUID per shard and placements on registered nodes. */
  createCollection(request: CreateCollectionRequest): Promise<CollectionMeta>;
  /** Removes a collection from the catalog and returns its last metadata. */
  deleteCollection(name: string): Promise<CollectionMeta>;
  /**
   * Puts deleted collections (and, for a namespace, the namespace) back in one catalog change.
   * Refused with `resource_already_exists` when a name or UUID is taken, `namespace_not_found`
   * when a collection's namespace does not exist; then nothing changes.
   */
  restoreCollections(request: RestoreCollectionsRequest): Promise<CollectionMeta[]>;
  /** Replaces a collection's mapping (the caller merged and validated it) and bumps its version. */
  putMapping(name: string, mapping: Mapping, options?: PutMappingOptions): Promise<CollectionMeta>;
  /**
   * Applies alias actions (`POST /_aliases`) in order as one catalog change, all or nothing (rules:
   * alias-rules.ts); returns the collections a `remove_index` action took out of the catalog.
   */
  updateAliases(actions: readonly AliasAction[]): Promise<CollectionMeta[]>;
  /** Changes a collection's dynamic settings (the caller parsed them) and bumps its version when one changes. */
  updateCollectionSettings(name: string, update: DynamicCollectionSettings): Promise<CollectionMeta>;

  /**
   * Replication: adds the replica copy on `nodeId` to its shard's in-sync set, compared on the
   * primary term `term` (`catalog_conflict` when the term moved on or the copy is no longer placed).
   */
  markInSync(address: ShardAddress, nodeId: string, term: number): Promise<CollectionMeta>;
  /** Replication: removes the copies on `nodeIds` from their shard's in-sync set, compared on `term`. */
  markStale(address: ShardAddress, nodeIds: readonly string[], term: number): Promise<CollectionMeta>;
  /**
   * Until when (epoch millis) the registration of `nodeId` held by this process is certainly alive:
   * the store cannot have ended it, so no other node can have been promoted in its place. A primary
   * acknowledges writes only before this time. 0 when this process holds no such registration.
   */
  leaseValidUntil(nodeId: string): number;

  /** Adds this node to the registry under a lease kept alive by the coordinator. */
  registerNode(registration: NodeRegistration, options?: RegisterNodeOptions): Promise<NodeLease>;
  /** Nodes currently in the registry, sorted by id. */
  listNodes(): NodeRecord[];
  /** Id of the elected master node (the only one that allocates shard copies), or null while none is. */
  masterId(): string | null;
  /**
   * The secret the cluster's nodes share for cluster-internal calls (node-to-node requests carry
   * a credential derived from it). Created once per cluster; never shown in the catalog.
   */
  internalSecret(): string;

  /** An API key record (hash only) by id, or null. */
  getApiKey(id: string): ApiKeyRecord | null;
  /** Every API key record, sorted by id. */
  listApiKeys(): ApiKeyRecord[];
  /** Stores a new API key record; `resource_already_exists` when the id is taken. */
  createApiKey(record: ApiKeyRecord): Promise<ApiKeyRecord>;
  /**
   * Stores `record` only if the catalog holds no API key at all (the first start's admin key),
   * atomically, so that nodes starting together create one. False when a key already existed.
   */
  createFirstApiKey(record: ApiKeyRecord): Promise<boolean>;
  /** Removes an API key at once; returns the removed record, or null when no key has this id. */
  deleteApiKey(id: string): Promise<ApiKeyRecord | null>;
  /**
   * Records when keys were last used (id → epoch millis) in one change. Unknown ids are skipped
   * and a time never replaces a later one. Callers batch these: not one catalog write per request.
   */
  recordApiKeyUse(lastUsed: ReadonlyMap<string, number>): Promise<void>;

  /**
   * Whether the catalog's store answers now. While it does not, reads serve the last catalog seen
   * and every catalog change fails with `catalog_unavailable`, whole.
   */
  connectivity(): CoordinatorConnectivity;

  /** Subscribes to catalog events; returns the function that unsubscribes. */
  watch(listener: CatalogListener): () => void;
  /** Revokes this process's leases, stops watches and releases resources. */
  close(): Promise<void>;
}
