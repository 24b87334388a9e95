/**
 * A shard handle that passes every call to another one: the base of the role wrappers of
 * replication (a primary that ships its records, a replica that refuses client writes), which
 * override only what their role changes.
 */
import type { LiveShardCheck } from '../../engine/directory/live-shard-verify.ts';
import type { EngineError } from '../../engine/errors.ts';
import type { Mapping } from '../../engine/mapping/mapping.ts';
import type { ShardHit, ShardSearchRequest } from '../../engine/query/search-request.ts';
import type { MergeReport } from '../../engine/shard/maintenance.ts';
import type { ChangeEntry, StoredDocument, WriteOp, WriteResult } from '../../engine/shard/operations.ts';
import type { FetchedDocument } from '../../engine/shard/searcher.ts';
import type { EngineSettings, ShardStats } from '../../engine/shard/shard.ts';
import type {
  ChangeBounds,
  ClosedShardFigures,
  FetchedQueryPhase,
  FileCopyHold,
  GetOptions,
  HistoryPosition,
  QueryPhase,
  ReaderContextInfo,
  ReaderOpenOptions,
  ReaderSelector,
  ReaderPosition,
  ReaderUse,
  ReplicationRecord,
  ShardHandle,
} from '../shard-handle.ts';
import type { PreparedBatch, WriteBatchRequest } from '../write-batch.ts';

/** See the module comment. */
export class DelegatingShardHandle implements ShardHandle {
  constructor(
    /** The copy's own handle (local or worker). */
    readonly inner: ShardHandle,
  ) {}

  get uuid(): string {
    return this.inner.uuid;
  }

  write(op: WriteOp): Promise<WriteResult> {
    return this.inner.write(op);
  }

  writeBatch(ops: readonly WriteOp[]): Promise<Array<WriteResult | EngineError>> {
    return this.inner.writeBatch(ops);
  }

  prepareBatch(request: WriteBatchRequest): Promise<PreparedBatch> {
    return this.inner.prepareBatch(request);
  }

  writePrepared(batch: number, skip: readonly number[]): Promise<Array<WriteResult | EngineError | null>> {
    return this.inner.writePrepared(batch, skip);
  }

  get(id: string, options?: GetOptions): Promise<StoredDocument | null> {
    return this.inner.get(id, options);
  }

  multiGet(ids: readonly string[], options?: GetOptions): Promise<Array<StoredDocument | null>> {
    return this.inner.multiGet(ids, options);
  }

  exists(id: string, options?: GetOptions): Promise<boolean> {
    return this.inner.exists(id, options);
  }

  query(request: ShardSearchRequest, reader?: ReaderUse): Promise<QueryPhase> {
    return this.inner.query(request, reader);
  }

  fetch(context: number, hits: readonly ShardHit[]): Promise<FetchedDocument[]> {
    return this.inner.fetch(context, hits);
  }

  queryAndFetch(request: ShardSearchRequest, reader?: ReaderUse): Promise<FetchedQueryPhase> {
    return this.inner.queryAndFetch(request, reader);
  }

  openReader(options: ReaderOpenOptions): Promise<ReaderContextInfo> {
    return this.inner.openReader(options);
  }

  closeReaders(selector: ReaderSelector): Promise<number> {
    return this.inner.closeReaders(selector);
  }

  listReaders(): Promise<ReaderContextInfo[]> {
    return this.inner.listReaders();
  }

  readerPosition(id: string, update?: Omit<ReaderPosition, 'moved'>): Promise<ReaderPosition> {
    return this.inner.readerPosition(id, update);
  }

  freeContext(context: number): Promise<void> {
    return this.inner.freeContext(context);
  }

  count(query: unknown): Promise<number> {
    return this.inner.count(query);
  }

  refresh(): Promise<void> {
    return this.inner.refresh();
  }

  waitForRefresh(timeoutMs: number): Promise<boolean> {
    return this.inner.waitForRefresh(timeoutMs);
  }

  readChanges(afterSeq: number, limit: number): Promise<ChangeEntry[]> {
    return this.inner.readChanges(afterSeq, limit);
  }

  changeBounds(): Promise<ChangeBounds> {
    return this.inner.changeBounds();
  }

  waitForChanges(afterSeq: number, timeoutMs: number, signal?: AbortSignal): Promise<ChangeBounds> {
    return this.inner.waitForChanges(afterSeq, timeoutMs, signal);
  }

  forceMerge(options: { maxSegments?: number }): Promise<MergeReport> {
    return this.inner.forceMerge(options);
  }

  epoch(): Promise<void> {
    return this.inner.epoch();
  }

  stats(): Promise<ShardStats> {
    return this.inner.stats();
  }

  verify(): Promise<LiveShardCheck> {
    return this.inner.verify();
  }

  setMapping(mapping: Mapping): Promise<void> {
    return this.inner.setMapping(mapping);
  }

  updateSettings(settings: Partial<EngineSettings>): Promise<void> {
    return this.inner.updateSettings(settings);
  }

  setPrimaryTerm(term: number): Promise<void> {
    return this.inner.setPrimaryTerm(term);
  }

  readRecords(afterSeq: number, limit: number, maxBytes: number): Promise<ReplicationRecord[]> {
    return this.inner.readRecords(afterSeq, limit, maxBytes);
  }

  applyRecords(records: readonly ReplicationRecord[]): Promise<HistoryPosition> {
    return this.inner.applyRecords(records);
  }

  historyPosition(): Promise<HistoryPosition> {
    return this.inner.historyPosition();
  }

  termAt(seq: number): Promise<number | null> {
    return this.inner.termAt(seq);
  }

  holdFiles(): Promise<FileCopyHold> {
    return this.inner.holdFiles();
  }

  releaseFiles(hold: number): Promise<void> {
    return this.inner.releaseFiles(hold);
  }

  close(): Promise<ClosedShardFigures> {
    return this.inner.close();
  }
}
