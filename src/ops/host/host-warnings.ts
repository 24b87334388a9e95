/**
 * Host warnings in the spirit of Elasticsearch's bootstrap checks, MongoDB's start-up warnings
 * and Redis' system check: settings of the machine that hurt a search node. Each warning names
 * the check, explains it, and carries the value seen and the recommended value. A fact that could
 * not be read raises no warning (its reason is in the fact itself).
 */
import type { HostInfo } from './host-info.ts';

/** One host warning. */
export interface HostWarning {
  /** Stable identifier of the check, e.g. `file_descriptors`. */
  check: string;
  message: string;
  /** What the host has. */
  value: number | string | boolean;
  /** What the check wants (a minimum, a maximum or an exact value, as the message says). */
  recommended: number | string | boolean;
}

/** Thresholds of the checks. */
export const WARNING_THRESHOLDS = {
  minFileDescriptors: 65536,
  minMaxMapCount: 262144,
  maxConntrackFillPercent: 80,
} as const;

/** Evaluates every check against the facts; `httpBacklog` is the listen backlog the server asks for. */
export function hostWarnings(host: HostInfo, httpBacklog: number): HostWarning[] {
  const warnings: HostWarning[] = [];
  const warn = (check: string, message: string, value: HostWarning['value'], recommended: HostWarning['recommended']): void => {
    warnings.push({ check, message, value, recommended });
  };
  const { resources } = host;

  const descriptors = resources.file_descriptors.value;
  if (descriptors?.soft_limit != null && descriptors.soft_limit < WARNING_THRESHOLDS.minFileDescriptors) {
    warn('file_descriptors', `the open file limit is below ${WARNING_THRESHOLDS.minFileDescriptors}; segments and connections may run out of descriptors`, descriptors.soft_limit, WARNING_THRESHOLDS.minFileDescriptors);
  }
  const maps = resources.memory_maps.value;
  if (maps && maps.max_map_count < WARNING_THRESHOLDS.minMaxMapCount) {
    warn('max_map_count', `vm.max_map_count is below ${WARNING_THRESHOLDS.minMaxMapCount}; memory-mapped segment files may fail to map`, maps.max_map_count, WARNING_THRESHOLDS.minMaxMapCount);
  }
  const hugepages = host.transparent_hugepages.value;
  if (hugepages?.enabled === 'always') {
    warn('transparent_hugepages', 'transparent hugepages are always on; compaction stalls cause latency spikes, use madvise or never', hugepages.enabled, 'madvise');
  }
  const swap = resources.swap.value;
  if (swap && swap.used_bytes > 0) {
    warn('swap_in_use', 'swap is in use; a swapped-out heap or index makes searches slow, disable swap or set vm.swappiness=1', swap.used_bytes, 0);
  }
  if (resources.overcommit_memory.value === 2) {
    warn('overcommit_memory', 'vm.overcommit_memory is 2 (strict); large memory mappings and allocations may be refused', 2, 0);
  }
  const zoneReclaim = host.numa.zone_reclaim_mode.value;
  if (zoneReclaim !== null && zoneReclaim !== 0) {
    warn('zone_reclaim_mode', 'NUMA zone reclaim is on; the kernel drops page cache on the local node instead of using remote memory', zoneReclaim, 0);
  }
  const throttling = resources.cgroup.cpu_throttling_recent.value;
  if (throttling && throttling.throttled_periods > 0) {
    warn('cpu_throttling', `the cgroup CPU quota throttled this node in ${throttling.throttled_periods} periods over the last ${throttling.window_secs}s; raise the quota`, throttling.throttled_periods, 0);
  }
  const conntrack = resources.conntrack.value;
  if (conntrack && conntrack.fill_percent > WARNING_THRESHOLDS.maxConntrackFillPercent) {
    warn('conntrack_fill', `the connection-tracking table is over ${WARNING_THRESHOLDS.maxConntrackFillPercent}% full; new connections will be dropped when it fills`, conntrack.fill_percent, WARNING_THRESHOLDS.maxConntrackFillPercent);
  }
  const somaxconn = resources.tcp['net.core.somaxconn'].value;
  if (typeof somaxconn === 'number' && somaxconn < httpBacklog) {
    warn('somaxconn', `net.core.somaxconn caps the HTTP listen backlog of ${httpBacklog}; bursts of connections will be refused`, somaxconn, httpBacklog);
  }
  const mount = host.data_disk.mount.value;
  if (mount?.atime === 'strictatime') {
    warn('data_path_atime', 'the data path is mounted with strict atime; every read of a segment file writes its access time, mount it noatime', mount.atime, 'noatime');
  }
  const device = host.data_disk.device.value;
  if (device?.rotational === true) {
    warn('rotational_disk', `the data path is on a rotational disk (${device.name}); random reads of search are slow, use an SSD or NVMe disk`, true, false);
  }
  return warnings;
}
