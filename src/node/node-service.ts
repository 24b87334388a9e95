/**
 * The node service: the lifecycle owner of a node. It owns the data-path lock, the node identity,
 * the coordinator, the shards hosted here, the job queue and the trash, and exposes what the HTTP
 * layer calls as one resource service per concern, each a readonly field: `documents`, `search`,
 * `collections`, `changes`, `compaction`, `trash` and `observability`. Their methods take plain
 * data and return plain data (Elasticsearch response bodies); failures are thrown as NodeError or
 * EngineError, whose codes the API's error table maps. Every request of a resource service runs
 * through one shared RequestTracker, so `close` can refuse new requests and wait for the rest.
 *
 * Lifecycle: `NodeService.open` → `register(address)` once the HTTP server listens → requests →
 * `close()` (refuses new requests, waits for in-flight ones, closes shards, syncing their WALs,
 * leaves the registry, releases the data path).
 */
import { ClusterSettingsService } from './cluster-settings.ts';
import { join } from 'node:path';
import type { Logger } from 'pino';
import type { Coordinator } from '../cluster/coordinator.ts';
import { LocalCoordinator } from '../cluster/local/local-coordinator.ts';
import { engineSettingsFromConfig } from '../config/engine-settings.ts';
import type { NodeConfig } from '../config/load-config.ts';
import { ByQueryService } from './by-query-service.ts';
import { ChangeFeedService } from './change-feed-service.ts';
import { CollectionService } from './collection-service.ts';
import { CompactionService } from './compaction-service.ts';
import { lockDataPath, loadNodeIdentity, type DataPathLock } from './data-path.ts';
import { DocumentService } from './document-service.ts';
import { FAULTS_ENV, parseFaults, type NodeFaults } from './faults.ts';
import { LocalShards } from '../cluster/local-shards.ts';
import { ReaderBudget } from '../cluster/reader-budget.ts';
import { InThreadShardHost } from '../cluster/local-shard-handle.ts';
import { Router } from '../cluster/router.ts';
import { localShardLookup, RemoteShardDirectory } from '../cluster/remote/remote-shards.ts';
import { RemoteTransport } from '../cluster/remote/remote-transport.ts';
import { clusterReplication } from '../cluster/replication/cluster-environment.ts';
import { HmacNodeCredentialVerifier } from '../api/auth/node-credential-hmac.ts';
import type { NodeCredentialVerifier } from '../api/auth/node-credential.ts';
import { setTimeout as sleep } from 'node:timers/promises';
import type { ShardHandle, ShardHost } from '../cluster/shard-handle.ts';
import { MappingUpdater } from './mapping-updater.ts';
import type { NodeContext } from './node-context.ts';
import { ObservabilityService, type NodeInfo } from './observability-service.ts';
import { RequestTracker } from './request-tracker.ts';
import { RecoveryService } from './recovery-service.ts';
import { SearchService } from './search-service.ts';
import { TrashAdminService } from './trash-admin-service.ts';
import { JobQueue } from '../jobs/job-queue.ts';
import { Trash } from '../trash/trash.ts';
import { TROVE_VERSION } from './version.ts';
import type { EngineSettings } from '../engine/shard/settings.ts';
import { NodeOps } from '../ops/node-ops.ts';
import { PeerDirectory } from '../cluster/remote/peer-nodes.ts';
import { RemoteNodeTrash } from '../trash/remote-node-trash.ts';
import type { InternalNodeServices } from './internal-node-services.ts';

export type { BulkItem, BulkDefaults, BulkResponse, BulkItemResult, BulkItemFailure, BulkItemSuccess, BulkAction } from './bulk.ts';
export type { GetParams, GetResponse, IndexParams, UpdateParams, UpdateResponse, WriteParams, WriteResponse } from './documents.ts';
export type { MultiGetParams, MultiGetResponse, MultiGetFailure } from './multi-get.ts';
export type { SearchParams } from './search-body.ts';
export type { SearchResponse, CountResponse, SearchHit } from './search.ts';
export type { CollectionSummary, CreateCollectionResponse, Acknowledged, NamespaceView, Health } from './collections.ts';
export type { SourceOptions } from './source-filter.ts';
export type { ChangesRequest, FeedMode } from './changes.ts';
export type { NodeInfo } from './observability-service.ts';

/** Options of `NodeService.open`. */
export interface NodeServiceOptions {
  config: NodeConfig;
  logger: Logger;
}

/** Pause between attempts to reach etcd at start. */
const ETCD_RETRY_MS = 2000;

/**
 * Opens the coordinator the configuration asks for: the embedded one, or the etcd one, retried
 * (one log line per attempt) until etcd answers, so that nodes may start before etcd.
 */
async function openCoordinator(config: NodeConfig, logger: Logger): Promise<Coordinator> {
  const endpoints = config.values['cluster.etcd'];
  const limits = { maxShardsPerNode: config.values['cluster.max_shards_per_node'] };
  if (endpoints.length === 0) {
    return LocalCoordinator.open({ dataPath: config.values['path.data'], clusterName: config.values['cluster.name'], logger, limits });
  }
  const { EtcdCoordinator } = await import('../cluster/etcd/etcd-coordinator.ts');
  for (let attempt = 1; ; attempt++) {
    try {
      return await EtcdCoordinator.open({ endpoints, clusterName: config.values['cluster.name'], logger, nodeTtlMs: config.values['cluster.node_ttl_ms'], limits });
    } catch (error) {
      logger.warn(`cannot reach etcd at ${endpoints.join(', ')} (attempt ${attempt}): ${(error as Error).message}; retrying in ${ETCD_RETRY_MS / 1000} s`);
      await sleep(ETCD_RETRY_MS);
    }
  }
}

/** Where this node's shard copies run, as `node.shard_workers` asks. */
async function openShardHost(config: NodeConfig, logger: Logger): Promise<ShardHost> {
  const workers = config.values['node.shard_workers'];
  if (workers === 0) return new InThreadShardHost(logger);
  const { WorkerShardHost } = await import('../cluster/worker/worker-shard-host.ts');
  return new WorkerShardHost({ workers, logger });
}

/** See the module comment. */
export class NodeService {
  /** Single-document writes and reads, bulk and multi-get (`_doc`, `_update`, `_bulk`, `_mget`). */
  readonly documents: DocumentService;
  /** `_search` and `_count`. */
  readonly search: SearchService;
  /** `_delete_by_query` and `_update_by_query`, run as tasks of the job queue. */
  readonly byQuery: ByQueryService;
  /** Collections, mappings and namespaces (`PUT|GET|DELETE /{collection}`, `_mapping`, `_namespace`, `_cat/indices`). */
  readonly collections: CollectionService;
  /** The change feed (`_changes`) and the open feeds. */
  readonly changes: ChangeFeedService;
  /** Manual compaction, jobs and segments (`_compact`, `_jobs`, `_cat/segments`). */
  readonly compaction: CompactionService;
  /** The trash items (`/_cluster/trash`). */
  readonly trash: TrashAdminService;
  /** Identity, stats, metrics, settings and cluster-state inputs (`/`, `/_node`, `/_cluster`, `/_metrics`). */
  readonly observability: ObservabilityService;
  /** `GET /{collection}/_recovery`. */
  readonly recoveries: RecoveryService;
  private readonly requests = new RequestTracker();
  private address: string | null = null;
  private closing: Promise<void> | null = null;
  /** Calls to other nodes' shard copies (cluster mode only). */
  /** What the internal shard API serves: this node's started copies, after a given catalog revision. */
  readonly internalShards: { lookup: (uuid: string) => ShardHandle | undefined; waitForRevision: (revision: number) => Promise<void> };
  /** What the internal node API serves: this node's trash, compaction and views. */
  readonly internalNode: InternalNodeServices;
  /** Checks the credential other nodes of the cluster present on internal calls. */
  readonly nodeCredentials: NodeCredentialVerifier;
  /** `GET|PUT /_cluster/settings`, applied to this node's runtime settings (src/node/cluster-settings.ts). */
  readonly clusterSettings: ClusterSettingsService;

  private constructor(
    readonly nodeId: string,
    readonly config: NodeConfig,
    readonly coordinator: Coordinator,
    private readonly shards: LocalShards,
    private readonly lock: DataPathLock,
    readonly logger: Logger,
    private readonly jobs: JobQueue,
    faults: NodeFaults,
    private readonly trashBin: Trash,
    /** Log targets, runtime settings, counters, search lanes, host facts (src/ops/node-ops.ts). */
    readonly ops: NodeOps,
    /** Calls to the other nodes of an etcd cluster; null on a single node. */
    private readonly transport: RemoteTransport | null,
  ) {
    ops.settings.onChange((change) => {
      const before = engineSettingsFromConfig(change.previous);
      const after = engineSettingsFromConfig(change.values);
      const changed = Object.fromEntries(Object.entries(after).filter(([key, value]) => before[key as keyof EngineSettings] !== value));
      if (Object.keys(changed).length > 0) shards.updateEngineSettings(changed);
    });
    const peers = this.transport ? new PeerDirectory(coordinator, this.transport, nodeId) : undefined;
    const trash = trashBin.start({
      coordinator,
      nodeName: config.values['node.name'],
      waitForRevision: (revision) => shards.waitForRevision(revision),
      retentionSecs: () => ops.settings.values()['trash.retention_secs'],
      onRetentionChange: (listener) => ops.settings.onChange(listener, ['trash.retention_secs']),
      peers: peers && (() => peers.peers().map((peer) => new RemoteNodeTrash(peer))),
    });
    const router = new Router(shards, nodeId, this.transport ? new RemoteShardDirectory(coordinator, this.transport) : undefined);
    this.internalShards = { lookup: localShardLookup(shards), waitForRevision: (revision) => shards.waitForRevision(revision) };
    this.nodeCredentials = new HmacNodeCredentialVerifier(coordinator.internalSecret());
    this.clusterSettings = new ClusterSettingsService(coordinator, ops.settings, (revision) => shards.waitForRevision(revision), logger);
    const context: NodeContext = {
      nodeId,
      coordinator,
      router,
      mappings: new MappingUpdater(coordinator, router),
      logger,
      settings: () => ops.settings.values(),
      stats: ops.counters,
    };
    const requests = this.requests;
    this.documents = new DocumentService(context, requests);
    this.search = new SearchService(context, requests, ops.lanes);
    this.byQuery = new ByQueryService(context, requests, this.search, this.documents, jobs);
    this.collections = new CollectionService(context, requests, trash);
    this.changes = new ChangeFeedService(router, requests, ops.counters);
    this.compaction = new CompactionService({ context, requests, jobs, faults, nodeName: config.values['node.name'], peers });
    this.trash = new TrashAdminService(trash, requests);
    this.observability = new ObservabilityService({
      nodeId,
      config,
      coordinator,
      router,
      jobs,
      ops,
      changeFeeds: this.changes.changeFeeds,
      address: () => this.address,
      peers,
    });
    this.recoveries = new RecoveryService(router, () => shards.roles.recoveries(), peers);
    this.internalNode = {
      trash: trashBin.local,
      compaction: () => this.compaction.localNode(),
      jobs,
      views: (security) => this.observability.nodeViews('_local', security),
      shardStates: () => this.observability.shardStates(),
      replication: shards.roles,
      waitForRevision: (revision) => shards.waitForRevision(revision),
    };
  }

  /** Locks the data path, loads the node id, opens the coordinator and every local shard. */
  static async open(options: NodeServiceOptions): Promise<NodeService> {
    const { config, logger } = options;
    const dataPath = config.values['path.data'];
    const lock = await lockDataPath(dataPath);
    const ops = new NodeOps({ config, logger });
    let coordinator: Coordinator | null = null;
    let transport: RemoteTransport | null = null;
    try {
      const identity = await loadNodeIdentity(dataPath);
      coordinator = await openCoordinator(config, ops.logs.target('catalog'));
      const faults = parseFaults(process.env[FAULTS_ENV]);
      if (faults.active.length > 0) logger.warn({ faults: faults.active }, `fault injection is active (${FAULTS_ENV}); for tests only`);
      const jobs = await JobQueue.open({ dir: join(dataPath, 'jobs'), nodeId: identity.nodeId, logger: ops.logs.target('jobs') });
      const engineSettings = engineSettingsFromConfig(config.values);
      const trashLogger = ops.logs.target('trash');
      const trash = await Trash.open({ dataPath, nodeId: identity.nodeId, engineSettings, logger: trashLogger, faults, catalog: coordinator.catalog() });
      const engineLogger = ops.logs.target('engine');
      transport = coordinator.kind === 'etcd' ? new RemoteTransport({ nodeId: identity.nodeId, secret: coordinator.internalSecret(), revision: () => coordinator!.revision }) : null;
      const shards = new LocalShards({
        replication: transport ? clusterReplication(coordinator, transport) : undefined,
        dataPath,
        nodeId: identity.nodeId,
        engineSettings,
        host: await openShardHost(config, engineLogger),
        logger: engineLogger,
        custodian: trash.store,
        faults: (uuid) => faults.shardFaults(uuid),
        replicaPositionDelayMs: faults.replicaPositionDelayMs,
        readerBudget: new ReaderBudget(() => ({ scroll: ops.settings.values()['search.max_open_scroll_context'], pit: ops.settings.values()['search.max_open_pit_context'] })),
      });
      await shards.start(coordinator);
      await ops.start();
      const service = new NodeService(identity.nodeId, config, coordinator, shards, lock, logger, jobs, faults, trash, ops, transport);
      await service.clusterSettings.start(identity.nodeId);
      return service;
    } catch (error) {
      await transport?.close();
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

  /** Identity and cluster facts of this node (as `observability.info()`). */
  info(): NodeInfo {
    return this.observability.info();
  }

  /** Graceful stop: refuse new requests, finish in-flight ones, close shards, leave the registry. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      await this.changes.changeFeeds.finishAll();
      await this.requests.close();
      try {
        await this.jobs.close();
        await this.trashBin.close();
        await this.shards.close();
        await this.transport?.close();
        await this.coordinator.close();
        await this.ops.close();
      } finally {
        await this.lock.release();
      }
    })();
    return this.closing;
  }
}
