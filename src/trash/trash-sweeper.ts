/**
 * Retention: a background timer purges this node's trash items whose `deletedAt +
 * trash.retention_secs` has passed. The setting is read at every sweep (and a change of it
 * triggers one at once), so a new value applies to every item, earlier items included;
 * `deletedAt` comes from the manifest, so a restart never moves a deadline. Items in the middle of
 * a delete or restore are left alone.
 */
import type { Logger } from 'pino';
import type { TrashStore } from './trash-store.ts';

/** Milliseconds between sweeps (the store keeps manifests in memory: a sweep with nothing due costs nothing). */
export const SWEEP_INTERVAL_MS = 1000;

/** Options of `TrashSweeper`. */
export interface TrashSweeperOptions {
  store: TrashStore;
  /** The current `trash.retention_secs`. */
  retentionSecs: () => number;
  logger: Logger;
  intervalMs?: number;
  now?: () => number;
}

/** See the module comment. */
export class TrashSweeper {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<unknown> = Promise.resolve();

  constructor(private readonly options: TrashSweeperOptions) {}

  /** Starts sweeping on the interval. */
  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => this.sweep().catch(() => undefined), this.options.intervalMs ?? SWEEP_INTERVAL_MS);
    this.timer.unref();
  }

  /** Purges every expired item now; returns their ids. Sweeps never overlap. */
  sweep(): Promise<string[]> {
    const run = this.running.then(async () => {
      const purged = await this.options.store.purgeExpired(this.options.retentionSecs(), (this.options.now ?? Date.now)());
      if (purged.length > 0) this.options.logger.info({ items: purged }, 'trash retention purged items');
      return purged;
    });
    this.running = run.catch((error: unknown) => this.options.logger.error({ err: error }, 'trash sweep failed'));
    return run;
  }

  /** Stops the timer and waits for a sweep in progress. */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.running;
  }
}
