/**
 * The trash, cluster-wide: what the node service calls for `DELETE /{collection}`,
 * `DELETE /_namespace/{name}` and the `/_cluster/trash` endpoints. It reaches every node's trash
 * through `NodeTrash` and commits through the coordinator; the catalog change is the commit point
 * of deletes and restores (see trash-recovery.ts for what a crash on either side of it leaves).
 *
 * - delete: every node records the intent → the catalog drops the collections (names free at
 *   once) → each node moves its shards into the item as it applies that change, then completes it;
 * - restore: find the item, check names and completeness (verify) → every holder marks it
 *   `restoring` → the catalog takes the collections back with their recorded metadata → each node
 *   moves its shards back before reopening them → holders drop the item;
 * - purge: every holder removes its part (atomically per node).
 *
 * Operations on one item run one at a time (a keyed lock); different items proceed in parallel.
 */
import type { Logger } from 'pino';
import { DEFAULT_NAMESPACE, type CollectionMeta } from '../cluster/catalog.ts';
import { CatalogError } from '../cluster/catalog-error.ts';
import type { Coordinator } from '../cluster/coordinator.ts';
import { invalidNameReason } from '../cluster/names.ts';
import { EngineError, TroveError } from '../engine/errors.ts';
import { asNodeError, collectionNotFound, NodeError } from '../node/node-error.ts';
import { KeyedLock } from '../jobs/keyed-lock.ts';
import { onEveryNode, type NodeTrash, type NodeTrashItem } from './node-trash.ts';
import { TrashError, trashItemNotFound } from './trash-error.ts';
import type { TrashFaults } from './trash-faults.ts';
import type { TrashIntent } from './trash-store.ts';
import { mergeListings, mergeVerifications, nodesHeader, type NodesHeader, type TrashListView, type VerifyView } from './trash-views.ts';

/** Options of `TrashService`. */
export interface TrashServiceOptions {
  coordinator: Coordinator;
  /** Every node's trash: this node's in process (peers join once the cluster reaches them). */
  nodes: () => NodeTrash[];
  /** Resolves once this node applied the catalog revision. */
  waitForRevision: (revision: number) => Promise<void>;
  /** The current `trash.retention_secs`. */
  retentionSecs: () => number;
  faults: TrashFaults;
  logger: Logger;
  now?: () => number;
}

/** Response of `DELETE /{collections}`. */
export interface DeleteCollectionsResponse {
  acknowledged: true;
  trash_items: Array<{ collection: string; item_id: string }>;
}

/** Response of `DELETE /_namespace/{name}`. */
export interface DeleteNamespaceResponse {
  acknowledged: true;
  namespace: string;
  collections: string[];
  trash_item_id: string;
}

/** Response of `POST /_cluster/trash/{item_id}/_restore`. */
export interface RestoreResponse {
  acknowledged: true;
  item_id: string;
  kind: NodeTrashItem['kind'];
  namespace: string;
  collections: string[];
}

/** Response of `DELETE /_cluster/trash/{item_id}`. */
export interface PurgeResponse {
  acknowledged: boolean;
  item_id: string;
  _nodes: NodesHeader;
  nodes: Array<{ node_id: string; node_name: string; shards: number; bytes: number }>;
}

/** Response of `DELETE /_cluster/trash`. */
export interface PurgeAllResponse {
  acknowledged: boolean;
  purged: string[];
  /** Items left alone because a delete or restore of theirs is in progress. */
  skipped: Array<{ item_id: string; state: string }>;
  _nodes: NodesHeader;
}

/** A node holding an item, with its copy of the item. */
interface ItemHolder {
  node: NodeTrash;
  item: NodeTrashItem;
}

/** Parses the optional restore body `{"rename_to": "name"}`. */
export function parseRestoreBody(body: unknown): { renameTo?: string } {
  if (body === undefined || body === null) return {};
  if (typeof body !== 'object' || Array.isArray(body)) throw new EngineError('parsing', 'the restore body must be a JSON object');
  const record = body as Record<string, unknown>;
  for (const key of Object.keys(record)) {
    if (key !== 'rename_to') throw new EngineError('parsing', `unknown field [${key}] in the restore body`);
  }
  if (record.rename_to === undefined) return {};
  if (typeof record.rename_to !== 'string') throw new EngineError('parsing', '[rename_to] must be a string');
  const reason = invalidNameReason(record.rename_to);
  if (reason !== null) throw new NodeError('invalid_index_name', `Invalid index name [${record.rename_to}], ${reason}`);
  return { renameTo: record.rename_to };
}

/** A trash error, thrown here or on another node (it then crosses as a TroveError with a trash code). */
function isTrashFailure(error: unknown): boolean {
  return error instanceof TrashError || (error instanceof TroveError && error.code.startsWith('trash_'));
}

function failureReason(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** See the module comment. */
export class TrashService {
  private readonly locks = new KeyedLock();

  constructor(private readonly options: TrashServiceOptions) {}

  /** `DELETE /{names}`: each concrete collection becomes its own trash item; all names must exist. */
  async deleteCollections(target: string): Promise<DeleteCollectionsResponse> {
    const names = target.split(',').map((part) => part.trim()).filter((part) => part !== '');
    if (names.length === 0 || names.some((name) => name.includes('*') || name === '_all')) {
      throw new EngineError('illegal_argument', 'Wildcard expressions or all indices are not allowed');
    }
    const { coordinator } = this.options;
    for (const name of names) {
      if (coordinator.getCollection(name)) continue;
      if (Object.values(coordinator.catalog().collections).some((collection) => collection.aliases !== undefined && Object.hasOwn(collection.aliases, name))) {
        throw new EngineError('illegal_argument', `The provided expression [${name}] matches an alias, specify the corresponding concrete indices instead.`);
      }
      throw collectionNotFound(name);
    }
    const items: DeleteCollectionsResponse['trash_items'] = [];
    for (const name of names) {
      const { itemId } = await this.deleteCollectionThrough(name, () => coordinator.deleteCollection(name));
      items.push({ collection: name, item_id: itemId });
    }
    return { acknowledged: true, trash_items: items };
  }

  /**
   * Moves collection `name` to the trash (one item), `commit` being the catalog change that takes
   * it out of the catalog: a plain delete, or `POST /_aliases` with `remove_index` (its alias
   * changes commit in the same change).
   */
  async deleteCollectionThrough<T>(name: string, commit: () => Promise<T>): Promise<{ result: T; itemId: string }> {
    const { coordinator } = this.options;
    const meta = coordinator.getCollection(name);
    if (!meta) throw collectionNotFound(name);
    const namespace = coordinator.getNamespace(meta.namespace) ?? { name: meta.namespace, uuid: '', createdAt: 0 };
    const intent = this.intent('collection', name, namespace, [meta]);
    const result = await this.moveToTrash(intent, commit);
    return { result, itemId: intent.itemId };
  }

  /** `DELETE /_namespace/{name}`: the namespace and all its collections become one trash item. */
  async deleteNamespace(name: string): Promise<DeleteNamespaceResponse> {
    const { coordinator } = this.options;
    const namespace = coordinator.getNamespace(name);
    if (!namespace) throw new NodeError('namespace_not_found', `no such namespace [${name}]`);
    if (name === DEFAULT_NAMESPACE) throw new NodeError('illegal_argument', `the [${DEFAULT_NAMESPACE}] namespace cannot be deleted`);
    const intent = this.intent('namespace', name, namespace, coordinator.listCollections(name));
    const removed = await this.moveToTrash(intent, () => coordinator.deleteNamespace(name));
    return { acknowledged: true, namespace: name, collections: removed.collections.map((collection) => collection.name), trash_item_id: intent.itemId };
  }

  /** `GET /_cluster/trash`. */
  async list(): Promise<TrashListView> {
    const { answers, failures } = await onEveryNode(this.options.nodes(), (node) => node.list());
    return mergeListings(
      answers.map(({ node, value }) => ({ nodeId: node.nodeId, nodeName: node.nodeName, listing: value })),
      failures,
      this.options.retentionSecs(),
    );
  }

  /** `POST /_cluster/trash/{item_id}/_verify`: read-only. */
  async verify(itemId: string): Promise<VerifyView> {
    const { item } = await this.findItem(itemId);
    const { answers, failures } = await onEveryNode(this.options.nodes(), (node) => node.verify(itemId));
    return mergeVerifications(
      item,
      answers.map(({ node, value }) => ({ nodeId: node.nodeId, nodeName: node.nodeName, result: value })),
      failures,
    );
  }

  /** `POST /_cluster/trash/{item_id}/_restore` with the optional body `{"rename_to": ...}`. */
  async restore(itemId: string, body: unknown): Promise<RestoreResponse> {
    const { renameTo } = parseRestoreBody(body);
    return this.withItemLock(itemId, async () => {
      const { item, holders } = await this.findItem(itemId);
      const busy = holders.find((holder) => holder.item.state !== 'trashed');
      if (busy) throw new TrashError('trash_item_busy', `trash item [${itemId}] is ${busy.item.state} on node [${busy.node.nodeId}]`);
      if (renameTo !== undefined && item.kind !== 'collection') {
        throw new EngineError('illegal_argument', '[rename_to] applies to collection items only; a namespace comes back with its own names');
      }
      const collections: CollectionMeta[] = item.collections.map((collection) => ({ ...structuredClone(collection), name: renameTo ?? collection.name }));
      this.checkConflicts(item, collections);
      const verification = await this.verify(itemId);
      if (!verification.complete) {
        const broken = verification.shards.filter((shard) => shard.status !== 'ok' && shard.status !== 'unassigned');
        throw new TrashError(
          'trash_item_incomplete',
          `trash item [${itemId}] cannot be restored: ${broken.length} of ${verification.shards.length} shards are missing or damaged`,
          { item_id: itemId, summary: verification.summary, findings: verification.shards },
        );
      }
      const holderNodes = holders.map((holder) => holder.node);
      const prepared = await onEveryNode(holderNodes, (node) => node.prepareRestore(itemId));
      if (prepared.failures.length > 0) {
        await onEveryNode(prepared.answers.map((answer) => answer.node), (node) => node.abortRestore(itemId));
        throw this.unavailable(`cannot restore trash item [${itemId}]`, prepared.failures);
      }
      this.options.faults.crashAt('trash.restore.after_prepare');
      const { coordinator } = this.options;
      try {
        await coordinator.restoreCollections({
          namespace: item.kind === 'namespace' ? { name: item.name, uuid: item.namespaceUuid, createdAt: item.namespaceCreatedAt } : undefined,
          collections,
        });
      } catch (error) {
        await onEveryNode(holderNodes, (node) => node.abortRestore(itemId));
        if (error instanceof CatalogError && (error.code === 'resource_already_exists' || error.code === 'namespace_not_found')) {
          throw new TrashError('trash_restore_conflict', error.message);
        }
        throw asNodeError(error);
      }
      await this.options.waitForRevision(coordinator.revision);
      const finished = await onEveryNode(holderNodes, (node) => node.finishRestore(itemId));
      for (const failure of finished.failures) {
        this.options.logger.error({ itemId, nodeId: failure.nodeId, err: failure.error }, 'a node could not finish the restore; it finishes at its next start');
      }
      return {
        acknowledged: true,
        item_id: itemId,
        kind: item.kind,
        namespace: item.namespace,
        collections: collections.map((collection) => collection.name),
      };
    });
  }

  /** `DELETE /_cluster/trash/{item_id}`: purges the item on every node. */
  async purge(itemId: string): Promise<PurgeResponse> {
    return this.withItemLock(itemId, async () => {
      const { holders, unreadable } = await this.holdersOf(itemId);
      if (holders.length === 0 && !unreadable) throw trashItemNotFound(itemId);
      const busy = holders.find((holder) => holder.item.state !== 'trashed');
      if (busy) throw new TrashError('trash_item_busy', `trash item [${itemId}] is ${busy.item.state} on node [${busy.node.nodeId}]`);
      const { answers, failures } = await onEveryNode(this.options.nodes(), (node) => node.purge(itemId));
      return {
        acknowledged: failures.length === 0,
        item_id: itemId,
        _nodes: nodesHeader(answers.length, failures),
        nodes: answers
          .filter((answer) => answer.value !== null)
          .map(({ node, value }) => ({ node_id: node.nodeId, node_name: node.nodeName, shards: value!.shards, bytes: value!.bytes })),
      };
    });
  }

  /** `DELETE /_cluster/trash`: purges every item on every node (items mid-operation are skipped). */
  async purgeAll(): Promise<PurgeAllResponse> {
    const listed = await onEveryNode(this.options.nodes(), (node) => node.list());
    const states = new Map<string, string>();
    for (const { value } of listed.answers) {
      for (const item of value.items) {
        const known = states.get(item.itemId);
        if (known === undefined || known === 'trashed') states.set(item.itemId, item.state);
      }
      for (const entry of value.unreadable) if (!states.has(entry.itemId)) states.set(entry.itemId, 'trashed');
    }
    const purged: string[] = [];
    const skipped: PurgeAllResponse['skipped'] = [];
    const failures = [...listed.failures];
    for (const [itemId, state] of [...states].sort()) {
      if (state !== 'trashed') {
        skipped.push({ item_id: itemId, state });
        continue;
      }
      const result = await this.withItemLock(itemId, () => onEveryNode(this.options.nodes(), (node) => node.purge(itemId)));
      failures.push(...result.failures);
      if (result.failures.length === 0) purged.push(itemId);
    }
    return { acknowledged: failures.length === 0, purged, skipped, _nodes: nodesHeader(listed.answers.length, failures) };
  }

  private intent(kind: TrashIntent['kind'], name: string, namespace: TrashIntent['namespace'], collections: CollectionMeta[]): TrashIntent {
    return {
      itemId: crypto.randomUUID(),
      kind,
      name,
      namespace: structuredClone(namespace),
      deletedAt: (this.options.now ?? Date.now)(),
      collections: structuredClone(collections),
    };
  }

  /** Records the intent on every node, commits the catalog change, waits until this node applied it. */
  private async moveToTrash<T>(intent: TrashIntent, commit: () => Promise<T>): Promise<T> {
    const nodes = this.options.nodes();
    this.requireEveryHolder(intent, nodes);
    const prepared = await onEveryNode(nodes, (node) => node.prepareDelete(intent));
    if (prepared.failures.length > 0) {
      await onEveryNode(prepared.answers.map((answer) => answer.node), (node) => node.abortDelete(intent.itemId));
      throw this.unavailable(`cannot delete [${intent.name}]`, prepared.failures);
    }
    this.options.faults.crashAt('trash.delete.after_prepare');
    let result: T;
    try {
      result = await commit();
    } catch (error) {
      await onEveryNode(nodes, (node) => node.abortDelete(intent.itemId));
      throw asNodeError(error);
    }
    const revision = this.options.coordinator.revision;
    await this.options.waitForRevision(revision);
    const finished = await onEveryNode(nodes, (node) => node.finishDelete(intent.itemId, revision));
    for (const failure of finished.failures) {
      this.options.logger.error({ itemId: intent.itemId, nodeId: failure.nodeId, err: failure.error }, 'a node could not finish the delete; it finishes at its next start');
    }
    return result;
  }

  /**
   * Refuses a delete while a node holding copies of its collections is not in the cluster: that
   * node could not record the item, so its copies would leave the catalog without reaching a trash.
   */
  private requireEveryHolder(intent: TrashIntent, nodes: readonly NodeTrash[]): void {
    const reachable = new Set(nodes.map((node) => node.nodeId));
    for (const collection of intent.collections) {
      for (const placement of collection.placements) {
        for (const nodeId of [placement.primary, ...placement.replicas]) {
          if (nodeId === null || reachable.has(nodeId)) continue;
          throw new TrashError(
            'trash_unavailable',
            `cannot delete [${intent.name}]: node [${nodeId}] holds copies of [${collection.name}] but is not in the cluster; start it again, then retry`,
          );
        }
      }
    }
  }

  /**
   * The nodes holding an item (and whether some node holds it with an unreadable manifest). When
   * no node that answered has it but some did not answer, the item may be there: trash_unavailable.
   */
  private async holdersOf(itemId: string): Promise<{ holders: ItemHolder[]; unreadable: boolean }> {
    const { answers, failures } = await onEveryNode(this.options.nodes(), (node) => node.list());
    const holders: ItemHolder[] = [];
    let unreadable = false;
    for (const { node, value } of answers) {
      const item = value.items.find((candidate) => candidate.itemId === itemId);
      if (item) holders.push({ node, item });
      if (value.unreadable.some((entry) => entry.itemId === itemId)) unreadable = true;
    }
    if (holders.length === 0 && !unreadable && failures.length > 0) {
      throw this.unavailable(`trash item [${itemId}] was not found on the nodes that answered`, failures);
    }
    return { holders, unreadable };
  }

  /** The item as its holders describe it; trash_item_not_found when no node has a readable copy. */
  private async findItem(itemId: string): Promise<{ item: NodeTrashItem; holders: ItemHolder[] }> {
    const { holders } = await this.holdersOf(itemId);
    if (holders.length === 0) throw trashItemNotFound(itemId);
    return { item: holders[0].item, holders };
  }

  /** Refuses a restore that would collide with the live catalog. */
  private checkConflicts(item: NodeTrashItem, collections: CollectionMeta[]): void {
    const { coordinator } = this.options;
    if (item.kind === 'namespace' && coordinator.getNamespace(item.name)) {
      throw new TrashError('trash_restore_conflict', `cannot restore namespace [${item.name}]: a namespace with that name exists`);
    }
    for (const collection of collections) {
      if (coordinator.getCollection(collection.name)) {
        const hint = item.kind === 'collection' ? '; restore it under another name with {"rename_to": "<name>"}' : '';
        throw new TrashError('trash_restore_conflict', `cannot restore [${collection.name}]: a live collection has that name${hint}`);
      }
      if (item.kind === 'collection' && !coordinator.getNamespace(collection.namespace)) {
        throw new TrashError(
          'trash_restore_conflict',
          `cannot restore [${collection.name}]: its namespace [${collection.namespace}] no longer exists; create it or restore it first`,
        );
      }
    }
  }

  private unavailable(what: string, failures: ReadonlyArray<{ nodeId: string; error: unknown }>): Error {
    const first = failures[0];
    if (failures.length === 1 && isTrashFailure(first.error)) return first.error as Error;
    const reasons = failures.map((failure) => `node [${failure.nodeId}]: ${failureReason(failure.error)}`).join('; ');
    return new TrashError('trash_unavailable', `${what}: ${reasons}`);
  }

  private async withItemLock<T>(itemId: string, task: () => Promise<T>): Promise<T> {
    const release = await this.locks.acquire(itemId);
    try {
      return await task();
    } finally {
      release();
    }
  }
}
