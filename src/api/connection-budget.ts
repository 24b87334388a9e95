/**
 * The HTTP server's share of the process's file descriptors. Every connection costs a descriptor,
 * and so does every file of the node itself (log files, segments, the data-path lock, modules it
 * loads later); a flood of connections must never leave the node unable to open its own files.
 * So, once a second, the budget reads how many descriptors the process holds (`/proc/self/fd`)
 * and its `Max open files` limit, and sets the server's `maxConnections` (Node closes connections
 * past it as soon as they are accepted) to
 *
 *   min(http.max_connections, max(MIN_CONNECTIONS, limit − (open − connections) − reserve)),
 *
 * where `reserve` covers what the node may still open on its own:
 * `DESCRIPTOR_HEADROOM` for passing files, the read descriptor caches of its shard threads, and
 * one descriptor for each shard copy it may still take before `cluster.max_shards_per_node`.
 * When the descriptors cannot even be counted (EMFILE), no connection beyond those open is accepted
 * until the next count succeeds. Where `/proc` is missing, only `http.max_connections` applies.
 *
 * Under pressure (connections past half the budget), a connection that has had no request in
 * flight for `PRESSURE_IDLE_MS` (slow headers, idle keep-alive) is closed at the next check, so a
 * crowd of slow strangers holds its slots for about a second, not for the headers timeout.
 */
import { readdir, readFile } from 'node:fs/promises';
import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import { READ_DESCRIPTORS_PER_THREAD } from '../engine/directory/read-descriptors.ts';
import { parseLimit } from '../ops/host/limits-facts.ts';

/** Descriptors kept free for the node's passing files (manifests, trash moves, log rotation, modules). */
export const DESCRIPTOR_HEADROOM = 256;
/** Connections the server accepts whatever the descriptor count, so that an admin can always get in. */
export const MIN_CONNECTIONS = 16;
/** Descriptors a shard copy holds for good (its active write-ahead log file; see read-descriptors.ts). */
export const DESCRIPTORS_PER_SHARD_COPY = 1;
/** Under pressure, a connection without a request in flight for this long is closed. */
export const PRESSURE_IDLE_MS = 1_000;
/** How often the budget is recomputed. */
const CHECK_INTERVAL_MS = 1_000;

/** What the budget needs to know about the node. */
export interface ConnectionBudgetOptions {
  /** `http.max_connections`. */
  maxConnections: number;
  /** `cluster.max_shards_per_node`. */
  maxShardsPerNode: number;
  /** Threads that host shard copies (each has its own read descriptor cache). */
  shardThreads: number;
  /** Shard copies this node hosts now. */
  hostedShardCopies: () => number;
  /** Called when connections are refused for want of descriptors (at most once per check). */
  onRefused?: (figures: ConnectionBudgetFigures) => void;
}

/** The figures of the latest check. */
export interface ConnectionBudgetFigures {
  /** The process's `Max open files` soft limit; null where unknown. */
  limit: number | null;
  /** Descriptors open at the latest count; null when they could not be counted. */
  open: number | null;
  connections: number;
  /** Descriptors kept for the node's own files. */
  reserve: number;
  /** The `maxConnections` now in force. */
  allowed: number;
  /** Connections refused since the start (past `allowed`). */
  refused: number;
}

/** Per-connection state: requests in flight and since when it has had none. */
interface ConnectionState {
  inFlight: number;
  idleSince: number;
}

/** See the module comment. */
export class ConnectionBudget {
  private readonly connections = new Map<Socket, ConnectionState>();
  private timer: NodeJS.Timeout | null = null;
  private figures: ConnectionBudgetFigures;
  private refusedAtLastCheck = 0;
  /** The `Max open files` limit, read once (undefined until read; null where unknown). */
  private limit: number | null | undefined;

  constructor(
    private readonly server: Server,
    private readonly options: ConnectionBudgetOptions,
  ) {
    this.figures = { limit: null, open: null, connections: 0, reserve: 0, allowed: options.maxConnections, refused: 0 };
    server.maxConnections = options.maxConnections;
    server.on('connection', (socket: Socket) => {
      this.connections.set(socket, { inFlight: 0, idleSince: Date.now() });
      socket.once('close', () => this.connections.delete(socket));
    });
    server.on('request', (request, response) => {
      const state = this.connections.get(request.socket);
      if (state === undefined) return;
      state.inFlight += 1;
      response.once('close', () => {
        state.inFlight -= 1;
        state.idleSince = Date.now();
      });
    });
    server.on('drop', () => void (this.figures.refused += 1));
  }

  /** Starts the checks (the first one at once). */
  start(): void {
    if (this.timer !== null) return;
    void this.check();
    this.timer = setInterval(() => void this.check(), CHECK_INTERVAL_MS);
    this.timer.unref();
  }

  /** Stops the checks. */
  stop(): void {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
  }

  /** The figures of the latest check. */
  read(): ConnectionBudgetFigures {
    return { ...this.figures, connections: this.connections.size };
  }

  /** Descriptors the node may still open on its own. */
  reserve(): number {
    const { maxShardsPerNode, shardThreads, hostedShardCopies } = this.options;
    const shardsToCome = Math.max(0, maxShardsPerNode - hostedShardCopies());
    return DESCRIPTOR_HEADROOM + READ_DESCRIPTORS_PER_THREAD * shardThreads + shardsToCome * DESCRIPTORS_PER_SHARD_COPY;
  }

  /** Recomputes `maxConnections` and, under pressure, closes connections idle past `PRESSURE_IDLE_MS`. */
  async check(): Promise<void> {
    const connections = this.connections.size;
    const reserve = this.reserve();
    const limit = (this.limit ??= await openFileLimit());
    let open: number | null = null;
    let allowed = this.options.maxConnections;
    if (limit !== null) {
      open = await openDescriptorCount();
      // Uncountable (EMFILE): keep what is open, take nothing new until a count succeeds.
      const available = open === null ? connections : limit - (open - connections) - reserve;
      allowed = Math.min(allowed, Math.max(MIN_CONNECTIONS, available));
    }
    this.server.maxConnections = allowed;
    this.figures = { limit, open, connections, reserve, allowed, refused: this.figures.refused };
    if (this.figures.refused > this.refusedAtLastCheck && allowed < this.options.maxConnections) this.options.onRefused?.(this.read());
    this.refusedAtLastCheck = this.figures.refused;
    if (connections * 2 > allowed) this.closeIdle(Date.now());
  }

  private closeIdle(now: number): void {
    for (const [socket, state] of this.connections) {
      if (state.inFlight === 0 && now - state.idleSince >= PRESSURE_IDLE_MS) socket.destroy();
    }
  }
}

/** The `Max open files` soft limit of this process, or null where `/proc` does not say. */
async function openFileLimit(): Promise<number | null> {
  try {
    return parseLimit(await readFile('/proc/self/limits', 'utf8'), 'Max open files').soft;
  } catch {
    return null;
  }
}

/** Descriptors this process holds, or null when they cannot be counted (no `/proc`, or EMFILE). */
async function openDescriptorCount(): Promise<number | null> {
  try {
    return (await readdir('/proc/self/fd')).length;
  } catch {
    return null;
  }
}
