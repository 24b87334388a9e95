/**
 * `GET /_node/_local/stats`: the node's counters (node-counters.ts), per-lane search figures
 * (src/ops/lanes), the segment and compaction sections the node layer computes from its shards
 * and job queue (maintenance-stats.ts), refused-request counters of the security plugin,
 * and process, OS, file-system, HTTP and CPU-steal readings. The Prometheus exporter renders the
 * same object.
 */
import { statfs } from 'node:fs/promises';
import { availableParallelism, freemem, loadavg, totalmem, uptime } from 'node:os';
import type { HeapReleaseStats } from '../../engine/memory/heap-release.ts';
import type { MaintenanceStats } from './maintenance-stats.ts';
import type { HostFiles } from '../host/host-files.ts';
import type { LaneStats, SearchLanes } from '../lanes/search-lanes.ts';
import type { AuthCountersSnapshot } from '../security/auth-counters.ts';
import type { CpuStealSampler, StealPercent } from './cpu-steal.ts';
import type { EventLoopLag, EventLoopProbe } from './event-loop-probe.ts';
import type { BulkCounters, ChangesCounters, HttpCounters, IndexingCounters, NodeCounters, UpdateCounters } from './node-counters.ts';

/** Search figures: totals over lanes, and each lane. */
export interface SearchStats {
  query_total: number;
  query_failed: number;
  rejected: number;
  timed_out: number;
  slow: number;
  query_time_in_millis: number;
  lanes: Record<string, LaneStats>;
}

/** The complete stats body. */
export interface NodeStats {
  node_id: string;
  name: string;
  /** Epoch millis when the figures were read. */
  timestamp: number;
  indexing: IndexingCounters;
  search: SearchStats;
  updates: UpdateCounters;
  bulk: BulkCounters;
  changes: ChangesCounters & {
    /** Feeds open now. */
    open_feeds: number;
    /** Bytes of write-ahead log the shards hosted here retain (the feed's history). */
    retained_bytes: number;
  };
  segments: MaintenanceStats['segments'];
  compaction: MaintenanceStats['compaction'];
  /** Requests refused by the security plugin. */
  security: AuthCountersSnapshot | null;
  process: {
    pid: number;
    uptime_secs: number;
    rss_bytes: number;
    heap_used_bytes: number;
    heap_total_bytes: number;
    external_bytes: number;
    cpu_user_ms: number;
    cpu_system_ms: number;
    open_file_descriptors: number | null;
    event_loop_lag: EventLoopLag;
    /**
     * Free C-heap pages handed back to the system after epochs and merges, and the major
     * collections run to free their buffers when none came on its own, summed over the node's
     * threads since each started (see src/engine/memory/heap-release.ts).
     */
    memory_release: { trims: number; trim_time_in_millis: number; collections: number; collection_time_in_millis: number };
  };
  os: {
    cpus: number;
    load_average: { '1m': number; '5m': number; '15m': number };
    mem: { total_bytes: number; free_bytes: number; used_percent: number };
    uptime_secs: number;
  };
  fs: { data: { total_bytes: number; free_bytes: number; available_bytes: number } | { error: string } };
  http: HttpCounters;
  cpu: { steal_percent: StealPercent };
}

/** Where the figures come from. */
export interface NodeStatsSources {
  nodeId: string;
  nodeName: string;
  counters: NodeCounters;
  lanes: SearchLanes;
  /** Bytes of write-ahead log the started shards hosted here retain. */
  retainedLogBytes: number;
  maintenance: MaintenanceStats;
  security: AuthCountersSnapshot | null;
  openFeeds: number;
  steal: CpuStealSampler;
  eventLoop: EventLoopProbe;
  files: HostFiles;
  dataPath: string;
  /** Heap releases of this thread and of each thread shard copies run in. */
  memoryRelease: readonly HeapReleaseStats[];
}

const round = (value: number): number => Math.round(value);
const sum = <T>(items: readonly T[], pick: (item: T) => number): number => items.reduce((total, item) => total + pick(item), 0);

function searchStats(lanes: Record<string, LaneStats>): SearchStats {
  const totals: SearchStats = { query_total: 0, query_failed: 0, rejected: 0, timed_out: 0, slow: 0, query_time_in_millis: 0, lanes };
  for (const lane of Object.values(lanes)) {
    totals.query_total += lane.completed + lane.failed;
    totals.query_failed += lane.failed;
    totals.rejected += lane.rejected;
    totals.timed_out += lane.timed_out;
    totals.slow += lane.slow;
    totals.query_time_in_millis += lane.time_in_millis;
  }
  return totals;
}

async function fileSystem(dataPath: string): Promise<NodeStats['fs']['data']> {
  try {
    const stats = await statfs(dataPath);
    return { total_bytes: stats.blocks * stats.bsize, free_bytes: stats.bfree * stats.bsize, available_bytes: stats.bavail * stats.bsize };
  } catch (error) {
    return { error: `cannot read file-system figures of the data path: ${(error as Error).message}` };
  }
}

/** Reads every figure. */
export async function collectNodeStats(sources: NodeStatsSources): Promise<NodeStats> {
  const { counters } = sources;
  const memory = process.memoryUsage();
  const cpuUsage = process.cpuUsage();
  const [steal, data, openFds] = await Promise.all([
    sources.steal.read(),
    fileSystem(sources.dataPath),
    sources.files.list('/proc/self/fd').then((entries) => entries.length, () => null),
  ]);
  const [load1, load5, load15] = loadavg();
  const total = totalmem();
  const free = freemem();
  return {
    node_id: sources.nodeId,
    name: sources.nodeName,
    timestamp: Date.now(),
    indexing: {
      ...counters.indexing,
      index_time_in_millis: round(counters.indexing.index_time_in_millis),
      delete_time_in_millis: round(counters.indexing.delete_time_in_millis),
    },
    search: searchStats(sources.lanes.stats()),
    updates: { ...counters.updates, time_in_millis: round(counters.updates.time_in_millis) },
    bulk: { ...counters.bulk, time_in_millis: round(counters.bulk.time_in_millis) },
    changes: { ...counters.changes, by_feed: { ...counters.changes.by_feed }, open_feeds: sources.openFeeds, retained_bytes: sources.retainedLogBytes },
    segments: sources.maintenance.segments,
    compaction: sources.maintenance.compaction,
    security: sources.security,
    process: {
      pid: process.pid,
      uptime_secs: round(process.uptime()),
      rss_bytes: memory.rss,
      heap_used_bytes: memory.heapUsed,
      heap_total_bytes: memory.heapTotal,
      external_bytes: memory.external,
      cpu_user_ms: round(cpuUsage.user / 1000),
      cpu_system_ms: round(cpuUsage.system / 1000),
      open_file_descriptors: openFds,
      event_loop_lag: sources.eventLoop.read(),
      memory_release: {
        trims: sum(sources.memoryRelease, (thread) => thread.trims),
        trim_time_in_millis: round(sum(sources.memoryRelease, (thread) => thread.trimMs)),
        collections: sum(sources.memoryRelease, (thread) => thread.collections),
        collection_time_in_millis: round(sum(sources.memoryRelease, (thread) => thread.collectionMs)),
      },
    },
    os: {
      cpus: availableParallelism(),
      load_average: { '1m': load1, '5m': load5, '15m': load15 },
      mem: { total_bytes: total, free_bytes: free, used_percent: Math.round(((total - free) / total) * 10_000) / 100 },
      uptime_secs: round(uptime()),
    },
    fs: { data },
    http: { ...counters.http, responses: { ...counters.http.responses }, time_in_millis: round(counters.http.time_in_millis) },
    cpu: { steal_percent: steal },
  };
}
