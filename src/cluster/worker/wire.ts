/** Encodings of what crosses the thread boundary beyond structured clone: errors, bulk ops and their results. */
import { EngineError } from '../../engine/errors.ts';
import type { WriteOp, WriteResult } from '../../engine/shard/operations.ts';
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
