/**
 * Collection and namespace management: create (parsing the ES `PUT /{index}` body), get, list
 * with statistics and health, and mappings (deleting moves to the trash: src/ops/trash). Every change goes through the coordinator; the
 * call returns once this node has applied the resulting catalog revision (shards opened, closed
 * or remapped), so a client can use the collection as soon as it gets the answer.
 */
import { DEFAULT_NAMESPACE, type AliasMeta, type CollectionMeta, type NamespaceMeta } from '../cluster/catalog.ts';
import { CatalogError } from '../cluster/catalog-error.ts';
import { LIMIT_SETTINGS, TEXT_SETTINGS, parseCollectionSettings, type IndexLimits, type TextSetting } from '../cluster/collection-settings.ts';
import { EngineError } from '../engine/errors.ts';
import { flattenMapping, shownMapping, type Mapping } from '../engine/mapping/mapping.ts';
import { checkCreateAliasFilters, parseCreateAliases } from './aliases-api.ts';
import { mergeMappings, validateMapping } from '../engine/mapping/validate.ts';
import type { HostedCollection } from '../cluster/local-shards.ts';
import type { ShardHandle } from '../cluster/shard-handle.ts';
import type { ShardStats } from '../engine/shard/shard.ts';
import type { NodeContext } from './node-context.ts';
import { NodeError, asNodeError } from './node-error.ts';
import { resolveReadTargets, type ResolveOptions } from './read-targets.ts';

export type { ResolveOptions } from './read-targets.ts';

/** Collection health as Elasticsearch reports it. */
export type Health = 'green' | 'yellow' | 'red';

/** One row of the collection list (`_cat/indices`, cluster health). */
export interface CollectionSummary {
  name: string;
  uuid: string;
  namespace: string;
  health: Health;
  status: 'open';
  primaries: number;
  replicas: number;
  /** Live documents in the collection's primary copies, on every node. */
  docsCount: number;
  docsDeleted: number;
  storeSizeBytes: number;
  /** Epoch millis. */
  createdAt: number;
}

/** Acknowledgement of a collection change. */
export interface Acknowledged {
  acknowledged: true;
}

/** Response of `PUT /{collection}`. */
export interface CreateCollectionResponse extends Acknowledged {
  shards_acknowledged: boolean;
  index: string;
}

const CREATE_BODY_KEYS = new Set(['settings', 'mappings', 'namespace', 'aliases']);

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** Parses the body of `PUT /{collection}`. */
export function parseCreateBody(body: unknown): { namespace: string; numberOfShards: number; numberOfReplicas: number; limits?: IndexLimits; mapping: Mapping; aliases: Record<string, AliasMeta> } {
  const request = body === undefined || body === null ? {} : body;
  if (!isPlainObject(request)) throw new EngineError('parsing', 'the create-collection body must be a JSON object');
  for (const key of Object.keys(request)) {
    if (!CREATE_BODY_KEYS.has(key)) throw new EngineError('parsing', `unknown key [${key}] for create index`);
  }
  if (request.namespace !== undefined && typeof request.namespace !== 'string') {
    throw new EngineError('parsing', '[namespace] must be a string');
  }
  const mapping = validateMapping(request.mappings ?? { properties: {} });
  const aliases = request.aliases === undefined ? {} : parseCreateAliases(request.aliases);
  const settings = parseCollectionSettings(request.settings);
  // index.mapping.ignore_malformed travels with the mapping, which every shard and node flattens.
  if (settings.limits?.['mapping.ignore_malformed'] === 'true') mapping.indexIgnoreMalformed = true;
  checkCreateAliasFilters(aliases, flattenMapping(mapping));
  return { namespace: request.namespace ?? DEFAULT_NAMESPACE, ...settings, mapping, aliases };
}

/** Runs a coordinator change and waits until this node applied it; catalog errors become NodeErrors. */
async function changeCatalog<T>(context: NodeContext, change: () => Promise<T>): Promise<T> {
  let result: T;
  try {
    result = await change();
  } catch (error) {
    throw asNodeError(error);
  }
  await context.router.waitForRevision(context.coordinator.revision);
  return result;
}

/** Creates a collection and opens its local shards. */
export async function createCollection(context: NodeContext, name: string, body: unknown): Promise<CreateCollectionResponse> {
  const request = parseCreateBody(body);
  const meta = await changeCatalog(context, () =>
    context.coordinator.createCollection({
      name,
      namespace: request.namespace,
      settings: { ...request.limits, number_of_shards: request.numberOfShards, number_of_replicas: request.numberOfReplicas },
      mapping: request.mapping,
      aliases: request.aliases,
    }),
  );
  return { acknowledged: true, shards_acknowledged: await primariesStarted(context, meta.name), index: meta.name };
}

/**
 * Whether every primary copy of a new collection answers, wherever it is placed (Elasticsearch's
 * `wait_for_active_shards: 1`): a copy on another node answers once that node has applied the
 * catalog revision the request carries and opened the copy, so the collection is usable through
 * any node when the create returns.
 */
async function primariesStarted(context: NodeContext, name: string): Promise<boolean> {
  const hosted = context.router.findCollection(name);
  if (!hosted) return false;
  const { targets, misses } = context.router.searchShards([hosted]);
  const answers = await Promise.allSettled(targets.map((target) => target.handle.changeBounds()));
  return misses.length === 0 && answers.every((answer) => answer.status === 'fulfilled');
}

/** Names a target selects (aliases stand for their collections); unknown concrete names are index_not_found unless `ignoreUnavailable`. */
export function resolveCollections(context: NodeContext, target: string, options: ResolveOptions = {}): HostedCollection[] {
  return resolveReadTargets(context, target, options).map((selected) => selected.hosted);
}

/** The settings ES shows for a collection, by flat `index.`-prefixed name (values as strings, as ES renders them). */
export function flatIndexSettingsOf(meta: CollectionMeta): Map<string, string> {
  const flat = new Map<string, string>([
    ['index.number_of_shards', String(meta.settings.number_of_shards)],
    ['index.number_of_replicas', String(meta.settings.number_of_replicas)],
  ]);
  // Settings left at their defaults are not shown, as in ES.
  for (const name of LIMIT_SETTINGS) {
    const value = meta.settings[name];
    if (value !== undefined) flat.set(`index.${name}`, String(value));
  }
  for (const name of Object.keys(TEXT_SETTINGS) as TextSetting[]) {
    const value = meta.settings[name];
    if (value !== undefined) flat.set(`index.${name}`, value);
  }
  flat.set('index.uuid', meta.uuid);
  flat.set('index.creation_date', String(meta.createdAt));
  flat.set('index.provided_name', meta.name);
  return flat;
}

/** Flat dotted settings (`index.analyze.max_token_count`) as ES's nested objects. */
export function nestSettings(flat: Iterable<[string, string]>): Record<string, unknown> {
  const root: Record<string, unknown> = {};
  for (const [name, value] of flat) {
    const parts = name.split('.');
    let node = root;
    for (const part of parts.slice(0, -1)) {
      const child = Object.hasOwn(node, part) ? node[part] : undefined;
      node = isPlainObject(child) ? child : (node[part] = {}) as Record<string, unknown>;
    }
    node[parts[parts.length - 1]!] = value;
  }
  return root;
}

/** The `settings.index` object ES shows for a collection (nested, values as strings). */
export function indexSettingsOf(meta: CollectionMeta): Record<string, unknown> {
  return nestSettings(flatIndexSettingsOf(meta)).index as Record<string, unknown>;
}

function describe(meta: CollectionMeta): Record<string, unknown> {
  return {
    aliases: meta.aliases ?? {},
    mappings: shownMapping(meta.mapping),
    settings: { index: indexSettingsOf(meta) },
    namespace: meta.namespace,
  };
}

/** `GET /{target}`: aliases, mappings and settings of each selected collection. */
export function getCollections(context: NodeContext, target: string): Record<string, Record<string, unknown>> {
  const out: Record<string, Record<string, unknown>> = {};
  for (const hosted of resolveCollections(context, target)) out[hosted.meta.name] = describe(hosted.meta);
  return out;
}

/** Health of a collection from its placements and this node's shard states. */
export function collectionHealth(context: NodeContext, hosted: HostedCollection): Health {
  let health: Health = 'green';
  for (const placement of hosted.meta.placements) {
    const local = hosted.shards[placement.shard];
    if (placement.primary === null || (placement.primary === context.nodeId && local?.state !== 'started')) return 'red';
    if (placement.replicas.length < hosted.meta.settings.number_of_replicas) health = 'yellow';
  }
  return health;
}

/** How long `_cat/indices` waits for a primary copy's figures before counting the collection red. */
const PRIMARY_STATS_WAIT_MS = 5_000;

/** A copy's figures, or null when it fails or does not answer in time. */
async function primaryStats(handle: ShardHandle): Promise<ShardStats | null> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<null>((resolve) => (timer = setTimeout(resolve, PRIMARY_STATS_WAIT_MS, null)));
  try {
    return await Promise.race([handle.stats().catch(() => null), late]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Every collection with counts, size and health (`_cat/indices`): the figures of every primary
 * copy, wherever in the cluster it is; a primary that cannot be reached makes the collection red.
 */
export async function listCollections(context: NodeContext): Promise<CollectionSummary[]> {
  return Promise.all(
    context.router.collections().map(async (hosted): Promise<CollectionSummary> => {
      const { targets, misses } = context.router.searchShards([hosted]);
      const figures = await Promise.all(targets.map((target) => primaryStats(target.handle)));
      let docsCount = 0;
      let docsDeleted = 0;
      let storeSizeBytes = 0;
      for (const stats of figures) {
        docsCount += stats?.docs ?? 0;
        docsDeleted += stats?.deletedDocs ?? 0;
        storeSizeBytes += stats?.bytes ?? 0;
      }
      const { meta } = hosted;
      const unreachable = misses.length > 0 || figures.includes(null);
      return {
        name: meta.name,
        uuid: meta.uuid,
        namespace: meta.namespace,
        health: unreachable ? 'red' : collectionHealth(context, hosted),
        status: 'open',
        primaries: meta.settings.number_of_shards,
        replicas: meta.settings.number_of_replicas,
        docsCount,
        docsDeleted,
        storeSizeBytes,
        createdAt: meta.createdAt,
      };
    }),
  );
}

/** `GET /{target}/_mapping`. */
export function getMappings(context: NodeContext, target: string, options: ResolveOptions = {}): Record<string, { mappings: Mapping }> {
  const out: Record<string, { mappings: Mapping }> = {};
  for (const hosted of resolveCollections(context, target, options)) out[hosted.meta.name] = { mappings: shownMapping(hosted.meta.mapping) };
  return out;
}

/** `PUT /{target}/_mapping`: adds fields (a changed type is illegal_argument); all collections or none. */
export async function putMappings(context: NodeContext, target: string, body: unknown): Promise<Acknowledged> {
  const update = validateMapping(body, { partial: true });
  const selected = resolveCollections(context, target);
  for (const hosted of selected) mergeMappings(hosted.meta.mapping, update);
  for (const { meta } of selected) {
    for (;;) {
      const current = context.router.collection(meta.name);
      const merged = mergeMappings(current.meta.mapping, update);
      try {
        await changeCatalog(context, () => context.coordinator.putMapping(meta.name, merged, { expectedVersion: current.meta.version }));
        break;
      } catch (error) {
        if (!(error instanceof NodeError && error.code === 'catalog_conflict')) throw error;
        await context.router.waitForRevision(context.coordinator.revision);
      }
    }
  }
  return { acknowledged: true };
}

/** A namespace as the API shows it, with the names of its collections. */
export interface NamespaceView {
  name: string;
  uuid: string;
  created_at: number;
  collections: string[];
}

function viewNamespace(context: NodeContext, namespace: NamespaceMeta): NamespaceView {
  const collections = context.coordinator.listCollections(namespace.name).map((collection) => collection.name);
  return { name: namespace.name, uuid: namespace.uuid, created_at: namespace.createdAt, collections };
}

/** Creates a namespace. */
export async function createNamespace(context: NodeContext, name: string): Promise<Acknowledged & { namespace: string }> {
  await changeCatalog(context, () => context.coordinator.createNamespace(name));
  return { acknowledged: true, namespace: name };
}

/** Every namespace with its collections. */
export function listNamespaces(context: NodeContext): NamespaceView[] {
  return context.coordinator.listNamespaces().map((namespace) => viewNamespace(context, namespace));
}

/** One namespace; namespace_not_found when missing. */
export function getNamespace(context: NodeContext, name: string): NamespaceView {
  const namespace = context.coordinator.getNamespace(name);
  if (!namespace) throw asNodeError(new CatalogError('namespace_not_found', `no such namespace [${name}]`));
  return viewNamespace(context, namespace);
}
