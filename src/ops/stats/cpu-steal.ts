/**
 * CPU steal: the share of CPU time the hypervisor gave to other guests while this machine wanted
 * to run, from the kernel's CPU accounting (the aggregate `cpu` line of `/proc/stat`). Sampled in
 * the background: each sample is the steal share of the ticks elapsed since the previous one.
 * Averages over 1 and 5 minutes are tick-weighted (total steal ticks over total ticks in the
 * window), not averages of percentages. The trend keeps the samples of the last 5 minutes.
 */
import type { HostFiles } from '../host/host-files.ts';

/** One sample of the trend. */
export interface StealSample {
  /** Sample time, epoch millis. */
  t: number;
  /** Steal percent over the interval that ended at `t`. */
  value: number;
}

/** `cpu.steal_percent` of node stats. */
export interface StealPercent {
  /** Steal over the latest interval (or since start when no sample was taken yet); null when unreadable. */
  current: number | null;
  avg_1m: number | null;
  avg_5m: number | null;
  trend: StealSample[];
  /** Why the figures are null. */
  error?: string;
}

/** Cumulative tick counters of the aggregate `cpu` line. */
export interface CpuTicks {
  steal: number;
  total: number;
}

const WINDOW_5M = 5 * 60_000;
const WINDOW_1M = 60_000;

/** Parses the aggregate `cpu` line of `/proc/stat`. */
export function parseCpuTicks(procStat: string): CpuTicks {
  const line = procStat.split('\n').find((candidate) => candidate.startsWith('cpu '));
  if (line === undefined) throw new Error('/proc/stat has no aggregate cpu line');
  const fields = line.trim().split(/\s+/).slice(1).map(Number);
  if (fields.length < 8 || fields.some((field) => !Number.isFinite(field))) {
    throw new Error('/proc/stat cpu line has no steal column (kernel older than 2.6.11)');
  }
  // user nice system idle iowait irq softirq steal [guest guest_nice]; guest time is already in user.
  const total = fields.slice(0, 8).reduce((sum, field) => sum + field, 0);
  return { steal: fields[7], total };
}

function percent(steal: number, total: number): number {
  return total > 0 ? Math.round((steal / total) * 10_000) / 100 : 0;
}

interface Interval {
  t: number;
  steal: number;
  total: number;
}

/** See the module comment. */
export class CpuStealSampler {
  private previous: CpuTicks | null = null;
  private readonly intervals: Interval[] = [];
  private error: string | null = null;

  constructor(private readonly files: HostFiles) {}

  /** Reads `/proc/stat` and records the interval since the previous reading. */
  async sample(now: number = Date.now()): Promise<void> {
    let ticks: CpuTicks;
    try {
      ticks = parseCpuTicks(await this.files.text('/proc/stat'));
    } catch (error) {
      this.error = (error as Error).message;
      return;
    }
    this.error = null;
    if (this.previous !== null && ticks.total > this.previous.total) {
      this.intervals.push({ t: now, steal: ticks.steal - this.previous.steal, total: ticks.total - this.previous.total });
    }
    this.previous = ticks;
    while (this.intervals.length > 0 && this.intervals[0].t <= now - WINDOW_5M) this.intervals.shift();
  }

  /** Current value, averages and trend. */
  async read(now: number = Date.now()): Promise<StealPercent> {
    if (this.previous === null || this.error !== null) {
      return { current: null, avg_1m: null, avg_5m: null, trend: [], error: this.error ?? 'no sample of /proc/stat yet' };
    }
    const trend = this.intervals.map(({ t, steal, total }) => ({ t, value: percent(steal, total) }));
    let current = trend.length > 0 ? trend[trend.length - 1].value : null;
    if (current === null) current = await this.sinceLastSample();
    return { current, avg_1m: this.average(now - WINDOW_1M) ?? current, avg_5m: this.average(now - WINDOW_5M) ?? current, trend };
  }

  /** Steal since the last sample, read now without recording it (before the first interval completes). */
  private async sinceLastSample(): Promise<number | null> {
    try {
      const ticks = parseCpuTicks(await this.files.text('/proc/stat'));
      const previous = this.previous!;
      return ticks.total > previous.total ? percent(ticks.steal - previous.steal, ticks.total - previous.total) : null;
    } catch {
      return null;
    }
  }

  private average(since: number): number | null {
    let steal = 0;
    let total = 0;
    for (const interval of this.intervals) {
      if (interval.t <= since) continue;
      steal += interval.steal;
      total += interval.total;
    }
    return total > 0 ? percent(steal, total) : null;
  }
}
