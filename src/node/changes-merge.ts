/**
 * The cross-shard merge of a change feed. Each shard's retained log is read in seq order, a batch
 * at a time; the next change is the oldest head by commit time (ties by shard number). So the
 * changes of one document (which lives in one shard) come in the order they happened, and
 * changes of different shards come in commit-time order. `positions` is the consumer's place in
 * every shard: the seq of the last change handed out.
 */
import type { ChangeEntry } from '../engine/shard/operations.ts';
import { NodeError } from './node-error.ts';

/** What the merge needs of one shard's log (an engine `Shard` is one). */
export interface ShardChangeLog {
  /** Retained durable changes with seq > afterSeq, oldest first. */
  readChanges(afterSeq: number, limit: number): ChangeEntry[];
  /** Lowest retained seq and highest durable seq. */
  changeBounds(): { firstSeq: number; durableSeq: number };
}

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
   * (past `until[shard]` too, when given). Throws `changes_expired` when a shard's log no longer
   * holds the changes right after its position.
   */
  next(logs: readonly ShardChangeLog[], until?: readonly number[]): MergedChange | null {
    let best = -1;
    let bestTimestamp = Number.POSITIVE_INFINITY;
    for (let shard = 0; shard < logs.length; shard++) {
      const head = this.head(shard, logs[shard]!, until?.[shard] ?? Number.POSITIVE_INFINITY);
      if (head !== null && head.timestamp < bestTimestamp) {
        best = shard;
        bestTimestamp = head.timestamp;
      }
    }
    if (best < 0) return null;
    const change = this.buffers[best]![this.heads[best]!]!;
    this.heads[best]!++;
    this.seqs[best] = change.seq;
    return { shard: best, change };
  }

  /** True when some shard has a durable change past its position. */
  hasAvailable(logs: readonly ShardChangeLog[]): boolean {
    for (let shard = 0; shard < logs.length; shard++) {
      if (this.heads[shard]! < this.buffers[shard]!.length) return true;
      if (logs[shard]!.changeBounds().durableSeq > this.seqs[shard]!) return true;
    }
    return false;
  }

  /** Durable changes past the positions, all shards together (CouchDB's `pending`). */
  pending(logs: readonly ShardChangeLog[]): number {
    let total = 0;
    for (let shard = 0; shard < logs.length; shard++) total += Math.max(0, logs[shard]!.changeBounds().durableSeq - this.seqs[shard]!);
    return total;
  }

  /** The shard's next unread change not past `until`, reading a batch when its buffer is empty. */
  private head(shard: number, log: ShardChangeLog, until: number): ChangeEntry | null {
    const buffer = this.buffers[shard]!;
    if (this.heads[shard]! < buffer.length) {
      const buffered = buffer[this.heads[shard]!]!;
      return buffered.seq <= until ? buffered : null;
    }
    const position = this.seqs[shard]!;
    const { firstSeq, durableSeq } = log.changeBounds();
    const end = Math.min(until, durableSeq);
    if (end <= position) return null;
    if (position + 1 < firstSeq) throw changesExpired(shard, position, firstSeq);
    const batch = log.readChanges(position, Math.min(this.batchSize, end - position));
    if (batch.length === 0 || batch[0]!.seq !== position + 1) throw changesExpired(shard, position, batch[0]?.seq ?? firstSeq);
    this.buffers[shard] = batch;
    this.heads[shard] = 0;
    return batch[0]!;
  }
}

/** Verifies that every shard's log still holds the changes right after its position. */
export function checkRetained(logs: readonly ShardChangeLog[], positions: readonly number[]): void {
  for (let shard = 0; shard < logs.length; shard++) {
    const { firstSeq } = logs[shard]!.changeBounds();
    if (positions[shard]! + 1 < firstSeq) throw changesExpired(shard, positions[shard]!, firstSeq);
  }
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
