/**
 * Search request features around the query and fetch phases: `explain` (each hit's
 * `_explanation`, computed by its shard, search.ts asks for it), `profile` (per shard: the query
 * tree's timings, rewrite and collector times from the shard, the fetch time measured here),
 * `collapse` on a keyword or numeric field (with `inner_hits`), and the hit fields of
 * hit-fields.ts (`fields`, `docvalue_fields`, `stored_fields`).
 *
 * Collapsing is done on the coordinating node: the global top M hits (M from 3 × (from + size))
 * are fetched and grouped by their field value in rank order; when fewer than from + size groups
 * appear and more hits exist, M grows fourfold and the phases run again, up to the result window
 * (10 000 hits): the groups found within the global top M are exactly the top groups.
 */
import type { HostedCollection } from '../cluster/local-shards.ts';
import type { ShardTarget } from '../cluster/router.ts';
import { EngineError } from '../engine/errors.ts';
import type { MergedHit } from '../engine/collect/merge.ts';
import { COLUMN_NUMERIC_TYPES } from '../engine/mapping/mapping.ts';
import type { Explanation } from '../engine/query/explain.ts';
import { MAX_RESULT_WINDOW, type ShardQueryResult } from '../engine/query/search-request.ts';
import type { FetchedDocument } from '../engine/shard/searcher.ts';
import { hitFieldValues, hitFieldsNeedSource, parseHitFields, sourceValues, type HitFieldsSpec } from './hit-fields.ts';
import type { SearchHit } from './search-hit.ts';

/** `inner_hits` of a collapse: the best hits of each group. */
export interface InnerHitsSpec {
  name: string;
  from: number;
  size: number;
  sort: unknown;
  source: unknown;
  /** Hit options passed to each group's search as they are (`version`, `fields`, `highlight`...). */
  hitOptions: Record<string, unknown>;
}

/** `inner_hits` keys that shape each inner hit, passed to the group's search (which validates them). */
const INNER_HIT_OPTIONS = ['version', 'seq_no_primary_term', 'fields', 'docvalue_fields', 'stored_fields', 'explain', 'highlight'];
const INNER_HIT_KEYS = ['name', 'from', 'size', 'sort', '_source', ...INNER_HIT_OPTIONS];

/** `collapse`: the field whose value groups hits, and its inner hits. */
export interface CollapseSpec {
  field: string;
  innerHits: InnerHitsSpec[];
  /** Whether the field holds numbers (keys read as numbers, `"5"` and `5` one group), set by `checkCollapseField`. */
  numeric?: boolean;
}

/** The features of one search request. */
export interface SearchFeatures {
  explain: boolean;
  profile: boolean;
  hitFields: HitFieldsSpec;
  collapse: CollapseSpec | null;
  /** `stored_fields` given without an explicit `_source`: hits leave their source out, as ES. */
  dropSource: boolean;
}

/** Keys of the search body this module reads. */
export const FEATURE_KEYS = ['explain', 'profile', 'collapse', 'stored_fields', 'docvalue_fields', 'fields'];

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function flag(value: unknown, name: string): boolean {
  if (value === undefined) return false;
  if (typeof value !== 'boolean') throw new EngineError('parsing', `[${name}] must be a boolean`);
  return value;
}

function count(value: unknown, name: string, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0) throw new EngineError('illegal_argument', `[${name}] must be a non-negative integer, got [${String(value)}]`);
  return value;
}

function parseInnerHits(value: unknown, field: string): InnerHitsSpec[] {
  if (value === undefined) return [];
  const list = Array.isArray(value) ? value : [value];
  const names = new Set<string>();
  return list.map((entry) => {
    if (!isObject(entry)) throw new EngineError('parsing', '[inner_hits] must be an object or an array of objects');
    const unknown = Object.keys(entry).find((key) => !INNER_HIT_KEYS.includes(key));
    if (unknown !== undefined) throw new EngineError('parsing', `[inner_hits] unknown field [${unknown}] (supported: ${INNER_HIT_KEYS.join(', ')})`);
    const name = entry.name === undefined ? field : entry.name;
    if (typeof name !== 'string') throw new EngineError('parsing', '[inner_hits] [name] must be a string');
    if (names.has(name)) throw new EngineError('illegal_argument', `[inner_hits] already contains an entry for key [${name}]`);
    names.add(name);
    const hitOptions: Record<string, unknown> = {};
    for (const key of INNER_HIT_OPTIONS) if (entry[key] !== undefined) hitOptions[key] = entry[key];
    const spec: InnerHitsSpec = { name, from: count(entry.from, 'inner_hits.from', 0), size: count(entry.size, 'inner_hits.size', 3), sort: entry.sort, source: entry._source, hitOptions };
    if (spec.from + spec.size > 100) throw new EngineError('illegal_argument', `Inner result window is too large, the inner hit definition's [${name}]'s from + size must be less than or equal to: [100] but was [${spec.from + spec.size}]`);
    return spec;
  });
}

function parseCollapse(value: unknown): CollapseSpec | null {
  if (value === undefined) return null;
  if (!isObject(value)) throw new EngineError('parsing', '[collapse] must be an object');
  const unknown = Object.keys(value).find((key) => !['field', 'inner_hits', 'max_concurrent_group_searches'].includes(key));
  if (unknown !== undefined) throw new EngineError('parsing', `[collapse] unknown field [${unknown}] (supported: field, inner_hits, max_concurrent_group_searches)`);
  if (typeof value.field !== 'string' || value.field === '') throw new EngineError('parsing', '[collapse] requires a [field]');
  count(value.max_concurrent_group_searches, 'max_concurrent_group_searches', 0);
  return { field: value.field, innerHits: parseInnerHits(value.inner_hits, value.field) };
}

/** URL parameters that override the body's features. */
export interface FeatureParams {
  explain?: boolean;
  storedFields?: string[];
  docvalueFields?: string[];
}

/** Reads the features of a search body and its URL overrides; `sourceRequested`: `_source` was asked for explicitly. */
export function parseSearchFeatures(body: unknown, params: FeatureParams, sourceRequested: boolean): SearchFeatures {
  const request: Record<string, unknown> = { ...(isObject(body) ? body : {}) };
  if (params.storedFields !== undefined) request.stored_fields = params.storedFields;
  if (params.docvalueFields !== undefined) request.docvalue_fields = params.docvalueFields;
  const features: SearchFeatures = {
    explain: params.explain ?? flag(request.explain, 'explain'),
    profile: flag(request.profile, 'profile'),
    hitFields: parseHitFields(request, sourceRequested),
    collapse: parseCollapse(request.collapse),
    dropSource: false,
  };
  features.dropSource = features.hitFields.storedFields !== null && !sourceRequested;
  if (features.collapse !== null && request.search_after !== undefined) {
    throw new EngineError('illegal_argument', 'cannot use `collapse` in conjunction with `search_after`');
  }
  return features;
}

/** Whether the fetch phase must read sources for these features. */
export function featuresNeedSource(features: SearchFeatures): boolean {
  return features.collapse !== null || hitFieldsNeedSource(features.hitFields);
}

/** Checks the collapse field against every collection searched (mapped, keyword or numeric). */
export function checkCollapseField(spec: CollapseSpec, collections: readonly HostedCollection[]): void {
  for (const collection of collections) {
    const field = collection.fields.get(spec.field);
    if (field === undefined) throw new EngineError('illegal_argument', `no mapping found for \`${spec.field}\` in order to collapse on`);
    const keyword = field.storage === 'keyword' && field.type === 'keyword';
    if (!(keyword || COLUMN_NUMERIC_TYPES.has(field.type)) || field.type === 'boolean' || !field.docValues) {
      throw new EngineError('illegal_argument', `unknown type for collapse field \`${spec.field}\`, only keywords and numbers are accepted`);
    }
    spec.numeric = !keyword;
  }
}

/** The global top hits and their documents, as the search phases give them for a page of `size`. */
export interface PhasesOutcome {
  results: ShardQueryResult[];
  page: MergedHit[];
  documents: FetchedDocument[];
}

/** A collapsed page: the hits (one per group) and their documents, with each group's key. */
export interface CollapsedPage extends PhasesOutcome {
  keys: unknown[];
}

/** The collapse key of a document: its single value of the field (a number or a string, as the field holds), null when it has none. */
function collapseKey(document: FetchedDocument, spec: CollapseSpec): unknown {
  const values = document.source === undefined ? [] : sourceValues(document.source, spec.field);
  if (values.length > 1) throw new EngineError('illegal_argument', `failed to collapse [${document.id}], the collapse field [${spec.field}] must be single valued`);
  if (values.length === 0) return null;
  const value = values[0];
  if (!spec.numeric) return String(value);
  const number = Number(value);
  return Number.isFinite(number) ? number : value;
}

/** Runs the phases for growing top-M pages until `from + size` groups appear (or the hits or the window run out), then cuts the page of groups. */
export async function collapsePhases(spec: CollapseSpec, from: number, size: number, run: (pageSize: number) => Promise<PhasesOutcome>): Promise<CollapsedPage> {
  const wanted = from + size;
  let pageSize = Math.min(MAX_RESULT_WINDOW, Math.max(wanted * 3, 10));
  for (;;) {
    const outcome = await run(pageSize);
    const seen = new Set<string>();
    const chosen: number[] = [];
    const keys: unknown[] = [];
    outcome.documents.forEach((document, position) => {
      const key = collapseKey(document, spec);
      const identity = JSON.stringify(key);
      if (seen.has(identity)) return;
      seen.add(identity);
      chosen.push(position);
      keys.push(key);
    });
    if (chosen.length >= wanted || outcome.page.length < pageSize || pageSize >= MAX_RESULT_WINDOW) {
      const window = chosen.slice(from, wanted);
      return {
        results: outcome.results,
        page: window.map((position) => outcome.page[position]!),
        documents: window.map((position) => outcome.documents[position]!),
        keys: keys.slice(from, wanted),
      };
    }
    pageSize = Math.min(MAX_RESULT_WINDOW, pageSize * 4);
  }
}

/** The query of a group's inner hits: the search's query, restricted to the group's key (or to documents without the field). */
export function groupQuery(query: unknown, field: string, key: unknown): unknown {
  const restriction = key === null ? { bool: { must_not: [{ exists: { field } }] } } : { term: { [field]: key } };
  return { bool: { must: [query ?? { match_all: {} }], filter: [restriction] } };
}

/** Adds the requested fields, explanations and collapse keys to rendered hits (in page order), and drops `_id`/`_source` under `stored_fields: _none_`. */
export function decorateHits(hits: SearchHit[], page: readonly MergedHit[], documents: readonly FetchedDocument[], targets: readonly ShardTarget[], features: SearchFeatures, nodeOf: (target: ShardTarget) => string, keys?: readonly unknown[]): void {
  hits.forEach((hit, position) => {
    const { shard, hit: shardHit } = page[position]!;
    const target = targets[shard]!;
    const decorated = hit as SearchHit & { fields?: Record<string, unknown[]>; _explanation?: Explanation; _shard?: string; _node?: string };
    const fields = hitFieldValues(documents[position]!.source, features.hitFields, target.collection.fields, target.collection.meta.mapping);
    if (keys !== undefined && features.collapse !== null) {
      decorated.fields = { ...fields, [features.collapse.field]: [keys[position]] };
    } else if (fields !== undefined) {
      decorated.fields = fields;
    }
    if (features.explain && shardHit.explanation !== undefined) {
      decorated._shard = `[${target.collection.meta.name}][${target.shardId}]`;
      decorated._node = nodeOf(target);
      decorated._explanation = shardHit.explanation;
    }
    if (features.hitFields.storedFields === 'none') delete (decorated as { _id?: string })._id;
    if (features.dropSource) delete decorated._source;
  });
}

/** The `profile` section: per shard (named by the node of the copy searched), the query phase's profile and the fetch time measured here. */
export function renderProfile(results: readonly ShardQueryResult[], targets: readonly ShardTarget[], fetchNanos: readonly number[], nodeOf: (target: ShardTarget) => string): { shards: unknown[] } {
  return {
    shards: results.map((result, index) => {
      const target = targets[index]!;
      const { profile } = result;
      return {
        id: `[${nodeOf(target)}][${target.collection.meta.name}][${target.shardId}]`,
        searches: profile === undefined ? [] : [{ query: profile.query, rewrite_time: profile.rewrite_time, collector: profile.collector }],
        aggregations: profile?.aggregations ?? [],
        fetch: { type: 'fetch', description: '', time_in_nanos: fetchNanos[index] ?? 0, breakdown: { load_stored_fields: fetchNanos[index] ?? 0 }, children: [] },
      };
    }),
  };
}

/** One group's inner hits, as a search response renders them. */
type InnerSearch = (body: Record<string, unknown>) => Promise<{ hits: unknown }>;

/** Adds each collapsed hit's `inner_hits`: one search per group and definition (their query restricted to the group). */
export async function addInnerHits(hits: SearchHit[], keys: readonly unknown[], spec: CollapseSpec, query: unknown, innerSearch: InnerSearch): Promise<void> {
  if (spec.innerHits.length === 0) return;
  await Promise.all(
    hits.map(async (hit, position) => {
      const innerHits: Record<string, unknown> = {};
      for (const inner of spec.innerHits) {
        const body: Record<string, unknown> = { ...inner.hitOptions, query: groupQuery(query, spec.field, keys[position]), from: inner.from, size: inner.size };
        if (inner.sort !== undefined) body.sort = inner.sort;
        if (inner.source !== undefined) body._source = inner.source;
        innerHits[inner.name] = { hits: (await innerSearch(body)).hits };
      }
      (hit as SearchHit & { inner_hits?: Record<string, unknown> }).inner_hits = innerHits;
    }),
  );
}
