/**
 * The shard handle of a shard running in a worker thread of a `WorkerShardHost`: each method is
 * one request to the pool, which routes it to the worker the shard is pinned to. The handle
 * names the shard by uuid only, so it stays valid when that worker is replaced.
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
import type { ShardCallMethod } from './protocol.ts';
import { decodeBatchResults, encodeOps, packRecords, unpackRecords, type WireBatchItem } from './wire.ts';

/** What a `WorkerShardHandle` needs of its pool. */
export interface ShardChannel {
  /** Calls a handle method of the shard in its worker (after a reopen in progress). */
  call(uuid: string, method: ShardCallMethod, args: unknown[], transfer?: ArrayBuffer[]): Promise<unknown>;
  /** `waitForChanges` in the worker; an abort of `signal` cancels it there. */
  waitForChanges(uuid: string, afterSeq: number, timeoutMs: number, signal?: AbortSignal): Promise<ChangeBounds>;
  /** Records a new mapping, changed settings or a higher primary term in the spec the shard reopens with. */
  updateSpec(uuid: string, change: { mapping?: Mapping; settings?: Partial<EngineSettings>; primaryTerm?: number }): void;
  /** Records a search context handed out, so that a reopened shard never reuses its number. */
  noteContext(uuid: string, context: number): void;
  /** Closes the shard in its worker and forgets it. */
  closeShard(uuid: string): Promise<ClosedShardFigures>;
}

/** See the module comment. */
export class WorkerShardHandle implements ShardHandle {
  constructor(
    private readonly channel: ShardChannel,
    readonly uuid: string,
  ) {}

  async write(op: WriteOp): Promise<WriteResult> {
    return (await this.channel.call(this.uuid, 'write', [op])) as WriteResult;
  }

  async writeBatch(ops: readonly WriteOp[]): Promise<Array<WriteResult | EngineError>> {
    const bytes = encodeOps(ops);
    const items = await this.channel.call(this.uuid, 'writeBatch', [bytes], [bytes.buffer as ArrayBuffer]);
    return decodeBatchResults(items as WireBatchItem[]);
  }

  /** The texts cross by transfer: `request.texts` is unusable here afterwards. */
  async prepareBatch(request: WriteBatchRequest): Promise<PreparedBatch> {
    const prepared = (await this.channel.call(this.uuid, 'prepareBatch', [request], [request.texts.buffer as ArrayBuffer])) as PreparedBatch;
    this.channel.noteContext(this.uuid, prepared.batch);
    return prepared;
  }

  async writePrepared(batch: number, skip: readonly number[]): Promise<Array<WriteResult | EngineError | null>> {
    const items = await this.channel.call(this.uuid, 'writePrepared', [batch, skip]);
    return decodeBatchResults(items as Array<WireBatchItem | null>);
  }

  async get(id: string, options?: GetOptions): Promise<StoredDocument | null> {
    return (await this.channel.call(this.uuid, 'get', options === undefined ? [id] : [id, options])) as StoredDocument | null;
  }

  async multiGet(ids: readonly string[], options?: GetOptions): Promise<Array<StoredDocument | null>> {
    return (await this.channel.call(this.uuid, 'multiGet', options === undefined ? [ids] : [ids, options])) as Array<StoredDocument | null>;
  }

  async exists(id: string, options?: GetOptions): Promise<boolean> {
    return (await this.channel.call(this.uuid, 'exists', options === undefined ? [id] : [id, options])) as boolean;
  }

  async query(request: ShardSearchRequest, reader?: ReaderUse): Promise<QueryPhase> {
    const phase = (await this.channel.call(this.uuid, 'query', reader === undefined ? [request] : [request, reader])) as QueryPhase;
    this.channel.noteContext(this.uuid, phase.context);
    return phase;
  }

  queryAndFetch(request: ShardSearchRequest, reader?: ReaderUse): Promise<FetchedQueryPhase> {
    return this.channel.call(this.uuid, 'queryAndFetch', reader === undefined ? [request] : [request, reader]) as Promise<FetchedQueryPhase>;
  }

  async openReader(options: ReaderOpenOptions): Promise<ReaderContextInfo> {
    return (await this.channel.call(this.uuid, 'openReader', [options])) as ReaderContextInfo;
  }

  async closeReaders(selector: ReaderSelector): Promise<number> {
    return (await this.channel.call(this.uuid, 'closeReaders', [selector])) as number;
  }

  async listReaders(): Promise<ReaderContextInfo[]> {
    return (await this.channel.call(this.uuid, 'listReaders', [])) as ReaderContextInfo[];
  }

  async readerPosition(id: string, update?: Omit<ReaderPosition, 'moved'>): Promise<ReaderPosition> {
    return (await this.channel.call(this.uuid, 'readerPosition', [id, update])) as ReaderPosition;
  }

  async fetch(context: number, hits: readonly ShardHit[]): Promise<FetchedDocument[]> {
    return (await this.channel.call(this.uuid, 'fetch', [context, hits])) as FetchedDocument[];
  }

  async freeContext(context: number): Promise<void> {
    await this.channel.call(this.uuid, 'freeContext', [context]);
  }

  async count(query: unknown): Promise<number> {
    return (await this.channel.call(this.uuid, 'count', [query])) as number;
  }

  async refresh(): Promise<void> {
    await this.channel.call(this.uuid, 'refresh', []);
  }

  async waitForRefresh(timeoutMs: number): Promise<boolean> {
    return (await this.channel.call(this.uuid, 'waitForRefresh', [timeoutMs])) as boolean;
  }

  async readChanges(afterSeq: number, limit: number): Promise<ChangeEntry[]> {
    return (await this.channel.call(this.uuid, 'readChanges', [afterSeq, limit])) as ChangeEntry[];
  }

  async changeBounds(): Promise<ChangeBounds> {
    return (await this.channel.call(this.uuid, 'changeBounds', [])) as ChangeBounds;
  }

  waitForChanges(afterSeq: number, timeoutMs: number, signal?: AbortSignal): Promise<ChangeBounds> {
    return this.channel.waitForChanges(this.uuid, afterSeq, timeoutMs, signal);
  }

  async forceMerge(options: { maxSegments?: number }): Promise<MergeReport> {
    return (await this.channel.call(this.uuid, 'forceMerge', [options])) as MergeReport;
  }

  async epoch(): Promise<void> {
    await this.channel.call(this.uuid, 'epoch', []);
  }

  async stats(): Promise<ShardStats> {
    return (await this.channel.call(this.uuid, 'stats', [])) as ShardStats;
  }

  async verify(): Promise<LiveShardCheck> {
    return (await this.channel.call(this.uuid, 'verify', [])) as LiveShardCheck;
  }

  /** The spec changes first: if the worker fails after applying it, the reopen has it too. */
  async setPrimaryTerm(term: number): Promise<void> {
    this.channel.updateSpec(this.uuid, { primaryTerm: term });
    await this.channel.call(this.uuid, 'setPrimaryTerm', [term]);
  }

  /** The records cross packed in one transferred buffer (wire.ts). */
  async readRecords(afterSeq: number, limit: number, maxBytes: number): Promise<ReplicationRecord[]> {
    return unpackRecords((await this.channel.call(this.uuid, 'readRecords', [afterSeq, limit, maxBytes])) as Uint8Array);
  }

  /** The records cross packed in one transferred buffer (a copy: `records` stay usable). */
  async applyRecords(records: readonly ReplicationRecord[]): Promise<HistoryPosition> {
    const packed = packRecords(records);
    return (await this.channel.call(this.uuid, 'applyRecords', [packed], [packed.buffer as ArrayBuffer])) as HistoryPosition;
  }

  async historyPosition(): Promise<HistoryPosition> {
    return (await this.channel.call(this.uuid, 'historyPosition', [])) as HistoryPosition;
  }

  async termAt(seq: number): Promise<number | null> {
    return (await this.channel.call(this.uuid, 'termAt', [seq])) as number | null;
  }

  /** Hold numbers come from the search-context sequence, so that a reopened shard never reuses one. */
  async holdFiles(): Promise<FileCopyHold> {
    const held = (await this.channel.call(this.uuid, 'holdFiles', [])) as FileCopyHold;
    this.channel.noteContext(this.uuid, held.hold);
    return held;
  }

  async releaseFiles(hold: number): Promise<void> {
    await this.channel.call(this.uuid, 'releaseFiles', [hold]);
  }

  /** The spec changes first: if the worker fails after applying it, the reopen has it too. */
  async setMapping(mapping: Mapping): Promise<void> {
    this.channel.updateSpec(this.uuid, { mapping });
    await this.channel.call(this.uuid, 'setMapping', [mapping]);
  }

  async updateSettings(settings: Partial<EngineSettings>): Promise<void> {
    this.channel.updateSpec(this.uuid, { settings });
    await this.channel.call(this.uuid, 'updateSettings', [settings]);
  }

  close(): Promise<ClosedShardFigures> {
    return this.channel.closeShard(this.uuid);
  }
}
