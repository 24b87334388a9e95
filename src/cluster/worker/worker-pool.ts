/**
 * The pool behind `WorkerShardHost`: its worker slots, the spec of every shard it runs (kept
 * current, since a shard whose worker failed reopens from it) and the routing of handle requests
 * to the slot a shard is pinned to. A request for a shard that is reopening waits for the reopen.
 */
import type { Logger } from 'pino';
import { EngineError } from '../../engine/errors.ts';
import type { Mapping } from '../../engine/mapping/mapping.ts';
import type { HeapReleaseStats } from '../../engine/memory/heap-release.ts';
import type { EngineSettings } from '../../engine/shard/shard.ts';
import type { ChangeBounds, ClosedShardFigures, ShardOpenSpec } from '../shard-handle.ts';
import type { ShardCallMethod } from './protocol.ts';
import type { ShardChannel } from './worker-shard-handle.ts';
import { WorkerSlot, type SlotEvents } from './worker-slot.ts';

interface Reopen {
  promise: Promise<void>;
  resolve(): void;
  reject(error: EngineError): void;
}

interface PooledShard {
  spec: ShardOpenSpec;
  slot: WorkerSlot;
  /** False while the first open runs: a worker failure then fails the open instead of reopening. */
  opened: boolean;
  closing: boolean;
  /** Set while the shard reopens after its worker failed. */
  reopening: Reopen | null;
  /** Why the shard cannot run any more; every request fails with it. */
  failure: EngineError | null;
  /** Highest search context handed out, so that a reopened shard numbers its contexts above it. */
  maxContext: number;
}

/** See the module comment. */
export class WorkerPool implements ShardChannel, SlotEvents {
  private readonly slots: WorkerSlot[];
  private readonly shards = new Map<string, PooledShard>();
  private closed = false;

  constructor(
    workers: number,
    private readonly logger: Logger,
  ) {
    this.slots = Array.from({ length: workers }, (_, index) => new WorkerSlot(index, logger, this));
  }

  /** Opens a shard in the running slot with the fewest shards (ties: the lowest index). */
  async open(spec: ShardOpenSpec): Promise<void> {
    if (this.closed) throw new EngineError('shard_closed', `cannot open shard [${spec.uuid}]: the shard host is closed`);
    if (this.shards.has(spec.uuid)) throw new EngineError('illegal_argument', `shard [${spec.uuid}] is already open in this shard host`);
    const running = this.slots.filter((slot) => slot.deadReason === null);
    if (running.length === 0) throw new EngineError('shard_worker_failed', `cannot open shard [${spec.uuid}]: no shard worker thread is running`);
    const slot = running.reduce((best, candidate) => (candidate.shards.size < best.shards.size ? candidate : best));
    const shard: PooledShard = { spec: { ...spec }, slot, opened: false, closing: false, reopening: null, failure: null, maxContext: 0 };
    this.shards.set(spec.uuid, shard);
    slot.shards.add(spec.uuid);
    try {
      await slot.request(spec.uuid, { type: 'open', spec: shard.spec, contextBase: 0 }, 'open').reply;
      shard.opened = true;
    } catch (error) {
      this.forget(shard);
      throw error;
    }
  }

  call(uuid: string, method: ShardCallMethod, args: unknown[], transfer?: ArrayBuffer[]): Promise<unknown> {
    // A shard that is open and running (the common case) takes the request without waiting a turn.
    const running = this.shards.get(uuid);
    const shard = running !== undefined && !running.closing && running.reopening === null && running.failure === null ? running : null;
    if (shard !== null) return shard.slot.request(uuid, { type: 'call', uuid, method, args }, 'call', transfer).reply;
    return this.ready(uuid).then((ready) => ready.slot.request(uuid, { type: 'call', uuid, method, args }, 'call', transfer).reply);
  }

  async waitForChanges(uuid: string, afterSeq: number, timeoutMs: number, signal?: AbortSignal): Promise<ChangeBounds> {
    const { slot } = await this.ready(uuid);
    const wait = slot.request(uuid, { type: 'wait', uuid, afterSeq, timeoutMs: signal?.aborted ? 0 : timeoutMs }, 'call');
    if (!signal) return (await wait.reply) as ChangeBounds;
    const cancel = (): void => slot.cancel(wait.id);
    signal.addEventListener('abort', cancel, { once: true });
    try {
      return (await wait.reply) as ChangeBounds;
    } finally {
      signal.removeEventListener('abort', cancel);
    }
  }

  /** A primary term is recorded only when it is above the spec's (the shard refuses a lower one). */
  updateSpec(uuid: string, change: { mapping?: Mapping; settings?: Partial<EngineSettings>; primaryTerm?: number }): void {
    const shard = this.shards.get(uuid);
    if (!shard) return;
    const term = change.primaryTerm;
    if (term !== undefined && Number.isSafeInteger(term) && term > (shard.spec.primaryTerm ?? 1)) shard.spec = { ...shard.spec, primaryTerm: term };
    if (change.mapping) shard.spec = { ...shard.spec, mapping: change.mapping };
    if (change.settings) shard.spec = { ...shard.spec, settings: { ...shard.spec.settings, ...change.settings } };
  }

  noteContext(uuid: string, context: number): void {
    const shard = this.shards.get(uuid);
    if (shard && context > shard.maxContext) shard.maxContext = context;
  }

  async closeShard(uuid: string): Promise<ClosedShardFigures> {
    const shard = this.shards.get(uuid);
    if (!shard || shard.closing) throw closedError(uuid);
    shard.closing = true;
    try {
      if (shard.reopening) await shard.reopening.promise;
      if (shard.failure) throw shard.failure;
      return (await shard.slot.request(uuid, { type: 'close', uuid }, 'close').reply) as ClosedShardFigures;
    } finally {
      this.forget(shard);
    }
  }

  /** The heap releases of every running worker thread since it started (a thread that fails to answer is left out). */
  async threadStats(): Promise<HeapReleaseStats[]> {
    const running = this.slots.filter((slot) => slot.deadReason === null);
    const answers = await Promise.allSettled(running.map((slot) => slot.request(`(thread of slot ${slot.index})`, { type: 'thread_stats' }, 'call').reply));
    return answers.flatMap((answer) => (answer.status === 'fulfilled' ? [answer.value as HeapReleaseStats] : []));
  }

  /** Fault injection for tests: terminates the worker thread running the shard. */
  async terminateWorkerOf(uuid: string): Promise<void> {
    const shard = this.shards.get(uuid);
    if (!shard) throw closedError(uuid);
    await shard.slot.terminate('terminated by terminateWorkerOf (fault injection)');
  }

  /** Closes every shard still open, then terminates the workers. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const closing = await Promise.allSettled([...this.shards.keys()].map((uuid) => this.closeShard(uuid)));
    for (const outcome of closing) {
      if (outcome.status === 'rejected') this.logger.warn({ err: outcome.reason }, 'a shard failed to close while its shard host closed');
    }
    await Promise.all(this.slots.map((slot) => slot.stop()));
  }

  onDown(slot: WorkerSlot, reason: string, restarted: boolean): void {
    const affected = [...slot.shards].map((uuid) => this.shards.get(uuid)!).filter((shard) => shard.opened && !shard.failure);
    if (affected.length === 0 && this.closed) return;
    const shards = affected.map((shard) => shard.spec.uuid);
    if (restarted) {
      this.logger.error({ worker: slot.index, reason, shards }, 'a shard worker thread failed; its shards reopen from their write-ahead logs in a new worker');
    } else {
      this.logger.error({ worker: slot.index, reason, shards }, `a shard worker thread failed; ${slot.deadReason}`);
    }
    for (const shard of affected) {
      if (!restarted) {
        const message = `the worker thread running shard [${shard.spec.uuid}] failed (${reason}); ${slot.deadReason}`;
        this.fail(shard, new EngineError('shard_worker_failed', `${message}, so the shard stays failed until it is closed and opened again`));
      } else if (!shard.closing) {
        shard.reopening ??= newReopen();
      }
    }
  }

  /** Reopens the slot's shards once no failed worker of the slot is still ending. */
  onExited(slot: WorkerSlot): void {
    if (slot.lingering > 0 || slot.deadReason !== null) return;
    for (const uuid of slot.shards) {
      const shard = this.shards.get(uuid);
      const reopen = shard?.reopening;
      if (!shard || !reopen) continue;
      const generation = slot.generation;
      slot.request(uuid, { type: 'open', spec: shard.spec, contextBase: shard.maxContext }, 'open').reply.then(
        () => {
          if (slot.generation !== generation) return;
          shard.reopening = null;
          reopen.resolve();
          this.logger.info({ worker: slot.index, shard: uuid }, 'reopened a shard in a new worker thread');
        },
        (error: Error) => {
          if (slot.generation !== generation) return; // that worker failed too; the next reopen retries
          const message = `shard [${uuid}] could not be reopened after its worker thread failed: ${error.message}`;
          this.logger.error({ worker: slot.index, shard: uuid, err: error }, 'reopening a shard failed');
          this.fail(shard, new EngineError('shard_worker_failed', message));
        },
      );
    }
  }

  private async ready(uuid: string): Promise<PooledShard> {
    const shard = this.shards.get(uuid);
    if (!shard || shard.closing) throw closedError(uuid);
    if (shard.reopening) await shard.reopening.promise;
    if (shard.failure) throw shard.failure;
    return shard;
  }

  private fail(shard: PooledShard, error: EngineError): void {
    shard.failure = error;
    shard.reopening?.reject(error);
    shard.reopening = null;
  }

  private forget(shard: PooledShard): void {
    if (this.shards.get(shard.spec.uuid) === shard) this.shards.delete(shard.spec.uuid);
    shard.slot.shards.delete(shard.spec.uuid);
  }
}

function closedError(uuid: string): EngineError {
  return new EngineError('shard_closed', `shard [${uuid}] is closed`);
}

function newReopen(): Reopen {
  let resolve!: () => void;
  let reject!: (error: EngineError) => void;
  const promise = new Promise<void>((onResolve, onReject) => {
    resolve = onResolve;
    reject = onReject;
  });
  promise.catch(() => undefined); // awaited by requests, if any
  return { promise, resolve, reject };
}
