/**
 * `GET /_stats[/{metric}]` and `GET /{target}/_stats[/{metric}]` in Elasticsearch's shape: for
 * each collection and for all of them (`_all`), `primaries` and `total` with the sections the
 * metric list asks for (every one by default). Real figures where Trove has the concept, read from
 * one copy of every shard: `docs` (live and deleted documents), `store` (bytes on disk), `segments`
 * (count), `merge` (merges done and queued), `refresh` and `flush` (epochs: a refresh or a flush
 * in Trove freezes the in-memory layer into a segment), `translog` (the write-ahead log: its bytes
 * and the operations not yet in a segment). `indexing` counts writes per node, not per
 * collection: `_all.total.indexing` holds the answering node's counters and a collection's are
 * zeros. The other sections (`get`, `search`, `warmer`, `query_cache`, `fielddata`, `completion`,
 * `request_cache`, `recovery`) are zeros: Trove keeps no such counter or cache. `total` equals
 * `primaries` (the figures of one copy per shard).
 */
import { EngineError } from '../engine/errors.ts';
import type { ShardStats } from '../engine/shard/shard.ts';
import { resolveCollections, type ResolveOptions } from './collections.ts';
import type { NodeContext } from './node-context.ts';

/** The metrics of `_stats/{metric}`, in Elasticsearch's order. */
export const STATS_METRICS = [
  'docs',
  'store',
  'indexing',
  'get',
  'search',
  'merge',
  'refresh',
  'flush',
  'warmer',
  'query_cache',
  'fielddata',
  'completion',
  'segments',
  'translog',
  'request_cache',
  'recovery',
] as const;

/** One metric of `_stats/{metric}`. */
export type StatsMetric = (typeof STATS_METRICS)[number];

/** The `primaries` / `total` section of one collection or of `_all`: one object per metric asked. */
export type StatsSection = Partial<Record<StatsMetric, Record<string, unknown>>>;

/** The `_stats` response body. */
export interface CollectionStatsResponse {
  _shards: { total: number; successful: number; failed: number };
  _all: { primaries: StatsSection; total: StatsSection };
  indices: Record<string, { uuid: string; primaries: StatsSection; total: StatsSection }>;
}

/** What `collectionStats` takes besides the target. */
export interface CollectionStatsOptions extends ResolveOptions {
  /** The metrics to answer (every one when absent). */
  metrics?: readonly StatsMetric[];
}

/** How long a copy's figures are waited for. */
const COPY_STATS_WAIT_MS = 5000;

/** Figures added over shard copies. */
interface Figures {
  docs: number;
  deleted: number;
  bytes: number;
  segments: number;
  merges: number;
  pendingMaintenance: number;
  epochs: number;
  walBytes: number;
  uncommitted: number;
}

const NO_FIGURES: Figures = { docs: 0, deleted: 0, bytes: 0, segments: 0, merges: 0, pendingMaintenance: 0, epochs: 0, walBytes: 0, uncommitted: 0 };

function add(left: Figures, right: Figures): Figures {
  const out = { ...left };
  for (const key of Object.keys(out) as Array<keyof Figures>) out[key] += right[key];
  return out;
}

function figuresOf(stats: ShardStats | null): Figures {
  if (stats === null) return NO_FIGURES;
  return {
    docs: stats.docs,
    deleted: stats.deletedDocs,
    bytes: stats.bytes,
    segments: stats.segments.length,
    merges: stats.merges,
    pendingMaintenance: stats.pendingMaintenance,
    epochs: stats.epochs,
    walBytes: stats.walBytes,
    uncommitted: Math.max(0, stats.seqNo - stats.checkpointSeq),
  };
}

/** Reads `_stats/{metric}`: a comma list of metrics or `_all`; unknown ones are Elasticsearch's 400. */
export function parseStatsMetrics(metric: string, path: string): StatsMetric[] {
  const names = metric.split(',').map((name) => name.trim()).filter((name) => name !== '');
  if (names.length === 1 && names[0] === '_all') return [...STATS_METRICS];
  if (names.includes('_all')) throw new EngineError('illegal_argument', `request [${path}] contains _all and individual metrics [${metric}]`);
  const invalid = [...new Set(names.filter((name) => !(STATS_METRICS as readonly string[]).includes(name)))].sort();
  if (invalid.length > 0) throw new EngineError('illegal_argument', unrecognized(path, invalid, STATS_METRICS, 'metric'));
  return STATS_METRICS.filter((name) => names.includes(name));
}

/** Elasticsearch's words for unknown parameters, with its "did you mean" candidates (similarity above 0.5). */
function unrecognized(path: string, invalid: readonly string[], candidates: readonly string[], detail: string): string {
  const parts = invalid.map((name) => {
    const close = candidates
      .map((candidate) => ({ candidate, score: similarity(name, candidate) }))
      .filter((entry) => entry.score > 0.5)
      .sort((left, right) => right.score - left.score || (left.candidate < right.candidate ? -1 : 1))
      .map((entry) => entry.candidate);
    if (close.length === 0) return `[${name}]`;
    return `[${name}] -> did you mean ${close.length === 1 ? `[${close[0]}]` : `any of [${close.join(', ')}]`}?`;
  });
  return `request [${path}] contains unrecognized ${detail}${invalid.length > 1 ? 's' : ''}: ${parts.join(', ')}`;
}

/** Lucene's Levenshtein similarity: 1 - edit distance / the longer length. */
function similarity(left: string, right: string): number {
  const previous = Array.from({ length: right.length + 1 }, (_, index) => index);
  for (let i = 1; i <= left.length; i++) {
    let diagonal = previous[0]!;
    previous[0] = i;
    for (let j = 1; j <= right.length; j++) {
      const above = previous[j]!;
      previous[j] = Math.min(previous[j]! + 1, previous[j - 1]! + 1, diagonal + (left[i - 1] === right[j - 1] ? 0 : 1));
      diagonal = above;
    }
  }
  return 1 - previous[right.length]! / Math.max(left.length, right.length);
}

type Indexing = NodeContext['stats']['indexing'];

/** The section of `figures` with the metrics asked; `indexing` from the node's counters when given. */
function sectionOf(figures: Figures, metrics: readonly StatsMetric[], indexing: Indexing | null): StatsSection {
  const build: Record<StatsMetric, () => Record<string, unknown>> = {
    docs: () => ({ count: figures.docs, deleted: figures.deleted }),
    store: () => ({ size_in_bytes: figures.bytes, reserved_in_bytes: 0 }),
    indexing: () => ({
      index_total: indexing?.index_total ?? 0,
      index_time_in_millis: indexing?.index_time_in_millis ?? 0,
      index_current: 0,
      index_failed: indexing?.index_failed ?? 0,
      delete_total: indexing?.delete_total ?? 0,
      delete_time_in_millis: indexing?.delete_time_in_millis ?? 0,
      delete_current: 0,
      noop_update_total: 0,
      is_throttled: false,
      throttle_time_in_millis: 0,
    }),
    get: () => ({ total: 0, time_in_millis: 0, exists_total: 0, exists_time_in_millis: 0, missing_total: 0, missing_time_in_millis: 0, current: 0 }),
    search: () => ({
      open_contexts: 0,
      query_total: 0,
      query_time_in_millis: 0,
      query_current: 0,
      fetch_total: 0,
      fetch_time_in_millis: 0,
      fetch_current: 0,
      scroll_total: 0,
      scroll_time_in_millis: 0,
      scroll_current: 0,
      suggest_total: 0,
      suggest_time_in_millis: 0,
      suggest_current: 0,
    }),
    merge: () => ({
      current: figures.pendingMaintenance,
      current_docs: 0,
      current_size_in_bytes: 0,
      total: figures.merges,
      total_time_in_millis: 0,
      total_docs: 0,
      total_size_in_bytes: 0,
      total_stopped_time_in_millis: 0,
      total_throttled_time_in_millis: 0,
      total_auto_throttle_in_bytes: 0,
    }),
    refresh: () => ({ total: figures.epochs, total_time_in_millis: 0, external_total: figures.epochs, external_total_time_in_millis: 0, listeners: 0 }),
    flush: () => ({ total: figures.epochs, periodic: 0, total_time_in_millis: 0 }),
    warmer: () => ({ current: 0, total: 0, total_time_in_millis: 0 }),
    query_cache: () => ({ memory_size_in_bytes: 0, total_count: 0, hit_count: 0, miss_count: 0, cache_size: 0, cache_count: 0, evictions: 0 }),
    fielddata: () => ({ memory_size_in_bytes: 0, evictions: 0 }),
    completion: () => ({ size_in_bytes: 0 }),
    segments: () => ({
      count: figures.segments,
      memory_in_bytes: 0,
      terms_memory_in_bytes: 0,
      stored_fields_memory_in_bytes: 0,
      term_vectors_memory_in_bytes: 0,
      norms_memory_in_bytes: 0,
      points_memory_in_bytes: 0,
      doc_values_memory_in_bytes: 0,
      index_writer_memory_in_bytes: 0,
      version_map_memory_in_bytes: 0,
      fixed_bit_set_memory_in_bytes: 0,
      max_unsafe_auto_id_timestamp: -1,
      file_sizes: {},
    }),
    translog: () => ({
      operations: figures.uncommitted,
      size_in_bytes: figures.walBytes,
      uncommitted_operations: figures.uncommitted,
      uncommitted_size_in_bytes: figures.walBytes,
      earliest_last_modified_age: 0,
    }),
    request_cache: () => ({ memory_size_in_bytes: 0, evictions: 0, hit_count: 0, miss_count: 0 }),
    recovery: () => ({ current_as_source: 0, current_as_target: 0, throttle_time_in_millis: 0 }),
  };
  const section: StatsSection = {};
  for (const metric of metrics) section[metric] = build[metric]();
  return section;
}

async function copyStats(stats: () => Promise<ShardStats>): Promise<ShardStats | null> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<null>((resolve) => (timer = setTimeout(resolve, COPY_STATS_WAIT_MS, null)));
  try {
    return await Promise.race([stats().catch(() => null), late]);
  } finally {
    clearTimeout(timer);
  }
}

/** Statistics of the collections `target` selects (a name, comma list, pattern or `_all`). */
export async function collectionStats(context: NodeContext, target: string, options: CollectionStatsOptions = {}): Promise<CollectionStatsResponse> {
  const metrics = options.metrics ?? STATS_METRICS;
  const resolved = resolveCollections(context, target, options);
  const perCollection = await Promise.all(
    resolved.map(async (hosted) => {
      const { targets } = context.router.searchShards([hosted]);
      const figures = await Promise.all(targets.map((shard) => copyStats(() => shard.handle.stats())));
      return { hosted, figures: figures.map(figuresOf).reduce(add, NO_FIGURES) };
    }),
  );
  const indices: CollectionStatsResponse['indices'] = {};
  for (const { hosted, figures } of [...perCollection].sort((left, right) => (left.hosted.meta.name < right.hosted.meta.name ? -1 : 1))) {
    indices[hosted.meta.name] = { uuid: hosted.meta.uuid, primaries: sectionOf(figures, metrics, null), total: sectionOf(figures, metrics, null) };
  }
  // As Elasticsearch counts them: every copy the settings ask for, of which those placed on a node answered.
  let shards = 0;
  let placed = 0;
  for (const { meta } of resolved) {
    shards += meta.settings.number_of_shards * (1 + meta.settings.number_of_replicas);
    for (const placement of meta.placements) placed += (placement.primary === null ? 0 : 1) + Math.min(placement.replicas.length, meta.settings.number_of_replicas);
  }
  const all = perCollection.map((entry) => entry.figures).reduce(add, NO_FIGURES);
  return {
    _shards: { total: shards, successful: placed, failed: 0 },
    _all: { primaries: sectionOf(all, metrics, null), total: sectionOf(all, metrics, context.stats.indexing) },
    indices,
  };
}
