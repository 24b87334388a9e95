/**
 * Control-group quotas of this process: CPU quota (in CPUs), weight, and throttling counts; memory
 * limit, use and OOM kills. Works with cgroup v2 (unified) and v1 (per-controller hierarchies),
 * including hybrid hosts: the process's cgroup paths come from `/proc/self/cgroup`, the mounts of
 * the hierarchies from `/proc/self/mountinfo`. `CgroupThrottleProbe` samples the throttle count in
 * the background so node info can tell whether throttling is rising now.
 */
import { relative } from 'node:path';
import type { Probe } from '../stats/background-sampler.ts';
import { fact, type Fact } from './fact.ts';
import type { HostFiles } from './host-files.ts';
import { parseMountInfo, type MountEntry } from './mountinfo.ts';

/** CPU controller figures. */
export interface CgroupCpu {
  version: 1 | 2;
  /** CPUs' worth of time per period; null when unlimited. */
  quota_cpus: number | null;
  quota_us: number | null;
  period_us: number | null;
  /** cgroup v2 `cpu.weight` (1–10000, default 100) or v1 `cpu.shares` (default 1024). */
  weight: number | null;
  nr_periods: number | null;
  nr_throttled: number | null;
  throttled_usec: number | null;
}

/** Memory controller figures. */
export interface CgroupMemory {
  version: 1 | 2;
  /** Null when unlimited. */
  limit_bytes: number | null;
  usage_bytes: number | null;
  oom_kills: number | null;
}

/** Throttling over the recent window, from background samples. */
export interface ThrottleTrend {
  window_secs: number;
  /** Periods throttled during the window. */
  throttled_periods: number;
}

/** Cgroup facts of node info. */
export interface CgroupFacts {
  cpu: Fact<CgroupCpu>;
  memory: Fact<CgroupMemory>;
  cpu_throttling_recent: Fact<ThrottleTrend>;
}

/** v1 limits at or above this are the kernel's "unlimited" (page-rounded LONG_MAX). */
const V1_UNLIMITED = 2 ** 62;

/** The directory of a controller for this process, and the hierarchy version it belongs to. */
async function controllerDir(files: HostFiles, controller: 'cpu' | 'memory', v2File: string): Promise<{ dir: string; version: 1 | 2 }> {
  const [cgroups, mounts] = await Promise.all([
    files.text('/proc/self/cgroup'),
    files.text('/proc/self/mountinfo').then(parseMountInfo),
  ]);
  const lines = cgroups.split('\n').filter((line) => line !== '').map((line) => {
    const [, , controllers, path] = /^(\d+):([^:]*):(.*)$/.exec(line) ?? [];
    return { controllers: (controllers ?? '').split(','), path: path ?? '/' };
  });
  const within = (mount: MountEntry, path: string): string => {
    const inside = relative(mount.root, path);
    return inside === '' || inside.startsWith('..') ? mount.mountPoint : `${mount.mountPoint}/${inside}`;
  };
  const unified = lines.find((line) => line.controllers.length === 1 && line.controllers[0] === '');
  const v2Mount = mounts.find((mount) => mount.fsType === 'cgroup2');
  if (unified && v2Mount) {
    const dir = within(v2Mount, unified.path);
    if (await files.exists(`${dir}/${v2File}`)) return { dir, version: 2 };
  }
  const line = lines.find((candidate) => candidate.controllers.includes(controller));
  const v1Mount = mounts.find((mount) => mount.fsType === 'cgroup' && mount.superOptions.includes(controller));
  if (line && v1Mount) return { dir: within(v1Mount, line.path), version: 1 };
  throw new Error(`no ${controller} cgroup controller is mounted for this process`);
}

async function statFields(files: HostFiles, path: string): Promise<Map<string, number>> {
  const fields = new Map<string, number>();
  for (const [key, value] of await files.keyValues(path, ' ')) fields.set(key, Number(value));
  return fields;
}

/** Reads the CPU controller of this process. */
export async function readCgroupCpu(files: HostFiles): Promise<CgroupCpu> {
  const { dir, version } = await controllerDir(files, 'cpu', 'cpu.max');
  const stat = await statFields(files, `${dir}/cpu.stat`).catch(() => new Map<string, number>());
  let quota: number | null;
  let period: number | null;
  let weight: number | null;
  if (version === 2) {
    const [max, periodText] = (await files.line(`${dir}/cpu.max`)).split(/\s+/);
    quota = max === 'max' ? null : Number(max);
    period = Number(periodText);
    weight = await files.integer(`${dir}/cpu.weight`).catch(() => null);
  } else {
    const quotaUs = await files.integer(`${dir}/cpu.cfs_quota_us`);
    quota = quotaUs < 0 ? null : quotaUs;
    period = await files.integer(`${dir}/cpu.cfs_period_us`);
    weight = await files.integer(`${dir}/cpu.shares`).catch(() => null);
  }
  const throttledNanos = stat.get('throttled_time');
  return {
    version,
    quota_cpus: quota === null || !period ? null : Math.round((quota / period) * 100) / 100,
    quota_us: quota,
    period_us: period,
    weight,
    nr_periods: stat.get('nr_periods') ?? null,
    nr_throttled: stat.get('nr_throttled') ?? null,
    throttled_usec: stat.get('throttled_usec') ?? (throttledNanos === undefined ? null : Math.round(throttledNanos / 1000)),
  };
}

/** Reads the memory controller of this process. */
export async function readCgroupMemory(files: HostFiles): Promise<CgroupMemory> {
  const { dir, version } = await controllerDir(files, 'memory', 'memory.max');
  if (version === 2) {
    const max = await files.line(`${dir}/memory.max`);
    const events = await statFields(files, `${dir}/memory.events`).catch(() => new Map<string, number>());
    return {
      version,
      limit_bytes: max === 'max' ? null : Number(max),
      usage_bytes: await files.integer(`${dir}/memory.current`).catch(() => null),
      oom_kills: events.get('oom_kill') ?? null,
    };
  }
  const limit = await files.integer(`${dir}/memory.limit_in_bytes`);
  const oomControl = await statFields(files, `${dir}/memory.oom_control`).catch(() => new Map<string, number>());
  return {
    version,
    limit_bytes: limit >= V1_UNLIMITED ? null : limit,
    usage_bytes: await files.integer(`${dir}/memory.usage_in_bytes`).catch(() => null),
    oom_kills: oomControl.get('oom_kill') ?? null,
  };
}

/** Samples the CPU throttle count and tells how much it rose over the last few minutes. */
export class CgroupThrottleProbe implements Probe {
  private readonly samples: Array<{ t: number; throttled: number }> = [];
  private error = 'no sample yet';

  constructor(
    private readonly files: HostFiles,
    private readonly windowMs: number = 5 * 60_000,
  ) {}

  /** Records the current throttle count. */
  async sample(now: number): Promise<void> {
    try {
      const { nr_throttled: throttled } = await readCgroupCpu(this.files);
      if (throttled === null) throw new Error('cpu.stat has no nr_throttled');
      this.samples.push({ t: now, throttled });
      while (this.samples.length > 1 && this.samples[0].t < now - this.windowMs) this.samples.shift();
    } catch (error) {
      this.error = (error as Error).message;
      this.samples.length = 0;
    }
  }

  /** Throttled periods between the oldest and newest sample of the window. */
  recent(): Fact<ThrottleTrend> {
    if (this.samples.length < 2) return { value: null, error: this.samples.length === 1 ? 'one sample so far; a trend needs two' : this.error };
    const first = this.samples[0];
    const last = this.samples[this.samples.length - 1];
    return { value: { window_secs: Math.round((last.t - first.t) / 1000), throttled_periods: last.throttled - first.throttled } };
  }
}

/** Reads the cgroup facts (the throttle trend comes from the background probe). */
export async function readCgroupFacts(files: HostFiles, throttle: CgroupThrottleProbe): Promise<CgroupFacts> {
  const [cpu, memory] = await Promise.all([fact(() => readCgroupCpu(files)), fact(() => readCgroupMemory(files))]);
  return { cpu, memory, cpu_throttling_recent: throttle.recent() };
}
