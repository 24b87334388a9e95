/**
 * `POST /_internal/shards/{uuid}/{method}` (and `POST /_internal/shards/_batch`, several calls to
 * this node's copies in one request, see protocol.ts): the internal shard API other nodes call through their
 * remote shard handles (src/cluster/remote/protocol.ts describes the protocol). It calls `method`
 * of the handle of this node's copy `uuid` with the body's `args` and answers an envelope: 200
 * `{ok: true, value}`, or `{ok: false, error}` with the status the error table gives the error's
 * code (so logs and proxies see 409, 503, ...). A uuid this node has no open copy of is 404
 * `shard_unavailable`; an unknown method or a body without an `args` array is 400. A body may
 * name the catalog revision the caller routed with (`revision`): a copy that is not open yet is
 * then looked up again once this node has applied that revision (a collection just created, whose
 * copy is still opening here), waiting at most `REVISION_WAIT_MS`.
 *
 * Callers authenticate with the node credential (src/api/auth/node-credential-hmac.ts), which
 * acts as `admin`; the route requires `admin`, so an API key below admin is refused. Bodies are
 * read by a plain `JSON.parse` (the nesting and `__proto__` checks of user bodies were made where
 * the request entered the cluster) and may be twice `http.max_content_length`, as a bulk request
 * of that size is re-encoded as write ops. `waitForChanges` is a long poll: when the caller's
 * connection closes, or this server starts closing, the local wait is ended.
 */
import type { Socket } from 'node:net';
import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import { CatalogError } from '../../cluster/catalog-error.ts';
import type { ReaderOpenOptions, ReaderPosition, ReaderSelector, ReaderUse, ShardHandle } from '../../cluster/shard-handle.ts';
import {
  hitsFromJson,
  recordsFromJson,
  recordsToJson,
  INTERNAL_SHARDS_BATCH_PATH,
  INTERNAL_SHARDS_PATH,
  toRemoteError,
  type BatchedAnswer,
  type JsonReplicationRecord,
  type RemoteShardMethod,
} from '../../cluster/remote/protocol.ts';
import type { GetOptions } from '../../cluster/shard-handle.ts';
import { encodeBatchResults } from '../../cluster/worker/wire.ts';
import type { WriteBatchRequest } from '../../cluster/write-batch.ts';
import { EngineError } from '../../engine/errors.ts';
import type { ShardHit, ShardSearchRequest } from '../../engine/query/search-request.ts';
import type { WriteOp } from '../../engine/shard/operations.ts';
import { answer, awaitCallerRevision, failure, failureAnswer, installInternalJsonParser } from './internal-envelope.ts';

/** What the internal shard route needs: this node's open shard copies by uuid. */
export interface InternalShardRouteOptions {
  /** The handle of the started copy `uuid` on this node, or undefined. */
  lookup: (uuid: string) => ShardHandle | undefined;
  /** Resolves once this node has applied catalog revision `revision` (absent: no waiting). */
  waitForRevision?: (revision: number) => Promise<void>;
}

/** The signal of calls that are never cancelled. */
const NEVER = new AbortController().signal;

type Dispatch = (handle: ShardHandle, args: unknown[], signal: AbortSignal) => Promise<unknown>;

/** One entry per remote method; arguments are trusted to have the handle's types (callers are nodes). */
const DISPATCH: Readonly<Record<RemoteShardMethod, Dispatch>> = {
  write: (handle, [op]) => handle.write(op as WriteOp),
  writeBatch: async (handle, [ops]) => encodeBatchResults(await handle.writeBatch(ops as WriteOp[])),
  prepareBatch: (handle, [request]) => handle.prepareBatch(batchFromJson(request as WriteBatchRequest & { texts: string })),
  writePrepared: async (handle, [batch, skip]) => encodeBatchResults(await handle.writePrepared(batch as number, skip as number[])),
  get: (handle, [id, options]) => handle.get(id as string, options as GetOptions | undefined),
  multiGet: (handle, [ids, options]) => handle.multiGet(ids as string[], options as GetOptions | undefined),
  exists: (handle, [id, options]) => handle.exists(id as string, options as GetOptions | undefined),
  query: (handle, [request, reader]) => handle.query(request as ShardSearchRequest, reader as ReaderUse | undefined),
  queryAndFetch: (handle, [request, reader]) => handle.queryAndFetch(request as ShardSearchRequest, reader as ReaderUse | undefined),
  openReader: (handle, [options]) => handle.openReader(options as ReaderOpenOptions),
  closeReaders: (handle, [selector]) => handle.closeReaders(selector as ReaderSelector),
  listReaders: (handle) => handle.listReaders(),
  readerPosition: (handle, [id, update]) => handle.readerPosition(id as string, update as Omit<ReaderPosition, 'moved'> | undefined),
  fetch: (handle, [context, hits]) => handle.fetch(context as number, hitsFromJson(hits as ShardHit[])),
  freeContext: (handle, [context]) => handle.freeContext(context as number),
  count: (handle, [query]) => handle.count(query),
  refresh: (handle) => handle.refresh(),
  waitForRefresh: (handle, [timeoutMs]) => handle.waitForRefresh(timeoutMs as number),
  readChanges: (handle, [afterSeq, limit]) => handle.readChanges(afterSeq as number, limit as number),
  changeBounds: (handle) => handle.changeBounds(),
  waitForChanges: (handle, [afterSeq, timeoutMs], signal) => handle.waitForChanges(afterSeq as number, timeoutMs as number, signal),
  forceMerge: (handle, [options]) => handle.forceMerge((options ?? {}) as { maxSegments?: number }),
  epoch: (handle) => handle.epoch(),
  stats: (handle) => handle.stats(),
  verify: (handle) => handle.verify(),
  setPrimaryTerm: (handle, [term]) => handle.setPrimaryTerm(term as number),
  readRecords: async (handle, [afterSeq, limit, maxBytes]) => recordsToJson(await handle.readRecords(afterSeq as number, limit as number, maxBytes as number)),
  applyRecords: (handle, [records]) => handle.applyRecords(recordsFromJson(records as JsonReplicationRecord[])),
  historyPosition: (handle) => handle.historyPosition(),
  termAt: (handle, [seq]) => handle.termAt(seq as number),
  holdFiles: (handle) => handle.holdFiles(),
  releaseFiles: (handle, [hold]) => handle.releaseFiles(hold as number),
};

/** A write batch read from JSON: its texts arrive as base64 (remote-shard-handle.ts). */
function batchFromJson(request: WriteBatchRequest & { texts: string }): WriteBatchRequest {
  return { ...request, texts: Buffer.from(request.texts, 'base64') };
}

/** The internal shard route. */
export async function internalShardRoutes(instance: FastifyInstance, options: InternalShardRouteOptions): Promise<void> {
  const { lookup, waitForRevision } = options;
  /** Aborts the long polls in progress (this server is closing). */
  const waits = new Set<AbortController>();
  instance.addHook('preClose', async () => {
    for (const wait of waits) wait.abort();
  });

  installInternalJsonParser(instance);

  /** One call as its status and envelope. */
  const run = async (uuid: unknown, method: unknown, args: unknown, signal: AbortSignal, log: FastifyBaseLogger): Promise<BatchedAnswer> => {
    if (typeof method !== 'string' || !Object.hasOwn(DISPATCH, method)) {
      return failureAnswer(new EngineError('illegal_argument', `[${String(method)}] is not a method of the internal shard API`), log);
    }
    if (!Array.isArray(args)) return failureAnswer(new EngineError('illegal_argument', 'the body must be {"args": [...]}'), log);
    const handle = typeof uuid === 'string' ? lookup(uuid) : undefined;
    if (handle === undefined) {
      return { status: 404, body: { ok: false, error: toRemoteError(new CatalogError('shard_unavailable', `no open copy of shard [${String(uuid)}] on this node`)) } };
    }
    try {
      return { status: 200, body: { ok: true, value: await DISPATCH[method as RemoteShardMethod](handle, args, signal) } };
    } catch (error) {
      return failureAnswer(error, log);
    }
  };

  const bodyLimit = 2 * (instance.initialConfig.bodyLimit ?? 1_048_576);
  instance.post<{ Body: unknown }>(INTERNAL_SHARDS_BATCH_PATH, { config: { role: 'admin' }, bodyLimit }, async (request, reply) => {
    request.authScope.requireUnrestricted('the internal shard API');
    const body = request.body as { args?: unknown; revision?: unknown } | null | undefined;
    const calls = Array.isArray(body?.args) ? body.args[0] : undefined;
    if (!Array.isArray(calls)) return failure(reply, new EngineError('illegal_argument', 'the body must be {"args": [[{"uuid", "method", "args"}, ...]]}'));
    await awaitCallerRevision(waitForRevision, body?.revision);
    const answers = await Promise.all(
      calls.map((call: { uuid?: unknown; method?: unknown; args?: unknown } | null) => run(call?.uuid, call?.method, call?.args, NEVER, request.log)),
    );
    return answer(reply, 200, { ok: true, value: answers });
  });

  instance.post<{ Params: { uuid: string; method: string }; Body: unknown }>(
    `${INTERNAL_SHARDS_PATH}/:uuid/:method`,
    { config: { role: 'admin' }, bodyLimit },
    async (request, reply) => {
      // A shard is named by uuid, whatever its namespace: only callers limited to no namespace (other nodes, unrestricted admins).
      request.authScope.requireUnrestricted('the internal shard API');
      const { uuid, method } = request.params;
      const body = request.body as { args?: unknown; revision?: unknown } | null | undefined;
      const args = body?.args;
      await awaitCallerRevision(waitForRevision, body?.revision);
      if (method !== 'waitForChanges') {
        const { status, body: envelope } = await run(uuid, method, args, NEVER, request.log);
        return answer(reply, status, envelope);
      }
      const wait = new AbortController();
      const socket: Socket = request.raw.socket;
      const abort = (): void => wait.abort();
      socket.once('close', abort);
      waits.add(wait);
      if (socket.destroyed) wait.abort();
      try {
        const { status, body: envelope } = await run(uuid, method, args, wait.signal, request.log);
        return answer(reply, status, envelope);
      } finally {
        socket.off('close', abort);
        waits.delete(wait);
      }
    },
  );
}
