/**
 * The shard handle of a shard engine in this thread: the engine `Shard` behind the asynchronous,
 * plain-data interface of `ShardHandle`, plus the search contexts that keep a query phase's
 * point-in-time view until its fetch phase. A worker thread hosts its shards through this class
 * too, so both ways of running a shard share one implementation.
 */
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { Logger } from 'pino';
import { shardFaultHooks } from '../engine/shard/fault-points.ts';
import type { ShardHit, ShardSearchRequest, SourceFetch } from '../engine/query/search-request.ts';
import { runInSlices } from '../engine/query/execute.ts';
import type { Searcher } from '../engine/shard/searcher.ts';
import { Shard, type EngineSettings } from '../engine/shard/shard.ts';
import type { WriteOp, WriteResult } from '../engine/shard/operations.ts';
import type { Mapping } from '../engine/mapping/mapping.ts';
import type { HeapReleaseStats } from '../engine/memory/heap-release.ts';
import { EngineError } from '../engine/errors.ts';
import { parseBatch, type PreparedBatch, type WriteBatchRequest } from './write-batch.ts';
import {
  SEARCH_CONTEXT_KEEP_ALIVE_MS,
  type ChangeBounds,
  type ClosedShardFigures,
  type FetchedQueryPhase,
  type GetOptions,
  type QueryPhase,
  type ReaderContextInfo,
  type ReaderOpenOptions,
  type ReaderSelector,
  type ReaderPosition,
  type ReaderUse,
  type ReplicationRecord,
  type ShardHandle,
  type ShardHost,
  type ShardOpenSpec,
} from './shard-handle.ts';

interface SearchContext {
  searcher: Searcher;
  expiry: NodeJS.Timeout;
  /** The query's `fetchSource`: whether and how its fetch reads `_source`. */
  fetchSource: SourceFetch;
  /** The reader context whose snapshot the query read; null when the searcher is the context's own. */
  reader: ReaderContext | null;
}

/** A scroll's or point in time's snapshot of the shard, kept until closed or expired. */
interface ReaderContext {
  info: ReaderContextInfo;
  searcher: Searcher;
  expiry: NodeJS.Timeout;
  /** Queries running on it and search contexts waiting to fetch from it: its snapshot outlives a close until they are done. */
  users: number;
  closed: boolean;
  /** Where a scroll on this context stands (see ShardHandle.readerPosition). */
  position: Omit<ReaderPosition, 'moved'>;
}

/** A bulk batch parsed by `prepareBatch`, waiting for `writePrepared`. */
interface KeptBatch {
  ops: Array<WriteOp | null>;
  expiry: NodeJS.Timeout;
}

/** See the module comment. */
export class LocalShardHandle implements ShardHandle {
  private readonly contexts = new Map<number, SearchContext>();
  /** Prepared bulk batches, numbered from the same sequence as search contexts. */
  private readonly batches = new Map<number, KeptBatch>();
  private readonly waits = new Set<() => void>();
  private readonly readers = new Map<string, ReaderContext>();
  private nextContext = 1;

  private constructor(
    private readonly shard: Shard,
    /** The mapping the copy indexes with, which `prepareBatch` detects new fields against. */
    private mapping: Mapping,
  ) {}

  /** Opens (or creates) the shard of `spec` in this thread. */
  static async open(spec: ShardOpenSpec, logger: Logger): Promise<LocalShardHandle> {
    const shard = await Shard.open({
      dir: spec.dir,
      uuid: spec.uuid,
      mapping: spec.mapping,
      settings: spec.settings,
      logger: logger.child(spec.bindings),
      faults: shardFaultHooks(spec.uuid, spec.faults),
      primaryTerm: spec.primaryTerm,
    });
    return new LocalShardHandle(shard, spec.mapping);
  }

  get uuid(): string {
    return this.shard.uuid;
  }

  async write(op: WriteOp) {
    return this.shard.write(op);
  }

  async writeBatch(ops: readonly WriteOp[]) {
    return this.shard.writeBatch(ops);
  }

  async prepareBatch(request: WriteBatchRequest): Promise<PreparedBatch> {
    const { ops, items } = parseBatch(request, this.mapping);
    const batch = this.nextContext++;
    const expiry = setTimeout(() => this.release(batch), SEARCH_CONTEXT_KEEP_ALIVE_MS);
    expiry.unref();
    this.batches.set(batch, { ops, expiry });
    return { batch, items };
  }

  async writePrepared(batch: number, skip: readonly number[]) {
    const kept = this.batches.get(batch);
    if (!kept) throw new EngineError('illegal_argument', `prepared batch [${batch}] of shard [${this.uuid}] is gone (freed or expired)`);
    this.release(batch);
    const skipped = new Set(skip);
    const positions: number[] = [];
    const ops: WriteOp[] = [];
    kept.ops.forEach((op, position) => {
      if (op !== null && !skipped.has(position)) {
        positions.push(position);
        ops.push(op);
      }
    });
    const results: Array<WriteResult | EngineError | null> = kept.ops.map(() => null);
    if (ops.length === 0) return results;
    const written = await this.shard.writeBatch(ops);
    written.forEach((result, index) => {
      results[positions[index]!] = result;
    });
    return results;
  }

  async get(id: string, options?: GetOptions) {
    return options?.realtime === false ? this.shard.getVisible(id) : this.shard.get(id);
  }

  async multiGet(ids: readonly string[], options?: GetOptions) {
    return ids.map((id) => (options?.realtime === false ? this.shard.getVisible(id) : this.shard.get(id)));
  }

  async exists(id: string, options?: GetOptions) {
    return options?.realtime === false ? this.shard.existsVisible(id) : this.shard.exists(id);
  }

  /**
   * Yields to the event loop first, and then every `QUERY_SLICE_MS` of query work, so that searches
   * sharing this thread interleave (search lanes then see them as concurrent) and one long query
   * phase never holds the thread (the HTTP thread, with `node.shard_workers: 0`). Every search reads
   * a snapshot of the shard, so it may pause in any leaf, the in-memory layers included, and still
   * see each document once, as it was when the search began, whatever writes run in its pauses.
   */
  async query(request: ShardSearchRequest, reader?: ReaderUse): Promise<QueryPhase> {
    await nextTurn();
    const { searcher, held, shardRequest } = this.searchOn(request, reader);
    try {
      const result = await runInSlices(searcher.startQuery(shardRequest));
      const context = this.nextContext++;
      const expiry = setTimeout(() => this.release(context), SEARCH_CONTEXT_KEEP_ALIVE_MS);
      expiry.unref();
      this.contexts.set(context, { searcher, expiry, fetchSource: request.fetchSource ?? true, reader: held });
      return { context, result };
    } catch (error) {
      this.endSearch(searcher, held);
      throw error;
    }
  }

  async queryAndFetch(request: ShardSearchRequest, reader?: ReaderUse): Promise<FetchedQueryPhase> {
    await nextTurn();
    const { searcher, held, shardRequest } = this.searchOn(request, reader);
    try {
      const result = await runInSlices(searcher.startQuery(shardRequest));
      return { result, documents: result.hits.map((hit) => searcher.fetch(hit, request.fetchSource ?? true)) };
    } finally {
      this.endSearch(searcher, held);
    }
  }

  async openReader(options: ReaderOpenOptions): Promise<ReaderContextInfo> {
    if (this.readers.has(options.id)) throw new EngineError('illegal_argument', `reader context [${options.id}] is already open on shard [${this.uuid}]`);
    const info: ReaderContextInfo = { id: options.id, kind: options.kind, shardIndex: options.shardIndex, createdAt: Date.now(), keepAliveMs: options.keepAliveMs };
    const searcher = this.shard.searchView();
    const reader: ReaderContext = { info, searcher, expiry: this.readerExpiry(info), users: 0, closed: false, position: { version: 0, after: null } };
    this.readers.set(info.id, reader);
    return { ...info };
  }

  async closeReaders(selector: ReaderSelector): Promise<number> {
    const chosen = 'ids' in selector ? selector.ids.map((id) => this.readers.get(id)) : [...this.readers.values()].filter((reader) => reader.info.kind === selector.kind);
    let closed = 0;
    for (const reader of chosen) if (reader && this.closeReader(reader)) closed++;
    return closed;
  }

  async listReaders(): Promise<ReaderContextInfo[]> {
    return [...this.readers.values()].map((reader) => ({ ...reader.info }));
  }

  async readerPosition(id: string, update?: Omit<ReaderPosition, 'moved'>): Promise<ReaderPosition> {
    const reader = this.readers.get(id);
    if (!reader) throw new EngineError('search_context_missing', `No search context found for id [${id}]`);
    if (update === undefined || update.version !== reader.position.version) return { ...reader.position, moved: false };
    reader.position = { version: update.version + 1, after: update.after };
    return { ...reader.position, moved: true };
  }

  /** The searcher a search runs on: the reader context's snapshot (held until `endSearch`), or a new point-in-time view. */
  private searchOn(request: ShardSearchRequest, use: ReaderUse | undefined): { searcher: Searcher; held: ReaderContext | null; shardRequest: ShardSearchRequest } {
    if (use === undefined) return { searcher: this.shard.searchView(), held: null, shardRequest: request };
    const reader = this.readers.get(use.id);
    if (!reader) throw new EngineError('search_context_missing', `No search context found for id [${use.id}]`);
    if (use.keepAliveMs !== undefined) reader.info.keepAliveMs = use.keepAliveMs;
    clearTimeout(reader.expiry);
    reader.expiry = this.readerExpiry(reader.info);
    reader.users++;
    return { searcher: reader.searcher, held: reader, shardRequest: { ...request, shardIndex: reader.info.shardIndex } };
  }

  /** Ends a search begun by `searchOn`. */
  private endSearch(searcher: Searcher, held: ReaderContext | null): void {
    if (held === null) {
      searcher.release();
      return;
    }
    held.users--;
    if (held.closed && held.users === 0) held.searcher.release();
  }

  private readerExpiry(info: ReaderContextInfo): NodeJS.Timeout {
    const expiry = setTimeout(() => {
      const reader = this.readers.get(info.id);
      if (reader) this.closeReader(reader);
    }, info.keepAliveMs);
    expiry.unref();
    return expiry;
  }

  /** Forgets a reader context; its snapshot is released once no search uses it. */
  private closeReader(reader: ReaderContext): boolean {
    if (reader.closed) return false;
    reader.closed = true;
    this.readers.delete(reader.info.id);
    clearTimeout(reader.expiry);
    if (reader.users === 0) reader.searcher.release();
    return true;
  }

  async fetch(context: number, hits: readonly ShardHit[]) {
    const open = this.contexts.get(context);
    if (!open) throw new EngineError('illegal_argument', `search context [${context}] of shard [${this.uuid}] is gone (freed or expired)`);
    try {
      return hits.map((hit) => open.searcher.fetch(hit, open.fetchSource));
    } finally {
      this.release(context);
    }
  }

  async freeContext(context: number) {
    this.release(context);
  }

  async count(query: unknown) {
    const searcher = this.shard.searchView();
    try {
      return (await runInSlices(searcher.startCount(query))).total.value;
    } finally {
      searcher.release();
    }
  }

  async refresh() {
    this.shard.refresh();
  }

  waitForRefresh(timeoutMs: number) {
    return this.shard.waitForRefresh(timeoutMs);
  }

  async readChanges(afterSeq: number, limit: number) {
    return this.shard.readChanges(afterSeq, limit);
  }

  async changeBounds(): Promise<ChangeBounds> {
    return this.shard.changeBounds();
  }

  waitForChanges(afterSeq: number, timeoutMs: number, signal?: AbortSignal): Promise<ChangeBounds> {
    const now = this.shard.changeBounds();
    if (now.durableSeq > afterSeq || timeoutMs <= 0 || signal?.aborted) return Promise.resolve(now);
    return new Promise((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        unsubscribe();
        signal?.removeEventListener('abort', done);
        this.waits.delete(done);
        resolve(this.shard.changeBounds());
      };
      const unsubscribe = this.shard.onDurable((durableSeq) => {
        if (durableSeq > afterSeq) done();
      });
      const timer = setTimeout(done, timeoutMs);
      signal?.addEventListener('abort', done, { once: true });
      this.waits.add(done);
    });
  }

  forceMerge(options: { maxSegments?: number }) {
    return this.shard.forceMerge(options);
  }

  epoch() {
    return this.shard.epoch();
  }

  async stats() {
    return this.shard.stats();
  }

  verify() {
    return this.shard.verify();
  }

  async setPrimaryTerm(term: number) {
    this.shard.setPrimaryTerm(term);
  }

  async readRecords(afterSeq: number, limit: number, maxBytes: number) {
    return this.shard.readRecords(afterSeq, limit, maxBytes);
  }

  applyRecords(records: readonly ReplicationRecord[]) {
    return this.shard.applyRecords(records);
  }

  async historyPosition() {
    return this.shard.historyPosition();
  }

  async termAt(seq: number) {
    return this.shard.termAt(seq);
  }

  holdFiles() {
    return this.shard.holdFiles();
  }

  async releaseFiles(hold: number) {
    this.shard.releaseFiles(hold);
  }

  async setMapping(mapping: Mapping) {
    this.shard.setMapping(mapping);
    this.mapping = mapping;
  }

  async updateSettings(settings: Partial<EngineSettings>) {
    this.shard.updateSettings(settings);
  }

  /** Figures are read in the same turn in which the shard starts refusing writes, so they are final. */
  async close(): Promise<ClosedShardFigures> {
    for (const context of [...this.contexts.keys(), ...this.batches.keys()]) this.release(context);
    for (const reader of [...this.readers.values()]) this.closeReader(reader);
    for (const wait of [...this.waits]) wait();
    const stats = this.shard.stats();
    await this.shard.close();
    return { documents: stats.docs, deletedDocuments: stats.deletedDocs, seqNo: stats.seqNo };
  }

  private release(context: number): void {
    const batch = this.batches.get(context);
    if (batch) {
      this.batches.delete(context);
      clearTimeout(batch.expiry);
      return;
    }
    const open = this.contexts.get(context);
    if (!open) return;
    this.contexts.delete(context);
    clearTimeout(open.expiry);
    this.endSearch(open.searcher, open.reader);
  }
}

/** Runs every shard in the thread that opens it (`node.shard_workers: 0`). */
export class InThreadShardHost implements ShardHost {
  readonly description = 'in_thread';

  constructor(private readonly logger: Logger) {}

  open(spec: ShardOpenSpec): Promise<ShardHandle> {
    return LocalShardHandle.open(spec, this.logger);
  }

  /** Nothing to stop: the shards' owner closes each handle. */
  async close(): Promise<void> {}

  /** The shards run in the caller's thread, which reports its own releases. */
  async threadStats(): Promise<HeapReleaseStats[]> {
    return [];
  }
}
