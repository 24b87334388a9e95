/**
 * The rules of every catalog change, shared by both coordinators so that they validate and answer
 * alike: each function checks its request against a mutable draft of the catalog, throws a
 * `CatalogError` (leaving the draft as it was) or applies the change to the draft and returns what
 * the coordinator method returns. Persisting the draft is the coordinator's business.
 */
import type { Mapping } from '../engine/mapping/mapping.ts';
import {
  DEFAULT_NAMESPACE,
  type ApiKeyRecord,
  type Catalog,
  type ClusterSettingsMeta,
  type CollectionMeta,
  type CollectionSettings,
  type NamespaceMeta,
  type ShardPlacement,
} from './catalog.ts';
import { CatalogError } from './catalog-error.ts';
import { COUNT_SETTINGS, DYNAMIC_LIMITS, DYNAMIC_TEXT_SETTINGS, TEXT_SETTINGS, type CountSetting, type TextSetting } from './collection-settings.ts';
import { buildAliasIndex } from './aliases.ts';
import { checkAliasInvariants, fitRestoredAliases } from './alias-rules.ts';
import type { CreateCollectionRequest, DynamicCollectionSettings, PutMappingOptions, RestoreCollectionsRequest } from './coordinator.ts';
import { invalidNameReason } from './names.ts';
import { assignShards, DEFAULT_MAX_SHARDS_PER_NODE, nodeLoad, shardLimitExcess } from './placement.ts';

/** Node-wide bounds a coordinator applies to catalog changes (from the node's settings). */
export interface CatalogLimits {
  /** `cluster.max_shards_per_node`: most shard copies (primaries and replicas) one node may host. */
  maxShardsPerNode: number;
}

/** The limits of a coordinator given none: Elasticsearch's defaults. */
export const DEFAULT_CATALOG_LIMITS: CatalogLimits = { maxShardsPerNode: DEFAULT_MAX_SHARDS_PER_NODE };

/**
 * Refuses (`too_many_shards`, ES's 400 validation_exception) a change that would place `added`
 * copies on a node already hosting so many that it would pass `cluster.max_shards_per_node`.
 * Counted before the draft changes, over the draft's registered nodes.
 */
function checkShardsPerNode(draft: Catalog, added: readonly ShardPlacement[], limits: CatalogLimits): void {
  const load = nodeLoad(Object.values(draft.collections), Object.keys(draft.nodes));
  const excess = shardLimitExcess(load, added, limits.maxShardsPerNode);
  if (excess === null) return;
  const total = added.reduce((sum, placement) => sum + (placement.primary === null ? 0 : 1) + placement.replicas.length, 0);
  throw new CatalogError(
    'too_many_shards',
    `Validation Failed: 1: this action would add [${total}] shards, but node [${excess.nodeId}] currently has ` +
      `[${excess.hosted}]/[${limits.maxShardsPerNode}] maximum shards open (cluster.max_shards_per_node);`,
  );
}

/** The values of a record, sorted by key. */
export function sortedByKey<T>(record: Record<string, T>): T[] {
  return Object.keys(record)
    .sort()
    .map((key) => record[key]);
}

/** A collection or namespace name that follows the index name rules, else invalid_index_name. */
export function checkName(name: string, kind: 'index' | 'namespace'): void {
  const reason = invalidNameReason(name);
  if (reason !== null) throw new CatalogError('invalid_index_name', `Invalid ${kind} name [${name}], ${reason}`);
}

/** A collection count setting within its bounds (src/cluster/collection-settings.ts), else illegal_argument. */
export function checkCount(name: CountSetting, value: number): number {
  const { min, max } = COUNT_SETTINGS[name];
  if (!Number.isInteger(value) || value < min || value > max) throw new CatalogError('illegal_argument', `${name} must be between ${min} and ${max}, got ${value}`);
  return value;
}

/** Refuses a collection name an alias holds (Elasticsearch: one namespace of names). */
function checkNotAlias(draft: Catalog, name: string): void {
  if (buildAliasIndex(Object.values(draft.collections)).has(name)) {
    throw new CatalogError('invalid_index_name', `Invalid index name [${name}], already exists as alias`);
  }
}

/** Adds a namespace; `resource_already_exists` when the name is taken. */
export function createNamespaceIn(draft: Catalog, name: string, now: number): NamespaceMeta {
  checkName(name, 'namespace');
  if (Object.hasOwn(draft.namespaces, name)) {
    throw new CatalogError('resource_already_exists', `namespace [${name}] already exists`);
  }
  const namespace = { name, uuid: crypto.randomUUID(), createdAt: now };
  draft.namespaces[name] = namespace;
  return namespace;
}

/** Removes a namespace and its collections; the default namespace cannot go. */
export function deleteNamespaceIn(draft: Catalog, name: string): { namespace: NamespaceMeta; collections: CollectionMeta[] } {
  const namespace = Object.hasOwn(draft.namespaces, name) ? draft.namespaces[name] : undefined;
  if (!namespace) throw new CatalogError('namespace_not_found', `no such namespace [${name}]`);
  if (name === DEFAULT_NAMESPACE) {
    throw new CatalogError('illegal_argument', `the [${DEFAULT_NAMESPACE}] namespace cannot be deleted`);
  }
  const collections = sortedByKey(draft.collections).filter((collection) => collection.namespace === name);
  for (const collection of collections) delete draft.collections[collection.name];
  delete draft.namespaces[name];
  return { namespace, collections };
}

/**
 * Adds a collection with a UUID per shard and placements on the draft's registered nodes; refused
 * when a node would host more than `limits.maxShardsPerNode` copies.
 */
export function createCollectionIn(draft: Catalog, request: CreateCollectionRequest, now: number, limits: CatalogLimits = DEFAULT_CATALOG_LIMITS): CollectionMeta {
  const { name, settings } = request;
  const namespace = request.namespace ?? DEFAULT_NAMESPACE;
  checkName(name, 'index');
  const existing = Object.hasOwn(draft.collections, name) ? draft.collections[name] : undefined;
  if (existing) {
    throw new CatalogError('resource_already_exists', `index [${name}/${existing.uuid}] already exists`);
  }
  checkNotAlias(draft, name);
  if (!Object.hasOwn(draft.namespaces, namespace)) {
    throw new CatalogError('namespace_not_found', `no such namespace [${namespace}]`);
  }
  const shards = checkCount('number_of_shards', settings.number_of_shards);
  checkCount('number_of_replicas', settings.number_of_replicas);
  const load = nodeLoad(Object.values(draft.collections), Object.keys(draft.nodes));
  const placements = assignShards(shards, settings.number_of_replicas, load);
  checkShardsPerNode(draft, placements, limits);
  const collection: CollectionMeta = {
    name,
    uuid: crypto.randomUUID(),
    namespace,
    settings: { ...indexLimitsOf(settings), number_of_shards: shards, number_of_replicas: settings.number_of_replicas },
    mapping: structuredClone(request.mapping),
    shards: Array.from({ length: shards }, (_, id) => ({ id, uuid: crypto.randomUUID() })),
    placements,
    createdAt: now,
    version: 1,
  };
  if (request.aliases && Object.keys(request.aliases).length > 0) collection.aliases = structuredClone(request.aliases);
  draft.collections[name] = collection;
  checkAliasInvariants(draft);
  return collection;
}

/** Removes a collection; `index_not_found` when there is none by that name. */
export function deleteCollectionIn(draft: Catalog, name: string): CollectionMeta {
  const collection = Object.hasOwn(draft.collections, name) ? draft.collections[name] : undefined;
  if (!collection) throw new CatalogError('index_not_found', `no such index [${name}]`);
  delete draft.collections[name];
  return collection;
}

/**
 * Puts deleted collections (and a namespace) back as recorded; all or nothing. Refused, like a
 * create, when their copies would take a node past `limits.maxShardsPerNode`.
 */
export function restoreCollectionsIn(draft: Catalog, request: RestoreCollectionsRequest, limits: CatalogLimits = DEFAULT_CATALOG_LIMITS): CollectionMeta[] {
  const { namespace } = request;
  checkShardsPerNode(draft, request.collections.flatMap((collection) => collection.placements), limits);
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
    if (buildAliasIndex(Object.values(draft.collections)).has(collection.name)) {
      throw new CatalogError('resource_already_exists', `[${collection.name}] is the name of an alias`);
    }
    if (!Object.hasOwn(draft.namespaces, collection.namespace)) {
      throw new CatalogError('namespace_not_found', `no such namespace [${collection.namespace}]`);
    }
    for (const uuid of [collection.uuid, ...collection.shards.map((shard) => shard.uuid)]) {
      if (liveUuids.has(uuid)) throw new CatalogError('resource_already_exists', `UUID [${uuid}] is already used by a live collection`);
      liveUuids.add(uuid);
    }
    const copy = structuredClone(collection);
    fitRestoredAliases(draft, copy);
    draft.collections[copy.name] = copy;
    restored.push(copy);
  }
  return restored;
}

/** Replaces a collection's mapping and bumps its version; compare-and-set on `expectedVersion`. */
export function putMappingIn(draft: Catalog, name: string, mapping: Mapping, options: PutMappingOptions = {}): CollectionMeta {
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
}

/** Replaces the cluster settings of the catalog (keys already validated by the caller); answers them. */
export function updateClusterSettingsIn(draft: Catalog, settings: ClusterSettingsMeta): ClusterSettingsMeta {
  const sorted = (values: Record<string, unknown>): Record<string, unknown> => Object.fromEntries(Object.keys(values).sort().map((key) => [key, values[key]]));
  const next = { persistent: sorted(settings.persistent), transient: sorted(settings.transient) };
  if (Object.keys(next.persistent).length === 0 && Object.keys(next.transient).length === 0) delete draft.clusterSettings;
  else draft.clusterSettings = next;
  return next;
}

/** Applies the dynamic settings of `PUT /{collection}/_settings` (the caller parsed them); bumps the version when one changes. */
export function updateCollectionSettingsIn(draft: Catalog, name: string, update: DynamicCollectionSettings): CollectionMeta {
  const collection = Object.hasOwn(draft.collections, name) ? draft.collections[name] : undefined;
  if (!collection) throw new CatalogError('index_not_found', `no such index [${name}]`);
  if (update.number_of_replicas !== undefined && update.number_of_replicas !== collection.settings.number_of_replicas) {
    collection.settings = { ...collection.settings, number_of_replicas: update.number_of_replicas };
    collection.version += 1;
  }
  for (const name of [...DYNAMIC_LIMITS, ...DYNAMIC_TEXT_SETTINGS]) {
    const value = update[name];
    if (value === undefined || (value ?? undefined) === collection.settings[name]) continue;
    const settings = { ...collection.settings };
    if (value === null) delete settings[name];
    else (settings as Record<string, unknown>)[name] = value;
    collection.settings = settings;
    collection.version += 1;
  }
  return collection;
}

/** The index limits of a settings object (only those set). */
function indexLimitsOf(settings: CollectionSettings): Partial<CollectionSettings> {
  const limits: Partial<CollectionSettings> = {};
  for (const name of ['number_of_routing_shards', ...DYNAMIC_LIMITS] as const) {
    if (settings[name] !== undefined) limits[name] = checkCount(name, settings[name]);
  }
  for (const name of Object.keys(TEXT_SETTINGS) as TextSetting[]) {
    const value = settings[name];
    if (value === undefined) continue;
    if (typeof value !== 'string') throw new CatalogError('illegal_argument', `${name} must be a string, got ${typeof value}`);
    limits[name] = value;
  }
  return limits;
}

/** The error of an API key id that is already taken. */
export function apiKeyExistsError(id: string): CatalogError {
  return new CatalogError('resource_already_exists', `API key [${id}] already exists`);
}

/** Adds an API key record; `resource_already_exists` when the id is taken. */
export function createApiKeyIn(draft: Catalog, record: ApiKeyRecord): ApiKeyRecord {
  const keys = (draft.apiKeys ??= {});
  if (Object.hasOwn(keys, record.id)) throw apiKeyExistsError(record.id);
  keys[record.id] = structuredClone(record);
  return keys[record.id];
}

/** Adds `record` only when the draft holds no API key; false when one existed. */
export function createFirstApiKeyIn(draft: Catalog, record: ApiKeyRecord): boolean {
  const keys = (draft.apiKeys ??= {});
  if (Object.keys(keys).length > 0) return false;
  keys[record.id] = structuredClone(record);
  return true;
}

/** Removes an API key; the removed record, or null when no key has this id. */
export function deleteApiKeyIn(draft: Catalog, id: string): ApiKeyRecord | null {
  const keys = draft.apiKeys ?? {};
  const record = Object.hasOwn(keys, id) ? keys[id] : null;
  if (record) delete keys[id];
  return record;
}

/** Moves `lastUsedAt` of known keys forward (never back); unknown ids are skipped. */
export function recordApiKeyUseIn(draft: Pick<Catalog, 'apiKeys'>, lastUsed: ReadonlyMap<string, number>): void {
  const keys = draft.apiKeys ?? {};
  for (const [id, usedAt] of lastUsed) {
    const record = Object.hasOwn(keys, id) ? keys[id] : undefined;
    if (record && (record.lastUsedAt === null || record.lastUsedAt < usedAt)) record.lastUsedAt = usedAt;
  }
}
