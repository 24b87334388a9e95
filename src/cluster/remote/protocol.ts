/**
 * The internal shard API between nodes: `POST /_internal/shards/{uuid}/{method}` with the JSON
 * body `{"args": [...], "revision"?: n}` calls a method of the shard copy's handle on the receiving
 * node, which answers `{"ok": true, "value": ...}` or
 * `{"ok": false, "error": {"code", "message", "name"}}`.
 *
 * Values are JSON. What JSON cannot carry is encoded where the handle's types allow it: a hit's
 * score is NaN when the sort needed no scores, which JSON writes as null, so a null score is read
 * back as NaN (a score is never null otherwise); an argument or property that is undefined is left
 * out (trailing undefined arguments are dropped, so `count(undefined)` stays a match_all); `-0`
 * arrives as `0`; `writeBatch` items use the encoding of the worker threads (wire.ts); replication
 * records (`readRecords`, `applyRecords`) carry their payloads as base64 strings.
 *
 * Errors keep their class and code for `EngineError` and `CatalogError` (any other `TroveError`
 * keeps its code); an error without a code (a defect on the serving node) becomes
 * `EngineError('shard_worker_failed')` with its message, as an error without a code from a worker
 * thread does: a 503 that says the copy failed unexpectedly.
 */
import { CatalogError } from '../catalog-error.ts';
import { EngineError, TroveError } from '../../engine/errors.ts';
import type { ShardHit } from '../../engine/query/search-request.ts';
import type { QueryPhase, ReplicationRecord, ShardHandle } from '../shard-handle.ts';

/** Path prefix of the internal shard API. */
export const INTERNAL_SHARDS_PATH = '/_internal/shards';

/**
 * Handle methods a remote node may call. Not `close`, `setMapping`, `updateSettings`: a node
 * opens, closes and updates its own copies from the catalog.
 */
export type RemoteShardMethod = Exclude<keyof ShardHandle, 'uuid' | 'close' | 'setMapping' | 'updateSettings'>;

/** The request body. */
export interface RemoteCall {
  args: unknown[];
  /** Catalog revision the caller routed with: a copy still opening is waited for until then. */
  revision?: number;
}

/** An error as it crosses; `name` is the class name of a `TroveError`. */
export interface RemoteError {
  code?: string;
  message: string;
  name?: string;
}

/** The response body; `value` is absent when the method returned undefined. */
export type RemoteEnvelope = { ok: true; value: unknown } | { ok: false; error: RemoteError };

/**
 * Path of a batch of shard calls to one node: `POST /_internal/shards/_batch` with the body
 * `{"args": [[{"uuid", "method", "args"}, ...]], "revision"?: n}` runs every call concurrently and
 * answers `{"ok": true, "value": [{"status", "body"}, ...]}`, one status and envelope per call, in
 * order, each as the call alone would have answered. A transport sends calls to one node made in
 * the same turn of the event loop as one batch (remote-transport.ts).
 */
export const INTERNAL_SHARDS_BATCH_PATH = '/_internal/shards/_batch';

/** One call of a batch. */
export interface BatchedCall {
  uuid: string;
  method: RemoteShardMethod;
  args: unknown[];
}

/** One answer of a batch: the status and envelope the call alone would have had. */
export interface BatchedAnswer {
  status: number;
  body: RemoteEnvelope;
}

/** Path prefix of the internal node API: `POST /_internal/node/{method}` with the same bodies and envelopes. */
export const INTERNAL_NODE_PATH = '/_internal/node';

/**
 * Methods of the internal node API: what one node asks another about the node itself rather than
 * one shard copy: its trash (`trash.*`, the `NodeTrash` methods), its compaction of a
 * collection's primaries, and its node views (`_node/{id}`, its stats and settings).
 */
export const REMOTE_NODE_METHODS = [
  'trash.list',
  'trash.prepareDelete',
  'trash.abortDelete',
  'trash.finishDelete',
  'trash.verify',
  'trash.prepareRestore',
  'trash.abortRestore',
  'trash.finishRestore',
  'trash.purge',
  'compact',
  'jobs.get',
  'jobs.list',
  'node.info',
  'node.stats',
  'node.settings',
  'node.putSettings',
  'node.shardStates',
  'node.recoveries',
  'replica.apply',
  'replica.position',
  'primary.track',
] as const;

/** One method of the internal node API. */
export type RemoteNodeMethod = (typeof REMOTE_NODE_METHODS)[number];

/** Path prefix of the files a primary holds for a file-based recovery: `GET {prefix}/{uuid}/{hold}?path=...`. */
export const INTERNAL_RECOVERY_FILES_PATH = '/_internal/recovery/files';

/** The path of one held file of copy `uuid`. */
export function recoveryFilePath(uuid: string, hold: number, path: string): string {
  return `${INTERNAL_RECOVERY_FILES_PATH}/${encodeURIComponent(uuid)}/${hold}?path=${encodeURIComponent(path)}`;
}

/** The path of a node call. */
export function remoteNodePath(method: RemoteNodeMethod): string {
  return `${INTERNAL_NODE_PATH}/${method}`;
}

/** The path of a call (the uuid is encoded: it comes from the catalog, not from this code). */
export function remoteCallPath(uuid: string, method: RemoteShardMethod): string {
  return `${INTERNAL_SHARDS_PATH}/${encodeURIComponent(uuid)}/${method}`;
}

/** Any thrown value as a `RemoteError`. */
export function toRemoteError(error: unknown): RemoteError {
  if (error instanceof TroveError) return { code: error.code, message: error.message, name: error.name };
  return { message: error instanceof Error ? error.message : String(error) };
}

/** The error a `RemoteError` stands for (see the module comment). */
export function fromRemoteError(error: RemoteError): TroveError {
  if (error.code === undefined) return new EngineError('shard_worker_failed', error.message);
  if (error.name === 'EngineError') return new EngineError(error.code as EngineError['code'], error.message);
  if (error.name === 'CatalogError') return new CatalogError(error.code as CatalogError['code'], error.message);
  return new TroveError(error.code, error.message);
}

/** True for a parsed body that is an envelope. */
export function isEnvelope(body: unknown): body is RemoteEnvelope {
  if (body === null || typeof body !== 'object') return false;
  const { ok, error } = body as { ok?: unknown; error?: { message?: unknown } };
  if (ok === true) return true;
  return ok === false && typeof error === 'object' && error !== null && typeof error.message === 'string';
}

/** Hits read from JSON: a null score was NaN (in place; the array came from `JSON.parse`). */
export function hitsFromJson(hits: ShardHit[]): ShardHit[] {
  for (const hit of hits) {
    if ((hit.score as number | null) === null) hit.score = NaN;
  }
  return hits;
}

/** A replication record as JSON carries it: the payload as base64. */
export interface JsonReplicationRecord {
  seq: number;
  timestamp: number;
  payload: string;
}

/** Replication records for JSON. */
export function recordsToJson(records: readonly ReplicationRecord[]): JsonReplicationRecord[] {
  return records.map(({ seq, timestamp, payload }) => ({
    seq,
    timestamp,
    payload: Buffer.from(payload.buffer, payload.byteOffset, payload.byteLength).toString('base64'),
  }));
}

/** The inverse of `recordsToJson`. */
export function recordsFromJson(records: readonly JsonReplicationRecord[]): ReplicationRecord[] {
  return records.map(({ seq, timestamp, payload }) => ({ seq, timestamp, payload: Buffer.from(payload, 'base64') }));
}

/** A query phase read from JSON (see `hitsFromJson`). */
export function queryPhaseFromJson(phase: QueryPhase): QueryPhase {
  hitsFromJson(phase.result.hits);
  return phase;
}
