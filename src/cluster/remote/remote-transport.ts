/**
 * How this node calls the internal shard and node APIs of other nodes (protocol.ts): one undici `Pool` per
 * node origin (keep-alive, at most `connections` sockets), every request signed with this node's
 * credential. Long polls (`waitForChanges`, which a change feed holds per shard for as long as it
 * waits) go over a second pool per origin, of `LONG_POLL_CONNECTIONS` sockets, so that they never
 * hold the sockets that writes and searches need. One transport per node process, closed when the
 * node closes.
 *
 * A call the other node answered with an envelope resolves with its value or rejects with its
 * error. Anything else (no connection, a dropped connection, no answer within the timeout, a
 * refused credential, a body that is not an envelope) rejects with
 * `CatalogError('shard_unavailable', 'node [<id>] did not answer for shard [<uuid>]: <reason>')`.
 * A call may have reached the shard when its connection drops: like any lost answer, the caller
 * cannot tell whether a write was applied.
 */
import { createWriteStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { pipeline } from 'node:stream/promises';
import { Pool } from 'undici';
import { NodeCredentialSigner } from '../../api/auth/node-credential-hmac.ts';
import { CatalogError } from '../catalog-error.ts';
import { TroveError } from '../../engine/errors.ts';
import {
  fromRemoteError,
  INTERNAL_SHARDS_BATCH_PATH,
  isEnvelope,
  remoteCallPath,
  remoteNodePath,
  type BatchedAnswer,
  type BatchedCall,
  type RemoteCall,
  type RemoteNodeMethod,
  type RemoteShardMethod,
} from './protocol.ts';

/** Default timeout of a call (a long poll gets its own wait plus `WAIT_MARGIN_MS`). */
export const REMOTE_CALL_TIMEOUT_MS = 30_000;
/** Sockets per node, by default. */
export const REMOTE_CONNECTIONS = 16;
/** Sockets per node for long polls; further waits queue until one ends. */
export const LONG_POLL_CONNECTIONS = 1_024;
/** How long `close` lets calls in flight finish before it cuts them. */
const CLOSE_GRACE_MS = 5_000;
/** Idle sockets are closed before the server's keep-alive timeout (72 s) would race a new request. */
const KEEP_ALIVE_MS = 60_000;

/** The node a remote shard copy lives on, as the catalog's node registry records it. */
export interface RemoteNode {
  id: string;
  /** Base URL of the node's HTTP API. */
  address: string;
}

/** Options of `RemoteTransport`. */
export interface RemoteTransportOptions {
  /** This node's id, named in its credential. */
  nodeId: string;
  /** The cluster's shared secret (`Coordinator.internalSecret()`). */
  secret: string;
  /** Sockets per node (default `REMOTE_CONNECTIONS`). */
  connections?: number;
  /** Timeout of a call (default `REMOTE_CALL_TIMEOUT_MS`). */
  timeoutMs?: number;
  /** The catalog revision this node routes with, sent with each call (see `RemoteCall`). */
  revision?: () => number;
}

/** Options of one call. */
export interface CallOptions {
  /** Overrides the transport's timeout. */
  timeoutMs?: number;
  /** Cancels the call: it rejects with `shard_unavailable` at once and the connection is dropped. */
  signal?: AbortSignal;
  /** The other node may hold the call (a long poll): it goes over the long-poll pool. */
  longPoll?: boolean;
}

/** A call waiting for the end of this turn of the event loop to go out with the others to its node. */
interface QueuedCall {
  uuid: string;
  method: RemoteShardMethod;
  args: unknown[];
  timeoutMs: number;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

/** JSON writes an undefined argument as null; trailing ones (`count(undefined)`) are left out instead. */
function withoutTrailingUndefined(args: readonly unknown[]): unknown[] {
  let length = args.length;
  while (length > 0 && args[length - 1] === undefined) length--;
  return args.slice(0, length);
}

/** See the module comment. */
export class RemoteTransport {
  private readonly signer: NodeCredentialSigner;
  private readonly pools = new Map<string, Pool>();
  private readonly connections: number;
  private readonly timeoutMs: number;
  private readonly revision: (() => number) | undefined;
  /** Calls queued this turn, by node address (see `call`). */
  private readonly batches = new Map<string, QueuedCall[]>();
  private closed = false;

  constructor(options: RemoteTransportOptions) {
    this.signer = new NodeCredentialSigner(options.secret, options.nodeId);
    this.connections = options.connections ?? REMOTE_CONNECTIONS;
    this.timeoutMs = options.timeoutMs ?? REMOTE_CALL_TIMEOUT_MS;
    this.revision = options.revision;
  }

  /**
   * Calls `method` of shard copy `uuid` on `node`; see the module comment for failures. Calls to
   * one node made in the same turn of the event loop go as one batch request (a search's query
   * phase on two shards of a node is one request), except long polls and cancellable calls.
   */
  call(node: RemoteNode, uuid: string, method: RemoteShardMethod, args: unknown[], options: CallOptions = {}): Promise<unknown> {
    if (options.longPoll === true || options.signal !== undefined) return this.callAlone(node, uuid, method, args, options);
    return new Promise((resolve, reject) => {
      let batch = this.batches.get(node.address);
      if (batch === undefined) {
        batch = [];
        this.batches.set(node.address, batch);
        queueMicrotask(() => this.flush(node));
      }
      batch.push({ uuid, method, args, timeoutMs: options.timeoutMs ?? this.timeoutMs, resolve, reject });
    });
  }

  /** One call in a request of its own. */
  private callAlone(node: RemoteNode, uuid: string, method: RemoteShardMethod, args: unknown[], options: CallOptions): Promise<unknown> {
    return this.send(node, remoteCallPath(uuid, method), args, options, (reason) => unavailable(node, uuid, reason), () => noCopy(node, uuid));
  }

  /** Sends the calls queued for `node` this turn: alone when there is one, else as one batch. */
  private flush(node: RemoteNode): void {
    const batch = this.batches.get(node.address) ?? [];
    this.batches.delete(node.address);
    if (batch.length === 1) {
      const [only] = batch;
      this.callAlone(node, only!.uuid, only!.method, only!.args, { timeoutMs: only!.timeoutMs }).then(only!.resolve, only!.reject);
      return;
    }
    const calls: BatchedCall[] = batch.map(({ uuid, method, args }) => ({ uuid, method, args: withoutTrailingUndefined(args) }));
    const timeoutMs = Math.max(...batch.map((entry) => entry.timeoutMs));
    const failAll = (reason: string): CatalogError => new CatalogError('shard_unavailable', `node [${node.id}] did not answer for shards [${[...new Set(calls.map((call) => call.uuid))].join(', ')}]: ${reason}`);
    this.send(node, INTERNAL_SHARDS_BATCH_PATH, [calls], { timeoutMs }, failAll).then(
      (value) => {
        const answers = value as BatchedAnswer[];
        batch.forEach((entry, index) => {
          const answer = answers[index];
          try {
            if (answer === undefined) throw failAll('the batch answer is missing a call');
            entry.resolve(decodeBody(answer.status, answer.body, (reason) => unavailable(node, entry.uuid, reason), () => noCopy(node, entry.uuid)));
          } catch (error) {
            entry.reject(error);
          }
        });
      },
      (error: unknown) => {
        for (const entry of batch) entry.reject(error);
      },
    );
  }

  /**
   * Calls `method` of `node`'s internal node API (protocol.ts); a node that cannot be reached is
   * `CatalogError('node_unavailable', 'node [<id>] did not answer: <reason>')`.
   */
  callNode(node: RemoteNode, method: RemoteNodeMethod, args: unknown[], options: CallOptions = {}): Promise<unknown> {
    return this.send(node, remoteNodePath(method), args, options, (reason) => new CatalogError('node_unavailable', `node [${node.id}] did not answer: ${reason}`));
  }

  /** Posts one call to `path` on `node`; `fail` makes the error of a call without an envelope. */
  private async send(
    node: RemoteNode,
    path: string,
    args: unknown[],
    options: CallOptions,
    fail: (reason: string) => CatalogError,
    noCopy?: () => CatalogError,
  ): Promise<unknown> {
    const call: RemoteCall = { args: withoutTrailingUndefined(args), revision: this.revision?.() };
    const body = JSON.stringify(call);
    const timeoutMs = options.timeoutMs ?? this.timeoutMs;
    const { signal } = options;
    if (this.closed) throw fail('this node is closing');
    if (signal?.aborted) throw fail('the call was cancelled');
    const controller = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort();
    }, timeoutMs);
    const cancel = (): void => controller.abort();
    signal?.addEventListener('abort', cancel, { once: true });
    try {
      const { pool, base } = this.route(node.address, options.longPoll === true);
      const response = await pool.request({
        method: 'POST',
        path: base + path,
        headers: { authorization: this.signer.header(), 'content-type': 'application/json' },
        body,
        signal: controller.signal,
        headersTimeout: timeoutMs,
        bodyTimeout: timeoutMs,
      });
      return decode(response.statusCode, await response.body.text(), fail, noCopy);
    } catch (error) {
      if (error instanceof TroveError) throw error;
      const reason = timedOut ? `no answer within ${timeoutMs} ms` : signal?.aborted ? 'the call was cancelled' : describeFailure(error);
      throw fail(reason);
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener('abort', cancel);
    }
  }

  /**
   * Streams `GET path` of `node` (an internal download, such as a held file of file-based
   * recovery) into the file `destination`, which must then hold exactly `bytes` bytes; bounded by
   * the transport's timeout of inactivity.
   */
  async download(node: RemoteNode, path: string, bytes: number, destination: string): Promise<void> {
    if (this.closed) throw new CatalogError('node_unavailable', `node [${node.id}]: this node is closing`);
    const { pool, base } = this.route(node.address, true);
    let response;
    try {
      response = await pool.request({ method: 'GET', path: base + path, headers: { authorization: this.signer.header() }, headersTimeout: this.timeoutMs, bodyTimeout: this.timeoutMs });
    } catch (error) {
      throw new CatalogError('node_unavailable', `node [${node.id}] did not answer: ${describeFailure(error)}`);
    }
    if (response.statusCode !== 200) {
      const text = await response.body.text().catch(() => '');
      throw new CatalogError('node_unavailable', `node [${node.id}] refused ${path}: ${response.statusCode} ${text.slice(0, 300)}`);
    }
    await pipeline(response.body, createWriteStream(destination));
    const written = (await stat(destination)).size;
    if (written !== bytes) throw new CatalogError('node_unavailable', `node [${node.id}] sent ${written} bytes of ${path}, not ${bytes}`);
  }

  /** Stops new calls, lets calls in flight finish for a few seconds, then cuts the rest. */
  async close(): Promise<void> {
    this.closed = true;
    const pools = [...this.pools.values()];
    this.pools.clear();
    await Promise.all(
      pools.map(async (pool) => {
        let timer: NodeJS.Timeout | undefined;
        const grace = new Promise<'late'>((resolve) => (timer = setTimeout(resolve, CLOSE_GRACE_MS, 'late')));
        const outcome = await Promise.race([pool.close().then(() => 'closed' as const), grace]);
        clearTimeout(timer);
        if (outcome === 'late') await pool.destroy();
      }),
    );
  }

  /** The pool of an address's origin (calls or long polls), and the path prefix of the address. */
  private route(address: string, longPoll: boolean): { pool: Pool; base: string } {
    const url = new URL(address);
    const base = url.pathname.replace(/\/+$/, '');
    const key = `${longPoll ? 'wait' : 'call'} ${url.origin}`;
    let pool = this.pools.get(key);
    if (pool === undefined) {
      const connections = longPoll ? LONG_POLL_CONNECTIONS : this.connections;
      pool = new Pool(url.origin, { connections, keepAliveTimeout: KEEP_ALIVE_MS, keepAliveMaxTimeout: KEEP_ALIVE_MS });
      this.pools.set(key, pool);
    }
    return { pool, base };
  }
}

function noCopy(node: RemoteNode, uuid: string): CatalogError {
  return new CatalogError('shard_unavailable', `node [${node.id}] has no open copy of shard [${uuid}]`);
}

function unavailable(node: RemoteNode, uuid: string, reason: string): CatalogError {
  return new CatalogError('shard_unavailable', `node [${node.id}] did not answer for shard [${uuid}]: ${reason}`);
}

/** `decodeBody` of a response text (not JSON: no envelope). */
function decode(status: number, text: string, fail: (reason: string) => CatalogError, noCopy?: () => CatalogError): unknown {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  return decodeBody(status, body, fail, noCopy);
}

/** The value of an envelope, its error (`noCopy` for a shard copy the node does not have open), or `fail` for any other answer. */
function decodeBody(status: number, body: unknown, fail: (reason: string) => CatalogError, noCopy?: () => CatalogError): unknown {
  if (isEnvelope(body)) {
    if (body.ok) return body.value;
    if (status === 404 && body.error.code === 'shard_unavailable' && noCopy) throw noCopy();
    throw fromRemoteError(body.error);
  }
  if (status === 401 || status === 403) {
    throw fail(`it refused this node's credential (HTTP ${status}); do both nodes share the cluster secret, and do their clocks agree?`);
  }
  const reason = (body as { error?: { reason?: unknown } } | undefined)?.error?.reason;
  throw fail(`HTTP ${status}${typeof reason === 'string' ? `: ${reason}` : ', not an answer of the internal API'}`);
}

/** A connection failure in one line (a refused dual-stack connect is an AggregateError without a message). */
function describeFailure(error: unknown): string {
  const { code, message, errors } = error as { code?: unknown; message?: unknown; errors?: unknown };
  const text = typeof message === 'string' && message !== '' ? message : Array.isArray(errors) ? errors.map((inner) => describeFailure(inner)).join('; ') : String(error);
  return typeof code === 'string' && !text.includes(code) ? `${code}: ${text}` : text;
}
