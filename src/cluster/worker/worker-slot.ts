/**
 * One place of the worker pool: the worker thread running there now, the requests in flight on
 * it, and the uuids of the shards pinned to it. When its worker fails, the requests in flight
 * fail and a new worker takes the place at once, unless it restarted too often.
 */
import { Worker } from 'node:worker_threads';
import type { Logger } from 'pino';
import { EngineError } from '../../engine/errors.ts';
import type { CancelMessage, FromWorkerMessage, ShardWorkerData, ToWorkerMessage } from './protocol.ts';
import { fromWireError, toWireError } from './wire.ts';
import { relogWorkerLine } from './worker-logging.ts';

/** Most restarts of one slot within `RESTART_WINDOW_MS`; past them its shards stay failed. */
export const MAX_RESTARTS_PER_WINDOW = 5;

/** The window of `MAX_RESTARTS_PER_WINDOW`. */
export const RESTART_WINDOW_MS = 60_000;

const WORKER_ENTRY = new URL(import.meta.url.endsWith('.ts') ? './shard-worker.ts' : './shard-worker.js', import.meta.url);

/**
 * Starts the worker entry. From TypeScript sources (tsx), the worker registers tsx's loader
 * first: on Node 20 a worker thread does not get the loader hooks of the parent's `--import`.
 */
function startWorker(workerData: ShardWorkerData): Worker {
  if (!WORKER_ENTRY.pathname.endsWith('.ts')) return new Worker(WORKER_ENTRY, { workerData });
  const [tsxApi, entry] = [JSON.stringify(import.meta.resolve('tsx/esm/api')), JSON.stringify(WORKER_ENTRY.href)];
  const bootstrap = `import(${tsxApi}).then(({ register }) => { register(); return import(${entry}); });`;
  return new Worker(bootstrap, { eval: true, workerData });
}

/** A request message before the slot numbers it. */
export type RequestBody = WithoutId<Exclude<ToWorkerMessage, CancelMessage>>;

type WithoutId<M> = M extends unknown ? Omit<M, 'id'> : never;

/** What the failure of a worker means for a request in flight, for its error message. */
export type RequestPurpose = 'open' | 'call' | 'close';

/** What the pool hears of a slot. */
export interface SlotEvents {
  /** The worker failed: requests in flight have failed; `restarted` tells whether a new one runs. */
  onDown(slot: WorkerSlot, reason: string, restarted: boolean): void;
  /** A failed worker's thread has ended (its file writes are done). */
  onExited(slot: WorkerSlot): void;
}

interface PendingRequest {
  uuid: string;
  purpose: RequestPurpose;
  resolve(value: unknown): void;
  reject(error: Error): void;
}

/** See the module comment. */
export class WorkerSlot {
  /** Uuids of the shards pinned to this slot (also while they open or reopen). */
  readonly shards = new Set<string>();
  /** Incremented each time a worker of this slot fails. */
  generation = 0;
  /** Failed workers whose thread has not ended yet. */
  lingering = 0;
  /** Why no worker runs here any more (restarted too often, or stopped); null while one runs. */
  deadReason: string | null = null;
  private worker!: Worker;
  private readonly pending = new Map<number, PendingRequest>();
  private readonly restarts: number[] = [];
  private nextId = 1;
  private stopReason: string | null = null;
  private stopping = false;

  constructor(
    readonly index: number,
    private readonly logger: Logger,
    private readonly events: SlotEvents,
  ) {
    this.spawn();
  }

  /** Posts a request to the current worker; `id` can cancel a wait. */
  request(uuid: string, body: RequestBody, purpose: RequestPurpose, transfer: ArrayBuffer[] = []): { id: number; reply: Promise<unknown> } {
    const id = this.nextId++;
    const reply = new Promise<unknown>((resolve, reject) => {
      if (this.deadReason !== null) {
        reject(new EngineError('shard_worker_failed', `shard [${uuid}] has no worker thread: ${this.deadReason}`));
        return;
      }
      this.pending.set(id, { uuid, purpose, resolve, reject });
      try {
        this.worker.postMessage({ ...body, id } as ToWorkerMessage, transfer);
      } catch (error) {
        this.pending.delete(id);
        reject(fromWireError(toWireError(error)));
      }
    });
    return { id, reply };
  }

  /** Resolves the wait of request `id` at once, if it is still in flight. */
  cancel(id: number): void {
    if (this.pending.has(id)) this.worker.postMessage({ type: 'cancel', id } satisfies ToWorkerMessage);
  }

  /** Fault injection for tests: terminates the current worker as a crash would end it. */
  async terminate(reason: string): Promise<void> {
    this.stopReason = reason;
    await this.worker.terminate();
  }

  /** Terminates the worker for good (the host is closing); no worker replaces it. */
  async stop(): Promise<void> {
    this.stopping = true;
    if (this.deadReason === null) await this.terminate('the shard host closed');
  }

  private spawn(): void {
    // Every line crosses; the host's logger filters by its live level (engines log rarely).
    const worker = startWorker({ logLevel: 'trace', honourFaults: this.generation === 0 });
    let down = false;
    const goDown = (reason: string): void => {
      if (down) return;
      down = true;
      this.lingering++;
      this.handleDown(reason);
    };
    worker.on('message', (message: FromWorkerMessage) => {
      if (message.type === 'log') relogWorkerLine(this.logger, message.line);
      else if (!down) this.settle(message);
    });
    worker.on('error', (error: Error) => goDown(`uncaught ${error.name}: ${error.message}`));
    worker.on('exit', (code: number) => {
      goDown(this.stopReason ?? `exited with code ${code}`);
      this.lingering--;
      this.events.onExited(this);
    });
    this.worker = worker;
  }

  private settle(message: Extract<FromWorkerMessage, { type: 'reply' }>): void {
    const request = this.pending.get(message.id);
    if (!request) return;
    this.pending.delete(message.id);
    if (message.ok) request.resolve(message.value);
    else request.reject(fromWireError(message.error));
  }

  private handleDown(reason: string): void {
    this.generation++;
    this.stopReason = null;
    const restarted = !this.stopping && this.mayRestart();
    if (!restarted) {
      this.deadReason = this.stopping
        ? 'the shard host closed'
        : `the worker thread of slot ${this.index} failed ${MAX_RESTARTS_PER_WINDOW + 1} times within ${RESTART_WINDOW_MS / 1000} s and is not restarted again`;
    }
    const failed = [...this.pending.values()];
    this.pending.clear();
    for (const request of failed) request.reject(this.failure(request, reason, restarted));
    if (restarted) this.spawn();
    this.events.onDown(this, reason, restarted);
  }

  private mayRestart(): boolean {
    const now = Date.now();
    while (this.restarts.length > 0 && this.restarts[0]! <= now - RESTART_WINDOW_MS) this.restarts.shift();
    if (this.restarts.length >= MAX_RESTARTS_PER_WINDOW) return false;
    this.restarts.push(now);
    return true;
  }

  private failure({ uuid, purpose }: PendingRequest, reason: string, restarted: boolean): EngineError {
    if (this.stopping) return new EngineError('shard_closed', `shard [${uuid}] is closed: its shard host closed`);
    if (purpose === 'open') return new EngineError('shard_worker_failed', `the worker thread opening shard [${uuid}] failed (${reason})`);
    const failed = `the worker thread running shard [${uuid}] failed (${reason})`;
    if (purpose === 'close') return new EngineError('shard_worker_failed', `${failed} while the shard was closing`);
    if (restarted) return new EngineError('shard_worker_failed', `${failed}; the shard is reopening from its write-ahead log`);
    return new EngineError('shard_worker_failed', `${failed}; ${this.deadReason}, so the shard stays failed until it is closed and opened again`);
  }
}
