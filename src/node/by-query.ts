/**
 * `_delete_by_query` and `_update_by_query` (Elasticsearch's by-query APIs): page through the
 * documents a query matches and delete or update each one with optimistic concurrency on the
 * `_seq_no` / `_primary_term` it had when it was read, a batch at a time.
 *
 * Reading goes through a scroll of the node's search service (`sort: ["_doc"]`,
 * `seq_no_primary_term`; src/node/scroll.ts), as Elasticsearch does: the run reads a snapshot of
 * the matches as they were when it started, each once, whatever it and other writers change
 * meanwhile (epochs and merges included). Writing goes through the document service's bulk path,
 * so each batch reaches every shard's primary copy through the router, on whichever node holds
 * it. The scroll's keep-alive covers a page's processing, throttling included, and it is cleared
 * when the run ends; it counts against `search.max_open_scroll_context`.
 *
 * A document changed between the read and the write is a version conflict: counted in
 * `version_conflicts`; `conflicts=abort` (the default) stops after that batch and lists the
 * conflicts in `failures`, `proceed` goes on. Any other failure of an item stops the run too.
 * `_reindex` (src/node/reindex.ts) is the same run with another write: each hit's source is
 * indexed (or created) into the destination under its id, counted as `created` or `updated`.
 *
 * Limits: hits carry no `_routing`, so documents indexed with a custom routing value are not
 * reached by their id (their writes fail or conflict).
 */
import { EngineError } from '../engine/errors.ts';
import { isPlainObject } from '../engine/mapping/json-value.ts';
import type { UpdateOperation } from '../engine/shard/operations.ts';
import { checkOperation } from '../engine/update/operators.ts';
import { JobError } from '../jobs/job-error.ts';
import type { BulkItem, BulkResponse } from './bulk.ts';
import { NodeError } from './node-error.ts';
import { storedDocumentText } from './documents.ts';
import { stringifyWithRawJson } from './raw-json.ts';
import type { ScrollResponse } from './scroll.ts';

/** Which by-query API (`reindex`: `_reindex`, which reads the same way). */
export type ByQueryKind = 'delete' | 'update' | 'reindex';

/** Where and how `_reindex` writes what it reads. */
export interface ReindexDestination {
  /** Collection (or alias, through its write index) written to; created on the first write if missing and allowed. */
  index: string;
  /** ES `op_type`: `index` overwrites, `create` counts an existing id as a version conflict. */
  opType: 'index' | 'create';
  /** ES `version_type`: `internal` writes a new version; `external`/`external_gte` keep the source's version. */
  versionType: 'internal' | 'external' | 'external_gte';
  /** ES `source._source`: the source fields copied (true: all). */
  sourceFilter: unknown;
}

/** Options of a run, from the query string (typed by the HTTP layer). */
export interface ByQueryOptions {
  /** ES `conflicts`: stop at the first version conflict (`abort`, default) or count it and go on. */
  conflicts: 'abort' | 'proceed';
  /** Documents read and written per batch (ES `scroll_size` / `batch_size`, default 1000). */
  batchSize: number;
  /** Documents per second, or null when unthrottled (ES `requests_per_second=-1`). */
  requestsPerSecond: number | null;
  /** ES `q`: a query string run as `query_string` instead of the body's query. */
  q?: string;
}

/** A parsed by-query request: what to match, how many, and for updates what to change. */
export interface ByQueryRequest {
  kind: ByQueryKind;
  query: unknown;
  /** ES `max_docs`: at most this many documents are deleted or updated (null: all). */
  maxDocs: number | null;
  /** For updates: the partial-update body (`doc` and/or `ops`); null re-indexes each document as it is. */
  change: { doc?: Record<string, unknown>; ops?: UpdateOperation[] } | null;
  /** For `_reindex`: the destination. */
  destination?: ReindexDestination;
}

/** A failed document: its error's code (for the API's error table) and reason. */
export interface ByQueryFailure {
  index: string;
  id: string;
  code: string;
  reason: string;
}

/** The ES by-query response body (and a running task's status), failures still as codes. */
export interface ByQueryStatus {
  took: number;
  timed_out: boolean;
  total: number;
  updated?: number;
  created?: number;
  deleted: number;
  batches: number;
  version_conflicts: number;
  noops: number;
  retries: { bulk: number; search: number };
  throttled_millis: number;
  requests_per_second: number;
  throttled_until_millis: number;
  failures: ByQueryFailure[];
  [key: string]: unknown;
}

/** The services a run reads and writes through. */
export interface ByQueryServices {
  /** Opens a scroll on `target` with keep-alive `scroll`: its first page. */
  openScroll(target: string, body: unknown, params: { q?: string; scroll: string }): Promise<ScrollResponse>;
  /** The next page of a scroll, renewing its keep-alive. */
  continueScroll(scrollId: string, scroll: string): Promise<ScrollResponse>;
  /** Frees a scroll (a gone one is fine). */
  clearScroll(scrollId: string): Promise<void>;
  bulk(items: readonly BulkItem[]): Promise<BulkResponse>;
}

/** Shortest keep-alive of a run's scroll (Elasticsearch's by-query default), ms. */
const SCROLL_KEEP_ALIVE_MS = 5 * 60_000;

const BODY_KEYS: Record<Exclude<ByQueryKind, 'reindex'>, ReadonlySet<string>> = {
  delete: new Set(['query', 'max_docs', 'conflicts']),
  update: new Set(['query', 'max_docs', 'conflicts', 'doc', 'ops']),
};

/** Validates a by-query body (see the module comment); a bad one is a 400. */
export function parseByQueryBody(kind: Exclude<ByQueryKind, 'reindex'>, body: unknown): ByQueryRequest & { conflicts?: 'abort' | 'proceed' } {
  const request = body === undefined || body === null ? {} : body;
  const api = `_${kind}_by_query`;
  if (!isPlainObject(request)) throw new EngineError('parsing', `the ${api} body must be a JSON object`);
  for (const key of Object.keys(request)) {
    if (key === 'script') {
      throw new EngineError(
        'illegal_argument',
        `[script] is not supported by ${api}: use [ops] (Trove's partial-update operators, as in _update) and/or [doc]; with neither, each matching document is re-indexed as it is`,
      );
    }
    if (key === 'slice') throw new EngineError('illegal_argument', `[slice] is not supported by ${api}: documents are processed in one slice`);
    if (!BODY_KEYS[kind].has(key)) throw new EngineError('parsing', `[${api}] unknown field [${key}]`);
  }
  const { query, max_docs: maxDocs, conflicts, doc, ops } = request;
  if (query !== undefined && !isPlainObject(query)) throw new EngineError('parsing', '[query] must be an object');
  if (maxDocs !== undefined && (typeof maxDocs !== 'number' || !Number.isSafeInteger(maxDocs) || maxDocs < 1)) {
    throw new EngineError('action_request_validation', `Validation Failed: 1: maxDocs should be greater than 0 if the request is limited to some number of documents or -1 if it isn't but it was [${String(maxDocs)}];`);
  }
  if (conflicts !== undefined && conflicts !== 'abort' && conflicts !== 'proceed') {
    throw new EngineError('illegal_argument', `conflicts may only be "proceed" or "abort" but was [${String(conflicts)}]`);
  }
  if (doc !== undefined && !isPlainObject(doc)) throw new EngineError('parsing', '[doc] must be an object');
  if (ops !== undefined) {
    if (!Array.isArray(ops)) throw new EngineError('parsing', '[ops] must be an array of operations');
    ops.forEach((operation, position) => checkOperation(operation as UpdateOperation, position));
  }
  const change = doc === undefined && ops === undefined ? null : { ...(doc === undefined ? {} : { doc }), ...(ops === undefined ? {} : { ops: ops as UpdateOperation[] }) };
  return { kind, query: query ?? { match_all: {} }, maxDocs: (maxDocs as number | undefined) ?? null, change, conflicts };
}

/** A hit as the run reads it. */
interface ReadHit {
  index: string;
  id: string;
  seqNo: number;
  primaryTerm: number;
  version: number | undefined;
  /** The hit's `_source` as JSON text, numbers as they were sent (what a copy indexes). */
  sourceText: string | undefined;
}

/** A page of hits, the total of the first page, and the scroll id of the next page (null: this was the last page). */
interface Page {
  hits: ReadHit[];
  total: number;
  next: string | null;
}

/** The error codes that mean "the document changed (or went) since it was read". */
const CONFLICT_CODES: ReadonlySet<string> = new Set(['version_conflict', 'document_missing']);

/** One by-query run over one collection; `open` reads the first page, `run` does the work. */
export class ByQueryRun {
  private readonly status: ByQueryStatus;
  private readonly started = performance.now();
  private page: Page;

  private constructor(
    private readonly services: ByQueryServices,
    private readonly collection: string,
    private readonly request: ByQueryRequest,
    private readonly options: ByQueryOptions,
    first: Page,
    /** The run's scroll, cleared when it ends. */
    private readonly scrollId: string,
  ) {
    this.page = first;
    this.status = {
      took: 0,
      timed_out: false,
      total: request.maxDocs === null ? first.total : Math.min(first.total, request.maxDocs),
      ...(request.kind === 'delete' ? {} : { updated: 0 }),
      ...(request.kind === 'reindex' ? { created: 0 } : {}),
      deleted: 0,
      batches: 0,
      version_conflicts: 0,
      noops: 0,
      retries: { bulk: 0, search: 0 },
      throttled_millis: 0,
      requests_per_second: options.requestsPerSecond ?? -1,
      throttled_until_millis: 0,
      failures: [],
    };
  }

  /** Checks the request by reading its first page (a bad query or a missing collection fails here, before any write). */
  static async open(services: ByQueryServices, collection: string, request: ByQueryRequest, options: ByQueryOptions): Promise<ByQueryRun> {
    const body = {
      ...(options.q === undefined ? { query: request.query } : {}),
      size: options.batchSize,
      sort: ['_doc'],
      seq_no_primary_term: true,
      _source: request.destination ? request.destination.sourceFilter : request.kind === 'update' && request.change === null,
      ...(request.destination && request.destination.versionType !== 'internal' ? { version: true } : {}),
      track_total_hits: true,
      timeout: '-1',
    };
    const response = await services.openScroll(collection, body, { q: options.q, scroll: keepAlive(options) });
    try {
      return new ByQueryRun(services, collection, request, options, pageOf(collection, response, options), response._scroll_id);
    } catch (error) {
      await services.clearScroll(response._scroll_id).catch(() => undefined);
      throw error;
    }
  }

  /** The status so far (a copy). */
  snapshot(): ByQueryStatus {
    return structuredClone({ ...this.status, took: Math.round(performance.now() - this.started) });
  }

  /** Processes every page; `report` gets the status after each batch; stops with job_interrupted when `stopping` aborts. */
  async run(report: (status: ByQueryStatus) => Promise<void>, stopping: AbortSignal): Promise<ByQueryStatus> {
    try {
      return await this.runPages(report, stopping);
    } finally {
      await this.services.clearScroll(this.scrollId).catch(() => undefined);
    }
  }

  private async runPages(report: (status: ByQueryStatus) => Promise<void>, stopping: AbortSignal): Promise<ByQueryStatus> {
    const maxDocs = this.request.maxDocs ?? Infinity;
    for (;;) {
      const pending = this.page.hits;
      for (let offset = 0; offset < pending.length; ) {
        if (stopping.aborted) throw new JobError('job_interrupted', `the node stopped before the ${apiName(this.request.kind)} finished; the batches done so far stay applied`);
        if (this.done() >= maxDocs) return this.snapshot();
        const batch = pending.slice(offset, offset + Math.min(this.options.batchSize, maxDocs - this.done()));
        offset += batch.length;
        const batchStarted = performance.now();
        const stop = await this.writeBatch(batch);
        await report(this.snapshot());
        if (stop) return this.snapshot();
        await this.throttle(batch.length, performance.now() - batchStarted, stopping);
      }
      if (this.page.next === null || this.done() >= maxDocs) return this.snapshot();
      this.page = pageOf(this.collection, await this.services.continueScroll(this.page.next, keepAlive(this.options)), this.options);
    }
  }

  /** Documents deleted, updated, created or left unchanged so far (what `max_docs` counts). */
  private done(): number {
    return this.status.deleted + (this.status.updated ?? 0) + (this.status.created ?? 0) + this.status.noops;
  }

  /** Writes one batch; true when the run must stop (a failure, or a conflict under `abort`). */
  private async writeBatch(batch: readonly ReadHit[]): Promise<boolean> {
    this.status.batches++;
    const items = batch.map((hit): BulkItem => {
      const destination = this.request.destination;
      if (destination) {
        const versioned = destination.versionType === 'internal' ? {} : { version: hit.version, versionType: destination.versionType };
        return { action: destination.opType, collection: destination.index, id: hit.id, text: storedDocumentText(hit.sourceText ?? '{}'), ...versioned };
      }
      const target = { collection: hit.index, id: hit.id, ifSeqNo: hit.seqNo, ifPrimaryTerm: hit.primaryTerm };
      if (this.request.kind === 'delete') return { action: 'delete', ...target };
      if (this.request.change === null) return { action: 'index', ...target, text: storedDocumentText(hit.sourceText ?? '{}') };
      return { action: 'update', ...target, body: this.request.change };
    });
    const response = await this.services.bulk(items);
    let stop = false;
    response.items.forEach((item, position) => {
      const hit = batch[position]!;
      if ('error' in item) {
        const conflict = CONFLICT_CODES.has(item.error.code);
        if (conflict) this.status.version_conflicts++;
        if (!conflict || this.options.conflicts === 'abort') {
          this.status.failures.push({ index: hit.index, id: hit.id, code: item.error.code, reason: item.error.message });
          stop = true;
        }
        return;
      }
      const result = item.response.result;
      if (result === 'deleted') this.status.deleted++;
      else if (result === 'noop') this.status.noops++;
      else if (result === 'created' && this.request.kind === 'reindex') this.status.created = (this.status.created ?? 0) + 1;
      else if (result === 'not_found') {
        // Deleted since it was read: Elasticsearch's conflict on the snapshot's seq_no.
        this.status.version_conflicts++;
        if (this.options.conflicts === 'abort') {
          this.status.failures.push({ index: hit.index, id: hit.id, code: 'version_conflict', reason: `[${hit.id}]: version conflict, document already deleted` });
          stop = true;
        }
      } else this.status.updated = (this.status.updated ?? 0) + 1;
    });
    return stop;
  }

  /** Waits as `requests_per_second` asks: a batch of n documents takes at least n / rate seconds. */
  private async throttle(documents: number, tookMs: number, stopping: AbortSignal): Promise<void> {
    if (this.options.requestsPerSecond === null) return;
    const waitMs = Math.round((documents / this.options.requestsPerSecond) * 1000 - tookMs);
    if (waitMs <= 0) return;
    this.status.throttled_millis += waitMs;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, waitMs);
      stopping.addEventListener('abort', () => (clearTimeout(timer), resolve()), { once: true });
    });
  }
}

/** The API's name in messages: `_delete_by_query`, `_update_by_query` or `_reindex`. */
export function apiName(kind: ByQueryKind): string {
  return kind === 'reindex' ? '_reindex' : `_${kind}_by_query`;
}

/** The keep-alive of a run's scroll: long enough for a page's batches at the throttled rate, at least `SCROLL_KEEP_ALIVE_MS`. */
function keepAlive(options: ByQueryOptions): string {
  const throttled = options.requestsPerSecond === null ? 0 : (2 * options.batchSize * 1000) / options.requestsPerSecond;
  return `${Math.ceil(Math.max(SCROLL_KEEP_ALIVE_MS, throttled))}ms`;
}

/** A scroll page as the run reads it; a shard that could not be searched fails the run. */
function pageOf(collection: string, response: ScrollResponse, options: ByQueryOptions): Page {
  if (response._shards.failed > 0) {
    const first = response._shards.failures?.[0];
    throw new NodeError('shard_unavailable', `[${collection}][${first?.shard ?? '?'}] could not be searched: ${first?.reason.reason ?? 'unknown reason'}`);
  }
  const hits = response.hits.hits.map((hit): ReadHit => ({ index: hit._index, id: hit._id, seqNo: hit._seq_no!, primaryTerm: hit._primary_term!, version: hit._version, sourceText: hit._source === undefined ? undefined : stringifyWithRawJson(hit._source) }));
  const total = typeof response.hits.total === 'object' ? response.hits.total.value : (response.hits.total ?? 0);
  return { hits, total, next: hits.length < options.batchSize ? null : response._scroll_id };
}
