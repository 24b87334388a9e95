/** Encodings of what crosses the thread boundary beyond structured clone: errors, bulk ops and their results, replication records. */
import { EngineError } from '../../engine/errors.ts';
import type { WriteOp, WriteResult } from '../../engine/shard/operations.ts';
import type { ReplicationRecord } from '../shard-handle.ts';
import type { WireError } from './protocol.ts';

/** A batch item as it crosses: a result, or the item's EngineError. */
export type WireBatchItem = WriteResult | { failed: WireError };

/** An error thrown on either side as plain data; only an `EngineError` keeps its code. */
export function toWireError(error: unknown): WireError {
  if (error instanceof EngineError) return { code: error.code, message: error.message };
  return { message: error instanceof Error ? error.message : String(error) };
}

/** The `EngineError` of a wire error; one without a code is a failure of the worker. */
export function fromWireError(error: WireError): EngineError {
  return new EngineError(error.code ?? 'shard_worker_failed', error.message);
}

/** Bulk ops as one JSON buffer of its own, so that its ArrayBuffer can be transferred. */
export function encodeOps(ops: readonly WriteOp[]): Uint8Array {
  return new TextEncoder().encode(JSON.stringify(ops));
}

/** The inverse of `encodeOps`. */
export function decodeOps(bytes: Uint8Array): WriteOp[] {
  return JSON.parse(new TextDecoder().decode(bytes)) as WriteOp[];
}

/** Batch results with their EngineErrors as plain data (null, a position not written, stays null). */
export function encodeBatchResults<Result extends WriteResult | EngineError | null>(results: readonly Result[]): Array<WireBatchItem | Exclude<Result, WriteResult | EngineError>> {
  return results.map((item) => (item instanceof EngineError ? { failed: toWireError(item) } : item)) as Array<WireBatchItem | Exclude<Result, WriteResult | EngineError>>;
}

/** The inverse of `encodeBatchResults`. */
export function decodeBatchResults<Item extends WireBatchItem | null>(items: readonly Item[]): Array<WriteResult | EngineError | Exclude<Item, WireBatchItem>> {
  return items.map((item) => (item !== null && 'failed' in item ? fromWireError(item.failed) : item)) as Array<WriteResult | EngineError | Exclude<Item, WireBatchItem>>;
}

/** Bytes before the payloads of packed records: the count, then seq, timestamp and length of each. */
const PACKED_COUNT_BYTES = 8;
const PACKED_ENTRY_BYTES = 24;

/**
 * Replication records packed into one buffer of their own (its ArrayBuffer can be transferred):
 * a float64 count, then per record float64 seq, timestamp and payload length, then the payloads.
 */
export function packRecords(records: readonly ReplicationRecord[]): Uint8Array {
  const headerBytes = PACKED_COUNT_BYTES + records.length * PACKED_ENTRY_BYTES;
  const packed = new Uint8Array(headerBytes + records.reduce((sum, record) => sum + record.payload.byteLength, 0));
  const view = new DataView(packed.buffer);
  view.setFloat64(0, records.length, true);
  let offset = headerBytes;
  records.forEach((record, index) => {
    const entry = PACKED_COUNT_BYTES + index * PACKED_ENTRY_BYTES;
    view.setFloat64(entry, record.seq, true);
    view.setFloat64(entry + 8, record.timestamp, true);
    view.setFloat64(entry + 16, record.payload.byteLength, true);
    packed.set(record.payload, offset);
    offset += record.payload.byteLength;
  });
  return packed;
}

/** The inverse of `packRecords`; payloads are Buffer views of `packed`, not copies. */
export function unpackRecords(packed: Uint8Array): ReplicationRecord[] {
  const view = new DataView(packed.buffer, packed.byteOffset, packed.byteLength);
  const count = view.getFloat64(0, true);
  const records: ReplicationRecord[] = [];
  let offset = PACKED_COUNT_BYTES + count * PACKED_ENTRY_BYTES;
  for (let index = 0; index < count; index++) {
    const entry = PACKED_COUNT_BYTES + index * PACKED_ENTRY_BYTES;
    const length = view.getFloat64(entry + 16, true);
    const payload = Buffer.from(packed.buffer, packed.byteOffset + offset, length);
    records.push({ seq: view.getFloat64(entry, true), timestamp: view.getFloat64(entry + 8, true), payload });
    offset += length;
  }
  return records;
}
