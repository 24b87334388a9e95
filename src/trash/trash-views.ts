/**
 * Cluster-wide views of the trash, merged from every node's answer: the item list grouped by
 * namespace (`GET /_cluster/trash`) and the verification of one item (`.../_verify`). Pure
 * functions of the node answers, so merging many nodes is tested without a cluster.
 */
import type { NodeFailure, NodeItemVerification, NodeTrashItem, NodeTrashListing } from './node-trash.ts';
import type { ShardCheckStatus } from '../engine/directory/shard-verify.ts';
import type { TrashItemKind, TrashItemState } from './trash-manifest.ts';

/** The `_nodes` header of a fan-out response; the API renders the failures' errors. */
export interface NodesHeader {
  total: number;
  successful: number;
  failed: number;
  failures: NodeFailure[];
}

/** Builds the `_nodes` header. */
export function nodesHeader(answered: number, failures: NodeFailure[]): NodesHeader {
  return { total: answered + failures.length, successful: answered, failed: failures.length, failures };
}

/** Figures of a group of shards. */
export interface TrashFigures {
  shards: number;
  documents: number;
  bytes: number;
  segments: number;
}

/** One item of `GET /_cluster/trash`. */
export interface TrashItemView {
  item_id: string;
  kind: TrashItemKind;
  name: string;
  namespace: string;
  /** `trashed` when every node holds it complete; otherwise the first other state found. */
  state: TrashItemState;
  deleted_at: string;
  deleted_at_millis: number;
  expires_at: string;
  expires_at_millis: number;
  /** Snapshot summary at delete time, over every node. */
  summary: TrashFigures & { collections: number };
  collections: Array<TrashFigures & { name: string; uuid: string; number_of_shards: number }>;
  nodes: Array<TrashFigures & { node_id: string; node_name: string; state: TrashItemState }>;
}

/** `GET /_cluster/trash`. */
export interface TrashListView {
  _nodes: NodesHeader;
  retention_secs: number;
  total_items: number;
  namespaces: Record<string, { items: TrashItemView[] }>;
  unreadable: Array<{ node_id: string; node_name: string; item_id: string; reason: string }>;
}

function figuresOf(shards: NodeTrashItem['shards']): TrashFigures {
  return {
    shards: shards.length,
    documents: shards.reduce((sum, shard) => sum + (shard.documents ?? 0), 0),
    bytes: shards.reduce((sum, shard) => sum + shard.bytes, 0),
    segments: shards.reduce((sum, shard) => sum + shard.segments, 0),
  };
}

/** Merges every node's listing by item id and groups the items by namespace. */
export function mergeListings(
  answers: ReadonlyArray<{ nodeId: string; nodeName: string; listing: NodeTrashListing }>,
  failures: NodeFailure[],
  retentionSecs: number,
): TrashListView {
  const byItem = new Map<string, Array<{ nodeId: string; nodeName: string; item: NodeTrashItem }>>();
  const unreadable: TrashListView['unreadable'] = [];
  for (const { nodeId, nodeName, listing } of answers) {
    for (const item of listing.items) {
      const holders = byItem.get(item.itemId) ?? [];
      holders.push({ nodeId, nodeName, item });
      byItem.set(item.itemId, holders);
    }
    for (const entry of listing.unreadable) unreadable.push({ node_id: nodeId, node_name: nodeName, item_id: entry.itemId, reason: entry.reason });
  }
  // A Map: namespace names such as `constructor` must not meet Object.prototype members.
  const namespaces = new Map<string, TrashListView['namespaces'][string]>();
  for (const [itemId, holders] of byItem) {
    const first = holders[0].item;
    const deletedAt = Math.min(...holders.map((holder) => holder.item.deletedAt));
    const expiresAt = deletedAt + retentionSecs * 1000;
    const shards = holders.flatMap((holder) => holder.item.shards);
    const view: TrashItemView = {
      item_id: itemId,
      kind: first.kind,
      name: first.name,
      namespace: first.namespace,
      state: holders.find((holder) => holder.item.state !== 'trashed')?.item.state ?? 'trashed',
      deleted_at: new Date(deletedAt).toISOString(),
      deleted_at_millis: deletedAt,
      expires_at: new Date(expiresAt).toISOString(),
      expires_at_millis: expiresAt,
      summary: { collections: first.collections.length, ...figuresOf(shards) },
      collections: first.collections.map((collection) => ({
        name: collection.name,
        uuid: collection.uuid,
        number_of_shards: collection.settings.number_of_shards,
        ...figuresOf(shards.filter((shard) => shard.collectionUuid === collection.uuid)),
      })),
      nodes: holders.map((holder) => ({ node_id: holder.nodeId, node_name: holder.nodeName, state: holder.item.state, ...figuresOf(holder.item.shards) })),
    };
    let group = namespaces.get(first.namespace);
    if (group === undefined) namespaces.set(first.namespace, (group = { items: [] }));
    group.items.push(view);
  }
  // fromEntries defines own properties: a namespace named like a prototype member stays a plain key.
  const sorted: TrashListView['namespaces'] = Object.fromEntries(
    [...namespaces.keys()].sort().map((name) => [
      name,
      { items: namespaces.get(name)!.items.sort((left, right) => right.deleted_at_millis - left.deleted_at_millis || (left.item_id < right.item_id ? -1 : 1)) },
    ]),
  );
  return { _nodes: nodesHeader(answers.length, failures), retention_secs: retentionSecs, total_items: byItem.size, namespaces: sorted, unreadable };
}

/** Status of one shard in a verification: the node's finding, or why no node could give one. */
export type ShardFindingStatus = ShardCheckStatus | 'unassigned' | 'node_unavailable';

/** One shard of `.../_verify`. */
export interface ShardFindingView {
  collection: string;
  shard: number;
  uuid: string;
  node_id: string | null;
  node_name: string | null;
  status: ShardFindingStatus;
  expected_documents: number | null;
  found_documents: number | null;
  files_checked: number;
  bytes_checked: number;
  problems: string[];
}

/** `POST /_cluster/trash/{item_id}/_verify`. */
export interface VerifyView {
  _nodes: NodesHeader;
  item_id: string;
  kind: TrashItemKind;
  name: string;
  namespace: string;
  /** True when every shard of every collection is present on its node and intact. */
  complete: boolean;
  summary: Record<'shards' | ShardFindingStatus, number>;
  shards: ShardFindingView[];
}

/**
 * Merges every node's verification: each shard of each collection must be held, intact, by the
 * node its placement names (where a restore will reopen it). A shard that was unassigned when
 * deleted never had data and counts as complete.
 */
export function mergeVerifications(
  item: NodeTrashItem,
  answers: ReadonlyArray<{ nodeId: string; nodeName: string; result: NodeItemVerification | null }>,
  failures: NodeFailure[],
): VerifyView {
  const shards: ShardFindingView[] = [];
  for (const collection of item.collections) {
    for (const placement of collection.placements) {
      const uuid = collection.shards[placement.shard].uuid;
      const base = { collection: collection.name, shard: placement.shard, uuid, expected_documents: null, found_documents: null, files_checked: 0, bytes_checked: 0 };
      const nodeId = placement.primary;
      if (nodeId === null) {
        shards.push({ ...base, node_id: null, node_name: null, status: 'unassigned', problems: [] });
        continue;
      }
      const answer = answers.find((candidate) => candidate.nodeId === nodeId);
      const failed = failures.find((failure) => failure.nodeId === nodeId);
      if (!answer) {
        const reason = failed ? `node [${nodeId}] did not answer: ${(failed.error as Error)?.message ?? String(failed.error)}` : `node [${nodeId}] is not in the cluster`;
        shards.push({ ...base, node_id: nodeId, node_name: failed?.nodeName ?? null, status: 'node_unavailable', problems: [reason] });
        continue;
      }
      const check = answer.result?.shards.find((candidate) => candidate.uuid === uuid);
      if (!check) {
        shards.push({ ...base, node_id: nodeId, node_name: answer.nodeName, status: 'missing', problems: [`node [${nodeId}] does not hold the shard`] });
        continue;
      }
      shards.push({
        ...base,
        node_id: nodeId,
        node_name: answer.nodeName,
        status: check.status,
        expected_documents: check.expectedDocuments,
        found_documents: check.foundDocuments,
        files_checked: check.filesChecked,
        bytes_checked: check.bytesChecked,
        problems: check.problems,
      });
    }
  }
  const summary: VerifyView['summary'] = { shards: shards.length, ok: 0, unassigned: 0, missing: 0, damaged: 0, document_count_mismatch: 0, node_unavailable: 0 };
  for (const shard of shards) summary[shard.status]++;
  return {
    _nodes: nodesHeader(answers.length, failures),
    item_id: item.itemId,
    kind: item.kind,
    name: item.name,
    namespace: item.namespace,
    complete: shards.every((shard) => shard.status === 'ok' || shard.status === 'unassigned'),
    summary,
    shards,
  };
}
