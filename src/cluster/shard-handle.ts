/**
 * The shard handle: the one way every layer above the engine reaches a shard copy, whatever stands
 * behind it (a shard in this thread, in a worker thread, or on another node). Everything is
 * asynchronous and plain data in, plain data out (structured-clone safe): no live engine object
 * crosses the seam. Engine failures arrive as `EngineError` whichever implementation answers.
 *
 * A search is two calls, as Elasticsearch's query-then-fetch: `query` runs the query phase on a
 * point-in-time view and returns it as a numbered search context; `fetch` loads hits addressed by
 * what `query` returned and frees the context. A context nobody fetches from is freed by
 * `freeContext`, or after `SEARCH_CONTEXT_KEEP_ALIVE_MS` when its caller went away. A small page
 * takes one call instead, `queryAndFetch` (Elasticsearch's query-and-fetch).
 */
import type { EngineError } from '../engine/errors.ts';
import type { Mapping } from '../engine/mapping/mapping.ts';
import type { HeapReleaseStats } from '../engine/memory/heap-release.ts';
import type { ShardHit, ShardQueryResult, ShardSearchRequest } from '../engine/query/search-request.ts';
import type { LiveShardCheck } from '../engine/directory/live-shard-verify.ts';
import type { ShardFaultSpec } from '../engine/shard/fault-points.ts';
import type { MergeReport } from '../engine/shard/maintenance.ts';
import type { ChangeEntry, StoredDocument, WriteOp, WriteResult } from '../engine/shard/operations.ts';
import type { FetchedDocument } from '../engine/shard/searcher.ts';
import type { EngineSettings, ShardStats } from '../engine/shard/shard.ts';
import type { PreparedBatch, WriteBatchRequest } from './write-batch.ts';

export { HOLD_TIMEOUT_MS } from '../engine/shard/file-holds.ts';

/** How long an unfetched search context keeps its point-in-time view. */
export const SEARCH_CONTEXT_KEEP_ALIVE_MS = 60_000;

/** What a reader context serves: `_all` clears one kind, and each kind has its own limit per node. */
export type ReaderKind = 'scroll' | 'pit';

/** A reader context: a snapshot of a shard copy that a scroll or point in time reads until it is closed or its keep-alive passes. */
export interface ReaderContextInfo {
  /** Random, chosen by the caller; the same on every shard copy of one scroll or point in time. */
  id: string;
  kind: ReaderKind;
  /** Position of the shard in its scroll or point in time: the high part of `_shard_doc` sort values. */
  shardIndex: number;
  /** When it opened (epoch ms). */
  createdAt: number;
  /** Its keep-alive as last set (ms): it expires that long after its last use. */
  keepAliveMs: number;
}

/** What opening a reader context takes: its id (chosen by the caller, the same on every shard of a scroll or point in time), kind, shard position and keep-alive. */
export type ReaderOpenOptions = Pick<ReaderContextInfo, 'id' | 'kind' | 'shardIndex' | 'keepAliveMs'>;

/** A search on a reader context: its id, and the keep-alive it gets from now on (unchanged when absent). */
export interface ReaderUse {
  id: string;
  keepAliveMs?: number;
}

/** Where a scroll stands, kept in its first shard's reader context: the sort values of the last hit served, and how many times it moved. */
export interface ReaderPosition {
  version: number;
  after: unknown[] | null;
  /** Whether this call moved it (false without an update, or when the version had changed). */
  moved: boolean;
}

/** Which reader contexts `closeReaders` closes: these ids, or every one of a kind. */
export type ReaderSelector = { ids: readonly string[] } | { kind: ReaderKind };

/** The query phase of one shard, kept as a search context for the fetch phase. */
export interface QueryPhase {
  /** Search context to fetch from (or free); unique per handle. */
  context: number;
  result: ShardQueryResult;
}

/** A query phase together with the documents of every hit it returned (no search context is kept). */
export interface FetchedQueryPhase {
  result: ShardQueryResult;
  /** The documents of `result.hits`, in the same order, with `source` and `sourceText` as the request's `fetchSource` asks. */
  documents: FetchedDocument[];
}

/** Where a shard's change log stands. */
export interface ChangeBounds {
  /** Lowest seq still retained. */
  firstSeq: number;
  /** Highest seq whose record is fsynced. */
  durableSeq: number;
}

/** One WAL record as replication ships it: the primary's seq, append time and payload bytes. */
export interface ReplicationRecord {
  seq: number;
  timestamp: number;
  payload: Uint8Array;
}

/** Where a copy's history stands. */
export interface HistoryPosition {
  /** Lowest seq still retained in the WAL. */
  firstSeq: number;
  /** Highest seq appended (durable: applyRecords returns only after fsync). */
  lastSeq: number;
  /** Primary term carried by the record at lastSeq; null when no record is retained (empty copy). */
  lastTerm: number | null;
}

/** Files of a copy held unchanged for file-based recovery (see holdFiles). */
export interface FileCopyHold {
  hold: number;
  /** Paths relative to the shard directory ('manifest.json', 'segments/<seg>/<file>', 'wal/<file>'), with the byte count to copy (for WAL files: their durable length). */
  files: Array<{ path: string; bytes: number }>;
  /** Highest seq the copied files hold durably. */
  seq: number;
}

/** A shard's figures at the moment it closed (the trash records them). */
export interface ClosedShardFigures {
  documents: number;
  deletedDocuments: number;
  /** Highest WAL seq (the shard's change-feed position). */
  seqNo: number;
}

/** Options of a get: `realtime: false` reads what searches see (the copy's refreshed view, index.visibility `refresh`) instead of the latest write. */
export interface GetOptions {
  realtime?: boolean;
}

/** See the module comment. */
export interface ShardHandle {
  /** The shard's UUID, fixed for life. */
  readonly uuid: string;
  /** Index, delete or update one document; resolves once the write is durable. */
  write(op: WriteOp): Promise<WriteResult>;
  /** Applies writes in order with one group commit; an item that fails is its EngineError. */
  writeBatch(ops: readonly WriteOp[]): Promise<Array<WriteResult | EngineError>>;
  /**
   * First step of a bulk batch (write-batch.ts): parses its document texts, keeps the batch under
   * a context number and answers a finding per item; nothing is written yet.
   */
  prepareBatch(request: WriteBatchRequest): Promise<PreparedBatch>;
  /**
   * Second step: writes the kept batch in order with one group commit, except the positions in
   * `skip` (null there), and frees it; an item that fails is its EngineError.
   */
  writePrepared(batch: number, skip: readonly number[]): Promise<Array<WriteResult | EngineError | null>>;
  /** Realtime get of the live document (inplace values overlaid), or null; see GetOptions. */
  get(id: string, options?: GetOptions): Promise<StoredDocument | null>;
  /** Realtime get of several documents, in request order; see GetOptions. */
  multiGet(ids: readonly string[], options?: GetOptions): Promise<Array<StoredDocument | null>>;
  /** Whether a live document with this id exists (nothing is read); see GetOptions. */
  exists(id: string, options?: GetOptions): Promise<boolean>;
  /**
   * Query phase: top hits, total and aggregation partials, on a new search context; with `reader`,
   * on that reader context's snapshot (search_context_missing when it is gone), renewing its keep-alive.
   */
  query(request: ShardSearchRequest, reader?: ReaderUse): Promise<QueryPhase>;
  /** Fetch phase: the documents of hits of `context`, in the order given; frees the context. */
  fetch(context: number, hits: readonly ShardHit[]): Promise<FetchedDocument[]>;
  /**
   * Query phase and the fetch of every hit it returned, in one call on one point-in-time view,
   * keeping no search context: for small pages, where fetching a few hits more than the page
   * needs costs less than a second round trip.
   */
  queryAndFetch(request: ShardSearchRequest, reader?: ReaderUse): Promise<FetchedQueryPhase>;
  /** Opens a reader context on a snapshot of the copy as it is now (see ReaderContextInfo). */
  openReader(options: ReaderOpenOptions): Promise<ReaderContextInfo>;
  /** Closes reader contexts (unknown ids are ignored); answers how many it closed. */
  closeReaders(selector: ReaderSelector): Promise<number>;
  /** The reader contexts open on this copy. */
  listReaders(): Promise<ReaderContextInfo[]>;
  /**
   * The position kept in reader context `id` (search_context_missing when it is gone); with
   * `update`, first moves it to `update.after` if it is still at version `update.version`
   * (compare and set), and answers the position after.
   */
  readerPosition(id: string, update?: Omit<ReaderPosition, 'moved'>): Promise<ReaderPosition>;
  /** Frees a search context without fetching (a shard with no winning hit), or a prepared batch without writing it. */
  freeContext(context: number): Promise<void>;
  /** Number of live documents matching an ES query. */
  count(query: unknown): Promise<number>;
  /**
   * Refreshes the view this copy's searches read (index.visibility `refresh`: writes applied so far
   * become searchable); a no-op when the collection makes writes visible at once.
   */
  refresh(): Promise<void>;
  /**
   * Resolves true once this copy's searches see every write it had applied when called (at once
   * when writes are visible at once), false after `timeoutMs` (`refresh=wait_for`).
   */
  waitForRefresh(timeoutMs: number): Promise<boolean>;
  /** Retained changes with seq > afterSeq, oldest first, at most `limit`. */
  readChanges(afterSeq: number, limit: number): Promise<ChangeEntry[]>;
  /** Where the change log stands now. */
  changeBounds(): Promise<ChangeBounds>;
  /**
   * Resolves with the change bounds once a record past `afterSeq` is durable, or after
   * `timeoutMs`, or as soon as `signal` aborts.
   */
  waitForChanges(afterSeq: number, timeoutMs: number, signal?: AbortSignal): Promise<ChangeBounds>;
  /** Manual compaction: freeze, then merge down to `maxSegments`, purging deleted documents. */
  forceMerge(options: { maxSegments?: number }): Promise<MergeReport>;
  /** Freezes the mutable layer into a segment now. */
  epoch(): Promise<void>;
  /** Counters and the segment listing. */
  stats(): Promise<ShardStats>;
  /**
   * Read-only verification of the copy's files (checksums of segment files, WAL frames up to the
   * durable end), excluded from epochs and merges while it runs; findings per file.
   */
  verify(): Promise<LiveShardCheck>;
  /** Sets the primary term that records written from now on carry (a copy promoted to primary). */
  setPrimaryTerm(term: number): Promise<void>;
  /** Durable WAL records with seq > afterSeq, oldest first, at most `limit` records and about `maxBytes` payload bytes (at least one record); starts at the first retained seq when afterSeq+1 is no longer retained (callers compare seqs to detect the gap). */
  readRecords(afterSeq: number, limit: number, maxBytes: number): Promise<ReplicationRecord[]>;
  /** Replica side: appends the records whose seq is above this copy's lastSeq, in order, with the primary's seqs and timestamps, fsyncs them and applies them as WAL replay would; a record that would leave a hole (first new seq != lastSeq+1) fails with EngineError('replication_gap') and nothing is written. Returns the position after. */
  applyRecords(records: readonly ReplicationRecord[]): Promise<HistoryPosition>;
  /** Where this copy's history stands now. */
  historyPosition(): Promise<HistoryPosition>;
  /** Primary term of the retained durable record at `seq`; null when that seq is not retained or not yet written. */
  termAt(seq: number): Promise<number | null>;
  /** Holds the copy's files unchanged (no epoch, merge or WAL trim; writes go on, only appending past the listed WAL lengths) until releaseFiles(hold) or HOLD_TIMEOUT_MS; lists them. */
  holdFiles(): Promise<FileCopyHold>;
  /** Ends a hold (unknown holds are ignored). */
  releaseFiles(hold: number): Promise<void>;
  /** Adopts a new mapping (fields only grow). */
  setMapping(mapping: Mapping): Promise<void>;
  /** Changes engine tunables at runtime. */
  updateSettings(settings: Partial<EngineSettings>): Promise<void>;
  /** Stops accepting requests, makes every applied write durable, and closes; returns final figures. */
  close(): Promise<ClosedShardFigures>;
}

/** What opening a shard copy needs: plain data, so that it can cross to a worker thread. */
export interface ShardOpenSpec {
  dir: string;
  uuid: string;
  mapping: Mapping;
  settings: EngineSettings;
  /** Logger bindings of the shard's log lines (collection, shard number). */
  bindings: Record<string, string | number>;
  /** Test-only fault points armed on this shard . */
  faults?: ShardFaultSpec;
  /** Primary term that records written from the open on carry (1 when absent). */
  primaryTerm?: number;
}

/** Opens shard copies: in this thread, or in a pool of worker threads. */
export interface ShardHost {
  /** How shards run, for node info and logs: `in_thread` or `workers:N`. */
  readonly description: string;
  /** Opens (or creates) a shard copy, replaying its WAL. */
  open(spec: ShardOpenSpec): Promise<ShardHandle>;
  /** Closes every shard still open and stops the host. */
  close(): Promise<void>;
  /** The heap releases of each thread the host runs shards in besides the caller's (none in thread). */
  threadStats(): Promise<HeapReleaseStats[]>;
}
