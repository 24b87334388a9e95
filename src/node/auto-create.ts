/**
 * Automatic collection creation on the first write to a missing name, as OpenSearch's
 * `action.auto_create_index` (a dynamic node setting, default `true`): `false` never creates;
 * otherwise a comma list of name patterns (`*` wildcards), each optionally prefixed `+` (allow)
 * or `-` (deny), read in order, the first match deciding; a name no pattern matches is not
 * created. A created collection has the defaults of `PUT /{collection}` with an empty body
 * (namespace `default`, 1 shard, dynamic mapping), so the write's fields are mapped as it runs.
 *
 * Unlike OpenSearch, a write that fails creates nothing (PRODUCT.md principle 5): the collection is
 * created only when one of the documents the write would store fits a new collection's dynamic
 * mapping; otherwise the write fails with that document's error, or index_not_found when it
 * stores no document (a delete, an update without upsert).
 */
import { DEFAULT_NAMESPACE } from '../cluster/catalog.ts';
import type { HostedCollection } from '../cluster/local-shards.ts';
import { matchesWildcard } from '../cluster/names.ts';
import { TroveError } from '../engine/errors.ts';
import { dynamicMappingUpdate } from '../engine/mapping/dynamic.ts';
import { flattenMapping, type Mapping } from '../engine/mapping/mapping.ts';
import { parseDocument } from '../engine/mapping/parse-document.ts';
import { createCollection } from './collections.ts';
import { notAnObjectError } from './documents.ts';
import type { NodeContext } from './node-context.ts';
import { NodeError } from './node-error.ts';

/** Refuses (throws) a namespace the caller may not create collections in; the API passes the caller's check. */
export type NamespaceCheck = (namespace: string) => void;

/** Whether `action.auto_create_index` (its value `setting`) lets a write create collection `name`. */
export function autoCreateAllows(setting: string, name: string): boolean {
  const value = setting.trim();
  if (value === 'true') return true;
  if (value === 'false') return false;
  for (const part of value.split(',')) {
    const pattern = part.trim();
    if (pattern === '') continue;
    const allow = !pattern.startsWith('-');
    const body = pattern.startsWith('+') || pattern.startsWith('-') ? pattern.slice(1) : pattern;
    if (matchesWildcard(body, name)) return allow;
  }
  return false;
}

/** A bulk item as the creation step sees it: where it writes and the document it would store (undefined: none, or not known yet). */
export interface BulkWrite {
  collection: string | undefined;
  /** The document an index/create stores, or an update's upsert document; undefined for a delete, an update without upsert, or a line that does not parse. */
  document: unknown;
  /** The document's JSON text, when known (its integers beyond 2^53 keep their digits). */
  text?: string | Uint8Array;
}

/** A document a write would store, with its JSON text when known (integers beyond 2^53 are read from it). */
export interface DocumentToWrite {
  source: unknown;
  text?: string | Uint8Array;
}

/**
 * Creates the missing collections a bulk request writes to, where allowed (see `collectionForWrite`).
 * Returns, by item position, the error of each item whose collection stays missing because no
 * document of it fits, as OpenSearch would answer it (its own mapping error), rather than
 * index_not_found; the other items of a missing collection fail as index_not_found in the bulk.
 */
export async function createBulkCollections(context: NodeContext, writes: readonly BulkWrite[], requireNamespace?: NamespaceCheck): Promise<Map<number, TroveError>> {
  const documents = new Map<string, DocumentToWrite[]>();
  writes.forEach((write) => {
    if (write.collection === undefined || write.document === undefined) return;
    documents.set(write.collection, [...(documents.get(write.collection) ?? []), { source: write.document, text: write.text }]);
  });
  for (const [name, stored] of documents) {
    await collectionForWrite(context, name, { documents: stored, requireNamespace }).catch(() => undefined);
  }
  const refused = new Map<number, TroveError>();
  const setting = context.settings()['action.auto_create_index'];
  writes.forEach((write, position) => {
    const { collection, document } = write;
    if (collection === undefined || document === undefined || context.router.findCollection(collection) || !autoCreateAllows(setting, collection)) return;
    try {
      checkFitsNewCollection({ source: document, text: write.text });
    } catch (error) {
      if (error instanceof TroveError) refused.set(position, error);
    }
  });
  return refused;
}

/** Throws the error a new collection (empty dynamic mapping) would give the document; returns when it fits. */
function checkFitsNewCollection({ source, text }: DocumentToWrite): void {
  const empty: Mapping = { properties: {} };
  if (source === null || typeof source !== 'object' || Array.isArray(source)) throw notAnObjectError();
  const document = source as Record<string, unknown>;
  parseDocument(document, flattenMapping(dynamicMappingUpdate(empty, document) ?? empty), { strictNumbers: true, sourceText: text });
}

/** What a write that may create its collection tells `collectionForWrite`. */
export interface WriteTarget {
  /** The documents the write would store (index and create: the source; upserts: the upsert document); none for the others. */
  documents: readonly DocumentToWrite[];
  /** The caller's check of the namespace a new collection goes to. */
  requireNamespace?: NamespaceCheck;
}

/**
 * The collection a write goes to: the existing one, or one created now when the setting allows
 * it, `requireNamespace` accepts the default namespace, and a document of the write fits (see
 * the module comment). A concurrent creation of the same name is not an error.
 */
export async function collectionForWrite(context: NodeContext, name: string, write: WriteTarget): Promise<HostedCollection> {
  const existing = context.router.findCollection(name);
  if (existing) return existing;
  if (write.documents.length === 0) return context.router.collection(name);
  const setting = context.settings()['action.auto_create_index'];
  if (!autoCreateAllows(setting, name)) {
    const why = setting.trim() === 'false' ? 'is [false]' : `([${setting}]) doesn't match`;
    throw new NodeError('index_not_found', `no such index [${name}] and [action.auto_create_index] ${why}`);
  }
  write.requireNamespace?.(DEFAULT_NAMESPACE);
  let firstError: unknown = null;
  const fits = write.documents.some((document) => {
    try {
      checkFitsNewCollection(document);
      return true;
    } catch (error) {
      firstError ??= error;
      return false;
    }
  });
  if (!fits) throw firstError;
  try {
    await createCollection(context, name, {});
  } catch (error) {
    if (!(error instanceof TroveError && error.code === 'resource_already_exists')) throw error;
  }
  return context.router.collection(name);
}
