/**
 * The trash of one node as the cluster-wide operations reach it. `NodeTrash` is plain data in,
 * plain data out, so it can be answered in process (`LocalNodeTrash`, over this node's
 * TrashStore) or over HTTP by a peer; the cluster-wide service (trash-service.ts) only ever talks
 * to this interface and collects every node's answer with `onEveryNode`.
 */
import type { CollectionMeta } from '../cluster/catalog.ts';
import type { ShardCheck } from '../engine/directory/shard-verify.ts';
import type { TrashItemKind, TrashItemState, TrashShardSnapshot } from './trash-manifest.ts';
import type { PurgedItem, TrashIntent, TrashStore, UnreadableItem } from './trash-store.ts';

/** One item as one node holds it (the manifest without file lists). */
export interface NodeTrashItem {
  itemId: string;
  kind: TrashItemKind;
  name: string;
  namespace: string;
  /** Namespace UUID and creation time, needed to restore a namespace item. */
  namespaceUuid: string;
  namespaceCreatedAt: number;
  deletedAt: number;
  state: TrashItemState;
  collections: CollectionMeta[];
  shards: Array<Omit<TrashShardSnapshot, 'files'>>;
}

/** Everything one node's trash holds. */
export interface NodeTrashListing {
  items: NodeTrashItem[];
  unreadable: UnreadableItem[];
}

/** One node's verification of one item. */
export interface NodeItemVerification {
  state: TrashItemState;
  shards: ShardCheck[];
}

/** The trash of one node (see the module comment). */
export interface NodeTrash {
  readonly nodeId: string;
  readonly nodeName: string;
  list(): Promise<NodeTrashListing>;
  /** Delete, step 1: records the intent (the collections are still live). */
  prepareDelete(intent: TrashIntent): Promise<void>;
  /** Undoes `prepareDelete` when the catalog change did not happen. */
  abortDelete(itemId: string): Promise<void>;
  /** Delete, last step: once the node applied catalog revision `revision` (the delete), completes the item there. */
  finishDelete(itemId: string, revision: number): Promise<void>;
  /** Read-only check of the shards this node holds; null when it holds no such item. */
  verify(itemId: string): Promise<NodeItemVerification | null>;
  /** Restore, step 1: marks the item `restoring`. */
  prepareRestore(itemId: string): Promise<void>;
  /** Undoes `prepareRestore` when the catalog change did not happen. */
  abortRestore(itemId: string): Promise<void>;
  /** Restore, last step: moves what is left back and removes the item. */
  finishRestore(itemId: string): Promise<void>;
  /** Purges the item here; null when this node does not hold it. */
  purge(itemId: string): Promise<PurgedItem | null>;
}

/** The trash of this node, answered in process. */
export class LocalNodeTrash implements NodeTrash {
  constructor(
    readonly nodeId: string,
    readonly nodeName: string,
    private readonly store: TrashStore,
    private readonly waitForRevision: (revision: number) => Promise<void>,
  ) {}

  async list(): Promise<NodeTrashListing> {
    const items = this.store.items().map((manifest) => ({
      itemId: manifest.itemId,
      kind: manifest.kind,
      name: manifest.name,
      namespace: manifest.namespace.name,
      namespaceUuid: manifest.namespace.uuid,
      namespaceCreatedAt: manifest.namespace.createdAt,
      deletedAt: manifest.deletedAt,
      state: manifest.state,
      collections: manifest.collections,
      shards: manifest.shards.map(({ files: _files, ...summary }) => summary),
    }));
    return { items, unreadable: this.store.unreadableItems() };
  }

  prepareDelete(intent: TrashIntent): Promise<void> {
    return this.store.prepareDelete(intent);
  }

  abortDelete(itemId: string): Promise<void> {
    return this.store.abortDelete(itemId);
  }

  async finishDelete(itemId: string, revision: number): Promise<void> {
    await this.waitForRevision(revision);
    await this.store.finishDelete(itemId);
  }

  async verify(itemId: string): Promise<NodeItemVerification | null> {
    const result = await this.store.verify(itemId);
    return result && { state: result.manifest.state, shards: result.shards };
  }

  prepareRestore(itemId: string): Promise<void> {
    return this.store.prepareRestore(itemId);
  }

  abortRestore(itemId: string): Promise<void> {
    return this.store.abortRestore(itemId);
  }

  finishRestore(itemId: string): Promise<void> {
    return this.store.finishRestore(itemId);
  }

  purge(itemId: string): Promise<PurgedItem | null> {
    return this.store.purge(itemId);
  }
}

/** A node that failed to answer, with its error. */
export interface NodeFailure {
  nodeId: string;
  nodeName: string;
  error: unknown;
}

/** Every node's answer: the successful ones in node order, and the failures. */
export interface NodeAnswers<T> {
  answers: Array<{ node: NodeTrash; value: T }>;
  failures: NodeFailure[];
}

/** Calls every node concurrently and collects answers and failures (a failure never hides the others). */
export async function onEveryNode<T>(nodes: readonly NodeTrash[], call: (node: NodeTrash) => Promise<T>): Promise<NodeAnswers<T>> {
  const settled = await Promise.allSettled(nodes.map((node) => call(node)));
  const answers: NodeAnswers<T>['answers'] = [];
  const failures: NodeFailure[] = [];
  settled.forEach((outcome, index) => {
    const node = nodes[index];
    if (outcome.status === 'fulfilled') answers.push({ node, value: outcome.value });
    else failures.push({ nodeId: node.nodeId, nodeName: node.nodeName, error: outcome.reason });
  });
  return { answers, failures };
}
