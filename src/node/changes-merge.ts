/**
 * The cross-shard merge of a change feed. Each shard's retained log is read in seq order, a batch
 * at a time; the next change is the oldest head by commit time (ties by shard number). So the
 * changes of one document (which lives in one shard) come in the order they happened, and
 * changes of different shards come in commit-time order. `positions` is the consumer's place in
 * every shard: the seq of the last change handed out.
 *
 * Shards are read through their asynchronous handles, the shards of one step in parallel; what
 * needs only where the logs stand (`hasAvailable`, `pending`, `checkRetained`) takes the bounds
 * read once by `readBounds`, so one round of calls serves every check of a step.
 */
import type { ChangeBounds, ShardHandle } from '../cluster/shard-handle.ts';
import type { ChangeEntry } from '../engine/shard/operations.ts';
import { NodeError } from './node-error.ts';

/** What the merge needs of one shard's handle. */
export type ChangeLogHandle = Pick<ShardHandle, 'readChanges' | 'changeBounds'>;

/** One change handed out by the merge and the shard number it came from. */
export interface MergedChange {
  shard: number;
  change: ChangeEntry;
}

/** See the module comment. */
export class ChangeMerge {
  private readonly seqs: number[];
  private readonly buffers: ChangeEntry[][];
  private readonly heads: number[];

  /** `positions`: per shard, the seq of the last change already seen (0 = none). */
  constructor(
    positions: readonly number[],
    private readonly batchSize: number,
  ) {
    this.seqs = [...positions];
    this.buffers = positions.map(() => []);
    this.heads = positions.map(() => 0);
  }

  /** Per shard, the seq of the last change handed out (the cursor's content). */
  get positions(): readonly number[] {
    return this.seqs;
  }

  /**
   * The next change by commit time, or null when no shard has a durable change past its position
   * (past `until[shard]` too, when given). Rejects with `changes_expired` when a shard's log no
   * longer holds the changes right after its position.
   */
  async next(logs: readonly ChangeLogHandle[], until?: readonly number[]): Promise<MergedChange | null> {
    const heads = await allInShardOrder(logs.map((log, shard) => this.head(shard, log, until?.[shard] ?? Number.POSITIVE_INFINITY)));
    let best = -1;
    let bestTimestamp = Number.POSITIVE_INFINITY;
    heads.forEach((head, shard) => {
      if (head !== null && head.timestamp < bestTimestamp) {
        best = shard;
        bestTimestamp = head.timestamp;
      }
    });
    if (best < 0) return null;
    const change = this.buffers[best]![this.heads[best]!]!;
    this.heads[best]!++;
    this.seqs[best] = change.seq;
    return { shard: best, change };
  }

  /** True when some shard has a durable change past its position, given the shards' `bounds`. */
  hasAvailable(bounds: readonly ChangeBounds[]): boolean {
    return bounds.some((bound, shard) => this.heads[shard]! < this.buffers[shard]!.length || bound.durableSeq > this.seqs[shard]!);
  }

  /** Durable changes past the positions, all shards together (CouchDB's `pending`), given the shards' `bounds`. */
  pending(bounds: readonly ChangeBounds[]): number {
    return bounds.reduce((total, bound, shard) => total + Math.max(0, bound.durableSeq - this.seqs[shard]!), 0);
  }

  /** The shard's next unread change not past `until`, reading a batch when its buffer is empty. */
  private async head(shard: number, log: ChangeLogHandle, until: number): Promise<ChangeEntry | null> {
    const buffer = this.buffers[shard]!;
    if (this.heads[shard]! < buffer.length) {
      const buffered = buffer[this.heads[shard]!]!;
      return buffered.seq <= until ? buffered : null;
    }
    const position = this.seqs[shard]!;
    const { firstSeq, durableSeq } = await log.changeBounds();
    const end = Math.min(until, durableSeq);
    if (end <= position) return null;
    if (position + 1 < firstSeq) throw changesExpired(shard, position, firstSeq);
    const batch = await log.readChanges(position, Math.min(this.batchSize, end - position));
    if (batch.length === 0 || batch[0]!.seq !== position + 1) throw changesExpired(shard, position, batch[0]?.seq ?? firstSeq);
    this.buffers[shard] = batch;
    this.heads[shard] = 0;
    return batch[0]!;
  }
}

/** Where every shard's log stands now, in shard order. */
export function readBounds(logs: readonly ChangeLogHandle[]): Promise<ChangeBounds[]> {
  return allInShardOrder(logs.map((log) => log.changeBounds()));
}

/** Verifies, given the shards' `bounds`, that every log still holds the changes right after its position. */
export function checkRetained(bounds: readonly ChangeBounds[], positions: readonly number[]): void {
  bounds.forEach(({ firstSeq }, shard) => {
    if (positions[shard]! + 1 < firstSeq) throw changesExpired(shard, positions[shard]!, firstSeq);
  });
}

/** The 410 for a cursor whose next changes were removed from a shard's log. */
export function changesExpired(shard: number, position: number, firstSeq: number): NodeError {
  return new NodeError(
    'changes_expired',
    `the change feed no longer holds the changes after this cursor: shard [${shard}] keeps changes from seq ${firstSeq} on, ` +
      `the cursor is at seq ${position} (history older than [changes.retention_secs] is dropped). ` +
      'Resynchronise: read the collection again, then follow the feed from since=now',
  );
}

/** As `Promise.all`, but when several shards fail, the lowest shard's failure is the one thrown. */
async function allInShardOrder<T>(promises: ReadonlyArray<Promise<T>>): Promise<T[]> {
  const settled = await Promise.allSettled(promises);
  const failed = settled.find((outcome) => outcome.status === 'rejected');
  if (failed) throw failed.reason;
  return settled.map((outcome) => (outcome as PromiseFulfilledResult<T>).value);
}
