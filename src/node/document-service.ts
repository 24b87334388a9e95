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
import { multiGet, type MultiGetParams, type MultiGetResponse } from './multi-get.ts';
import type { NodeContext } from './node-context.ts';
import type { RequestTracker } from './request-tracker.ts';

/** Document operations of the node; see the module comment. */
export class DocumentService {
  constructor(
    private readonly context: NodeContext,
    private readonly requests: RequestTracker,
  ) {}

  /** `PUT /{collection}/_doc/{id}` or `POST /{collection}/_doc` (id generated when undefined). */
  index(collection: string, id: string | undefined, source: unknown, params: IndexParams = {}): Promise<WriteResponse> {
    const { router } = this.context;
    return this.requests.track(() => executeWrite(this.context, prepareIndex(router, router.collection(collection), id, source, params)));
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
  update(collection: string, id: string, body: unknown, params: UpdateParams = {}): Promise<UpdateResponse> {
    const { router } = this.context;
    return this.requests.track(() => executeWrite(this.context, prepareUpdate(router, router.collection(collection), id, body, params)));
  }

  /** `POST [/{collection}]/_bulk`, items parsed from the NDJSON body. */
  bulk(items: readonly BulkItem[], defaults: BulkDefaults = {}): Promise<BulkResponse> {
    return this.requests.track(() => bulk(this.context, items, defaults));
  }

  /** `POST [/{collection}]/_mget`. */
  mget(body: unknown, params: MultiGetParams = {}): Promise<MultiGetResponse> {
    return this.requests.track(() => multiGet(this.context, body, params));
  }
}
