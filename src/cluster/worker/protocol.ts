/**
 * Messages between a `WorkerShardHost` (main thread) and its shard workers (shard-worker.ts).
 * Every request carries an `id`; the worker answers each with one `reply` of the same id.
 */
import type { EngineErrorCode } from '../../engine/errors.ts';
import type { ShardHandle, ShardOpenSpec } from '../shard-handle.ts';

/** What a worker thread is started with. */
export interface ShardWorkerData {
  /** Pino level of the worker's logger (the host logger's level). */
  logLevel: string;
  /** Whether this worker honours `TROVE_FAULTS` (only the first worker of a slot does). */
  honourFaults: boolean;
}

/** Handle methods that are one plain request and one reply. */
export type ShardCallMethod = Exclude<keyof ShardHandle, 'uuid' | 'waitForChanges' | 'close'>;

/** Opens a shard; search contexts it hands out are numbered above `contextBase`. */
export interface OpenRequest {
  type: 'open';
  id: number;
  spec: ShardOpenSpec;
  contextBase: number;
}

/**
 * Calls a handle method; `writeBatch` has one argument, the JSON-encoded ops (transferred), and
 * `prepareBatch` one, whose document texts are transferred.
 */
export interface CallRequest {
  type: 'call';
  id: number;
  uuid: string;
  method: ShardCallMethod;
  args: unknown[];
}

/** `waitForChanges`; a later `cancel` of the same id resolves it at once. */
export interface WaitRequest {
  type: 'wait';
  id: number;
  uuid: string;
  afterSeq: number;
  timeoutMs: number;
}

/** Closes the shard and forgets it. */
export interface CloseRequest {
  type: 'close';
  id: number;
  uuid: string;
}

/** Asks for the worker thread's own figures (its heap releases); the reply is a `HeapReleaseStats`. */
export interface ThreadStatsRequest {
  type: 'thread_stats';
  id: number;
}

/** Resolves the wait of request `id` now (no reply of its own). */
export interface CancelMessage {
  type: 'cancel';
  id: number;
}

/** Main thread → worker. */
export type ToWorkerMessage = OpenRequest | CallRequest | WaitRequest | CloseRequest | ThreadStatsRequest | CancelMessage;

/** An error as it crosses the thread boundary; `code` is set for an `EngineError`. */
export interface WireError {
  code?: EngineErrorCode;
  message: string;
}

/** The answer to request `id`. */
export type ReplyMessage = { type: 'reply'; id: number; ok: true; value: unknown } | { type: 'reply'; id: number; ok: false; error: WireError };

/** One serialized pino line of the worker's logger. */
export interface LogMessage {
  type: 'log';
  line: string;
}

/** Worker → main thread. */
export type FromWorkerMessage = ReplyMessage | LogMessage;
