/**
 * `GET /_stats` and `GET /{target}/_stats` in Elasticsearch's shape: for each collection and for
 * all of them (`_all`), `primaries` and `total` with `docs` (live and deleted documents of the
 * primary copies) and `store` (their bytes on disk). Replicas are not allocated, so `total`
 * equals `primaries`. `_all.total.indexing` holds the answering node's write counters (Trove
 * counts writes per node, not per collection; `/_node/{id}/stats` has every node's).
 */
import { listCollections, resolveCollections, type CollectionSummary, type ResolveOptions } from './collections.ts';
import type { NodeContext } from './node-context.ts';

/** The `primaries` / `total` section of one collection or of `_all`. */
export interface StatsSection {
  docs: { count: number; deleted: number };
  store: { size_in_bytes: number };
  indexing?: { index_total: number; index_time_in_millis: number; index_failed: number; delete_total: number; delete_time_in_millis: number };
}

/** The `_stats` response body. */
export interface CollectionStatsResponse {
  _shards: { total: number; successful: number; failed: number };
  _all: { primaries: StatsSection; total: StatsSection };
  indices: Record<string, { uuid: string; primaries: StatsSection; total: StatsSection }>;
}

function sectionOf(summaries: readonly CollectionSummary[]): StatsSection {
  const section: StatsSection = { docs: { count: 0, deleted: 0 }, store: { size_in_bytes: 0 } };
  for (const summary of summaries) {
    section.docs.count += summary.docsCount;
    section.docs.deleted += summary.docsDeleted;
    section.store.size_in_bytes += summary.storeSizeBytes;
  }
  return section;
}

/** Statistics of the collections `target` selects (a name, comma list, pattern or `_all`). */
export async function collectionStats(context: NodeContext, target: string, options: ResolveOptions = {}): Promise<CollectionStatsResponse> {
  const resolved = resolveCollections(context, target, options);
  const selected = new Set(resolved.map((hosted) => hosted.meta.name));
  const summaries = (await listCollections(context)).filter((summary) => selected.has(summary.name));
  const indices: CollectionStatsResponse['indices'] = {};
  for (const summary of summaries) {
    const section = sectionOf([summary]);
    indices[summary.name] = { uuid: summary.uuid, primaries: section, total: structuredClone(section) };
  }
  // As Elasticsearch counts them: every copy the settings ask for, of which those placed on a node answered.
  let shards = 0;
  let placed = 0;
  for (const { meta } of resolved) {
    shards += meta.settings.number_of_shards * (1 + meta.settings.number_of_replicas);
    for (const placement of meta.placements) placed += (placement.primary === null ? 0 : 1) + Math.min(placement.replicas.length, meta.settings.number_of_replicas);
  }
  const all = sectionOf(summaries);
  const { index_total, index_time_in_millis, index_failed, delete_total, delete_time_in_millis } = context.stats.indexing;
  return {
    _shards: { total: shards, successful: placed, failed: 0 },
    _all: { primaries: all, total: { ...structuredClone(all), indexing: { index_total, index_time_in_millis, index_failed, delete_total, delete_time_in_millis } } },
    indices,
  };
}
