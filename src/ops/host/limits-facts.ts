/**
 * Per-process ceilings with current use: open file descriptors against the `Max open files`
 * limit (every segment file and connection needs one), and memory mappings against
 * `vm.max_map_count` (memory-mapped segment files need one each).
 */
import { fact, type Fact } from './fact.ts';
import type { HostFiles } from './host-files.ts';

/** A limit with its use. */
export interface FileDescriptors {
  soft_limit: number | null;
  hard_limit: number | null;
  open: number;
}

/** Memory mappings of this process against the kernel's ceiling. */
export interface MemoryMaps {
  count: number;
  max_map_count: number;
}

/** Limit facts of node info. */
export interface LimitFacts {
  file_descriptors: Fact<FileDescriptors>;
  memory_maps: Fact<MemoryMaps>;
}

/** The soft and hard value of one `/proc/self/limits` row (`unlimited` is null). */
export function parseLimit(limits: string, name: string): { soft: number | null; hard: number | null } {
  const line = limits.split('\n').find((candidate) => candidate.startsWith(name));
  if (line === undefined) throw new Error(`/proc/self/limits has no "${name}" row`);
  const [soft, hard] = line.slice(name.length).trim().split(/\s+/);
  const number = (text: string | undefined): number | null => (text === undefined || text === 'unlimited' ? null : Number(text));
  return { soft: number(soft), hard: number(hard) };
}

/** Reads the limit facts. */
export async function readLimitFacts(files: HostFiles): Promise<LimitFacts> {
  const [fileDescriptors, memoryMaps] = await Promise.all([
    fact(async (): Promise<FileDescriptors> => {
      const { soft, hard } = parseLimit(await files.text('/proc/self/limits'), 'Max open files');
      return { soft_limit: soft, hard_limit: hard, open: (await files.list('/proc/self/fd')).length };
    }),
    fact(async (): Promise<MemoryMaps> => {
      const maps = await files.text('/proc/self/maps');
      const count = maps.split('\n').filter((line) => line !== '').length;
      return { count, max_map_count: await files.integer('/proc/sys/vm/max_map_count') };
    }),
  ]);
  return { file_descriptors: fileDescriptors, memory_maps: memoryMaps };
}
