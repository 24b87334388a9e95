/**
 * Replication between nodes: the node methods a primary and its replicas call on each other
 * (internal node API, protocol.ts), and WAL records as they cross in JSON (payloads in base64).
 */
import type { ReplicationRecord } from '../shard-handle.ts';

/** A WAL record in a JSON body. */
export interface WireRecord {
  seq: number;
  timestamp: number;
  payload: string;
}

/** How a primary or a recovering replica calls another node's replication methods. */
export interface ReplicaPeers {
  call(nodeId: string, method: 'replica.apply' | 'replica.position' | 'primary.track', args: unknown[], timeoutMs: number): Promise<unknown>;
}

/** Records for a JSON body. */
export function recordsToWire(records: readonly ReplicationRecord[]): WireRecord[] {
  return records.map((record) => ({
    seq: record.seq,
    timestamp: record.timestamp,
    payload: Buffer.from(record.payload.buffer, record.payload.byteOffset, record.payload.byteLength).toString('base64'),
  }));
}

/** Records from a JSON body; anything malformed is refused whole. */
export function recordsFromWire(value: unknown): ReplicationRecord[] {
  if (!Array.isArray(value)) throw new TypeError('records must be an array');
  return value.map((item: unknown) => {
    const record = item as Partial<WireRecord> | null;
    if (!record || !Number.isSafeInteger(record.seq) || !Number.isFinite(record.timestamp) || typeof record.payload !== 'string') {
      throw new TypeError('a record needs an integer seq, a timestamp and a base64 payload');
    }
    return { seq: record.seq!, timestamp: record.timestamp!, payload: Buffer.from(record.payload, 'base64') };
  });
}
