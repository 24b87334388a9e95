/**
 * Memory facts: transparent hugepages (`always` hurts latency of memory-mapped search files),
 * swap size and use with `vm.swappiness`, `vm.overcommit_memory`, and memory totals from
 * `/proc/meminfo`.
 */
import { fact, type Fact } from './fact.ts';
import type { HostFiles } from './host-files.ts';

/** Transparent hugepage settings (the bracketed choice of each sysfs file). */
export interface TransparentHugepages {
  enabled: string;
  defrag: string | null;
}

/** Swap space and its use. */
export interface Swap {
  total_bytes: number;
  used_bytes: number;
  free_bytes: number;
  swappiness: number | null;
}

/** Memory totals. */
export interface MemoryTotals {
  total_bytes: number;
  available_bytes: number | null;
}

/** Memory facts of node info. */
export interface MemoryFacts {
  memory: Fact<MemoryTotals>;
  transparent_hugepages: Fact<TransparentHugepages>;
  swap: Fact<Swap>;
  overcommit_memory: Fact<number>;
}

/** The bracketed choice of a sysfs selection line, e.g. `always [madvise] never` → `madvise`. */
export function selectedChoice(line: string): string {
  const match = /\[([^\]]+)\]/.exec(line);
  if (!match) throw new Error(`no selected value in "${line}"`);
  return match[1];
}

/** A `/proc/meminfo` field in bytes. */
function meminfoBytes(meminfo: Map<string, string>, field: string): number {
  const raw = meminfo.get(field);
  if (raw === undefined) throw new Error(`/proc/meminfo has no ${field}`);
  const [amount, unit] = raw.split(/\s+/);
  return Number(amount) * (unit === 'kB' ? 1024 : 1);
}

async function readHugepages(files: HostFiles): Promise<TransparentHugepages> {
  const dir = '/sys/kernel/mm/transparent_hugepage';
  const enabled = selectedChoice(await files.line(`${dir}/enabled`));
  const defrag = await files.line(`${dir}/defrag`).then(selectedChoice, () => null);
  return { enabled, defrag };
}

/** Reads the memory facts. */
export async function readMemoryFacts(files: HostFiles): Promise<MemoryFacts> {
  const meminfo = files.keyValues('/proc/meminfo');
  const [memory, hugepages, swap, overcommit] = await Promise.all([
    fact(async (): Promise<MemoryTotals> => {
      const fields = await meminfo;
      return { total_bytes: meminfoBytes(fields, 'MemTotal'), available_bytes: fields.has('MemAvailable') ? meminfoBytes(fields, 'MemAvailable') : null };
    }),
    fact(() => readHugepages(files)),
    fact(async (): Promise<Swap> => {
      const fields = await meminfo;
      const total = meminfoBytes(fields, 'SwapTotal');
      const free = meminfoBytes(fields, 'SwapFree');
      const swappiness = await files.integer('/proc/sys/vm/swappiness').catch(() => null);
      return { total_bytes: total, used_bytes: total - free, free_bytes: free, swappiness };
    }),
    fact(() => files.integer('/proc/sys/vm/overcommit_memory')),
  ]);
  return { memory, transparent_hugepages: hugepages, swap, overcommit_memory: overcommit };
}
