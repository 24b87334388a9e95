/**
 * Runs shard copies in a pool of worker threads, so that a node uses every core: each shard is
 * pinned to one worker, and its handle posts every request there (see worker-pool.ts). A worker
 * that fails is replaced and its shards reopen from their write-ahead logs.
 */
import type { Logger } from 'pino';
import type { HeapReleaseStats } from '../../engine/memory/heap-release.ts';
import type { ShardHandle, ShardHost, ShardOpenSpec } from '../shard-handle.ts';
import { WorkerPool } from './worker-pool.ts';
import { WorkerShardHandle } from './worker-shard-handle.ts';

/** Options of `WorkerShardHost`. */
export interface WorkerShardHostOptions {
  /** Number of worker threads (at least 1). */
  workers: number;
  /** Receives the log lines of the host and of the shards in its workers. */
  logger: Logger;
}

/** See the module comment. */
export class WorkerShardHost implements ShardHost {
  readonly description: string;
  private readonly pool: WorkerPool;

  constructor({ workers, logger }: WorkerShardHostOptions) {
    if (!Number.isSafeInteger(workers) || workers < 1) throw new RangeError(`workers must be a positive integer, got ${workers}`);
    this.description = `workers:${workers}`;
    this.pool = new WorkerPool(workers, logger);
  }

  async open(spec: ShardOpenSpec): Promise<ShardHandle> {
    await this.pool.open(spec);
    return new WorkerShardHandle(this.pool, spec.uuid);
  }

  close(): Promise<void> {
    return this.pool.close();
  }

  threadStats(): Promise<HeapReleaseStats[]> {
    return this.pool.threadStats();
  }

  /**
   * Fault injection for tests: terminates (`worker.terminate()`) the worker thread running the
   * shard, as a crash would end it; resolves once that thread is gone.
   */
  terminateWorkerOf(uuid: string): Promise<void> {
    return this.pool.terminateWorkerOf(uuid);
  }
}
