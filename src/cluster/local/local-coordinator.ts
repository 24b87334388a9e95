/**
 * The embedded coordinator: the whole catalog lives in one process and one file under
 * `<path.data>/catalog/`. Mutations run one at a time: each builds the next catalog from a copy of
 * the current one, persists it atomically, then swaps it in and notifies watchers. A mutation that
 * throws (bad input, failed write) leaves both the file and the in-memory view unchanged.
 *
 * Leases: this coordinator serves a single process, so a lease it grants lives until `revoke` or
 * `close`; there is no other process whose missed heartbeats could expire it.
 */
import { markInSyncIn, markStaleIn, type ShardAddress } from '../replication/in-sync-rules.ts';
import { randomBytes } from 'node:crypto';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from 'pino';
import type { Mapping } from '../../engine/mapping/mapping.ts';
import {
  type ApiKeyRecord,
  deepFreeze,
  diffCatalogs,
  emptyCatalog,
  type Catalog,
  type ClusterSettingsMeta,
  type CollectionMeta,
  type NamespaceMeta,
  type NodeRecord,
} from '../catalog.ts';
import { CatalogError } from '../catalog-error.ts';
import type {
  CatalogListener,
  Coordinator,
  CoordinatorConnectivity,
  CreateCollectionRequest,
  NodeLease,
  NodeRegistration,
  DynamicCollectionSettings,
  PutMappingOptions,
  RestoreCollectionsRequest,
} from '../coordinator.ts';
import { updateAliasesIn, type AliasAction } from '../alias-rules.ts';
import {
  createApiKeyIn,
  createCollectionIn,
  createFirstApiKeyIn,
  createNamespaceIn,
  deleteApiKeyIn,
  deleteCollectionIn,
  deleteNamespaceIn,
  putMappingIn,
  updateClusterSettingsIn,
  updateCollectionSettingsIn,
  recordApiKeyUseIn,
  restoreCollectionsIn,
  sortedByKey,
  type CatalogLimits,
} from '../catalog-rules.ts';
import { nodeLoad, reassignOrphanedShards } from '../placement.ts';
import { removeInterruptedWrite } from '../../engine/directory/atomic-file.ts';
import { readCatalogFile, writeCatalogFile } from './catalog-file.ts';

/** Options of `LocalCoordinator.open`. */
export interface LocalCoordinatorOptions {
  /** The node's `path.data`; the catalog lives in its `catalog/` folder. */
  dataPath: string;
  /** Must match the name recorded when the catalog was created. */
  clusterName: string;
  logger?: Logger;
  /** Node-wide bounds of catalog changes (`cluster.max_shards_per_node`); Elasticsearch's defaults when absent. */
  limits?: CatalogLimits;
  /** Clock, epoch millis (tests pin it). */
  now?: () => number;
  /** Test hook run before the catalog file's rename; throwing simulates a crash at that point. */
  beforeCatalogRename?: () => void;
}

/** Single-node coordinator persisted under `path.data` (see the module comment). */
export class LocalCoordinator implements Coordinator {
  readonly kind = 'local' as const;
  private readonly listeners = new Set<CatalogListener>();
  private readonly leases = new Set<string>();
  /** A single node makes no internal calls to other nodes: a secret of this process suffices. */
  private readonly secret = randomBytes(32).toString('base64url');
  private mutations: Promise<unknown> = Promise.resolve();
  private closed = false;

  private constructor(
    private current: Catalog,
    private readonly file: string,
    private readonly options: LocalCoordinatorOptions,
  ) {}

  /** Loads the catalog from `path.data` (creating an empty one on first start). */
  static async open(options: LocalCoordinatorOptions): Promise<LocalCoordinator> {
    const directory = join(options.dataPath, 'catalog');
    await mkdir(directory, { recursive: true });
    const file = join(directory, 'catalog.json');
    await removeInterruptedWrite(file);
    const now = options.now ?? Date.now;
    let catalog = await readCatalogFile(file);
    if (catalog === null) {
      catalog = emptyCatalog(options.clusterName, crypto.randomUUID(), now());
      await writeCatalogFile(file, catalog);
    } else if (catalog.clusterName !== options.clusterName) {
      throw new CatalogError(
        'catalog_unavailable',
        `the data path holds the catalog of cluster [${catalog.clusterName}], but this node is configured for cluster [${options.clusterName}]`,
      );
    }
    if (Object.keys(catalog.nodes).length > 0) {
      // Registrations of a previous run of this process: their leases ended with it.
      catalog = { ...catalog, nodes: {}, revision: catalog.revision + 1 };
    }
    return new LocalCoordinator(deepFreeze(catalog), file, options);
  }

  get revision(): number {
    return this.current.revision;
  }

  /** The embedded catalog is a file of this node: always reachable. */
  connectivity(): CoordinatorConnectivity {
    return { available: true };
  }

  catalog(): Catalog {
    return this.current;
  }

  getNamespace(name: string): NamespaceMeta | null {
    return Object.hasOwn(this.current.namespaces, name) ? this.current.namespaces[name] : null;
  }

  listNamespaces(): NamespaceMeta[] {
    return sortedByKey(this.current.namespaces);
  }

  createNamespace(name: string): Promise<NamespaceMeta> {
    return this.mutate((draft) => createNamespaceIn(draft, name, this.now()));
  }

  deleteNamespace(name: string): Promise<{ namespace: NamespaceMeta; collections: CollectionMeta[] }> {
    return this.mutate((draft) => deleteNamespaceIn(draft, name));
  }

  getCollection(name: string): CollectionMeta | null {
    return Object.hasOwn(this.current.collections, name) ? this.current.collections[name] : null;
  }

  listCollections(namespace?: string): CollectionMeta[] {
    const all = sortedByKey(this.current.collections);
    return namespace === undefined ? all : all.filter((collection) => collection.namespace === namespace);
  }

  createCollection(request: CreateCollectionRequest): Promise<CollectionMeta> {
    return this.mutate((draft) => createCollectionIn(draft, request, this.now(), this.options.limits));
  }

  deleteCollection(name: string): Promise<CollectionMeta> {
    return this.mutate((draft) => deleteCollectionIn(draft, name));
  }

  restoreCollections(request: RestoreCollectionsRequest): Promise<CollectionMeta[]> {
    return this.mutate((draft) => restoreCollectionsIn(draft, request, this.options.limits));
  }

  putMapping(name: string, mapping: Mapping, options: PutMappingOptions = {}): Promise<CollectionMeta> {
    return this.mutate((draft) => putMappingIn(draft, name, mapping, options));
  }

  updateAliases(actions: readonly AliasAction[]): Promise<CollectionMeta[]> {
    return this.mutate((draft) => updateAliasesIn(draft, actions));
  }

  updateClusterSettings(settings: ClusterSettingsMeta): Promise<ClusterSettingsMeta> {
    return this.mutate((draft) => updateClusterSettingsIn(draft, settings));
  }

  updateCollectionSettings(name: string, update: DynamicCollectionSettings): Promise<CollectionMeta> {
    return this.mutate((draft) => updateCollectionSettingsIn(draft, name, update));
  }

  markInSync(address: ShardAddress, nodeId: string, term: number): Promise<CollectionMeta> {
    return this.mutate((draft) => markInSyncIn(draft, address, nodeId, term));
  }

  markStale(address: ShardAddress, nodeIds: readonly string[], term: number): Promise<CollectionMeta> {
    return this.mutate((draft) => markStaleIn(draft, address, nodeIds, term));
  }

  /** The embedded coordinator's registrations end only with the process: no other node can take over. */
  leaseValidUntil(nodeId: string): number {
    return this.leases.has(nodeId) ? Number.POSITIVE_INFINITY : 0;
  }

  getApiKey(id: string): ApiKeyRecord | null {
    const keys = this.current.apiKeys ?? {};
    return Object.hasOwn(keys, id) ? keys[id] : null;
  }

  listApiKeys(): ApiKeyRecord[] {
    return sortedByKey(this.current.apiKeys ?? {});
  }

  createApiKey(record: ApiKeyRecord): Promise<ApiKeyRecord> {
    return this.mutate((draft) => createApiKeyIn(draft, record));
  }

  createFirstApiKey(record: ApiKeyRecord): Promise<boolean> {
    return this.mutate((draft) => createFirstApiKeyIn(draft, record));
  }

  deleteApiKey(id: string): Promise<ApiKeyRecord | null> {
    return this.mutate((draft) => deleteApiKeyIn(draft, id));
  }

  recordApiKeyUse(lastUsed: ReadonlyMap<string, number>): Promise<void> {
    return this.mutate((draft) => recordApiKeyUseIn(draft, lastUsed));
  }

  async registerNode(registration: NodeRegistration): Promise<NodeLease> {
    await this.mutate((draft) => {
      const node: NodeRecord = { ...registration, roles: [...registration.roles], startedAt: this.now() };
      draft.nodes[registration.id] = node;
      const load = nodeLoad(Object.values(draft.collections), Object.keys(draft.nodes));
      for (const collection of Object.values(draft.collections)) {
        const placements = reassignOrphanedShards(collection, load);
        if (placements !== null) {
          collection.placements = placements;
          collection.version += 1;
        }
      }
    });
    this.leases.add(registration.id);
    return { nodeId: registration.id, revoke: () => this.revokeLease(registration.id) };
  }

  listNodes(): NodeRecord[] {
    return sortedByKey(this.current.nodes);
  }

  /** The one registered node of this process is the master. */
  masterId(): string | null {
    return [...this.leases][0] ?? null;
  }

  internalSecret(): string {
    return this.secret;
  }

  watch(listener: CatalogListener): () => void {
    this.listeners.add(listener);
    return () => {
      this.listeners.delete(listener);
    };
  }

  async close(): Promise<void> {
    if (this.closed) return;
    for (const nodeId of [...this.leases]) {
      try {
        await this.revokeLease(nodeId);
      } catch (error) {
        this.options.logger?.warn({ err: error, nodeId }, 'could not remove node registration on close');
      }
    }
    await this.mutations;
    this.closed = true;
    this.listeners.clear();
  }

  private async revokeLease(nodeId: string): Promise<void> {
    if (!this.leases.delete(nodeId)) return;
    await this.mutate((draft) => {
      delete draft.nodes[nodeId];
    });
  }

  private now(): number {
    return (this.options.now ?? Date.now)();
  }

  /** Runs `change` on a copy of the catalog, then persists, swaps in and announces the result. */
  private mutate<T>(change: (draft: Catalog) => T): Promise<T> {
    const run = this.mutations.then(async () => {
      if (this.closed) throw new CatalogError('catalog_unavailable', 'the coordinator is closed');
      const before = this.current;
      const draft = structuredClone(before) as Catalog;
      const result = change(draft);
      draft.revision = before.revision + 1;
      const changes = diffCatalogs(before, draft);
      if (changes.length === 0) return result;
      try {
        await writeCatalogFile(this.file, draft, { beforeRename: this.options.beforeCatalogRename });
      } catch (error) {
        if (error instanceof CatalogError) throw error;
        throw new CatalogError('catalog_unavailable', `cannot persist the catalog: ${(error as Error).message}`);
      }
      this.current = deepFreeze(draft);
      this.announce({ revision: draft.revision, catalog: this.current, changes });
      return result;
    });
    this.mutations = run.catch(() => undefined);
    return run;
  }

  private announce(event: Parameters<CatalogListener>[0]): void {
    for (const listener of this.listeners) {
      try {
        const pending = listener(event);
        if (pending instanceof Promise) {
          pending.catch((error: unknown) => this.options.logger?.error({ err: error }, 'catalog watcher failed'));
        }
      } catch (error) {
        this.options.logger?.error({ err: error }, 'catalog watcher failed');
      }
    }
  }
}
