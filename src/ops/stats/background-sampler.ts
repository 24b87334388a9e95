/**
 * One unref'd timer that samples slowly changing figures in the background (CPU steal, event-loop
 * delay, cgroup throttling) so that reading stats never waits for an interval to pass. Probes run
 * one after another; a tick is skipped while the previous one is still running, and a failing
 * probe is logged and does not stop the others.
 */
import type { Logger } from 'pino';

/** Something sampled on every tick. */
export interface Probe {
  sample(now: number): Promise<void> | void;
}

/** Interval between samples unless configured otherwise. */
export const DEFAULT_SAMPLE_INTERVAL_MS = 5000;

/** See the module comment. */
export class BackgroundSampler {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;

  constructor(
    private readonly probes: readonly Probe[],
    private readonly logger: Logger,
    private readonly intervalMs: number = DEFAULT_SAMPLE_INTERVAL_MS,
  ) {}

  /** Takes a first sample now (the baseline) and then one every interval. */
  async start(): Promise<void> {
    await this.tick();
    this.timer ??= setInterval(() => void this.tick(), this.intervalMs);
    this.timer.unref();
  }

  /** Stops the timer and waits for a tick in progress. */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.running;
  }

  /** Runs every probe once (skipped when the previous tick has not finished). */
  tick(): Promise<void> {
    if (this.running) return this.running;
    this.running = (async () => {
      const now = Date.now();
      for (const probe of this.probes) {
        try {
          await probe.sample(now);
        } catch (error) {
          this.logger.warn({ err: error }, 'background sample failed');
        }
      }
    })().finally(() => {
      this.running = null;
    });
    return this.running;
  }
}
