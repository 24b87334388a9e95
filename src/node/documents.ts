/**
 * Single-document requests: index, get, delete, update, mget. A write's path is one straight line:
 * validate and route (`prepare*`) → dynamic mapping (`MappingUpdater.ensure`) → `shard.write` →
 * Elasticsearch response (`renderWrite`). Bulk reuses the same prepare and render steps.
 */
import { inSyncOf, type ShardPlacement } from '../cluster/catalog.ts';
import { randomBytes } from 'node:crypto';
import type { HostedCollection } from '../cluster/local-shards.ts';
import type { Router, ShardTarget } from '../cluster/router.ts';
import type { BatchOp, TextIndexOp } from '../cluster/write-batch.ts';
import { EngineError } from '../engine/errors.ts';
import type { ExternalVersion, StoredDocument, UpdateOperation, WriteOp, WriteResult } from '../engine/shard/operations.ts';
import { documentSeqNo, operationSeq } from '../engine/shard/seq-no.ts';
import type { MappingCandidate } from './mapping-updater.ts';
import type { NodeContext } from './node-context.ts';
import type { SourceOptions as MappingSourceOptions } from '../engine/mapping/mapping.ts';
import { parseSourceFilter, responseSource, WHOLE_SOURCE, type SourceFilter, type SourceOptions } from './source-filter.ts';
import type { RawJson } from './raw-json.ts';
import { hitFieldValues } from './hit-fields.ts';
import type { FlatField, Mapping } from '../engine/mapping/mapping.ts';

/** Longest `_id` accepted, in UTF-8 bytes (as Elasticsearch). */
export const MAX_ID_BYTES = 512;

/** Routing and optimistic-concurrency parameters of a write. */
export interface WriteParams {
  routing?: string;
  ifSeqNo?: number;
  ifPrimaryTerm?: number;
  /** ES `version` with `versionType` `external` or `external_gte` (index and delete only). */
  version?: number;
  versionType?: 'internal' | 'external' | 'external_gte';
  /** `require_alias` (index, create, update): the target must be an alias, else index_not_found. */
  requireAlias?: boolean;
}

/** Parameters of an index request. */
export interface IndexParams extends WriteParams {
  /** `create` fails with version_conflict when the id exists. */
  opType?: 'index' | 'create';
  /** The JSON text the document arrived as, stored as it is (the document must be its parse). */
  sourceJson?: string;
}

/** Parameters of an update request (the body holds doc/ops/upsert). */
export interface UpdateParams extends WriteParams {
  /** Accepted for compatibility; a shard applies an update atomically, so it never conflicts internally. */
  retryOnConflict?: number;
  /** `_source` to return in the response's `get` section. */
  source?: SourceOptions;
}

/** Parameters of a get request. */
export interface GetParams {
  routing?: string;
  source?: SourceOptions;
  /** `stored_fields`: names and patterns of stored fields to return under `fields`. */
  storedFields?: readonly string[];
  /** `version` (internal versioning): the get is a 409 unless the document has this version. */
  version?: number;
  /** `realtime=false`: read what searches see (an `index.visibility: refresh` collection's refreshed view) instead of the latest write. */
  realtime?: boolean;
}

/** Refuses (409) a get whose `version` differs from the document's, as Elasticsearch. */
function checkGetVersion(id: string, current: number, expected: number): void {
  if (current !== expected) throw new EngineError('version_conflict', `[${id}]: version conflict, current version [${current}] is different than the one provided [${expected}]`);
}

/** The `_shards` header of write responses. */
export interface ShardsHeader {
  total: number;
  successful: number;
  failed: number;
}

/** Elasticsearch response of index and delete. */
export interface WriteResponse {
  _index: string;
  _id: string;
  _version: number;
  result: WriteResult['result'];
  _shards: ShardsHeader;
  _seq_no: number;
  _primary_term: number;
}

/** Elasticsearch response of update; `get` is present when `_source` was requested. */
export interface UpdateResponse extends WriteResponse {
  get?: { _seq_no: number; _primary_term: number; found: true; _source?: Record<string, unknown> | RawJson };
}

/** Elasticsearch response of get (`found: false` maps to 404). */
export type GetResponse =
  | {
      _index: string;
      _id: string;
      found: true;
      _version: number;
      _seq_no: number;
      _primary_term: number;
      /** The stored text as sent (RawJson), or the filtered source. */
      _source?: Record<string, unknown> | RawJson;
      /** The `stored_fields` asked for that the document holds (fields mapped with `store: true`). */
      fields?: Record<string, unknown[]>;
    }
  | { _index: string; _id: string; found: false };

/** How a get shows a found document: its source filter, the mapping's `_source` options, and the `stored_fields` asked for. */
export interface GetView {
  filter: SourceFilter;
  mappingSource?: MappingSourceOptions;
  /** `stored_fields` (names and patterns) with the collection's fields and mapping; undefined when none were asked for. */
  stored?: { names: string[]; fields: ReadonlyMap<string, FlatField>; mapping: Mapping };
}

/**
 * The view of a get on `hosted`: `source` filters `_source`; `storedFields` adds the values of
 * the listed stored fields under `fields` and, unless it lists `_source` or `source` asks for it,
 * leaves `_source` out (as Elasticsearch).
 */
export function getView(hosted: HostedCollection, source: SourceOptions | undefined, storedFields?: readonly string[]): GetView {
  const mappingSource = hosted.meta.mapping._source;
  if (storedFields === undefined) return { filter: source ? parseSourceFilter(source) : WHOLE_SOURCE, mappingSource };
  const names = storedFields.filter((name) => name !== '_source');
  const keepSource = storedFields.includes('_source') || (source !== undefined && Object.values(source).some((value) => value !== undefined));
  const filter = keepSource ? (source ? parseSourceFilter(source) : WHOLE_SOURCE) : parseSourceFilter({ source: false });
  return { filter, mappingSource, stored: { names, fields: hosted.fields, mapping: hosted.meta.mapping } };
}

/** A validated write routed (once) to its shard copy, ready for the mapping step and the shard. */
export interface PreparedWrite<Op extends BatchOp = WriteOp> {
  target: ShardTarget;
  op: Op;
  mapping: MappingCandidate;
  /** For updates: which `_source` the response returns (null: none). */
  returnSource: SourceFilter | null;
}

/** A 20-character URL-safe random id for documents indexed without one. */
export function generateId(): string {
  return randomBytes(15).toString('base64url');
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** Throws for an index or create whose `_id` is given empty (as Elasticsearch words it), else as `checkId`. */
function checkGivenId(id: unknown): asserts id is string {
  if (id === '') throw new EngineError('illegal_argument', 'if _id is specified it must not be empty');
  checkId(id);
}

/** Throws unless `id` is a usable document id. */
export function checkId(id: unknown): asserts id is string {
  if (typeof id !== 'string' || id.length === 0) {
    throw new EngineError('action_request_validation', 'Validation Failed: 1: an id must be a non-empty string;');
  }
  const bytes = Buffer.byteLength(id, 'utf8');
  if (bytes > MAX_ID_BYTES) {
    throw new EngineError('action_request_validation', `Validation Failed: 1: id [${id.slice(0, 64)}...] is too long, must be no longer than ${MAX_ID_BYTES} bytes but was: ${bytes};`);
  }
}

/** The conditions a write puts on the current document, as the shard checks them. */
interface ConcurrencyCondition {
  ifSeqNo?: number;
  ifPrimaryTerm?: number;
  externalVersion?: ExternalVersion;
}

/**
 * Checks `if_seq_no` / `if_primary_term` and `version` / `version_type`, and returns them as the
 * shard compares them (an operation seq, src/engine/shard/seq-no.ts). As in OpenSearch, external
 * versions apply to index and delete only, never to a create, and not together with `if_seq_no`;
 * a `version` with internal versioning is refused (use `if_seq_no`).
 */
function concurrencyCondition(params: WriteParams & { opType?: 'index' | 'create' }, action: 'index' | 'delete' | 'update'): ConcurrencyCondition {
  for (const [name, value] of [['if_seq_no', params.ifSeqNo], ['if_primary_term', params.ifPrimaryTerm]] as const) {
    if (value !== undefined && (!Number.isSafeInteger(value) || value < 0)) {
      throw new EngineError('action_request_validation', `Validation Failed: 1: ${name} must be a non-negative integer;`);
    }
  }
  const condition: ConcurrencyCondition = { ifSeqNo: params.ifSeqNo === undefined ? undefined : operationSeq(params.ifSeqNo), ifPrimaryTerm: params.ifPrimaryTerm };
  const type = params.versionType ?? 'internal';
  if (type === 'internal') {
    if (params.version !== undefined) {
      throw new EngineError('action_request_validation', 'Validation Failed: 1: internal versioning can not be used for optimistic concurrency control. Please use `if_seq_no` and `if_primary_term` instead;');
    }
    return condition;
  }
  const typeName = type.toUpperCase();
  if (action === 'update') throw new EngineError('action_request_validation', `Validation Failed: 1: version type [${typeName}] is not supported by the update API;`);
  if (params.opType === 'create') throw new EngineError('action_request_validation', 'Validation Failed: 1: create operations only support internal versioning. use index instead;');
  if (params.version === undefined || !Number.isSafeInteger(params.version) || params.version < 0) {
    throw new EngineError('action_request_validation', `Validation Failed: 1: illegal version value [${params.version ?? -1}] for version type [${typeName}];`);
  }
  if (params.ifSeqNo !== undefined || params.ifPrimaryTerm !== undefined) {
    throw new EngineError('action_request_validation', 'Validation Failed: 1: compare and write operations can not use versioning;');
  }
  return { externalVersion: { version: params.version, type } };
}

/** Deepest object/array nesting a request body, and so a document, may have (PRODUCT.md 4.9). */
export const MAX_JSON_DEPTH = 20;

/** The document line of a bulk index or create item as received: parsed once, where its shard runs. */
export interface DocumentText {
  /** The line's UTF-8 bytes, without its line break. */
  bytes: Uint8Array;
  /** Deepest nesting the request parser accepts; a deeper text counts as not parsing. */
  maxDepth: number;
  /** Parses the line in this thread, throwing the error the request reports for it (failure paths only). */
  parse(): unknown;
}

/** The error of an index request whose document is not a JSON object. */
export function notAnObjectError(): EngineError {
  return new EngineError('mapper_parsing', 'failed to parse: the document must be a JSON object');
}

/**
 * Validates and routes an index whose document is still its JSON text (a bulk line): the checks
 * of `prepareIndex` but the document's, which its shard makes when it parses the text. Its
 * `start`/`end` are set when the text is placed in its shard's batch.
 */
export function prepareTextIndex(router: Router, hosted: HostedCollection, id: string | undefined, text: DocumentText, params: IndexParams): PreparedWrite<TextIndexOp> {
  const docId = id ?? generateId();
  checkGivenId(docId);
  const condition = concurrencyCondition(params, 'index');
  let target: ShardTarget;
  try {
    target = router.document(hosted, docId, params.routing);
  } catch (error) {
    // As for a parsed document, one that is not an object fails before routing does.
    if (!isPlainObject(text.parse())) throw notAnObjectError();
    throw error;
  }
  return {
    target,
    op: { kind: 'index_text', id: docId, opType: params.opType, ...condition, start: 0, end: 0 },
    mapping: { sources: [] },
    returnSource: null,
  };
}

/** Validates and routes an index request (generating the id when absent). */
export function prepareIndex(router: Router, hosted: HostedCollection, id: string | undefined, source: unknown, params: IndexParams): PreparedWrite {
  const docId = id ?? generateId();
  checkGivenId(docId);
  const condition = concurrencyCondition(params, 'index');
  if (!isPlainObject(source)) throw notAnObjectError();
  return {
    target: router.document(hosted, docId, params.routing),
    op: { kind: 'index', id: docId, source, opType: params.opType, ...condition, ...(params.sourceJson === undefined ? {} : { sourceJson: params.sourceJson }) },
    mapping: { sources: [source] },
    returnSource: null,
  };
}

/** Validates and routes a delete request. */
export function prepareDelete(router: Router, hosted: HostedCollection, id: string, params: WriteParams): PreparedWrite {
  checkId(id);
  const condition = concurrencyCondition(params, 'delete');
  return {
    target: router.document(hosted, id, params.routing),
    op: { kind: 'delete', id, ...condition },
    mapping: { sources: [] },
    returnSource: null,
  };
}

const UPDATE_BODY_KEYS = new Set(['doc', 'ops', 'upsert', 'doc_as_upsert', 'detect_noop', '_source']);

/** Partial documents standing for the values update operators write, for dynamic mapping. */
function operatorSamples(ops: readonly UpdateOperation[]): Array<Record<string, unknown>> {
  const samples: Array<Record<string, unknown>> = [];
  for (const operation of ops) {
    if (!isPlainObject(operation) || typeof operation.field !== 'string' || operation.field === '') continue;
    let value: unknown;
    switch (operation.op) {
      case 'set':
      case 'incr':
      case 'mul':
      case 'min':
      case 'max':
      case 'append':
      case 'add_to_set':
        value = operation.value;
        break;
      case 'toggle':
        value = true;
        break;
      case 'current_date':
        value = operation.value === 'timestamp' ? Date.now() : new Date().toISOString();
        break;
      default:
        continue;
    }
    samples.push({ [operation.field]: value });
  }
  return samples;
}

/** Validates and routes an update request; the body is the ES update body plus Trove's `ops`. */
export function prepareUpdate(router: Router, hosted: HostedCollection, id: string, body: unknown, params: UpdateParams): PreparedWrite {
  checkId(id);
  const condition = concurrencyCondition(params, 'update');
  if (!isPlainObject(body)) throw new EngineError('parsing', 'the update body must be a JSON object');
  for (const key of Object.keys(body)) {
    if (key === 'script' || key === 'scripted_upsert') {
      throw new EngineError('illegal_argument', `[${key}] is not supported: use [doc] and [ops] for partial updates`);
    }
    if (!UPDATE_BODY_KEYS.has(key)) throw new EngineError('parsing', `[UpdateRequest] unknown field [${key}]`);
  }
  const { doc, ops, upsert, doc_as_upsert: docAsUpsert, detect_noop: detectNoop } = body;
  if (doc !== undefined && !isPlainObject(doc)) throw new EngineError('parsing', '[doc] must be an object');
  if (upsert !== undefined && !isPlainObject(upsert)) throw new EngineError('parsing', '[upsert] must be an object');
  if (ops !== undefined && !Array.isArray(ops)) throw new EngineError('parsing', '[ops] must be an array of operations');
  if (docAsUpsert !== undefined && typeof docAsUpsert !== 'boolean') throw new EngineError('parsing', '[doc_as_upsert] must be a boolean');
  if (detectNoop !== undefined && typeof detectNoop !== 'boolean') throw new EngineError('parsing', '[detect_noop] must be a boolean');
  if (doc === undefined && ops === undefined) {
    throw new EngineError('action_request_validation', 'Validation Failed: 1: doc or ops is missing;');
  }
  const operations = (ops ?? undefined) as UpdateOperation[] | undefined;
  const target = router.document(hosted, id, params.routing);
  const sources = [doc, upsert].filter(isPlainObject);
  sources.push(...operatorSamples(operations ?? []));
  const createsWhenMissing = upsert !== undefined || docAsUpsert === true;
  const returnSourceOptions = params.source ?? (body._source !== undefined ? { source: body._source } : undefined);
  return {
    target,
    op: {
      kind: 'update',
      id,
      doc,
      ops: operations,
      upsert,
      docAsUpsert,
      detectNoop,
      ...condition,
      returnSource: returnSourceOptions !== undefined,
    },
    mapping: {
      sources,
      admit: createsWhenMissing
        ? undefined
        : async () => ((await target.handle.exists(id)) ? null : new EngineError('document_missing', `[${id}]: document missing`)),
    },
    returnSource: returnSourceOptions === undefined ? null : parseSourceFilter(returnSourceOptions),
  };
}

/** Copies an acknowledged write is on: the in-sync ones, as this node's catalog says (at least the primary). */
function writtenCopies(placement: ShardPlacement | undefined): number {
  return placement ? Math.max(1, inSyncOf(placement).length) : 1;
}

/** The Elasticsearch response for a completed write. */
export function renderWrite(prepared: PreparedWrite<BatchOp>, result: WriteResult): WriteResponse | UpdateResponse {
  const { meta } = prepared.target.collection;
  const noop = result.result === 'noop';
  const response: UpdateResponse = {
    _index: meta.name,
    _id: result.id,
    _version: result.version,
    result: result.result,
    _shards: noop
      ? { total: 0, successful: 0, failed: 0 }
      : { total: 1 + meta.settings.number_of_replicas, successful: writtenCopies(meta.placements[prepared.target.shardId]), failed: 0 },
    _seq_no: documentSeqNo(result.seqNo),
    _primary_term: result.primaryTerm,
  };
  if (prepared.returnSource && prepared.returnSource.kind !== 'none' && result.source) {
    response.get = {
      _seq_no: documentSeqNo(result.seqNo),
      _primary_term: result.primaryTerm,
      found: true,
      _source: responseSource(result, undefined, prepared.returnSource),
    };
  }
  return response;
}

/** Runs one prepared write: mapping step, then the shard. */
export async function executeWrite(context: NodeContext, prepared: PreparedWrite): Promise<WriteResponse | UpdateResponse> {
  const started = performance.now();
  let result: WriteResult;
  try {
    const [refused] = await context.mappings.ensure(prepared.target.collection.meta.name, [prepared.mapping]);
    if (refused) throw refused;
    result = await prepared.target.handle.write(prepared.op);
  } catch (error) {
    context.stats.recordWrite(prepared.op.kind, error instanceof Error ? error : new Error(String(error)), performance.now() - started);
    throw error;
  }
  context.stats.recordWrite(prepared.op.kind, result, performance.now() - started);
  return renderWrite(prepared, result);
}

/** Renders a stored document as a get response. */
export function renderGet(collection: string, id: string, document: StoredDocument | null, view: GetView): GetResponse {
  if (!document) return { _index: collection, _id: id, found: false };
  const response: GetResponse = {
    _index: collection,
    _id: id,
    found: true,
    _version: document.version,
    _seq_no: documentSeqNo(document.seqNo),
    _primary_term: document.primaryTerm,
  };
  const source = responseSource(document, view.mappingSource, view.filter);
  if (source !== undefined) response._source = source;
  if (view.stored !== undefined && view.stored.names.length > 0) {
    const fields = hitFieldValues(document.source, { fields: [], docvalueFields: [], storedFields: view.stored.names }, view.stored.fields, view.stored.mapping);
    if (fields !== undefined) response.fields = fields;
  }
  return response;
}

/** Get by id, from the primary copy: realtime unless `realtime` is false. */
export async function getDocument(context: NodeContext, collection: string, id: string, params: GetParams = {}): Promise<GetResponse> {
  const hosted = context.router.collection(collection);
  checkId(id);
  const view = getView(hosted, params.source, params.storedFields);
  const { handle } = context.router.document(hosted, id, context.router.writeRouting(collection, params.routing));
  const document = await handle.get(id, params.realtime === false ? { realtime: false } : undefined);
  if (document !== null && params.version !== undefined) checkGetVersion(id, document.version, params.version);
  return renderGet(hosted.meta.name, id, document, view);
}

/** A stored document's JSON text as the text of a bulk index or create item (a copy keeps the source as it was sent). */
export function storedDocumentText(text: string): DocumentText {
  return { bytes: Buffer.from(text), maxDepth: MAX_JSON_DEPTH, parse: () => JSON.parse(text) };
}
