/**
 * The cluster coordinator on etcd (layout: docs/formats/etcd.md). Reads are served from an
 * in-memory view that one watch keeps current (`CatalogFeed`). A mutation runs the same rules as
 * the embedded coordinator (`catalog-rules.ts`) on a copy of the view, then commits it with an etcd
 * transaction compared on the mod revision of what it was computed from (`EtcdWrites`); on a lost
 * comparison it waits until the view holds the winner and computes again. It resolves once the
 * view includes its change, and fails within `requestTimeoutMs` with `catalog_unavailable` when
 * etcd does not answer (a transaction is all or nothing; after a timeout its outcome shows in the
 * watch, as an Elasticsearch ack timeout leaves the outcome to the cluster state).
 *
 * The node registry and the master election: node-session.ts. Only the master allocates
 * (allocation.ts) and promotes replicas of primaries whose node left (in-sync-rules.ts), in
 * transactions fenced on its election key. A node counts as gone once this process saw it leave,
 * or, for a node already absent when this process opened (a cluster restart), after two node
 * TTLs: a node that is merely slower to start again keeps its copies.
 */
import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import { Etcd3 } from 'etcd3';
import type { Mapping } from '../../engine/mapping/mapping.ts';
import { emptyCatalog, type ApiKeyRecord, type Catalog, type CatalogEvent, type ClusterSettingsMeta, type CollectionMeta, type NamespaceMeta, type NodeRecord } from '../catalog.ts';
import { CatalogError } from '../catalog-error.ts';
import { updateAliasesIn, type AliasAction } from '../alias-rules.ts';
import {
  createCollectionIn,
  createNamespaceIn,
  deleteCollectionIn,
  deleteNamespaceIn,
  putMappingIn,
  updateClusterSettingsIn,
  updateCollectionSettingsIn,
  restoreCollectionsIn,
  sortedByKey,
  type CatalogLimits,
} from '../catalog-rules.ts';
import type {
  CatalogListener,
  Coordinator,
  CoordinatorConnectivity,
  CreateCollectionRequest,
  NodeLease,
  NodeRegistration,
  DynamicCollectionSettings,
  PutMappingOptions,
  RegisterNodeOptions,
  RestoreCollectionsRequest,
} from '../coordinator.ts';
import { allocateUnassigned } from './allocation.ts';
import { CatalogFeed, WatchBackoff } from './catalog-feed.ts';
import { catalogDocument, EtcdLayout } from './etcd-layout.ts';
import { createOnce, EtcdWrites, unavailable } from './etcd-writes.ts';
import { NodeSession } from './node-session.ts';
import { markInSyncIn, markStaleIn, promoteReplicas, type ShardAddress } from '../replication/in-sync-rules.ts';

/** Options of `EtcdCoordinator.open`. */
export interface EtcdCoordinatorOptions {
  /** etcd client URLs, e.g. `['http://127.0.0.1:2379']`. */
  endpoints: string[];
  /** Everything lives under `/trove/<clusterName>/`. */
  clusterName: string;
  logger?: Logger;
  /** Default lease TTL of `registerNode` (`cluster.node_ttl_ms`); etcd counts whole seconds. */
  nodeTtlMs?: number;
  /** Bound of every mutation and etcd call; past it the call fails with catalog_unavailable. */
  requestTimeoutMs?: number;
  /** Node-wide bounds of catalog changes (`cluster.max_shards_per_node`); Elasticsearch's defaults when absent. */
  limits?: CatalogLimits;
  /** Clock, epoch millis (tests pin it). */
  now?: () => number;
}

/** Default `cluster.node_ttl_ms`. */
export const DEFAULT_NODE_TTL_MS = 10_000;
/** Default bound of a mutation. */
export const DEFAULT_REQUEST_TIMEOUT_MS = 5_000;
const ALLOCATION_RETRY_MS = 1_000;

/** Coordinator whose catalog, node registry and master election live in etcd. */
export class EtcdCoordinator implements Coordinator {
  readonly kind = 'etcd' as const;
  private readonly listeners = new Set<CatalogListener>();
  private readonly sessions = new Map<string, NodeSession>();
  private readonly feed: CatalogFeed;
  private readonly writes: EtcdWrites;
  private readonly layout: EtcdLayout;
  private readonly timeoutMs: number;
  private mutations: Promise<unknown> = Promise.resolve();
  private closing: Promise<void> | null = null;
  private closed = false;
  private allocating = false;
  private allocateAgain = false;
  private allocationRetry: NodeJS.Timeout | null = null;
  private restartGrace: NodeJS.Timeout | null = null;
  /** Nodes this process saw leave the registry (and not come back), with when. */
  private readonly departed = new Map<string, number>();
  private readonly openedAt = Date.now();

  private constructor(
    private readonly client: Etcd3,
    private readonly secret: string,
    private readonly options: EtcdCoordinatorOptions,
  ) {
    this.layout = new EtcdLayout(options.clusterName);
    this.timeoutMs = options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
    this.feed = new CatalogFeed(client, this.layout, (events) => this.announce(events), options.logger);
    this.writes = new EtcdWrites(client, this.layout, this.feed, this.timeoutMs);
  }

  /** Connects, creates the cluster's catalog and secret if this is its first node, loads the view. */
  static async open(options: EtcdCoordinatorOptions): Promise<EtcdCoordinator> {
    const layout = new EtcdLayout(options.clusterName);
    const timeoutMs = options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
    const client = new Etcd3({
      hosts: options.endpoints,
      dialTimeout: timeoutMs,
      defaultCallOptions: (context) => (context.isStream ? {} : { deadline: Date.now() + timeoutMs }),
      faultHandling: { watchBackoff: new WatchBackoff() },
    });
    try {
      const initial = emptyCatalog(options.clusterName, crypto.randomUUID(), (options.now ?? Date.now)());
      await createOnce(client, layout.catalog, JSON.stringify(catalogDocument(initial)));
      const secret = await createOnce(client, layout.secret, randomBytes(32).toString('base64url'));
      const coordinator = new EtcdCoordinator(client, secret, options);
      await coordinator.feed.start();
      coordinator.restartGrace = setTimeout(() => coordinator.allocateSoon(), coordinator.restartGraceMs() + 100);
      coordinator.restartGrace.unref();
      return coordinator;
    } catch (error) {
      client.close();
      throw unavailable(error, `cannot open the catalog of cluster [${options.clusterName}] in etcd at ${options.endpoints.join(',')}`);
    }
  }

  get revision(): number {
    return this.feed.view.revision;
  }

  connectivity(): CoordinatorConnectivity {
    const now = Date.now();
    for (const session of this.sessions.values()) {
      const since = session.overdueSince(now);
      if (since !== null) {
        return { available: false, reason: `etcd has not confirmed node [${session.registration.id}]'s lease for ${Math.round((now - since) / 1000)} s`, since };
      }
    }
    const since = this.feed.disconnectedSince;
    if (since !== null) return { available: false, reason: 'the catalog watch on etcd is disconnected', since };
    return { available: true };
  }

  catalog(): Catalog {
    return this.feed.view.catalog;
  }

  getNamespace(name: string): NamespaceMeta | null {
    const { namespaces } = this.catalog();
    return Object.hasOwn(namespaces, name) ? namespaces[name] : null;
  }

  listNamespaces(): NamespaceMeta[] {
    return sortedByKey(this.catalog().namespaces);
  }

  createNamespace(name: string): Promise<NamespaceMeta> {
    return this.changeCatalog((draft) => createNamespaceIn(draft, name, this.now()));
  }

  deleteNamespace(name: string): Promise<{ namespace: NamespaceMeta; collections: CollectionMeta[] }> {
    return this.changeCatalog((draft) => deleteNamespaceIn(draft, name));
  }

  getCollection(name: string): CollectionMeta | null {
    const { collections } = this.catalog();
    return Object.hasOwn(collections, name) ? collections[name] : null;
  }

  listCollections(namespace?: string): CollectionMeta[] {
    const all = sortedByKey(this.catalog().collections);
    return namespace === undefined ? all : all.filter((collection) => collection.namespace === namespace);
  }

  /** Placements are computed over the registered nodes of the view the transaction compares on. */
  createCollection(request: CreateCollectionRequest): Promise<CollectionMeta> {
    return this.changeCatalog((draft) => createCollectionIn(draft, request, this.now(), this.options.limits));
  }

  deleteCollection(name: string): Promise<CollectionMeta> {
    return this.changeCatalog((draft) => deleteCollectionIn(draft, name));
  }

  restoreCollections(request: RestoreCollectionsRequest): Promise<CollectionMeta[]> {
    return this.changeCatalog((draft) => restoreCollectionsIn(draft, request, this.options.limits));
  }

  putMapping(name: string, mapping: Mapping, options: PutMappingOptions = {}): Promise<CollectionMeta> {
    return this.changeCatalog((draft) => putMappingIn(draft, name, mapping, options));
  }

  updateAliases(actions: readonly AliasAction[]): Promise<CollectionMeta[]> {
    return this.changeCatalog((draft) => updateAliasesIn(draft, actions));
  }

  updateClusterSettings(settings: ClusterSettingsMeta): Promise<ClusterSettingsMeta> {
    return this.changeCatalog((draft) => updateClusterSettingsIn(draft, settings));
  }

  updateCollectionSettings(name: string, update: DynamicCollectionSettings): Promise<CollectionMeta> {
    return this.changeCatalog((draft) => updateCollectionSettingsIn(draft, name, update));
  }

  getApiKey(id: string): ApiKeyRecord | null {
    const keys = this.catalog().apiKeys ?? {};
    return Object.hasOwn(keys, id) ? keys[id] : null;
  }

  listApiKeys(): ApiKeyRecord[] {
    return sortedByKey(this.catalog().apiKeys ?? {});
  }

  createApiKey(record: ApiKeyRecord): Promise<ApiKeyRecord> {
    return this.serial((deadline) => this.writes.createApiKey(record, deadline));
  }

  /** One transaction: put only if no key exists under `apikeys/`, so one of racing nodes wins. */
  createFirstApiKey(record: ApiKeyRecord): Promise<boolean> {
    return this.serial((deadline) => this.writes.createFirstApiKey(record, deadline));
  }

  deleteApiKey(id: string): Promise<ApiKeyRecord | null> {
    return this.serial((deadline) => this.writes.deleteApiKey(id, deadline));
  }

  /** Batched: one transaction for every key whose time moves forward, compared on each key. */
  recordApiKeyUse(lastUsed: ReadonlyMap<string, number>): Promise<void> {
    return this.serial((deadline) => this.writes.recordApiKeyUse(lastUsed, deadline));
  }

  markInSync(address: ShardAddress, nodeId: string, term: number): Promise<CollectionMeta> {
    return this.changeCatalog((draft) => markInSyncIn(draft, address, nodeId, term));
  }

  markStale(address: ShardAddress, nodeIds: readonly string[], term: number): Promise<CollectionMeta> {
    return this.changeCatalog((draft) => markStaleIn(draft, address, nodeIds, term));
  }

  leaseValidUntil(nodeId: string): number {
    return this.sessions.get(nodeId)?.validUntil() ?? 0;
  }

  async registerNode(registration: NodeRegistration, options: RegisterNodeOptions = {}): Promise<NodeLease> {
    if (this.closed) throw new CatalogError('catalog_unavailable', 'the coordinator is closed');
    const ttlSeconds = Math.max(1, Math.ceil((options.ttlMs ?? this.options.nodeTtlMs ?? DEFAULT_NODE_TTL_MS) / 1000));
    const previous = this.sessions.get(registration.id);
    if (previous) await this.revokeSession(previous).catch(() => undefined);
    const session = new NodeSession(this.client, this.layout, registration, ttlSeconds, () => this.now(), this.options.logger);
    const deadline = Date.now() + this.timeoutMs;
    try {
      const revision = await this.writes.bounded(session.register(), deadline);
      await this.writes.awaitView(revision, deadline);
    } catch (error) {
      session.abandon();
      throw unavailable(error, `cannot register node [${registration.id}] in etcd`);
    }
    this.sessions.set(registration.id, session);
    this.allocateSoon();
    return { nodeId: registration.id, revoke: () => this.revokeSession(session) };
  }

  listNodes(): NodeRecord[] {
    return sortedByKey(this.catalog().nodes);
  }

  /** The elected node as this node's view last observed the election (node-session.ts). */
  masterId(): string | null {
    return this.feed.view.leader?.nodeId ?? null;
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

  /** Resigns, revokes this process's leases, stops the watch and closes the client. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      for (const session of [...this.sessions.values()]) {
        try {
          await this.revokeSession(session);
        } catch (error) {
          this.options.logger?.warn({ err: error, nodeId: session.registration.id }, 'could not remove node registration on close');
        }
      }
      await this.mutations;
      this.shutDown();
      await this.feed.stop();
      this.client.close();
    })();
    return this.closing;
  }

  private shutDown(): void {
    this.closed = true;
    if (this.allocationRetry !== null) clearTimeout(this.allocationRetry);
    if (this.restartGrace !== null) clearTimeout(this.restartGrace);
    this.listeners.clear();
  }

  private async revokeSession(session: NodeSession): Promise<void> {
    const nodeId = session.registration.id;
    if (this.sessions.get(nodeId) !== session) return;
    this.sessions.delete(nodeId);
    const deadline = Date.now() + this.timeoutMs;
    try {
      await this.writes.bounded(session.revoke(), deadline);
    } catch (error) {
      throw unavailable(error, `cannot revoke the lease of node [${nodeId}]`);
    }
    await this.feed.waitFor(() => !Object.hasOwn(this.catalog().nodes, nodeId), deadline - Date.now());
  }

  private now(): number {
    return (this.options.now ?? Date.now)();
  }

  /** Runs mutations of this process one at a time, each bounded from the moment it was called. */
  private serial<T>(work: (deadline: number) => Promise<T>): Promise<T> {
    const deadline = Date.now() + this.timeoutMs;
    const run = this.mutations.then(async () => {
      if (this.closed) throw new CatalogError('catalog_unavailable', 'the coordinator is closed');
      try {
        return await work(deadline);
      } catch (error) {
        throw unavailable(error, 'etcd is unavailable');
      }
    });
    this.mutations = run.catch(() => undefined);
    return run;
  }

  /** Runs a catalog document change (catalog-rules.ts) through the mutation queue. */
  private changeCatalog<T>(change: (draft: Catalog) => T, fence?: () => string | null): Promise<T> {
    return this.serial((deadline) => this.writes.changeCatalog(change, deadline, fence));
  }

  private announce(events: CatalogEvent[]): void {
    for (const event of events) {
      for (const change of event.changes) {
        if (change.kind === 'node_left') this.departed.set(change.node.id, Date.now());
        if (change.kind === 'node_joined') this.departed.delete(change.node.id);
      }
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
    this.allocateSoon();
  }

  /** See the module comment. */
  private gone(nodeId: string): boolean {
    return this.departed.has(nodeId) || Date.now() - this.openedAt > this.restartGraceMs();
  }

  private restartGraceMs(): number {
    return 2 * (this.options.nodeTtlMs ?? DEFAULT_NODE_TTL_MS);
  }

  /** This process's session that holds the election, or null. */
  private masterSession(): NodeSession | null {
    const leader = this.feed.view.leader;
    if (leader === null) return null;
    for (const session of this.sessions.values()) if (session.candidateKey === leader.key) return session;
    return null;
  }

  /** On the master: assigns unassigned shard copies, fenced on the master's election key. */
  private allocateSoon(): void {
    if (this.closed || this.closing !== null || this.masterSession() === null) return;
    if (this.allocating) {
      this.allocateAgain = true;
      return;
    }
    this.allocating = true;
    void (async () => {
      try {
        do {
          this.allocateAgain = false;
          await this.changeCatalog(
            (draft) => {
              const promoted = promoteReplicas(draft, (nodeId) => this.gone(nodeId));
              return allocateUnassigned(draft) || promoted;
            },
            () => this.masterSession()?.candidateKey ?? null,
          );
        } while (this.allocateAgain && !this.closed);
      } catch (error) {
        const lostMastership = error instanceof CatalogError && error.code === 'catalog_conflict';
        if (!lostMastership) this.options.logger?.warn({ err: error }, 'shard allocation failed; retrying');
        if (this.allocationRetry !== null) clearTimeout(this.allocationRetry);
        if (!this.closed) this.allocationRetry = setTimeout(() => this.allocateSoon(), ALLOCATION_RETRY_MS);
      } finally {
        this.allocating = false;
      }
    })();
  }
}
