/**
 * The document service: single-document writes and reads, bulk and multi-get (the routes of
 * src/api/routes/{documents,bulk,mget}.ts). Thin wrappers over documents.ts, bulk.ts and
 * multi-get.ts, each run as a tracked request.
 */
import { releaseFreedMemoryWhenQuiet } from '../engine/memory/heap-release.ts';
import { bulk, type BulkDefaults, type BulkItem, type BulkItemResult, type BulkResponse } from './bulk.ts';
import {
  executeWrite,
  getDocument,
  prepareDelete,
  prepareIndex,
  prepareUpdate,
  storedDocumentText,
  type GetParams,
  type GetResponse,
  type IndexParams,
  type UpdateParams,
  type UpdateResponse,
  type WriteParams,
  type WriteResponse,
} from './documents.ts';
import { collectionForWrite, createBulkCollections, type NamespaceCheck } from './auto-create.ts';
import { multiGet, type MultiGetParams, type MultiGetResponse } from './multi-get.ts';
import type { NodeContext } from './node-context.ts';
import type { RequestTracker } from './request-tracker.ts';
import { TroveError } from '../engine/errors.ts';
import { NodeError } from './node-error.ts';
import { refreshAfterWrites, type WrittenDocument } from './refresh.ts';
import { mirrorSingle, withMirrors } from './dual-write.ts';

/** The document an update stores when its target is missing: `upsert`, or `doc` with `doc_as_upsert`. */
function upsertDocuments(body: unknown): unknown[] {
  if (body === null || typeof body !== 'object') return [];
  const { upsert, doc, doc_as_upsert: docAsUpsert } = body as Record<string, unknown>;
  if (upsert !== undefined) return [upsert];
  return docAsUpsert === true && doc !== undefined ? [doc] : [];
}

/** The document of a bulk item still held as its line (parsed here only when its collection does not exist); undefined when it does not parse (the bulk reports that). */
function parsedText(item: BulkItem): unknown {
  if (item.text === undefined) return undefined;
  try {
    return item.text.parse();
  } catch {
    return undefined;
  }
}

/** The error of a write with `require_alias` to a name that is not an alias. */
function notAnAlias(name: string): NodeError {
  return new NodeError('index_not_found', `no such index [${name}] and [require_alias] request flag is [true] and [${name}] is not an alias`);
}

/** Document operations of the node; see the module comment. */
export class DocumentService {
  constructor(
    private readonly context: NodeContext,
    private readonly requests: RequestTracker,
  ) {}

  /**
   * `PUT /{collection}/_doc/{id}` or `POST /{collection}/_doc` (id generated when undefined). A
   * missing collection is created as `action.auto_create_index` allows, in a namespace
   * `requireNamespace` accepts (src/node/auto-create.ts); likewise for update and bulk.
   */
  index(collection: string, id: string | undefined, source: unknown, params: IndexParams = {}, requireNamespace?: NamespaceCheck): Promise<WriteResponse> {
    return this.requests.track(async () => {
      if (params.requireAlias === true) this.requireAlias(collection);
      const hosted = await collectionForWrite(this.context, collection, { documents: [{ source, text: params.sourceJson }], requireNamespace });
      const routed = this.routed(collection, params);
      const response = await executeWrite(this.context, prepareIndex(this.context.router, hosted, id, source, routed));
      const text = params.sourceJson === undefined ? undefined : storedDocumentText(params.sourceJson);
      const item: BulkItem = { action: params.opType === 'create' ? 'create' : 'index', id, body: source, text, routing: routed.routing };
      await mirrorSingle(this.context, item, response, (mirrors) => this.writeItems(mirrors));
      return response;
    });
  }

  /** `GET /{collection}/_doc/{id}`; `found: false` when missing. */
  get(collection: string, id: string, params: GetParams = {}): Promise<GetResponse> {
    return this.requests.track(() => getDocument(this.context, collection, id, params));
  }

  /** `DELETE /{collection}/_doc/{id}`; `result: 'not_found'` when missing. */
  delete(collection: string, id: string, params: WriteParams = {}): Promise<WriteResponse> {
    const { router } = this.context;
    return this.requests.track(async () => {
      const routed = this.routed(collection, params);
      const response = await executeWrite(this.context, prepareDelete(router, router.collection(collection), id, routed));
      await mirrorSingle(this.context, { action: 'delete', id, routing: routed.routing }, response, (mirrors) => this.writeItems(mirrors));
      return response;
    });
  }

  /** `POST /{collection}/_update/{id}` with the body `{doc?, ops?, upsert?, doc_as_upsert?, detect_noop?, _source?}`. */
  update(collection: string, id: string, body: unknown, params: UpdateParams = {}, requireNamespace?: NamespaceCheck): Promise<UpdateResponse> {
    return this.requests.track(async () => {
      if (params.requireAlias === true) this.requireAlias(collection);
      const hosted = await collectionForWrite(this.context, collection, { documents: upsertDocuments(body).map((source) => ({ source })), requireNamespace });
      const routed = this.routed(collection, params);
      const response = await executeWrite(this.context, prepareUpdate(this.context.router, hosted, id, body, routed));
      await mirrorSingle(this.context, { action: 'update', id, routing: routed.routing }, response, (mirrors) => this.writeItems(mirrors));
      return response;
    });
  }

  /** `params` with the routing of a write through alias `collection` (its `index_routing`) when it names one. */
  private routed<T extends { routing?: string }>(collection: string, params: T): T {
    const routing = this.context.router.writeRouting(collection, params.routing);
    return routing === params.routing ? params : { ...params, routing };
  }

  /**
   * `POST [/{collection}]/_bulk`, items parsed from the NDJSON body. Missing collections of index,
   * create and update items are created first where allowed; an item whose collection could not be
   * created fails with index_not_found. Items of collections with a dual-write target are followed
   * by their mirror writes (src/node/dual-write.ts).
   */
  bulk(items: readonly BulkItem[], defaults: BulkDefaults = {}, requireNamespace?: NamespaceCheck): Promise<BulkResponse> {
    return this.requests.track(async () => {
      const answer = await this.writeItems(items, defaults, requireNamespace);
      const response = await withMirrors(this.context, items, answer, (mirrors) => this.writeItems(mirrors, {}, requireNamespace), defaults.routing);
      // The request's body and parsed items are garbage now: a thread the bulk load leaves quiet frees them.
      releaseFreedMemoryWhenQuiet();
      return response;
    });
  }

  /** The bulk of `bulk`, without dual writes. */
  private async writeItems(items: readonly BulkItem[], defaults: BulkDefaults = {}, requireNamespace?: NamespaceCheck): Promise<BulkResponse> {
    // Only the items of a missing collection are looked at (their lines parsed here): the others go to their shards untouched.
    const notAliases = new Map<number, TroveError>();
    const writes = items.map((item, position) => {
      const collection = item.collection ?? defaults.collection;
      if (collection !== undefined && (item.requireAlias ?? defaults.requireAlias) === true && !this.context.router.aliases().has(collection)) {
        notAliases.set(position, notAnAlias(collection));
        return { collection, document: undefined };
      }
      const missing = collection !== undefined && item.action !== 'delete' && !this.exists(collection);
      if (!missing) return { collection, document: undefined };
      if (item.action === 'update') return { collection, document: upsertDocuments(item.body)[0] };
      return { collection, document: item.body ?? parsedText(item), text: item.text?.bytes };
    });
    const refused = new Map([...(await createBulkCollections(this.context, writes, requireNamespace)), ...notAliases]);
    if (refused.size === 0) return bulk(this.context, items, defaults);
    const rest = await bulk(this.context, items.filter((_, position) => !refused.has(position)), defaults);
    let next = 0;
    const results = items.map((item, position): BulkItemResult =>
      refused.has(position) ? { action: item.action, index: writes[position]!.collection ?? null, id: item.id ?? null, error: refused.get(position)! } : rest.items[next++]!,
    );
    return { took: rest.took, errors: true, items: results };
  }

  /** Throws index_not_found unless `name` is an alias (a write with `require_alias`). */
  private requireAlias(name: string): void {
    if (!this.context.router.aliases().has(name)) throw notAnAlias(name);
  }

  /** Whether a write to `name` has a collection to go to (an alias without a write index has one: its items fail in the bulk). */
  private exists(name: string): boolean {
    try {
      return this.context.router.findCollection(name) !== undefined;
    } catch {
      return true;
    }
  }

  /** The current `indexing.max_document_bytes`: the largest document (or bulk line) a write takes, checked by the routes on its bytes. */
  maxDocumentBytes(): number {
    return this.context.settings()['indexing.max_document_bytes'];
  }

  /** `POST [/{collection}]/_mget`. */
  mget(body: unknown, params: MultiGetParams = {}): Promise<MultiGetResponse> {
    return this.requests.track(() => multiGet(this.context, body, params));
  }

  /** Makes what a request wrote visible to search as its `refresh` parameter asks (`true`, `wait_for`; see src/node/refresh.ts). */
  settleRefresh(refresh: string | undefined, written: readonly WrittenDocument[]): Promise<void> {
    return refreshAfterWrites(this.context, refresh, written);
  }
}
