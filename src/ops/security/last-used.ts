/**
 * Last-use times of API keys, batched: a successful authentication only notes the time in memory
 * (a map write); a timer writes the noted times to the catalog in one change per interval, and
 * `close` writes what is left. Readers combine the catalog's value with the noted one, so listings
 * on this node are exact while the catalog lags by at most one interval.
 */
import type { Logger } from 'pino';
import type { Coordinator } from '../../cluster/coordinator.ts';

/** Default interval between catalog writes of last-use times. */
export const DEFAULT_LAST_USED_FLUSH_MS = 60_000;

/** See the module comment. */
export class LastUsedRecorder {
  private pending = new Map<string, number>();
  private timer: NodeJS.Timeout | null = null;
  private flushing: Promise<void> = Promise.resolve();

  constructor(
    private readonly coordinator: Coordinator,
    private readonly logger: Logger,
    private readonly intervalMs: number = DEFAULT_LAST_USED_FLUSH_MS,
  ) {}

  /** Starts the periodic flush (an unref'd timer: it never keeps the process alive). */
  start(): void {
    this.timer ??= setInterval(() => void this.flush(), this.intervalMs);
    this.timer.unref();
  }

  /** Notes that key `id` was used at `usedAt` (epoch millis). */
  note(id: string, usedAt: number): void {
    const known = this.pending.get(id);
    if (known === undefined || known < usedAt) this.pending.set(id, usedAt);
  }

  /** The later of the stored last-use time and the one noted here but not yet written. */
  lastUsed(id: string, stored: number | null): number | null {
    const noted = this.pending.get(id);
    if (noted === undefined) return stored;
    return stored === null || stored < noted ? noted : stored;
  }

  /** Writes the noted times to the catalog in one change; failed writes are retried next time. */
  flush(): Promise<void> {
    this.flushing = this.flushing.then(async () => {
      if (this.pending.size === 0) return;
      const batch = this.pending;
      this.pending = new Map();
      try {
        await this.coordinator.recordApiKeyUse(batch);
      } catch (error) {
        for (const [id, usedAt] of batch) this.note(id, usedAt);
        this.logger.warn({ err: error, keys: batch.size }, 'could not record API key last-use times; retrying later');
      }
    });
    return this.flushing;
  }

  /** Stops the timer and writes what is still pending. */
  async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.flush();
  }
}
