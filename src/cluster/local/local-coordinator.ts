/**
 * The embedded coordinator: the whole catalog lives in one process and one file under
 * `<path.data>/catalog/`. Mutations run one at a time: each builds the next catalog from a copy of
 * the current one, persists it atomically, then swaps it in and notifies watchers. A mutation that
 * throws (bad input, failed write) leaves both the file and the in-memory view unchanged.
 *
 * Leases: this coordinator serves a single process, so a lease it grants lives until `revoke` or
 * `close`; there is no other process whose missed heartbeats could expire it.
 */
import { COUNT_SETTINGS, type CountSetting } from '../collection-settings.ts';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from 'pino';
import type { Mapping } from '../../engine/mapping/mapping.ts';
import {
  DEFAULT_NAMESPACE,
  type ApiKeyRecord,
  deepFreeze,
  diffCatalogs,
  emptyCatalog,
  type Catalog,
  type CollectionMeta,
  type NamespaceMeta,
  type NodeRecord,
} from '../catalog.ts';
import { CatalogError } from '../catalog-error.ts';
import type {
  CatalogListener,
  Coordinator,
  CreateCollectionRequest,
  NodeLease,
  NodeRegistration,
  PutMappingOptions,
  RestoreCollectionsRequest,
} from '../coordinator.ts';
import { invalidNameReason } from '../names.ts';
import { assignShards, nodeLoad, reassignOrphanedShards } from '../placement.ts';
import { removeInterruptedWrite } from '../../engine/directory/atomic-file.ts';
import { readCatalogFile, writeCatalogFile } from './catalog-file.ts';

/** Options of `LocalCoordinator.open`. */
export interface LocalCoordinatorOptions {
  /** The node's `path.data`; the catalog lives in its `catalog/` folder. */
  dataPath: string;
  /** Must match the name recorded when the catalog was created. */
  clusterName: string;
  logger?: Logger;
  /** Clock, epoch millis (tests pin it). */
  now?: () => number;
  /** Test hook run before the catalog file's rename; throwing simulates a crash at that point. */
  beforeCatalogRename?: () => void;
}

function sortedByKey<T>(record: Record<string, T>): T[] {
  return Object.keys(record)
    .sort()
    .map((key) => record[key]);
}

function checkName(name: string, kind: 'index' | 'namespace'): void {
  const reason = invalidNameReason(name);
  if (reason !== null) throw new CatalogError('invalid_index_name', `Invalid ${kind} name [${name}], ${reason}`);
}

/** Single-node coordinator persisted under `path.data` (see the module comment). */
export class LocalCoordinator implements Coordinator {
  readonly kind = 'local' as const;
  private readonly listeners = new Set<CatalogListener>();
  private readonly leases = new Set<string>();
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
    return this.mutate((draft) => {
      checkName(name, 'namespace');
      if (Object.hasOwn(draft.namespaces, name)) {
        throw new CatalogError('resource_already_exists', `namespace [${name}] already exists`);
      }
      const namespace = { name, uuid: crypto.randomUUID(), createdAt: this.now() };
      draft.namespaces[name] = namespace;
      return namespace;
    });
  }

  deleteNamespace(name: string): Promise<{ namespace: NamespaceMeta; collections: CollectionMeta[] }> {
    return this.mutate((draft) => {
      const namespace = Object.hasOwn(draft.namespaces, name) ? draft.namespaces[name] : undefined;
      if (!namespace) throw new CatalogError('namespace_not_found', `no such namespace [${name}]`);
      if (name === DEFAULT_NAMESPACE) {
        throw new CatalogError('illegal_argument', `the [${DEFAULT_NAMESPACE}] namespace cannot be deleted`);
      }
      const collections = sortedByKey(draft.collections).filter((collection) => collection.namespace === name);
      for (const collection of collections) delete draft.collections[collection.name];
      delete draft.namespaces[name];
      return { namespace, collections };
    });
  }

  getCollection(name: string): CollectionMeta | null {
    return Object.hasOwn(this.current.collections, name) ? this.current.collections[name] : null;
  }

  listCollections(namespace?: string): CollectionMeta[] {
    const all = sortedByKey(this.current.collections);
    return namespace === undefined ? all : all.filter((collection) => collection.namespace === namespace);
  }

  createCollection(request: CreateCollectionRequest): Promise<CollectionMeta> {
    return this.mutate((draft) => {
      const { name, settings } = request;
      const namespace = request.namespace ?? DEFAULT_NAMESPACE;
      checkName(name, 'index');
      const existing = Object.hasOwn(draft.collections, name) ? draft.collections[name] : undefined;
      if (existing) {
        throw new CatalogError('resource_already_exists', `index [${name}/${existing.uuid}] already exists`);
      }
      if (!Object.hasOwn(draft.namespaces, namespace)) {
        throw new CatalogError('namespace_not_found', `no such namespace [${namespace}]`);
      }
      const shards = checkCount('number_of_shards', settings.number_of_shards);
      checkCount('number_of_replicas', settings.number_of_replicas);
      const load = nodeLoad(Object.values(draft.collections), Object.keys(draft.nodes));
      const collection: CollectionMeta = {
        name,
        uuid: crypto.randomUUID(),
        namespace,
        settings: { number_of_shards: shards, number_of_replicas: settings.number_of_replicas },
        mapping: structuredClone(request.mapping),
        shards: Array.from({ length: shards }, (_, id) => ({ id, uuid: crypto.randomUUID() })),
        placements: assignShards(shards, settings.number_of_replicas, load),
        createdAt: this.now(),
        version: 1,
      };
      draft.collections[name] = collection;
      return collection;
    });
  }

  deleteCollection(name: string): Promise<CollectionMeta> {
    return this.mutate((draft) => {
      const collection = Object.hasOwn(draft.collections, name) ? draft.collections[name] : undefined;
      if (!collection) throw new CatalogError('index_not_found', `no such index [${name}]`);
      delete draft.collections[name];
      return collection;
    });
  }

  restoreCollections(request: RestoreCollectionsRequest): Promise<CollectionMeta[]> {
    return this.mutate((draft) => {
      const { namespace } = request;
      if (namespace) {
        checkName(namespace.name, 'namespace');
        if (Object.hasOwn(draft.namespaces, namespace.name)) {
          throw new CatalogError('resource_already_exists', `namespace [${namespace.name}] already exists`);
        }
        draft.namespaces[namespace.name] = structuredClone(namespace);
      }
      const liveUuids = new Set<string>();
      for (const live of Object.values(draft.collections)) {
        liveUuids.add(live.uuid);
        for (const shard of live.shards) liveUuids.add(shard.uuid);
      }
      const restored: CollectionMeta[] = [];
      for (const collection of request.collections) {
        checkName(collection.name, 'index');
        const existing = Object.hasOwn(draft.collections, collection.name) ? draft.collections[collection.name] : undefined;
        if (existing) {
          throw new CatalogError('resource_already_exists', `index [${collection.name}/${existing.uuid}] already exists`);
        }
        if (!Object.hasOwn(draft.namespaces, collection.namespace)) {
          throw new CatalogError('namespace_not_found', `no such namespace [${collection.namespace}]`);
        }
        for (const uuid of [collection.uuid, ...collection.shards.map((shard) => shard.uuid)]) {
          if (liveUuids.has(uuid)) throw new CatalogError('resource_already_exists', `UUID [${uuid}] is already used by a live collection`);
          liveUuids.add(uuid);
        }
        const copy = structuredClone(collection);
        draft.collections[copy.name] = copy;
        restored.push(copy);
      }
      return restored;
    });
  }

  putMapping(name: string, mapping: Mapping, options: PutMappingOptions = {}): Promise<CollectionMeta> {
    return this.mutate((draft) => {
      const collection = Object.hasOwn(draft.collections, name) ? draft.collections[name] : undefined;
      if (!collection) throw new CatalogError('index_not_found', `no such index [${name}]`);
      if (options.expectedVersion !== undefined && options.expectedVersion !== collection.version) {
        throw new CatalogError(
          'catalog_conflict',
          `index [${name}] changed concurrently: expected version ${options.expectedVersion}, found ${collection.version}`,
        );
      }
      if (JSON.stringify(collection.mapping) !== JSON.stringify(mapping)) {
        collection.mapping = structuredClone(mapping);
        collection.version += 1;
      }
      return collection;
    });
  }

  getApiKey(id: string): ApiKeyRecord | null {
    const keys = this.current.apiKeys ?? {};
    return Object.hasOwn(keys, id) ? keys[id] : null;
  }

  listApiKeys(): ApiKeyRecord[] {
    return sortedByKey(this.current.apiKeys ?? {});
  }

  createApiKey(record: ApiKeyRecord): Promise<ApiKeyRecord> {
    return this.mutate((draft) => {
      const keys = (draft.apiKeys ??= {});
      if (Object.hasOwn(keys, record.id)) {
        throw new CatalogError('resource_already_exists', `API key [${record.id}] already exists`);
      }
      keys[record.id] = structuredClone(record);
      return keys[record.id];
    });
  }

  createFirstApiKey(record: ApiKeyRecord): Promise<boolean> {
    return this.mutate((draft) => {
      const keys = (draft.apiKeys ??= {});
      if (Object.keys(keys).length > 0) return false;
      keys[record.id] = structuredClone(record);
      return true;
    });
  }

  deleteApiKey(id: string): Promise<ApiKeyRecord | null> {
    return this.mutate((draft) => {
      const keys = draft.apiKeys ?? {};
      const record = Object.hasOwn(keys, id) ? keys[id] : null;
      if (record) delete keys[id];
      return record;
    });
  }

  recordApiKeyUse(lastUsed: ReadonlyMap<string, number>): Promise<void> {
    return this.mutate((draft) => {
      const keys = draft.apiKeys ?? {};
      for (const [id, usedAt] of lastUsed) {
        const record = Object.hasOwn(keys, id) ? keys[id] : undefined;
        if (record && (record.lastUsedAt === null || record.lastUsedAt < usedAt)) record.lastUsedAt = usedAt;
      }
    });
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

/** A collection count setting within its bounds (src/cluster/collection-settings.ts), else illegal_argument. */
function checkCount(name: CountSetting, value: number): number {
  const { min, max } = COUNT_SETTINGS[name];
  if (!Number.isInteger(value) || value < min || value > max) throw new CatalogError('illegal_argument', `${name} must be between ${min} and ${max}, got ${value}`);
  return value;
}
