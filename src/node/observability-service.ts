/**
 * The observability service: what the node's monitoring and admin routes read or set
 * (src/api/routes/{root,node,cluster,metrics,jobs}.ts): identity and cluster facts, node stats and
 * Prometheus metrics, runtime settings, host facts, the catalog and the states of the shard
 * copies hosted here. None of it is a tracked request: these answers stay available while the
 * node drains, and settings work without the coordinator.
 */
import type { Catalog } from '../cluster/catalog.ts';
import type { Coordinator, CoordinatorConnectivity } from '../cluster/coordinator.ts';
import type { HostedCollection } from '../cluster/local-shards.ts';
import type { Router } from '../cluster/router.ts';
import type { NodeConfig, NodeSettingValues } from '../config/load-config.ts';
import { heapReleaseStats } from '../engine/memory/heap-release.ts';
import type { JobQueue } from '../jobs/job-queue.ts';
import type { NodeOps, NodeStatsInputs } from '../ops/node-ops.ts';
import type { AuthCountersSnapshot } from '../ops/security/auth-counters.ts';
import type { SettingsChange, SettingsView } from '../ops/settings/dynamic-settings.ts';
import { maintenanceStats } from '../ops/stats/maintenance-stats.ts';
import type { NodeStats } from '../ops/stats/node-stats.ts';
import type { ChangeFeeds } from './changes.ts';
import { TROVE_VERSION } from './version.ts';
import { NodeError } from './node-error.ts';
import { LocalNodeViews, RemoteNodeViews, type NodeViews } from './node-views.ts';
import type { PeerDirectory } from '../cluster/remote/peer-nodes.ts';
import type { LocalCopyState } from '../ops/cluster/cluster-health.ts';

/** How long health and state wait for another node's shard copy states. */
export const PEER_STATES_WAIT_MS = 2_000;

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

/** What the observability service reads from. */
export interface ObservabilityServiceOptions {
  nodeId: string;
  config: NodeConfig;
  coordinator: Coordinator;
  router: Router;
  jobs: JobQueue;
  ops: NodeOps;
  /** The node's open change feeds (counted in the stats). */
  changeFeeds: ChangeFeeds;
  /** The HTTP base URL the node registered under, else null. */
  address: () => string | null;
  /** The other nodes of the cluster (absent on a single node). */
  peers?: PeerDirectory;
}

/** Identity, stats, settings and cluster-state inputs of the node; see the module comment. */
export class ObservabilityService {
  /** This node's id. */
  readonly nodeId: string;
  private readonly config: NodeConfig;
  private readonly coordinator: Coordinator;
  private readonly router: Router;
  private readonly jobs: JobQueue;
  private readonly ops: NodeOps;
  private readonly changeFeeds: ChangeFeeds;
  private readonly address: () => string | null;
  private readonly peers: PeerDirectory | undefined;

  constructor(options: ObservabilityServiceOptions) {
    this.nodeId = options.nodeId;
    this.config = options.config;
    this.coordinator = options.coordinator;
    this.router = options.router;
    this.jobs = options.jobs;
    this.ops = options.ops;
    this.changeFeeds = options.changeFeeds;
    this.address = options.address;
    this.peers = options.peers;
  }

  /**
   * The views of node `target`: `_local` (this node, even when the coordinator is unreachable), or
   * a registered node's id or name (ids first); `node_not_found` for any other.
   */
  nodeViews(target: string, security: () => AuthCountersSnapshot | null): NodeViews {
    const local = new LocalNodeViews(this, security);
    if (target === '_local' || target === this.nodeId) return local;
    const record = this.peers?.record(target);
    if (record === undefined && target === this.config.values['node.name']) return local;
    if (record === undefined || this.peers === undefined) throw new NodeError('node_not_found', `no node [${target}] in the cluster's registry`);
    return record.id === this.nodeId ? local : new RemoteNodeViews(this.peers.peer(record.id));
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
      address: this.address(),
    };
  }

  /** Which coordinator the node runs with (`local` or `etcd`). */
  get coordinatorKind(): Coordinator['kind'] {
    return this.coordinator.kind;
  }

  /** The coordinator's current catalog (namespaces, collections, placements, node registry). */
  /** Whether the coordinator reaches the catalog's store now. */
  connectivity(): CoordinatorConnectivity {
    return this.coordinator.connectivity();
  }

  /** The elected master node's id, or null while none is. */
  masterId(): string | null {
    return this.coordinator.masterId();
  }

  catalog(): Catalog {
    return this.coordinator.catalog();
  }

  /** Current setting values (start-up values, plus runtime overrides). */
  settings(): Readonly<NodeSettingValues> {
    return this.ops.settings.values();
  }

  /** `GET /_node/_local/settings`: effective values with their sources, and the runtime overrides. */
  settingsView(): SettingsView {
    return this.ops.settings.view();
  }

  /**
   * `PUT /_node/_local/settings`: validates a flat map of key → value (`null` resets) against the
   * settings table and applies all of it at once (engine keys reach every open shard), or throws
   * SettingsError and applies nothing. Works without the coordinator.
   */
  applySettings(changes: Readonly<Record<string, unknown>>): SettingsChange {
    return this.ops.settings.update(changes);
  }

  /** The `host` facts of `GET /_node/_local`, with the warnings they raise. */
  hostInfo(): ReturnType<NodeOps['hostInfo']> {
    return this.ops.hostInfo();
  }

  /** Every figure of `GET /_node/_local/stats`; `security` comes from the HTTP layer's counters. */
  async nodeStats(security: AuthCountersSnapshot | null): Promise<NodeStats> {
    return this.ops.nodeStats(await this.statsInputs(security));
  }

  /** The node stats in Prometheus text format (`GET /_metrics`). */
  async metrics(security: AuthCountersSnapshot | null): Promise<{ contentType: string; text: string }> {
    return this.ops.metrics(await this.statsInputs(security));
  }

  private async statsInputs(security: AuthCountersSnapshot | null): Promise<NodeStatsInputs> {
    const [started, shardThreads] = await Promise.all([this.router.startedStats(), this.router.shardThreadStats()]);
    return {
      nodeId: this.nodeId,
      nodeName: this.config.values['node.name'],
      retainedLogBytes: started.reduce((sum, copy) => sum + copy.stats.walBytes, 0),
      maintenance: maintenanceStats(started, this.jobs.stats()),
      security,
      openFeeds: this.changeFeeds.heldResources().feeds,
      dataPath: this.config.values['path.data'],
      memoryRelease: [heapReleaseStats(), ...shardThreads],
    };
  }

  /** The collection as hosted here (meta, fields, local shard copies), for stats, compaction and the change feed. */
  hostedCollection(name: string): HostedCollection {
    return this.router.collection(name);
  }

  /** The state of every shard copy open or opening here, by shard UUID (what other nodes ask for their health). */
  shardStates(): Record<string, LocalCopyState> {
    const states: Record<string, LocalCopyState> = {};
    for (const hosted of this.router.collections()) {
      for (const local of hosted.shards) if (local) states[local.uuid] = local.state;
    }
    return states;
  }

  /**
   * The shard copy states every other node reports, asked of them all at once (at most
   * `PEER_STATES_WAIT_MS`); undefined on a single node. A node that does not answer reports none,
   * so its copies count as unassigned.
   */
  async peerShardStates(): Promise<((nodeId: string, uuid: string) => LocalCopyState | undefined) | undefined> {
    if (this.peers === undefined) return undefined;
    const peers = this.peers.peers();
    const answers = await Promise.all(
      peers.map(async (peer) => [peer.nodeId, (await peer.call('node.shardStates', [], PEER_STATES_WAIT_MS).catch(() => ({}))) as Record<string, LocalCopyState>] as const),
    );
    const byNode = new Map(answers);
    return (nodeId, uuid) => {
      const states = byNode.get(nodeId);
      return states !== undefined && Object.hasOwn(states, uuid) ? states[uuid] : undefined;
    };
  }

  /** Every collection hosted here (the local shard states of cluster health and state). */
  hostedCollections(): HostedCollection[] {
    return this.router.collections();
  }
}
