/**
 * The document service: single-document writes and reads, bulk and multi-get (the routes of
 * src/api/routes/{documents,bulk,mget}.ts). Thin wrappers over documents.ts, bulk.ts and
 * multi-get.ts, each run as a tracked request.
 */
import { bulk, type BulkDefaults, type BulkItem, type BulkResponse } from './bulk.ts';
import {
  executeWrite,
  getDocument,
  prepareDelete,
  prepareIndex,
  prepareUpdate,
  type GetParams,
  type GetResponse,
  type IndexParams,
  type UpdateParams,
  type UpdateResponse,
  type WriteParams,
  type WriteResponse,
} from './documents.ts';
import { collectionForWrite, type NamespaceCheck } from './auto-create.ts';
import { multiGet, type MultiGetParams, type MultiGetResponse } from './multi-get.ts';
import type { NodeContext } from './node-context.ts';
import type { RequestTracker } from './request-tracker.ts';

/** The document an update stores when its target is missing: `upsert`, or `doc` with `doc_as_upsert`. */
function upsertDocuments(body: unknown): unknown[] {
  if (body === null || typeof body !== 'object') return [];
  const { upsert, doc, doc_as_upsert: docAsUpsert } = body as Record<string, unknown>;
  if (upsert !== undefined) return [upsert];
  return docAsUpsert === true && doc !== undefined ? [doc] : [];
}

/** The document of a bulk item still held as its line (parsed here only for a collection that does not exist yet); an unparsable line is a document that fits nothing. */
function parsedText(item: BulkItem): unknown {
  try {
    return item.text?.parse();
  } catch {
    return null;
  }
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
      const hosted = await collectionForWrite(this.context, collection, { documents: [source], requireNamespace });
      return executeWrite(this.context, prepareIndex(this.context.router, hosted, id, source, params));
    });
  }

  /** `GET /{collection}/_doc/{id}`; `found: false` when missing. */
  get(collection: string, id: string, params: GetParams = {}): Promise<GetResponse> {
    return this.requests.track(() => getDocument(this.context, collection, id, params));
  }

  /** `DELETE /{collection}/_doc/{id}`; `result: 'not_found'` when missing. */
  delete(collection: string, id: string, params: WriteParams = {}): Promise<WriteResponse> {
    const { router } = this.context;
    return this.requests.track(() => executeWrite(this.context, prepareDelete(router, router.collection(collection), id, params)));
  }

  /** `POST /{collection}/_update/{id}` with the body `{doc?, ops?, upsert?, doc_as_upsert?, detect_noop?, _source?}`. */
  update(collection: string, id: string, body: unknown, params: UpdateParams = {}, requireNamespace?: NamespaceCheck): Promise<UpdateResponse> {
    return this.requests.track(async () => {
      const hosted = await collectionForWrite(this.context, collection, { documents: upsertDocuments(body), requireNamespace });
      return executeWrite(this.context, prepareUpdate(this.context.router, hosted, id, body, params));
    });
  }

  /**
   * `POST [/{collection}]/_bulk`, items parsed from the NDJSON body. Missing collections of index,
   * create and update items are created first where allowed; an item whose collection could not be
   * created fails with index_not_found.
   */
  bulk(items: readonly BulkItem[], defaults: BulkDefaults = {}, requireNamespace?: NamespaceCheck): Promise<BulkResponse> {
    return this.requests.track(async () => {
      const documentsByCollection = new Map<string, unknown[]>();
      for (const item of items) {
        const name = item.collection ?? defaults.collection;
        if (name === undefined || item.action === 'delete') continue;
        const stored = item.action === 'update' ? upsertDocuments(item.body) : [item.body ?? parsedText(item)];
        documentsByCollection.set(name, [...(documentsByCollection.get(name) ?? []), ...stored]);
      }
      for (const [name, documents] of documentsByCollection) {
        // A collection that cannot be created leaves its items to fail as index_not_found.
        await collectionForWrite(this.context, name, { documents, requireNamespace }).catch(() => undefined);
      }
      return bulk(this.context, items, defaults);
    });
  }

  /** `POST [/{collection}]/_mget`. */
  mget(body: unknown, params: MultiGetParams = {}): Promise<MultiGetResponse> {
    return this.requests.track(() => multiGet(this.context, body, params));
  }
}
