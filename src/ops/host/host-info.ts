/**
 * The `host` object of `GET /_node/_local`: every host fact family, read in parallel from
 * `/proc`, `/sys` and `/etc` under a configurable root, plus the warnings derived from them.
 * Every fact is `{value}` or `{value: null, error}`; reading never throws, whatever the host hides.
 */
import { readCgroupFacts, type CgroupFacts, type CgroupThrottleProbe } from './cgroup-facts.ts';
import { readContainerFacts, type ContainerFacts } from './container-facts.ts';
import { readDataDiskFacts, type DataDiskFacts } from './data-disk-facts.ts';
import type { Fact } from './fact.ts';
import { canonicalPath, type HostFiles } from './host-files.ts';
import { hostWarnings, type HostWarning } from './host-warnings.ts';
import { readLimitFacts, type FileDescriptors, type MemoryMaps } from './limits-facts.ts';
import { readMemoryFacts, type MemoryTotals, type Swap, type TransparentHugepages } from './memory-facts.ts';
import { readNetworkFacts, type NetworkInterface } from './network-facts.ts';
import { readNetworkSysctlFacts, type Conntrack, type NetworkSysctlFacts } from './network-sysctl-facts.ts';
import { readNumaFacts, type NumaFacts } from './numa-facts.ts';
import { readOsFacts, type OsFacts } from './os-facts.ts';
import { readPlatformFacts, type PlatformFacts } from './platform-facts.ts';

/** Resource ceilings and their use. */
export interface ResourceFacts {
  memory: Fact<MemoryTotals>;
  file_descriptors: Fact<FileDescriptors>;
  memory_maps: Fact<MemoryMaps>;
  swap: Fact<Swap>;
  overcommit_memory: Fact<number>;
  conntrack: Fact<Conntrack>;
  tcp: NetworkSysctlFacts['tcp'];
  cgroup: CgroupFacts;
}

/** The `host` object. */
export interface HostInfo {
  os: OsFacts;
  numa: NumaFacts;
  network: { interfaces: Fact<NetworkInterface[]> };
  data_disk: DataDiskFacts & { path: string };
  environment: ContainerFacts;
  platform: PlatformFacts;
  transparent_hugepages: Fact<TransparentHugepages>;
  resources: ResourceFacts;
}

/** Inputs of `readHostInfo`. */
export interface HostInfoOptions {
  files: HostFiles;
  /** The node's data path (resolved to its canonical path on the real file system). */
  dataPath: string;
  /** Background sampler of cgroup CPU throttling. */
  throttle: CgroupThrottleProbe;
  /** Listen backlog of the HTTP server, for the `somaxconn` check. */
  httpBacklog: number;
}

/** Reads every host fact and evaluates the warnings. */
export async function readHostInfo(options: HostInfoOptions): Promise<{ host: HostInfo; warnings: HostWarning[] }> {
  const { files, throttle } = options;
  const dataPath = files.root === '/' ? await canonicalPath(options.dataPath) : options.dataPath;
  const [os, numa, interfaces, dataDisk, environment, platform, memory, limits, sysctls, cgroup] = await Promise.all([
    readOsFacts(files),
    readNumaFacts(files),
    readNetworkFacts(files),
    readDataDiskFacts(files, dataPath),
    readContainerFacts(files),
    readPlatformFacts(files),
    readMemoryFacts(files),
    readLimitFacts(files),
    readNetworkSysctlFacts(files),
    readCgroupFacts(files, throttle),
  ]);
  const host: HostInfo = {
    os,
    numa,
    network: { interfaces },
    data_disk: { path: dataPath, ...dataDisk },
    environment,
    platform,
    transparent_hugepages: memory.transparent_hugepages,
    resources: {
      memory: memory.memory,
      file_descriptors: limits.file_descriptors,
      memory_maps: limits.memory_maps,
      swap: memory.swap,
      overcommit_memory: memory.overcommit_memory,
      conntrack: sysctls.conntrack,
      tcp: sysctls.tcp,
      cgroup,
    },
  };
  return { host, warnings: hostWarnings(host, options.httpBacklog) };
}
