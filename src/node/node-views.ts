/**
 * What `GET /_node/{node_id}`, `GET /_node/{node_id}/stats` and `GET|PUT /_node/{node_id}/settings`
 * answer, for any node of the cluster through any node. `LocalNodeViews` renders this node's
 * bodies; `RemoteNodeViews` asks another node for its own through the internal node API (which
 * answers with its `LocalNodeViews`), so every node renders only itself and the bodies are the
 * same whichever node is asked. Settings are served by the node itself, without the coordinator.
 */
import type { PeerNode } from '../cluster/remote/peer-nodes.ts';
import type { AuthCountersSnapshot } from '../ops/security/auth-counters.ts';
import type { SettingsView } from '../ops/settings/dynamic-settings.ts';
import type { NodeStats } from '../ops/stats/node-stats.ts';
import type { ObservabilityService } from './observability-service.ts';

/** The body of `GET /_node/{node_id}`. */
export interface NodeInfoView {
  node_id: string;
  name: string;
  version: string;
  roles: string[];
  cluster_name: string;
  cluster_uuid: string;
  coordinator: string;
  addresses: { http: string | null };
  process: { pid: number; started_at: string; node_version: string };
  host: unknown;
  warnings: unknown[];
}

/** The body of `GET /_node/{node_id}/settings`. */
export type NodeSettingsView = { node_id: string } & SettingsView;

/** The body of `PUT /_node/{node_id}/settings`. */
export interface PutSettingsView {
  acknowledged: true;
  node_id: string;
  changed: Record<string, unknown>;
  transient: SettingsView['transient'];
}

/** One node's views (see the module comment). */
export interface NodeViews {
  info(): Promise<NodeInfoView>;
  stats(): Promise<NodeStats>;
  settings(): Promise<NodeSettingsView>;
  /** Applies a flat map of setting changes (`null` resets) on that node, all or nothing. */
  putSettings(changes: Readonly<Record<string, unknown>>): Promise<PutSettingsView>;
}

/** This node's views, rendered here. */
export class LocalNodeViews implements NodeViews {
  constructor(
    private readonly observability: ObservabilityService,
    /** The HTTP layer's authentication counters, when it has them. */
    private readonly security: () => AuthCountersSnapshot | null,
  ) {}

  async info(): Promise<NodeInfoView> {
    const info = this.observability.info();
    const registered = Object.hasOwn(this.observability.catalog().nodes, info.nodeId) ? this.observability.catalog().nodes[info.nodeId] : undefined;
    const { host, warnings } = await this.observability.hostInfo();
    return {
      node_id: info.nodeId,
      name: info.nodeName,
      version: info.version,
      roles: registered?.roles ?? [],
      cluster_name: info.clusterName,
      cluster_uuid: info.clusterUuid,
      coordinator: info.coordinator,
      addresses: { http: info.address },
      process: { pid: process.pid, started_at: new Date(Date.now() - process.uptime() * 1000).toISOString(), node_version: process.version },
      host,
      warnings,
    };
  }

  stats(): Promise<NodeStats> {
    return this.observability.nodeStats(this.security());
  }

  async settings(): Promise<NodeSettingsView> {
    return { node_id: this.observability.nodeId, ...this.observability.settingsView() };
  }

  async putSettings(changes: Readonly<Record<string, unknown>>): Promise<PutSettingsView> {
    const change = this.observability.applySettings(changes);
    const { transient } = this.observability.settingsView();
    return {
      acknowledged: true,
      node_id: this.observability.nodeId,
      changed: Object.fromEntries(change.changed.map((key) => [key, change.values[key as keyof typeof change.values] ?? null])),
      transient,
    };
  }
}

/** Another node's views, asked of that node. */
export class RemoteNodeViews implements NodeViews {
  constructor(private readonly peer: PeerNode) {}

  async info(): Promise<NodeInfoView> {
    return (await this.peer.call('node.info')) as NodeInfoView;
  }

  async stats(): Promise<NodeStats> {
    return (await this.peer.call('node.stats')) as NodeStats;
  }

  async settings(): Promise<NodeSettingsView> {
    return (await this.peer.call('node.settings')) as NodeSettingsView;
  }

  async putSettings(changes: Readonly<Record<string, unknown>>): Promise<PutSettingsView> {
    return (await this.peer.call('node.putSettings', [changes])) as PutSettingsView;
  }
}
