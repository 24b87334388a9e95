/**
 * Event-loop delay of the node process, measured by Node's `monitorEventLoopDelay` histogram and
 * reported per sampling interval: each sample keeps the figures of the interval that just ended
 * and starts a fresh histogram, so stats show recent lag rather than an average since start.
 */
import { monitorEventLoopDelay, type IntervalHistogram } from 'node:perf_hooks';
import type { Probe } from './background-sampler.ts';

/** Event-loop lag over the latest sampling interval, in milliseconds. */
export interface EventLoopLag {
  mean_ms: number;
  p50_ms: number;
  p99_ms: number;
  max_ms: number;
}

const NANOS_PER_MS = 1e6;

function round(nanos: number): number {
  return Number.isFinite(nanos) ? Math.round((nanos / NANOS_PER_MS) * 100) / 100 : 0;
}

/** See the module comment. */
export class EventLoopProbe implements Probe {
  private readonly histogram: IntervalHistogram = monitorEventLoopDelay({ resolution: 10 });
  private latest: EventLoopLag = { mean_ms: 0, p50_ms: 0, p99_ms: 0, max_ms: 0 };

  constructor() {
    this.histogram.enable();
  }

  /** Keeps the interval's figures and starts a new interval. */
  sample(): void {
    const { histogram } = this;
    if (histogram.count > 0) {
      this.latest = {
        mean_ms: round(histogram.mean),
        p50_ms: round(histogram.percentile(50)),
        p99_ms: round(histogram.percentile(99)),
        max_ms: round(histogram.max),
      };
    }
    histogram.reset();
  }

  /** The latest interval's figures. */
  read(): EventLoopLag {
    return this.latest;
  }

  /** Stops measuring. */
  stop(): void {
    this.histogram.disable();
  }
}
