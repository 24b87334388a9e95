/**
 * The trash manifest: `<path.data>/trash/<item_id>/manifest.json`, one per item on every node
 * (docs/formats/trash.md). It records what the item was in the catalog (kind, names, namespace,
 * every collection's metadata with mapping, settings, shard UUIDs and placements), when it was
 * deleted, the item's state on this node, and a delete-time snapshot of each shard this node holds.
 * It is replaced atomically (temporary file, fsync, rename, fsync of the directory).
 */
import type { ShardFileEntry } from '../engine/directory/shard-files.ts';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { CollectionMeta, NamespaceMeta } from '../cluster/catalog.ts';
import { removeInterruptedWrite, writeFileAtomic } from '../engine/directory/atomic-file.ts';

/** Value of the manifest's `format` field. */
export const TRASH_FORMAT = 'trove-trash';
/** Version of the manifest layout; readers refuse newer versions. */
export const TRASH_FORMAT_VERSION = 1;
/** File name of the manifest inside an item directory. */
export const MANIFEST_FILE = 'manifest.json';

/** What was deleted: one collection, or a namespace with all its collections. */
export type TrashItemKind = 'collection' | 'namespace';

/**
 * Where the item stands on this node. `pending`: intent written, the catalog may not have changed
 * yet. `moving`: the catalog change is durable and shard snapshots are recorded; shard directories
 * are being moved in. `trashed`: complete. `restoring`: a restore is under way.
 */
export type TrashItemState = 'pending' | 'moving' | 'trashed' | 'restoring';

/** One file of a trashed shard as it was when the shard was moved. */
export type TrashFileEntry = ShardFileEntry;

/** Delete-time snapshot of one shard copy held by this node. */
export interface TrashShardSnapshot {
  collection: string;
  collectionUuid: string;
  shard: number;
  uuid: string;
  /** Live documents when the shard was closed; null when the shard could not be opened. */
  documents: number | null;
  deletedDocuments: number | null;
  /** Highest WAL seq of the shard (its change-feed position); null when unknown. */
  seqNo: number | null;
  segments: number;
  bytes: number;
  /** Every file the shard's own manifest references, plus its WAL files and the manifest itself. */
  files: TrashFileEntry[];
}

/** The manifest of one trash item on one node. */
export interface TrashManifest {
  format: typeof TRASH_FORMAT;
  version: number;
  itemId: string;
  kind: TrashItemKind;
  /** The collection's name, or the namespace's name. */
  name: string;
  /** The namespace deleted (namespace items) or the one the collection belonged to. */
  namespace: NamespaceMeta;
  /** Epoch millis of the delete request; retention counts from here, restarts never move it. */
  deletedAt: number;
  /** The node that wrote this manifest. */
  nodeId: string;
  state: TrashItemState;
  /** Catalog metadata of every collection of the item, as it was when deleted. */
  collections: CollectionMeta[];
  /** Snapshots of the shard copies this node holds (filled once the catalog change is durable). */
  shards: TrashShardSnapshot[];
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

const STATES: readonly string[] = ['pending', 'moving', 'trashed', 'restoring'];

/** Checks a parsed manifest; returns the reason it is unusable, or null when it is valid. */
export function manifestProblem(value: unknown, itemId: string): string | null {
  if (!isRecord(value)) return 'the document is not an object';
  if (value.format !== TRASH_FORMAT) return `unexpected format ${JSON.stringify(value.format)}`;
  if (typeof value.version !== 'number' || value.version < 1 || value.version > TRASH_FORMAT_VERSION) {
    return `unsupported format version ${JSON.stringify(value.version)} (this build reads ${TRASH_FORMAT_VERSION})`;
  }
  if (value.itemId !== itemId) return `item id ${JSON.stringify(value.itemId)} differs from the directory name`;
  if (value.kind !== 'collection' && value.kind !== 'namespace') return `unknown kind ${JSON.stringify(value.kind)}`;
  if (typeof value.state !== 'string' || !STATES.includes(value.state)) return `unknown state ${JSON.stringify(value.state)}`;
  if (typeof value.name !== 'string' || typeof value.nodeId !== 'string') return 'missing name or node id';
  if (typeof value.deletedAt !== 'number' || !Number.isFinite(value.deletedAt)) return 'missing deletedAt';
  if (!isRecord(value.namespace) || typeof value.namespace.name !== 'string') return 'missing namespace';
  if (!Array.isArray(value.collections) || !value.collections.every((collection) => isRecord(collection) && Array.isArray(collection.shards))) {
    return 'collections is not a list of collections';
  }
  if (!Array.isArray(value.shards) || !value.shards.every((shard) => isRecord(shard) && Array.isArray(shard.files))) {
    return 'shards is not a list of shard snapshots';
  }
  return null;
}

/** Error raised for a manifest that exists but cannot be used. */
export class UnreadableManifestError extends Error {
  constructor(path: string, reason: string) {
    super(`trash manifest ${path} is unreadable: ${reason}`);
    this.name = 'UnreadableManifestError';
  }
}

/**
 * Reads the manifest of the item in `itemDir` (removing a temporary file an interrupted write
 * left); null when there is none, UnreadableManifestError when it is damaged.
 */
export async function readTrashManifest(itemDir: string, itemId: string): Promise<TrashManifest | null> {
  const path = join(itemDir, MANIFEST_FILE);
  await removeInterruptedWrite(path);
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw new UnreadableManifestError(path, (error as Error).message);
  }
  let document: unknown;
  try {
    document = JSON.parse(text);
  } catch (error) {
    throw new UnreadableManifestError(path, (error as Error).message);
  }
  const problem = manifestProblem(document, itemId);
  if (problem !== null) throw new UnreadableManifestError(path, problem);
  return document as TrashManifest;
}

/** Atomically replaces the manifest of the item in `itemDir`. */
export async function writeTrashManifest(itemDir: string, manifest: TrashManifest): Promise<void> {
  await writeFileAtomic(join(itemDir, MANIFEST_FILE), `${JSON.stringify(manifest, null, 1)}\n`);
}

/** Every shard UUID of the item's collections. */
export function itemShardUuids(manifest: Pick<TrashManifest, 'collections'>): string[] {
  return manifest.collections.flatMap((collection) => collection.shards.map((shard) => shard.uuid));
}
