/**
 * The shard handle of a shard copy on another node: each method is one call of that node's
 * internal shard API (protocol.ts) through the node's `RemoteTransport`, and answers with the
 * values and `EngineError`s the copy's own handle gave there. A node that cannot be reached is
 * `CatalogError('shard_unavailable')` (remote-transport.ts).
 *
 * What differs from a local handle, by design:
 * - `close()` rejects with `illegal_argument`: a copy is closed by the node that hosts it, when
 *   its catalog says so (callers that close handles, the trash and LocalShards, hold local ones).
 * - `setMapping` and `updateSettings` resolve without a call: the hosting node applies mapping
 *   and settings changes to its copies from the catalog itself.
 * - `waitForChanges` aborted by its signal resolves at once, without another call, with the bounds
 *   of the copy's last answer (`afterSeq` as the durable seq before any), where a local handle
 *   reads its current bounds; the aborted request's connection is dropped, which ends the wait on
 *   the other node. A wait is given its own `timeoutMs` plus `WAIT_MARGIN_MS` to answer.
 */
import type { LiveShardCheck } from '../../engine/directory/live-shard-verify.ts';
import { EngineError } from '../../engine/errors.ts';
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
import { decodeBatchResults, type WireBatchItem } from '../worker/wire.ts';
import type { PreparedBatch, WriteBatchRequest } from '../write-batch.ts';
import { hitsFromJson, queryPhaseFromJson, recordsFromJson, recordsToJson, type JsonReplicationRecord, type RemoteShardMethod } from './protocol.ts';
import type { CallOptions, RemoteNode, RemoteTransport } from './remote-transport.ts';

/** Time a long poll's answer may take beyond the wait itself. */
export const WAIT_MARGIN_MS = 10_000;

/** See the module comment. */
export class RemoteShardHandle implements ShardHandle {
  private lastBounds: ChangeBounds | null = null;

  constructor(
    readonly uuid: string,
    readonly node: RemoteNode,
    private readonly transport: RemoteTransport,
  ) {}

  async write(op: WriteOp): Promise<WriteResult> {
    return (await this.call('write', [op])) as WriteResult;
  }

  async writeBatch(ops: readonly WriteOp[]): Promise<Array<WriteResult | EngineError>> {
    return decodeBatchResults((await this.call('writeBatch', [ops])) as WireBatchItem[]);
  }

  /** The texts cross as base64 (`textsFromJson` on the serving node), so that their byte offsets hold. */
  async prepareBatch(request: WriteBatchRequest): Promise<PreparedBatch> {
    const texts = Buffer.from(request.texts.buffer, request.texts.byteOffset, request.texts.byteLength).toString('base64');
    return (await this.call('prepareBatch', [{ ...request, texts }])) as PreparedBatch;
  }

  async writePrepared(batch: number, skip: readonly number[]): Promise<Array<WriteResult | EngineError | null>> {
    return decodeBatchResults((await this.call('writePrepared', [batch, skip])) as Array<WireBatchItem | null>);
  }

  async get(id: string, options?: GetOptions): Promise<StoredDocument | null> {
    return (await this.call('get', options === undefined ? [id] : [id, options])) as StoredDocument | null;
  }

  async multiGet(ids: readonly string[], options?: GetOptions): Promise<Array<StoredDocument | null>> {
    return (await this.call('multiGet', options === undefined ? [ids] : [ids, options])) as Array<StoredDocument | null>;
  }

  async exists(id: string, options?: GetOptions): Promise<boolean> {
    return (await this.call('exists', options === undefined ? [id] : [id, options])) as boolean;
  }

  async query(request: ShardSearchRequest, reader?: ReaderUse): Promise<QueryPhase> {
    return queryPhaseFromJson((await this.call('query', reader === undefined ? [request] : [request, reader])) as QueryPhase);
  }

  async queryAndFetch(request: ShardSearchRequest, reader?: ReaderUse): Promise<FetchedQueryPhase> {
    const phase = (await this.call('queryAndFetch', reader === undefined ? [request] : [request, reader])) as FetchedQueryPhase;
    hitsFromJson(phase.result.hits);
    return phase;
  }

  async openReader(options: ReaderOpenOptions): Promise<ReaderContextInfo> {
    return (await this.call('openReader', [options])) as ReaderContextInfo;
  }

  async closeReaders(selector: ReaderSelector): Promise<number> {
    return (await this.call('closeReaders', [selector])) as number;
  }

  async listReaders(): Promise<ReaderContextInfo[]> {
    return (await this.call('listReaders', [])) as ReaderContextInfo[];
  }

  async readerPosition(id: string, update?: Omit<ReaderPosition, 'moved'>): Promise<ReaderPosition> {
    return (await this.call('readerPosition', [id, update])) as ReaderPosition;
  }

  async fetch(context: number, hits: readonly ShardHit[]): Promise<FetchedDocument[]> {
    return (await this.call('fetch', [context, hits])) as FetchedDocument[];
  }

  async freeContext(context: number): Promise<void> {
    await this.call('freeContext', [context]);
  }

  async count(query: unknown): Promise<number> {
    return (await this.call('count', [query])) as number;
  }

  async refresh(): Promise<void> {
    await this.call('refresh', []);
  }

  /** A wait is given its own `timeoutMs` plus `WAIT_MARGIN_MS` to answer, over the long-poll pool. */
  async waitForRefresh(timeoutMs: number): Promise<boolean> {
    return (await this.call('waitForRefresh', [timeoutMs], { timeoutMs: Math.max(0, timeoutMs) + WAIT_MARGIN_MS, longPoll: true })) as boolean;
  }

  async readChanges(afterSeq: number, limit: number): Promise<ChangeEntry[]> {
    return (await this.call('readChanges', [afterSeq, limit])) as ChangeEntry[];
  }

  async changeBounds(): Promise<ChangeBounds> {
    return this.remember((await this.call('changeBounds', [])) as ChangeBounds);
  }

  async waitForChanges(afterSeq: number, timeoutMs: number, signal?: AbortSignal): Promise<ChangeBounds> {
    if (signal?.aborted) return this.knownBounds(afterSeq);
    try {
      const bounds = await this.call('waitForChanges', [afterSeq, timeoutMs], {
        timeoutMs: Math.max(0, timeoutMs) + WAIT_MARGIN_MS,
        signal,
        longPoll: true,
      });
      return this.remember(bounds as ChangeBounds);
    } catch (error) {
      if (signal?.aborted) return this.knownBounds(afterSeq);
      throw error;
    }
  }

  async forceMerge(options: { maxSegments?: number }): Promise<MergeReport> {
    return (await this.call('forceMerge', [options])) as MergeReport;
  }

  async epoch(): Promise<void> {
    await this.call('epoch', []);
  }

  async stats(): Promise<ShardStats> {
    return (await this.call('stats', [])) as ShardStats;
  }

  async verify(): Promise<LiveShardCheck> {
    return (await this.call('verify', [])) as LiveShardCheck;
  }

  async setPrimaryTerm(term: number): Promise<void> {
    await this.call('setPrimaryTerm', [term]);
  }

  /** Payloads cross as base64 (protocol.ts). */
  async readRecords(afterSeq: number, limit: number, maxBytes: number): Promise<ReplicationRecord[]> {
    return recordsFromJson((await this.call('readRecords', [afterSeq, limit, maxBytes])) as JsonReplicationRecord[]);
  }

  /** Payloads cross as base64 (protocol.ts). */
  async applyRecords(records: readonly ReplicationRecord[]): Promise<HistoryPosition> {
    return (await this.call('applyRecords', [recordsToJson(records)])) as HistoryPosition;
  }

  async historyPosition(): Promise<HistoryPosition> {
    return (await this.call('historyPosition', [])) as HistoryPosition;
  }

  async termAt(seq: number): Promise<number | null> {
    return (await this.call('termAt', [seq])) as number | null;
  }

  async holdFiles(): Promise<FileCopyHold> {
    return (await this.call('holdFiles', [])) as FileCopyHold;
  }

  async releaseFiles(hold: number): Promise<void> {
    await this.call('releaseFiles', [hold]);
  }

  /** No call: the hosting node applies the catalog's mapping to its copy. */
  async setMapping(_mapping: Mapping): Promise<void> {}

  /** No call: the hosting node applies engine settings to its copies. */
  async updateSettings(_settings: Partial<EngineSettings>): Promise<void> {}

  /** Refused: see the module comment. */
  async close(): Promise<ClosedShardFigures> {
    throw new EngineError(
      'illegal_argument',
      `shard copy [${this.uuid}] lives on node [${this.node.id}] and is closed by that node, not through a remote handle`,
    );
  }

  private call(method: RemoteShardMethod, args: unknown[], options?: CallOptions): Promise<unknown> {
    return this.transport.call(this.node, this.uuid, method, args, options);
  }

  /** Keeps the most advanced bounds answered (calls may answer out of order). */
  private remember(bounds: ChangeBounds): ChangeBounds {
    if (this.lastBounds === null || bounds.durableSeq >= this.lastBounds.durableSeq) this.lastBounds = bounds;
    return bounds;
  }

  private knownBounds(afterSeq: number): ChangeBounds {
    return this.lastBounds ?? { firstSeq: 0, durableSeq: afterSeq };
  }
}
