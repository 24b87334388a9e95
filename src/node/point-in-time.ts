/**
 * Point in time (OpenSearch `_search/point_in_time`, Elasticsearch `_pit`): a reader context on
 * every shard copy of a target, kept under one id (reader-contexts.ts), that searches with
 * `{"pit": {"id", "keep_alive"}}` read instead of the live collections. Such a search sorts with
 * the `_shard_doc` tiebreaker added (after `_score` when it has no sort), so `search_after` with
 * the last hit's sort values pages through the snapshot without a repeat or a gap. The id carries
 * the group, so any node can serve the searches; it stays the same for the life of the contexts.
 * A search with `slice` reads its slice of the point in time (search-slice.ts).
 */
import { EngineError } from '../engine/errors.ts';
import type { NodeContext } from './node-context.ts';
import { closeEveryReader, closeGroup, groupFromJson, groupToJson, listGroups, openReaders, parseKeepAlive, readerTargets, type ReaderGroup, type ReaderTargets } from './reader-contexts.ts';
import { readSlice, slicePlan, withSliceFilter } from './search-slice.ts';
import type { SearchParams } from './search-body.ts';
import { openTargets, search, type SearchResponse, type SearchShardsHeader } from './search.ts';
import { withTiebreaker } from './scroll.ts';

/** Longest point-in-time id accepted (characters). */
const MAX_PIT_ID_LENGTH = 1 << 20;

/** A created point in time: its id, the shards it holds, and when (OpenSearch adds `creation_time`). */
export interface CreatedPointInTime {
  id: string;
  shards: SearchShardsHeader;
  creationTime: number;
}

/** A search response on a point in time, with its id first. */
export type PointInTimeResponse = { pit_id: string } & SearchResponse;

/** A point in time as OpenSearch lists it. */
export interface ListedPointInTime {
  pit_id: string;
  creation_time: number;
  keep_alive: number;
}

/** Opens a point in time on `target` for `keepAlive` (`1m`). */
export async function createPointInTime(context: NodeContext, target: string, keepAlive: unknown, ignoreUnavailable?: boolean): Promise<CreatedPointInTime> {
  if (keepAlive === undefined) throw new EngineError('action_request_validation', 'Validation Failed: 1: [keep_alive] is missing;');
  const keepAliveMs = parseKeepAlive(context, keepAlive, 'keep_alive');
  const resolved = openTargets(context, target, { ignoreUnavailable });
  const group = await openReaders(context, target, resolved.targets, 'pit', keepAliveMs);
  return { id: encodePitId(group), shards: resolved.header, creationTime: Date.now() };
}

/** Whether a search body reads a point in time. */
export function readsPointInTime(body: unknown): boolean {
  return body !== null && typeof body === 'object' && !Array.isArray(body) && 'pit' in body;
}

/** Runs a search whose body has `pit: {id, keep_alive}` on that point in time (no target may be named). */
export async function searchPointInTime(context: NodeContext, target: string | null, body: Record<string, unknown>, params: SearchParams, authorize: (collections: string[]) => void): Promise<PointInTimeResponse> {
  if (target !== null) throw new EngineError('action_request_validation', 'Validation Failed: 1: [indices] cannot be used with point in time. Do not specify any index with point in time.;');
  const { pit, ...rest } = body;
  if (pit === null || typeof pit !== 'object' || Array.isArray(pit)) throw new EngineError('parsing', '[pit] must be an object with an [id]');
  const { id, keep_alive: keepAlive, ...unknown } = pit as Record<string, unknown>;
  const extra = Object.keys(unknown)[0];
  if (extra !== undefined) throw new EngineError('parsing', `[pit] unknown field [${extra}]`);
  if (typeof id !== 'string') throw new EngineError('parsing', '[pit] requires an [id] string');
  const group = decodePitId(id);
  authorize(group.shards.map((shard) => shard.collection));
  const keepAliveMs = keepAlive === undefined ? undefined : parseKeepAlive(context, keepAlive, 'keep_alive');
  const { slice: sliceValue, ...unsliced } = rest;
  const slice = readSlice(sliceValue);
  const userSort = params.sort !== undefined ? params.sort.split(',').map((part) => part.trim()).filter((part) => part !== '') : unsliced.sort;
  const { sort: _sort, ...pageParams } = params;
  // A slice reads some of the shards (and of one shard, some documents): see search-slice.ts.
  const plan = slice === null ? null : slicePlan(slice, group.shards.length);
  const sliced = (all: ReaderTargets): ReaderTargets => {
    if (plan === null) return all;
    const targets = plan.positions.map((position) => all.targets[position]!);
    return { targets, header: { ...all.header, total: targets.length, successful: targets.length } };
  };
  const pageBody = { ...withSliceFilter(unsliced, plan?.filter ?? null), sort: withTiebreaker(userSort) };
  const response = await search(context, group.target, pageBody, pageParams, { targets: () => sliced(readerTargets(context, group, keepAliveMs)) });
  return { pit_id: id, ...response };
}

/** Closes points in time by id; answers, per id, whether any of its contexts was still open. */
export async function deletePointsInTime(context: NodeContext, ids: readonly string[], authorize: (collections: string[]) => void): Promise<Array<{ id: string; freed: number }>> {
  const groups = ids.map((id) => ({ id, group: decodePitId(id) }));
  for (const { group } of groups) authorize(group.shards.map((shard) => shard.collection));
  return Promise.all(groups.map(async ({ id, group }) => ({ id, freed: await closeGroup(context, group) })));
}

/** Closes every point in time of the cluster; answers the ids of those closed. */
export async function deleteEveryPointInTime(context: NodeContext): Promise<string[]> {
  const groups = await listGroups(context, 'pit');
  await closeEveryReader(context, 'pit');
  return groups.map(({ group }) => encodePitId(group));
}

/** The points in time open in the cluster (OpenSearch `GET /_search/point_in_time/_all`). */
export async function listPointsInTime(context: NodeContext): Promise<ListedPointInTime[]> {
  const groups = await listGroups(context, 'pit');
  return groups.map(({ group, createdAt, keepAliveMs }) => ({ pit_id: encodePitId(group), creation_time: createdAt, keep_alive: keepAliveMs }));
}

function encodePitId(group: ReaderGroup): string {
  return Buffer.from(JSON.stringify([1, groupToJson(group)])).toString('base64url');
}

function decodePitId(id: string): ReaderGroup {
  const invalid = (): EngineError => new EngineError('illegal_argument', `invalid id for point in time [${id.length > 100 ? `${id.slice(0, 100)}...` : id}]`);
  if (id.length === 0 || id.length > MAX_PIT_ID_LENGTH || !/^[A-Za-z0-9_-]+={0,2}$/.test(id)) throw invalid();
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(id, 'base64url').toString('utf8'));
  } catch {
    throw invalid();
  }
  const group = Array.isArray(value) && value.length === 2 && value[0] === 1 ? groupFromJson(value[1]) : null;
  if (group === null) throw invalid();
  return group;
}
