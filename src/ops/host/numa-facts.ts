/**
 * NUMA topology from `/sys/devices/system/node`: the memory nodes, the CPUs of each, and the
 * distance table (10 = local; larger is farther). Plus `vm.zone_reclaim_mode`, which makes the
 * kernel reclaim page cache on the local node before using a remote one (bad for search).
 */
import { fact, type Fact } from './fact.ts';
import type { HostFiles } from './host-files.ts';

/** One NUMA node. */
export interface NumaNode {
  id: number;
  /** Kernel CPU list, e.g. `0-15,32-47`. */
  cpus: string;
  cpu_count: number;
  /** Distance to every node, in node order. */
  distances: number[];
}

/** NUMA facts of node info. */
export interface NumaFacts {
  topology: Fact<{ node_count: number; nodes: NumaNode[] }>;
  zone_reclaim_mode: Fact<number>;
}

/** Number of CPUs in a kernel CPU list such as `0-3,8,10-11`. */
export function countCpuList(list: string): number {
  let count = 0;
  for (const part of list.split(',')) {
    const text = part.trim();
    if (text === '') continue;
    const [first, last] = text.split('-').map(Number);
    if (!Number.isInteger(first) || (last !== undefined && !Number.isInteger(last))) throw new Error(`invalid CPU list "${list}"`);
    count += last === undefined ? 1 : last - first + 1;
  }
  return count;
}

async function readTopology(files: HostFiles): Promise<{ node_count: number; nodes: NumaNode[] }> {
  const root = '/sys/devices/system/node';
  const names = (await files.list(root)).filter((name) => /^node\d+$/.test(name));
  if (names.length === 0) throw new Error(`${root} lists no nodes (kernel without NUMA support)`);
  const nodes = await Promise.all(
    names.map(async (name): Promise<NumaNode> => {
      const cpus = await files.line(`${root}/${name}/cpulist`);
      const distances = (await files.line(`${root}/${name}/distance`)).split(/\s+/).filter((part) => part !== '').map(Number);
      return { id: Number(name.slice(4)), cpus, cpu_count: countCpuList(cpus), distances };
    }),
  );
  nodes.sort((left, right) => left.id - right.id);
  return { node_count: nodes.length, nodes };
}

/** Reads the NUMA facts. */
export async function readNumaFacts(files: HostFiles): Promise<NumaFacts> {
  const [topology, zoneReclaim] = await Promise.all([
    fact(() => readTopology(files)),
    fact(() => files.integer('/proc/sys/vm/zone_reclaim_mode')),
  ]);
  return { topology, zone_reclaim_mode: zoneReclaim };
}
