/**
 * Sliced scroll and sliced point-in-time search (`"slice": {"id", "max", "field"}` in the body):
 * the `max` slices of one scroll or point in time partition its documents, each in exactly one
 * slice, so `max` clients can read them in parallel. As Elasticsearch does it: with no more slices
 * than shards, a slice reads the shards whose position (in `_shard_doc` order) modulo `max` is its
 * id, every document of them; with more slices than shards, slice `id` reads shard `id % shards`
 * only, and of it the documents whose `_id` hashes to `⌊id / shards⌋` modulo the number of slices
 * that shard has (`{"_slice"}` filter, src/engine/query/slice-query.ts). Slicing is by `_id` (the
 * default `field`; another field is a 400). Problems are Elasticsearch's 400s.
 */
import { COUNT_SETTINGS } from '../cluster/collection-settings.ts';
import { EngineError } from '../engine/errors.ts';
import { resolveCollections } from './collections.ts';
import type { NodeContext } from './node-context.ts';

/** A slice of a search. */
export interface SearchSlice {
  id: number;
  max: number;
}

/** Reads `slice` of a search body (null without one), as Elasticsearch validates it. */
export function readSlice(value: unknown): SearchSlice | null {
  if (value === undefined) return null;
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new EngineError('parsing', '[slice] must be an object with [id] and [max]');
  const { id, max, field, ...unknown } = value as Record<string, unknown>;
  const extra = Object.keys(unknown)[0];
  if (extra !== undefined) throw new EngineError('parsing', `[slice] unknown field [${extra}]`);
  if (id === undefined || max === undefined) throw new EngineError('parsing', '[slice] requires [id] and [max]');
  if (!Number.isSafeInteger(id) || !Number.isSafeInteger(max)) throw new EngineError('parsing', '[slice] [id] and [max] must be integers');
  if ((id as number) < 0) throw new EngineError('illegal_argument', 'id must be greater than or equal to 0');
  if ((max as number) <= 1) throw new EngineError('illegal_argument', 'max must be greater than 1');
  if ((id as number) >= (max as number)) throw new EngineError('illegal_argument', 'max must be greater than id');
  if (field !== undefined && field !== '_id') throw new EngineError('illegal_argument', `cannot slice on field [${String(field)}]: Trove slices by [_id]`);
  return { id: id as number, max: max as number };
}

/** Refuses a scroll slice past `index.max_slices_per_scroll` of any collection of `target`, in Elasticsearch's words. */
export function checkScrollSlices(context: NodeContext, target: string, slice: SearchSlice): void {
  const fallback = COUNT_SETTINGS.max_slices_per_scroll.default;
  const limits = resolveCollections(context, target).map((hosted) => hosted.meta.settings.max_slices_per_scroll ?? fallback);
  const allowed = limits.length === 0 ? fallback : Math.min(...limits);
  if (slice.max > allowed) {
    throw new EngineError(
      'illegal_argument',
      `The number of slices [${slice.max}] is too large. It must be less than [${allowed}]. This limit can be set by changing the [index.max_slices_per_scroll] index level setting.`,
    );
  }
}

/** The positions (among `shards` in `_shard_doc` order) a slice reads, and the document filter it needs (null: every document). */
export function slicePlan(slice: SearchSlice, shards: number): { positions: number[]; filter: Record<string, unknown> | null } {
  if (slice.max <= shards) {
    const positions: number[] = [];
    for (let position = slice.id; position < shards; position += slice.max) positions.push(position);
    return { positions, filter: null };
  }
  const position = slice.id % shards;
  const inShard = Math.floor(slice.max / shards) + (position < slice.max % shards ? 1 : 0);
  return { positions: [position], filter: { _slice: { id: Math.floor(slice.id / shards), max: inShard } } };
}

/** A search body with its query ANDed with a slice filter (the query's scores are kept). */
export function withSliceFilter(body: Record<string, unknown>, filter: Record<string, unknown> | null): Record<string, unknown> {
  if (filter === null) return body;
  return { ...body, query: { bool: { must: [body.query ?? { match_all: {} }], filter: [filter] } } };
}
