/**
 * The node service: what the HTTP layer calls. It owns the data-path lock, the node identity, the
 * coordinator and the shards hosted here, and exposes every collection, document and search
 * operation as plain data in, plain data out (Elasticsearch response bodies). Failures are thrown
 * as NodeError or EngineError, whose codes the API's error table maps.
 *
 * Lifecycle: `NodeService.open` → `register(address)` once the HTTP server listens → requests →
 * `close()` (refuses new requests, waits for in-flight ones, closes shards, syncing their WALs,
 * leaves the registry, releases the data path).
 */
import { join } from 'node:path';
import type { Logger } from 'pino';
import type { Coordinator } from '../cluster/coordinator.ts';
import { LocalCoordinator } from '../cluster/local/local-coordinator.ts';
import { engineSettingsFromConfig } from '../config/engine-settings.ts';
import type { NodeConfig, NodeSettingValues } from '../config/load-config.ts';
import { bulk, type BulkDefaults, type BulkItem, type BulkResponse } from './bulk.ts';
import { ChangeFeeds, type ChangeFeed, type ChangesRequest } from './changes.ts';
import * as collections from './collections.ts';
import { compactAcrossNodes, LocalCompactionNode, type CompactionResult, type CompactOptions } from './compaction.ts';
import { lockDataPath, loadNodeIdentity, type DataPathLock } from './data-path.ts';
import {
  executeWrite,
  getDocument,
  prepareDelete,
  prepareIndex,
  prepareUpdate,
  type GetParams,
  type GetResponse,
  type IndexParams,
  type UpdateParams,
  type UpdateResponse,
  type WriteParams,
  type WriteResponse,
} from './documents.ts';
import { FAULTS_ENV, parseFaults, type NodeFaults } from './faults.ts';
import { LocalShards, type HostedCollection } from './local-shards.ts';
import { MappingUpdater } from './mapping-updater.ts';
import { multiGet, type MultiGetParams, type MultiGetResponse } from './multi-get.ts';
import { requireCollection, type NodeContext } from './node-context.ts';
import { collectionNotFound, NodeError } from './node-error.ts';
import { JobQueue } from '../jobs/job-queue.ts';
import { Trash } from '../trash/trash.ts';
import type { DeleteCollectionsResponse, DeleteNamespaceResponse, PurgeAllResponse, PurgeResponse, RestoreResponse, TrashService } from '../trash/trash-service.ts';
import type { TrashListView, VerifyView } from '../trash/trash-views.ts';
import type { Job } from '../jobs/job.ts';
import { maintenanceStats, segmentRows, type MaintenanceStats, type SegmentRow } from './segment-stats.ts';
import { count, search, type CountResponse, type SearchResponse } from './search.ts';
import type { SearchParams } from './search-body.ts';
import { TROVE_VERSION } from './version.ts';
import type { EngineSettings } from '../engine/shard/settings.ts';
import { NodeOps, type NodeStatsInputs } from '../ops/node-ops.ts';
import type { AuthCountersSnapshot } from '../ops/security/auth-counters.ts';
import type { SettingsChange } from '../ops/settings/dynamic-settings.ts';
import type { NodeStats } from '../ops/stats/node-stats.ts';

export type { BulkItem, BulkDefaults, BulkResponse, BulkItemResult, BulkItemFailure, BulkItemSuccess, BulkAction } from './bulk.ts';
export type { GetParams, GetResponse, IndexParams, UpdateParams, UpdateResponse, WriteParams, WriteResponse } from './documents.ts';
export type { MultiGetParams, MultiGetResponse, MultiGetFailure } from './multi-get.ts';
export type { SearchParams } from './search-body.ts';
export type { SearchResponse, CountResponse, SearchHit } from './search.ts';
export type { CollectionSummary, CreateCollectionResponse, Acknowledged, NamespaceView, Health } from './collections.ts';
export type { SourceOptions } from './source-filter.ts';
export type { ChangesRequest, FeedMode } from './changes.ts';

/** Options of `NodeService.open`. */
export interface NodeServiceOptions {
  config: NodeConfig;
  logger: Logger;
}

/** Facts about this node for `GET /` and the start-up log line. */
export interface NodeInfo {
  nodeId: string;
  nodeName: string;
  clusterName: string;
  clusterUuid: string;
  version: string;
  coordinator: Coordinator['kind'];
  dataPath: string;
  /** HTTP base URL once registered, else null. */
  address: string | null;
}

/** Opens the coordinator the configuration asks for. */
async function openCoordinator(config: NodeConfig, logger: Logger): Promise<Coordinator> {
  if (config.values['cluster.etcd'].length > 0) {
    throw new Error('[cluster.etcd] is set, but this build only includes the embedded single-node coordinator; remove the setting to run one node');
  }
  return LocalCoordinator.open({
    dataPath: config.values['path.data'],
    clusterName: config.values['cluster.name'],
    logger,
  });
}

/** See the module comment. */
export class NodeService {
  private readonly context: NodeContext;
  private readonly trash: TrashService;
  private address: string | null = null;
  private closing: Promise<void> | null = null;
  private inFlight = 0;
  private drained: (() => void) | null = null;

  private constructor(
    readonly nodeId: string,
    readonly config: NodeConfig,
    readonly coordinator: Coordinator,
    private readonly shards: LocalShards,
    private readonly lock: DataPathLock,
    readonly logger: Logger,
    private readonly jobs: JobQueue,
    private readonly faults: NodeFaults,
    private readonly trashBin: Trash,
    /** Log targets, runtime settings, counters, search lanes, host facts (src/ops/node-ops.ts). */
    readonly ops: NodeOps,
  ) {
    ops.settings.onChange((change) => {
      const before = engineSettingsFromConfig(change.previous);
      const after = engineSettingsFromConfig(change.values);
      const changed = Object.fromEntries(Object.entries(after).filter(([key, value]) => before[key as keyof EngineSettings] !== value));
      if (Object.keys(changed).length > 0) shards.updateEngineSettings(changed);
    });
    this.trash = trashBin.start({
      coordinator,
      nodeName: config.values['node.name'],
      waitForRevision: (revision) => shards.waitForRevision(revision),
      retentionSecs: () => this.settings()['trash.retention_secs'],
      onRetentionChange: (listener) => ops.settings.onChange(listener, ['trash.retention_secs']),
    });
    this.context = {
      nodeId,
      coordinator,
      shards,
      mappings: new MappingUpdater(coordinator, shards),
      logger,
      settings: () => ops.settings.values(),
      stats: ops.counters,
    };
  }

  /** Locks the data path, loads the node id, opens the coordinator and every local shard. */
  static async open(options: NodeServiceOptions): Promise<NodeService> {
    const { config, logger } = options;
    const dataPath = config.values['path.data'];
    const lock = await lockDataPath(dataPath);
    const ops = new NodeOps({ config, logger });
    let coordinator: Coordinator | null = null;
    try {
      const identity = await loadNodeIdentity(dataPath);
      coordinator = await openCoordinator(config, ops.logs.target('catalog'));
      const faults = parseFaults(process.env[FAULTS_ENV]);
      if (faults.active.length > 0) logger.warn({ faults: faults.active }, `fault injection is active (${FAULTS_ENV}); for tests only`);
      const jobs = await JobQueue.open({ dir: join(dataPath, 'jobs'), nodeId: identity.nodeId, logger: ops.logs.target('jobs') });
      const engineSettings = engineSettingsFromConfig(config.values);
      const trashLogger = ops.logs.target('trash');
      const trash = await Trash.open({ dataPath, nodeId: identity.nodeId, engineSettings, logger: trashLogger, faults, catalog: coordinator.catalog() });
      const shards = new LocalShards({
        dataPath,
        nodeId: identity.nodeId,
        engineSettings,
        logger: ops.logs.target('engine'),
        custodian: trash.store,
        faults: (uuid) => faults.shardFaults(uuid),
      });
      await shards.start(coordinator);
      await ops.start();
      return new NodeService(identity.nodeId, config, coordinator, shards, lock, logger, jobs, faults, trash, ops);
    } catch (error) {
      await ops.close();
      await coordinator?.close();
      await lock.release();
      throw error;
    }
  }

  /** Joins the node registry under the given HTTP base URL (call once the server listens). */
  async register(address: string): Promise<void> {
    await this.coordinator.registerNode({
      id: this.nodeId,
      name: this.config.values['node.name'],
      address,
      version: TROVE_VERSION,
      roles: ['data', 'coordinator'],
    });
    this.address = address;
    await this.shards.waitForRevision(this.coordinator.revision);
  }

  /** Identity and cluster facts of this node. */
  info(): NodeInfo {
    const catalog = this.coordinator.catalog();
    return {
      nodeId: this.nodeId,
      nodeName: this.config.values['node.name'],
      clusterName: catalog.clusterName,
      clusterUuid: catalog.clusterUuid,
      version: TROVE_VERSION,
      coordinator: this.coordinator.kind,
      dataPath: this.config.values['path.data'],
      address: this.address,
    };
  }

  /** Current setting values (start-up values, plus runtime overrides). */
  settings(): Readonly<NodeSettingValues> {
    return this.ops.settings.values();
  }

  /**
   * `PUT /_node/_local/settings`: validates a flat map of key → value (`null` resets) against the
   * settings table and applies all of it at once (engine keys reach every open shard), or throws
   * SettingsError and applies nothing. Works without the coordinator.
   */
  applySettings(changes: Readonly<Record<string, unknown>>): SettingsChange {
    return this.ops.settings.update(changes);
  }

  /** Every figure of `GET /_node/_local/stats`; `security` comes from the HTTP layer's counters. */
  nodeStats(security: AuthCountersSnapshot | null): Promise<NodeStats> {
    return this.ops.nodeStats(this.statsInputs(security));
  }

  /** The node stats in Prometheus text format (`GET /_metrics`). */
  metrics(security: AuthCountersSnapshot | null): Promise<{ contentType: string; text: string }> {
    return this.ops.metrics(this.statsInputs(security));
  }

  private statsInputs(security: AuthCountersSnapshot | null): NodeStatsInputs {
    return {
      nodeId: this.nodeId,
      nodeName: this.config.values['node.name'],
      collections: this.shards.collections(),
      maintenance: this.maintenanceStats(),
      security,
      openFeeds: this.changeFeeds.heldResources().feeds,
      dataPath: this.config.values['path.data'],
    };
  }

  /** The collection as hosted here (meta, fields, local shard copies), for stats, compaction and the change feed. */
  hostedCollection(name: string): HostedCollection {
    return requireCollection(this.context, name);
  }

  /** Every collection hosted here. */
  hostedCollections(): HostedCollection[] {
    return this.shards.collections();
  }

  /** Open change feeds (ended gracefully by `close`). */
  readonly changeFeeds = new ChangeFeeds();

  /** `GET|POST /{collection}/_changes`: checks the cursor, then opens the feed (a stream of response text). */
  changes(collection: string, request: ChangesRequest): ChangeFeed {
    if (this.closing) throw new NodeError('node_closed', 'the node is shutting down');
    const feed = this.changeFeeds.open(requireCollection(this.context, collection), request);
    this.ops.counters.recordChangesRequest(request.feed ?? 'normal');
    return feed;
  }

  // Collections and namespaces.

  /** `PUT /{collection}` with the ES body `{namespace?, settings?, mappings?}`. */
  createCollection(name: string, body: unknown): Promise<collections.CreateCollectionResponse> {
    return this.track(() => collections.createCollection(this.context, name, body));
  }

  /** `GET /{target}`. */
  getCollection(target: string): Promise<Record<string, Record<string, unknown>>> {
    return this.track(async () => collections.getCollections(this.context, target));
  }

  /** `DELETE /{names}` (comma list of concrete names): each collection moves to the trash. */
  deleteCollection(target: string): Promise<DeleteCollectionsResponse> {
    return this.track(() => this.trash.deleteCollections(target));
  }

  /** Every collection with doc counts, store size, shard counts and health (`_cat/indices`). */
  listCollections(): Promise<collections.CollectionSummary[]> {
    return this.track(async () => collections.listCollections(this.context));
  }

  /** `GET /{target}/_mapping`. */
  getMapping(target: string): Promise<ReturnType<typeof collections.getMappings>> {
    return this.track(async () => collections.getMappings(this.context, target));
  }

  /** `PUT /{target}/_mapping` with a mapping body `{dynamic?, properties}`. */
  putMapping(target: string, body: unknown): Promise<collections.Acknowledged> {
    return this.track(() => collections.putMappings(this.context, target, body));
  }

  /** `PUT /_namespace/{name}`. */
  createNamespace(name: string): Promise<collections.Acknowledged & { namespace: string }> {
    return this.track(() => collections.createNamespace(this.context, name));
  }

  /** `GET /_namespace`. */
  listNamespaces(): Promise<collections.NamespaceView[]> {
    return this.track(async () => collections.listNamespaces(this.context));
  }

  /** `GET /_namespace/{name}`. */
  getNamespace(name: string): Promise<collections.NamespaceView> {
    return this.track(async () => collections.getNamespace(this.context, name));
  }

  /** `DELETE /_namespace/{name}`: the namespace and all its collections move to the trash as one item. */
  deleteNamespace(name: string): Promise<DeleteNamespaceResponse> {
    return this.track(() => this.trash.deleteNamespace(name));
  }

  // Trash (src/ops/trash).

  /** `GET /_cluster/trash`. */
  listTrash(): Promise<TrashListView> {
    return this.track(() => this.trash.list());
  }

  /** `POST /_cluster/trash/{item_id}/_verify` (read-only). */
  verifyTrashItem(itemId: string): Promise<VerifyView> {
    return this.track(() => this.trash.verify(itemId));
  }

  /** `POST /_cluster/trash/{item_id}/_restore` with the optional body `{"rename_to": ...}`. */
  restoreTrashItem(itemId: string, body: unknown): Promise<RestoreResponse> {
    return this.track(() => this.trash.restore(itemId, body));
  }

  /** `DELETE /_cluster/trash/{item_id}`. */
  purgeTrashItem(itemId: string): Promise<PurgeResponse> {
    return this.track(() => this.trash.purge(itemId));
  }

  /** `DELETE /_cluster/trash`. */
  emptyTrash(): Promise<PurgeAllResponse> {
    return this.track(() => this.trash.purgeAll());
  }

  // Documents.

  /** `PUT /{collection}/_doc/{id}` or `POST /{collection}/_doc` (id generated when undefined). */
  index(collection: string, id: string | undefined, source: unknown, params: IndexParams = {}): Promise<WriteResponse> {
    return this.track(() => executeWrite(this.context, prepareIndex(requireCollection(this.context, collection), id, source, params)));
  }

  /** `GET /{collection}/_doc/{id}`; `found: false` when missing. */
  get(collection: string, id: string, params: GetParams = {}): Promise<GetResponse> {
    return this.track(async () => getDocument(this.context, collection, id, params));
  }

  /** `DELETE /{collection}/_doc/{id}`; `result: 'not_found'` when missing. */
  delete(collection: string, id: string, params: WriteParams = {}): Promise<WriteResponse> {
    return this.track(() => executeWrite(this.context, prepareDelete(requireCollection(this.context, collection), id, params)));
  }

  /** `POST /{collection}/_update/{id}` with the body `{doc?, ops?, upsert?, doc_as_upsert?, detect_noop?, _source?}`. */
  update(collection: string, id: string, body: unknown, params: UpdateParams = {}): Promise<UpdateResponse> {
    return this.track(() => executeWrite(this.context, prepareUpdate(requireCollection(this.context, collection), id, body, params)));
  }

  /** `POST [/{collection}]/_bulk`, items parsed from the NDJSON body. */
  bulk(items: readonly BulkItem[], defaults: BulkDefaults = {}): Promise<BulkResponse> {
    return this.track(() => bulk(this.context, items, defaults));
  }

  /** `POST [/{collection}]/_mget`. */
  mget(body: unknown, params: MultiGetParams = {}): Promise<MultiGetResponse> {
    return this.track(async () => multiGet(this.context, body, params));
  }

  // Compaction and jobs.

  /** `POST /{collection}/_compact`: one queued job per node hosting primaries, or that node's error. */
  compact(name: string, options: CompactOptions): Promise<CompactionResult> {
    return this.track(async () => {
      const collection = this.coordinator.getCollection(name);
      if (!collection) throw collectionNotFound(name);
      const local = new LocalCompactionNode(this.context, this.jobs, this.faults);
      return compactAcrossNodes(collection, this.coordinator.listNodes(), (nodeId) => (nodeId === this.nodeId ? local : null), options);
    });
  }

  /** `GET /_jobs/{id}`; `job_not_found` when this node has no such job. */
  job(id: string): Promise<Job> {
    return this.track(async () => this.jobs.get(id));
  }

  /** `GET /_jobs`: every retained job of this node, newest first. */
  listJobs(): Promise<Job[]> {
    return this.track(async () => this.jobs.list());
  }

  /** Every segment of the started local shard copies (`_cat/segments`). */
  segments(): SegmentRow[] {
    return segmentRows(this.context, this.config.values['node.name']);
  }

  /** The `segments` and `compaction` sections of the node stats (epochs, merges, backlog, jobs). */
  maintenanceStats(): MaintenanceStats {
    return maintenanceStats(this.context, this.jobs.stats());
  }

  // Search.

  /** `GET|POST /{target}/_search`; target is a name, comma list, wildcard or `_all`. */
  search(target: string, body: unknown, params: SearchParams = {}): Promise<SearchResponse> {
    return this.track(() => this.ops.lanes.run({ lane: params.lane, target, body }, () => search(this.context, target, body, params)));
  }

  /** `GET|POST /{target}/_count`. */
  count(target: string, body: unknown, params: { q?: string } = {}): Promise<CountResponse> {
    return this.track(async () => count(this.context, target, body, params));
  }

  /** Graceful stop: refuse new requests, finish in-flight ones, close shards, leave the registry. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      this.changeFeeds.finishAll();
      if (this.inFlight > 0) await new Promise<void>((resolve) => (this.drained = resolve));
      try {
        await this.jobs.close();
        await this.trashBin.close();
        await this.shards.close();
        await this.coordinator.close();
        await this.ops.close();
      } finally {
        await this.lock.release();
      }
    })();
    return this.closing;
  }

  private async track<T>(operation: () => Promise<T>): Promise<T> {
    if (this.closing) throw new NodeError('node_closed', 'the node is shutting down');
    this.inFlight++;
    try {
      return await operation();
    } finally {
      this.inFlight--;
      if (this.inFlight === 0 && this.drained) this.drained();
    }
  }
}
