/**
 * The primary copy of a replicated shard: the copy's own handle, plus the shipping of its WAL
 * records to the replica copies (PacificA's primary, Elasticsearch's replication group). A write
 * resolves only when the primary and every in-sync replica hold it in their fsynced WALs, the
 * primary is still primary under its term, and its node's registration is certainly alive
 * (`leaseValidUntil`); a replica that cannot take a record is first removed from the in-sync set
 * in the catalog (`markStale`), and when that fails the write fails: it is not acknowledged.
 *
 * One shipper per primary sends records in seq order, as many as are durable per round, to every
 * replica it tracks; concurrent writes therefore share rounds, as they share WAL group commits. A
 * recovering replica (replica-recovery.ts) is tracked from the seq it reached, gets every later
 * record, and is asked into the in-sync set once it has caught up; from the moment it is asked in,
 * writes wait for it too.
 *
 * The change feed of a replicated primary ends at the global checkpoint: the highest seq every
 * in-sync copy holds. A change past it may still vanish in a failover, so no reader sees it
 * before it is safe; a new primary holds every change a reader saw. The checkpoint only moves
 * forward: a primary that has not yet heard where its in-sync replicas stand does not know it
 * (readers may have seen more under the previous primary), so its feed waits for their answers
 * rather than end below what readers saw; a primary that stopped (deposed or closed) keeps its
 * feed at the checkpoint it reached.
 */
import type { Logger } from 'pino';
import type { EngineError } from '../../engine/errors.ts';
import type { WriteOp, WriteResult, ChangeEntry } from '../../engine/shard/operations.ts';
import { inSyncOf, primaryTermOf, type ShardPlacement } from '../catalog.ts';
import { CatalogError } from '../catalog-error.ts';
import type { Coordinator } from '../coordinator.ts';
import { HOLD_TIMEOUT_MS, type ChangeBounds, type FileCopyHold, type ReplicationRecord, type ShardHandle } from '../shard-handle.ts';
import type { PreparedBatch, WriteBatchRequest } from '../write-batch.ts';
import { DelegatingShardHandle } from './delegating-handle.ts';
import type { ShardAddress } from './in-sync-rules.ts';
import { recordsToWire, type ReplicaPeers } from './replication-wire.ts';

/** Records and payload bytes one shipping round sends at most. */
const ROUND_RECORDS = 1_000;
const ROUND_BYTES = 4 * 1024 * 1024;
/** How long a replica may take to answer a round before it counts as failed. */
export const REPLICA_CALL_TIMEOUT_MS = 5_000;

/** What a primary needs of its node. */
export interface PrimaryContext {
  address: ShardAddress;
  uuid: string;
  nodeId: string;
  /** The shard's placement as this node applied it last (null once the collection is gone). */
  placement(): ShardPlacement | null;
  coordinator: Pick<Coordinator, 'markInSync' | 'markStale' | 'leaseValidUntil'>;
  peers: ReplicaPeers;
  logger: Logger;
}

interface Target {
  nodeId: string;
  /** Highest seq the replica confirmed; -1 until asked. */
  confirmed: number;
  /** Whether writes wait for it (in sync, or asked in). */
  counted: boolean;
  /** A recovering replica waiting to be asked in: resolves when it is in sync. */
  joined?: { resolve: () => void; reject: (error: Error) => void };
}

interface Waiter {
  seq: number;
  resolve: () => void;
  reject: (error: Error) => void;
}

/** See the module comment. */
export class ReplicatedPrimary extends DelegatingShardHandle {
  private readonly targets = new Map<string, Target>();
  /** Files held for recoveries: hold → path → bytes. */
  private readonly holds = new Map<number, Map<string, number>>();
  private readonly waiters: Waiter[] = [];
  private readonly checkpointWaiters = new Set<() => void>();
  /** Highest seq known durable here (every lower one is too: group commits flush in order). */
  private localDurable = 0;
  private checkpoint = 0;
  /** Whether `checkpoint` took every counted replica's answered position into account once. */
  private positioned = false;
  private shipping = false;
  private shipAgain = false;
  private closed = false;
  private readonly term: number;

  constructor(
    inner: ShardHandle,
    private readonly context: PrimaryContext,
    /** Durable seq of the copy when it became primary: shipped to replicas before anything counts as replicated. */
    durableSeq: number,
  ) {
    super(inner);
    this.term = primaryTermOf(context.placement()!);
    this.localDurable = durableSeq;
    this.refreshTargets();
  }

  /** The primary term this copy writes under. */
  get primaryTerm(): number {
    return this.term;
  }

  /** Re-reads the placement: new in-sync replicas are tracked, removed ones forgotten. */
  refreshTargets(): void {
    const placement = this.context.placement();
    const inSync = placement ? inSyncOf(placement) : [];
    for (const nodeId of inSync) {
      if (nodeId === this.context.nodeId) continue;
      const target = this.targets.get(nodeId);
      if (!target) this.targets.set(nodeId, { nodeId, confirmed: -1, counted: true });
      else target.counted = true;
    }
    for (const [nodeId, target] of this.targets) {
      const placed = placement?.replicas.includes(nodeId) ?? false;
      if (!placed || (!inSync.includes(nodeId) && !target.joined && target.counted)) this.dropTarget(target, 'the copy is no longer in sync');
    }
    this.advance();
    this.kick();
  }

  /** Whether any replica is tracked (else the copy behaves as its own handle). */
  private replicated(): boolean {
    return this.targets.size > 0;
  }

  /** Whether the change feed ends at the checkpoint: replicas are tracked, or the copy stopped being primary here. */
  private bounded(): boolean {
    return this.closed || this.replicated();
  }

  /**
   * The checkpoint, once it is known (see the module comment); waits for the replicas' positions
   * at most `REPLICA_CALL_TIMEOUT_MS`, then fails with `shard_unavailable` (a reader retries).
   */
  private async knownCheckpoint(): Promise<number> {
    await this.checkpointSettles(() => this.positioned || this.closed, REPLICA_CALL_TIMEOUT_MS);
    if (this.positioned) return this.checkpoint;
    const { collection, shard } = this.context.address;
    throw new CatalogError(
      'shard_unavailable',
      `[${collection}][${shard}] the primary copy (term ${this.term}) has not yet heard how far its in-sync replicas reached, ` +
        'so its change feed has no safe end yet',
    );
  }

  /** Resolves once `ready()` holds (checked whenever the checkpoint moves or the copy stops), after `timeoutMs`, or on abort. */
  private checkpointSettles(ready: () => boolean, timeoutMs: number, signal?: AbortSignal): Promise<void> {
    if (ready() || timeoutMs <= 0 || signal?.aborted) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', done);
        this.checkpointWaiters.delete(check);
        resolve();
      };
      const check = (): void => {
        if (ready()) done();
      };
      const timer = setTimeout(done, timeoutMs);
      signal?.addEventListener('abort', done, { once: true });
      this.checkpointWaiters.add(check);
    });
  }

  override async write(op: WriteOp): Promise<WriteResult> {
    const result = await this.inner.write(op);
    await this.acknowledge(highestSeq([result]));
    return result;
  }

  override async writeBatch(ops: readonly WriteOp[]): Promise<Array<WriteResult | EngineError>> {
    const results = await this.inner.writeBatch(ops);
    await this.acknowledge(highestSeq(results));
    return results;
  }

  override prepareBatch(request: WriteBatchRequest): Promise<PreparedBatch> {
    return this.inner.prepareBatch(request);
  }

  override async writePrepared(batch: number, skip: readonly number[]): Promise<Array<WriteResult | EngineError | null>> {
    const results = await this.inner.writePrepared(batch, skip);
    await this.acknowledge(highestSeq(results));
    return results;
  }

  override async readChanges(afterSeq: number, limit: number): Promise<ChangeEntry[]> {
    if (!this.bounded()) return this.inner.readChanges(afterSeq, limit);
    const safe = await this.knownCheckpoint();
    const entries = await this.inner.readChanges(afterSeq, limit);
    return entries.filter((entry) => entry.seq <= safe);
  }

  override async changeBounds(): Promise<ChangeBounds> {
    if (!this.bounded()) return this.inner.changeBounds();
    const safe = await this.knownCheckpoint();
    const bounds = await this.inner.changeBounds();
    return { ...bounds, durableSeq: Math.min(bounds.durableSeq, safe) };
  }

  override async waitForChanges(afterSeq: number, timeoutMs: number, signal?: AbortSignal): Promise<ChangeBounds> {
    if (!this.bounded()) return this.inner.waitForChanges(afterSeq, timeoutMs, signal);
    await this.checkpointSettles(() => (this.positioned && this.checkpoint > afterSeq) || this.closed, timeoutMs, signal);
    if (this.positioned || this.closed) return this.changeBounds();
    // Still not known: nothing past the caller's position can be vouched for yet.
    const bounds = await this.inner.changeBounds();
    return { ...bounds, durableSeq: Math.min(bounds.durableSeq, afterSeq) };
  }

  /**
   * A recovering replica on `nodeId` reached `seq` by pulling records: it is tracked from there,
   * and the promise resolves once it is in the in-sync set (rejects when it falls behind again).
   */
  track(nodeId: string, seq: number): Promise<void> {
    const placement = this.context.placement();
    if (!placement?.replicas.includes(nodeId)) {
      return Promise.reject(new CatalogError('catalog_conflict', `node [${nodeId}] holds no replica of [${this.context.address.collection}][${this.context.address.shard}]`));
    }
    const previous = this.targets.get(nodeId);
    if (previous) this.dropTarget(previous, 'the replica started recovering again');
    return new Promise<void>((resolve, reject) => {
      this.targets.set(nodeId, { nodeId, confirmed: seq, counted: false, joined: { resolve, reject } });
      this.kick();
    });
  }

  /** Holds the copy's files for a file-based recovery and remembers what may be downloaded. */
  override async holdFiles(): Promise<FileCopyHold> {
    const hold = await this.inner.holdFiles();
    this.holds.set(hold.hold, new Map(hold.files.map((file) => [file.path, file.bytes])));
    setTimeout(() => this.holds.delete(hold.hold), HOLD_TIMEOUT_MS).unref();
    return hold;
  }

  override releaseFiles(hold: number): Promise<void> {
    this.holds.delete(hold);
    return this.inner.releaseFiles(hold);
  }

  /** The bytes of `path` held under `hold`, or undefined when it is not held. */
  heldFile(hold: number, path: string): number | undefined {
    return this.holds.get(hold)?.get(path);
  }

  override async close(): ReturnType<ShardHandle['close']> {
    this.stop(new CatalogError('shard_unavailable', `[${this.context.address.collection}][${this.context.address.shard}] primary copy is closing`));
    return this.inner.close();
  }

  /** Fails everything waiting on this primary (it is closed, or no longer primary here). */
  stop(error: Error): void {
    this.closed = true;
    for (const waiter of this.waiters.splice(0)) waiter.reject(error);
    for (const target of this.targets.values()) target.joined?.reject(error);
    this.targets.clear();
    for (const check of [...this.checkpointWaiters]) check();
  }

  /** Resolves once `seq` is replicated to every counted replica and the write may be acknowledged. */
  private async acknowledge(seq: number): Promise<void> {
    if (seq > this.localDurable) this.localDurable = seq;
    if (this.replicated()) {
      await new Promise<void>((resolve, reject) => {
        this.waiters.push({ seq, resolve, reject });
        this.advance();
        this.kick();
      });
    } else if (!this.closed) {
      this.checkpoint = Math.max(this.checkpoint, this.localDurable);
    }
    this.assertStillPrimary();
  }

  private assertStillPrimary(): void {
    const { address, nodeId } = this.context;
    const placement = this.context.placement();
    if (this.closed || placement?.primary !== nodeId || primaryTermOf(placement) !== this.term) {
      throw new CatalogError('shard_unavailable', `[${address.collection}][${address.shard}] this copy is no longer the primary (term ${this.term}); the write was not acknowledged`);
    }
    if (Date.now() >= this.context.coordinator.leaseValidUntil(nodeId)) {
      throw new CatalogError('shard_unavailable', `[${address.collection}][${address.shard}] node [${nodeId}] cannot confirm its registration, so another copy may have been promoted; the write was not acknowledged`);
    }
  }

  /** Moves the global checkpoint and releases the writes it covers (a stopped primary's stays where it was). */
  private advance(): void {
    if (this.closed) return;
    let reached = this.localDurable;
    for (const target of this.targets.values()) if (target.counted) reached = Math.min(reached, target.confirmed);
    const positioned = !this.positioned && reached >= 0;
    if (positioned) this.positioned = true;
    if (reached > this.checkpoint || positioned) {
      this.checkpoint = Math.max(this.checkpoint, reached);
      for (const check of [...this.checkpointWaiters]) check();
    }
    for (let index = this.waiters.length - 1; index >= 0; index--) {
      if (this.waiters[index].seq <= this.checkpoint) this.waiters.splice(index, 1)[0].resolve();
    }
  }

  private kick(): void {
    if (this.closed) return;
    if (this.shipping) {
      this.shipAgain = true;
      return;
    }
    this.shipping = true;
    void this.ship().finally(() => {
      this.shipping = false;
      if (this.shipAgain && !this.closed) {
        this.shipAgain = false;
        this.kick();
      }
    });
  }

  /** Rounds until every tracked replica has every durable record. */
  private async ship(): Promise<void> {
    for (let round = 0; round < 10_000 && !this.closed; round++) {
      const behind = [...this.targets.values()].filter((target) => target.confirmed < this.localDurable || (target.joined && !target.counted));
      if (behind.length === 0) return;
      const before = behind.map((target) => target.confirmed);
      await Promise.all(behind.map((target) => this.shipTo(target)));
      this.advance();
      if (behind.every((target, index) => target.confirmed === before[index] && this.targets.get(target.nodeId) === target)) return;
    }
  }

  private async shipTo(target: Target): Promise<void> {
    const { uuid, address } = this.context;
    try {
      if (target.confirmed < 0) {
        const position = (await this.context.peers.call(target.nodeId, 'replica.position', [uuid, this.term], REPLICA_CALL_TIMEOUT_MS)) as { lastSeq: number };
        target.confirmed = position.lastSeq;
        if (target.confirmed > this.localDurable) throw new Error(`it holds seq ${target.confirmed}, past this primary's ${this.localDurable}`);
        // What the replica holds already counts: a new primary's feed need not wait for a whole round.
        this.advance();
      }
      while (target.confirmed < this.localDurable && this.targets.get(target.nodeId) === target) {
        const records: ReplicationRecord[] = await this.inner.readRecords(target.confirmed, ROUND_RECORDS, ROUND_BYTES);
        if (records.length === 0) break;
        if (records[0].seq !== target.confirmed + 1) throw new Error(`seq ${target.confirmed + 1} is no longer retained here`);
        const position = (await this.context.peers.call(target.nodeId, 'replica.apply', [uuid, this.term, recordsToWire(records)], REPLICA_CALL_TIMEOUT_MS)) as { lastSeq: number };
        target.confirmed = Math.max(target.confirmed, position.lastSeq);
      }
      if (target.joined && !target.counted && target.confirmed >= this.localDurable) await this.join(target);
    } catch (error) {
      if (this.targets.get(target.nodeId) !== target) return;
      this.context.logger.warn({ err: error, collection: address.collection, shard: address.shard, replica: target.nodeId }, 'replica did not take the primary\'s records; removing it from the in-sync set');
      await this.markStale(target, error as Error);
    }
  }

  /** Asks a caught-up recovering replica into the in-sync set; writes wait for it from now on. */
  private async join(target: Target): Promise<void> {
    target.counted = true;
    await this.context.coordinator.markInSync(this.context.address, target.nodeId, this.term);
    const joined = target.joined;
    target.joined = undefined;
    joined?.resolve();
  }

  private async markStale(target: Target, cause: Error): Promise<void> {
    const { address } = this.context;
    this.targets.delete(target.nodeId);
    target.joined?.reject(cause);
    if (!target.counted) return;
    try {
      await this.context.coordinator.markStale(address, [target.nodeId], this.term);
      this.advance();
    } catch (error) {
      // Without the catalog change, the writes waiting for this replica cannot be acknowledged.
      const failure = new CatalogError('shard_unavailable', `[${address.collection}][${address.shard}] replica on node [${target.nodeId}] failed and could not be removed from the in-sync set: ${(error as Error).message}`);
      for (const waiter of this.waiters.splice(0)) waiter.reject(failure);
      this.targets.set(target.nodeId, { nodeId: target.nodeId, confirmed: -1, counted: true });
    }
  }

  private dropTarget(target: Target, reason: string): void {
    this.targets.delete(target.nodeId);
    target.joined?.reject(new CatalogError('catalog_conflict', reason));
  }
}

/** The highest seq the results wrote (a noop or a delete of nothing writes no record). */
function highestSeq(results: ReadonlyArray<WriteResult | EngineError | null>): number {
  let highest = 0;
  for (const result of results) {
    if (!result || !('seqNo' in result) || result.result === 'noop' || result.result === 'not_found') continue;
    if (result.seqNo > highest) highest = result.seqNo;
  }
  return highest;
}
