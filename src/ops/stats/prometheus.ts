/**
 * `GET /_metrics`: the node stats in Prometheus text format, rendered by prom-client. One table
 * maps each metric to the figure of `NodeStats` it exposes, so the two endpoints cannot drift
 * apart. Counters are cumulative since the process started (Prometheus detects the reset on a
 * restart); times are in seconds, as Prometheus names them. A figure that could not be read has
 * no sample.
 */
import { Counter, Gauge, Registry } from 'prom-client';
import type { NodeStats } from './node-stats.ts';

/** Labelled values of one metric. */
type Samples = Array<[labels: Record<string, string>, value: number]>;

/** One exported metric. */
interface MetricSpec {
  name: string;
  help: string;
  type: 'counter' | 'gauge';
  labelNames?: readonly string[];
  read(stats: NodeStats): number | Samples;
}

const ms = (value: number): number => value / 1000;

/** `{lane: ...}`-labelled samples of a per-lane figure. */
function perLane(stats: NodeStats, pick: (lane: NodeStats['search']['lanes'][string]) => number): Samples {
  return Object.entries(stats.search.lanes).map(([lane, figures]) => [{ lane }, pick(figures)]);
}

const counter = (name: string, help: string, read: MetricSpec['read'], labelNames?: readonly string[]): MetricSpec => ({ name, help, type: 'counter', read, labelNames });
const gauge = (name: string, help: string, read: MetricSpec['read'], labelNames?: readonly string[]): MetricSpec => ({ name, help, type: 'gauge', read, labelNames });

/** Every exported metric. */
const METRICS: readonly MetricSpec[] = [
  counter('trove_indexing_docs_total', 'Documents indexed or deleted.', (s) => [[{ op: 'index' }, s.indexing.index_total], [{ op: 'delete' }, s.indexing.delete_total]], ['op']),
  counter('trove_indexing_failed_total', 'Index and delete operations that failed.', (s) => [[{ op: 'index' }, s.indexing.index_failed], [{ op: 'delete' }, s.indexing.delete_failed]], ['op']),
  counter('trove_indexing_time_seconds_total', 'Time spent in index and delete operations.', (s) => [[{ op: 'index' }, ms(s.indexing.index_time_in_millis)], [{ op: 'delete' }, ms(s.indexing.delete_time_in_millis)]], ['op']),
  counter(
    'trove_updates_total',
    'Partial updates by outcome: inplace column writes, field-level writes, full re-indexes, no-ops, upserts, failures.',
    (s) => [[{ path: 'inplace' }, s.updates.inplace], [{ path: 'fields' }, s.updates.fields], [{ path: 'full' }, s.updates.full], [{ path: 'noop' }, s.updates.noop], [{ path: 'upsert' }, s.updates.upserts], [{ path: 'failed' }, s.updates.failed]],
    ['path'],
  ),
  counter('trove_updates_time_seconds_total', 'Time spent in partial updates.', (s) => ms(s.updates.time_in_millis)),
  counter('trove_bulk_requests_total', 'Bulk requests.', (s) => s.bulk.requests),
  counter('trove_bulk_items_total', 'Items of bulk requests.', (s) => s.bulk.items),
  counter('trove_bulk_failed_items_total', 'Items of bulk requests that failed.', (s) => s.bulk.failed_items),
  counter('trove_search_queries_total', 'Searches that finished (completed or failed), by lane.', (s) => perLane(s, (lane) => lane.completed + lane.failed), ['lane']),
  counter('trove_search_failed_total', 'Searches that ended with an error, by lane.', (s) => perLane(s, (lane) => lane.failed), ['lane']),
  counter('trove_search_rejected_total', 'Searches refused because their lane was full (429), by lane.', (s) => perLane(s, (lane) => lane.rejected), ['lane']),
  counter('trove_search_timed_out_total', 'Searches that hit their timeout and returned partial results, by lane.', (s) => perLane(s, (lane) => lane.timed_out), ['lane']),
  counter('trove_search_slow_total', 'Searches at or over node.search.slow_threshold_ms, by lane.', (s) => perLane(s, (lane) => lane.slow), ['lane']),
  counter('trove_search_time_seconds_total', 'Search execution time, by lane.', (s) => perLane(s, (lane) => ms(lane.time_in_millis)), ['lane']),
  counter('trove_search_queue_time_seconds_total', 'Time searches waited for a lane slot, by lane.', (s) => perLane(s, (lane) => ms(lane.queue_time_in_millis)), ['lane']),
  gauge('trove_search_lane_active', 'Searches running now, by lane.', (s) => perLane(s, (lane) => lane.active), ['lane']),
  gauge('trove_search_lane_queued', 'Searches waiting for a slot now, by lane.', (s) => perLane(s, (lane) => lane.queued), ['lane']),
  gauge('trove_search_lane_max_concurrent', 'Concurrency budget, by lane.', (s) => perLane(s, (lane) => lane.max_concurrent), ['lane']),
  gauge('trove_search_lane_max_queue', 'Queue budget, by lane.', (s) => perLane(s, (lane) => lane.max_queue), ['lane']),
  counter('trove_changes_requests_total', 'Change feeds opened, by feed mode.', (s) => Object.entries(s.changes.by_feed).map(([feed, count]) => [{ feed }, count]), ['feed']),
  gauge('trove_changes_open_feeds', 'Change feeds open now.', (s) => s.changes.open_feeds),
  gauge('trove_changes_retained_bytes', 'Bytes of write-ahead log retained for the change feed.', (s) => s.changes.retained_bytes),
  gauge('trove_segments', 'Segments of the shards hosted here.', (s) => s.segments.count),
  gauge('trove_segments_bytes', 'Bytes of the segments of the shards hosted here.', (s) => s.segments.size_in_bytes),
  gauge('trove_docs', 'Live documents in the segments of the shards hosted here.', (s) => s.segments.docs),
  gauge('trove_deleted_docs', 'Deleted documents not yet purged by a merge.', (s) => s.segments.deleted_docs),
  gauge('trove_shards', 'Shard copies started on this node.', (s) => s.segments.shards.length),
  gauge('trove_memory_docs', 'Documents in in-memory layers, not yet frozen by an epoch.', (s) => s.segments.shards.reduce((sum, shard) => sum + shard.mutable_docs, 0)),
  gauge('trove_epochs', 'Epochs run by the shards hosted here, over their lifetime.', (s) => s.segments.epochs.total),
  gauge('trove_merges', 'Merges run by the shards hosted here, over their lifetime.', (s) => s.segments.merges.total),
  gauge('trove_merge_backlog', 'Epochs and merges queued or running.', (s) => s.segments.merges.backlog),
  gauge('trove_writes_held', 'Client writes held now because indexing outran epochs.', (s) => s.segments.epochs.writes_held),
  gauge('trove_writes_held_milliseconds', 'Time client writes were held because indexing outran epochs, over the lifetime of the shards hosted here.', (s) => s.segments.epochs.writes_held_ms),
  gauge('trove_compaction_jobs', 'Retained compaction jobs, by state.', (s) => Object.entries(s.compaction.jobs).map(([state, count]) => [{ state }, count]), ['state']),
  counter('trove_compaction_passes_total', 'Compaction passes since start, by outcome.', (s) => [[{ outcome: 'done' }, s.compaction.passes.done], [{ outcome: 'failed' }, s.compaction.passes.failed]], ['outcome']),
  counter(
    'trove_security_refusals_total',
    'Requests refused by the security plugin: 401 (authentication) and 403 (authorization).',
    (s) => (s.security === null ? [] : [[{ status: '401' }, s.security.authentication_failures.total], [{ status: '403' }, s.security.authorization_failures.total]]),
    ['status'],
  ),
  gauge('trove_process_resident_memory_bytes', 'Resident set size of the process.', (s) => s.process.rss_bytes),
  gauge('trove_process_heap_used_bytes', 'V8 heap in use.', (s) => s.process.heap_used_bytes),
  counter('trove_memory_release_trims_total', 'Free C-heap pages handed back to the system after epochs and merges.', (s) => s.process.memory_release.trims),
  counter('trove_memory_release_trim_seconds_total', 'Time spent handing free C-heap pages back.', (s) => ms(s.process.memory_release.trim_time_in_millis)),
  counter('trove_memory_release_collections_total', 'Major collections run to free the buffers of epochs and merges when none came on its own.', (s) => s.process.memory_release.collections),
  counter('trove_memory_release_collection_seconds_total', 'Time spent in those collections.', (s) => ms(s.process.memory_release.collection_time_in_millis)),
  counter('trove_process_cpu_seconds_total', 'CPU time of the process.', (s) => [[{ mode: 'user' }, ms(s.process.cpu_user_ms)], [{ mode: 'system' }, ms(s.process.cpu_system_ms)]], ['mode']),
  gauge(
    'trove_process_event_loop_lag_seconds',
    'Event-loop delay over the latest sampling interval.',
    (s) => [[{ stat: 'mean' }, ms(s.process.event_loop_lag.mean_ms)], [{ stat: 'p50' }, ms(s.process.event_loop_lag.p50_ms)], [{ stat: 'p99' }, ms(s.process.event_loop_lag.p99_ms)], [{ stat: 'max' }, ms(s.process.event_loop_lag.max_ms)]],
    ['stat'],
  ),
  gauge('trove_process_open_fds', 'Open file descriptors of the process.', (s) => s.process.open_file_descriptors ?? Number.NaN),
  gauge('trove_os_load_average', 'System load average.', (s) => [[{ window: '1m' }, s.os.load_average['1m']], [{ window: '5m' }, s.os.load_average['5m']], [{ window: '15m' }, s.os.load_average['15m']]], ['window']),
  gauge('trove_os_memory_free_bytes', 'Free system memory.', (s) => s.os.mem.free_bytes),
  gauge('trove_os_memory_total_bytes', 'Total system memory.', (s) => s.os.mem.total_bytes),
  gauge('trove_fs_data_available_bytes', 'Bytes available to the node on the data path file system.', (s) => ('available_bytes' in s.fs.data ? s.fs.data.available_bytes : Number.NaN)),
  gauge('trove_fs_data_total_bytes', 'Size of the data path file system.', (s) => ('total_bytes' in s.fs.data ? s.fs.data.total_bytes : Number.NaN)),
  gauge('trove_http_connections_open', 'HTTP connections open now.', (s) => s.http.current_open),
  counter('trove_http_connections_total', 'HTTP connections accepted.', (s) => s.http.total_opened),
  counter('trove_http_responses_total', 'HTTP responses by status class.', (s) => Object.entries(s.http.responses).map(([statusClass, count]) => [{ class: statusClass }, count]), ['class']),
  gauge(
    'trove_cpu_steal_percent',
    'CPU time stolen by the hypervisor: latest interval and 1 and 5 minute averages.',
    (s) => {
      const steal = s.cpu.steal_percent;
      return [[{ window: 'current' }, steal.current ?? Number.NaN], [{ window: '1m' }, steal.avg_1m ?? Number.NaN], [{ window: '5m' }, steal.avg_5m ?? Number.NaN]];
    },
    ['window'],
  ),
];

/** See the module comment. */
export class PrometheusExporter {
  private readonly registry = new Registry();
  private readonly metrics: Array<{ spec: MetricSpec; metric: Counter<string> | Gauge<string> }>;

  constructor() {
    this.metrics = METRICS.map((spec) => {
      const options = { name: spec.name, help: spec.help, labelNames: spec.labelNames ?? [], registers: [this.registry] };
      return { spec, metric: spec.type === 'counter' ? new Counter(options) : new Gauge(options) };
    });
  }

  /** Content type of the rendered text. */
  get contentType(): string {
    return this.registry.contentType;
  }

  /** Renders the stats as Prometheus text. */
  async render(stats: NodeStats): Promise<string> {
    for (const { spec, metric } of this.metrics) {
      metric.reset();
      const read = spec.read(stats);
      const samples: Samples = typeof read === 'number' ? [[{}, read]] : read;
      for (const [labels, value] of samples) {
        // Unknown figures (an unreadable file) are left out rather than exported as NaN.
        if (!Number.isFinite(value)) continue;
        if (metric instanceof Counter) metric.inc(labels, Math.max(0, value));
        else metric.set(labels, value);
      }
    }
    return this.registry.metrics();
  }
}
