/**
 * A shard copy's history as replication reads it: durable WAL records with the seqs, append times
 * and primary terms the primary gave them (docs/formats/shard.md, "Replication").
 */
import { EngineError } from '../errors.ts';
import type { WalRecord, WriteAheadLog } from '../wal/wal.ts';
import { decodeRecord } from './wal-records.ts';

/** Where a copy's history stands (the shard handle's `HistoryPosition`). */
export interface HistoryPosition {
  firstSeq: number;
  lastSeq: number;
  /** Primary term of the record at `lastSeq`; null when it is not retained. */
  lastTerm: number | null;
}

/** Records read from the log per step, so that a byte budget stops reading early. */
const READ_STEP_RECORDS = 256;

/**
 * Durable records with seq > `afterSeq`, oldest first: at most `limit`, and no more once their
 * payloads pass `maxBytes` (the first record always comes). Starts at the first retained seq when
 * `afterSeq + 1` is gone.
 */
export function readHistory(wal: WriteAheadLog, afterSeq: number, limit: number, maxBytes: number): WalRecord[] {
  if (!Number.isSafeInteger(limit) || !(maxBytes >= 0)) {
    throw new EngineError('illegal_argument', `readRecords needs an integer limit and a byte budget, got [${limit}] and [${maxBytes}]`);
  }
  const records: WalRecord[] = [];
  let bytes = 0;
  let next = afterSeq + 1;
  while (records.length < limit) {
    const step = wal.readRange(next, Math.min(READ_STEP_RECORDS, limit - records.length));
    if (step.length === 0) break;
    for (const record of step) {
      if (records.length > 0 && bytes + record.payload.length > maxBytes) return records;
      records.push(record);
      bytes += record.payload.length;
    }
    next = step[step.length - 1]!.seq + 1;
  }
  return records;
}

/** Primary term of the retained durable record at `seq`, or null. */
export function recordTermAt(wal: WriteAheadLog, seq: number): number | null {
  if (!Number.isSafeInteger(seq) || seq < wal.firstSeq || seq > wal.durableSeq) return null;
  const [record] = wal.readRange(seq, 1);
  return record?.seq === seq ? decodeRecord(record.payload).primaryTerm : null;
}
