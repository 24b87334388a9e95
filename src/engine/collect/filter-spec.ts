/**
 * Specs of the single-bucket and filter aggregations: `filter` (one query), `filters` (named or
 * anonymous queries, with an optional other bucket) and `missing` (docs without a value for a
 * field). Queries are parsed against the mapping on the shards; rendering parses the request
 * without a mapping and needs only the bucket keys.
 */
import type { FlatField } from '../mapping/mapping.ts';
import { checkKeys, dslError, expectObject, isDslObject, readBoolean, readString } from '../query/dsl-reader.ts';
import { parseQuery } from '../query/parse-query.ts';
import type { Query } from '../query/scorer.ts';
import type { ValueSource } from './aggregation-options.ts';
import { valueSource } from './aggregation-options.ts';
import type { AggregationSpec } from './aggregation-spec.ts';

/** A filter's query bound to the mapping it was parsed with (null when parsed for rendering). */
export interface ParsedFilter {
  query: Query;
  fields: ReadonlyMap<string, FlatField>;
}

/** `filter`: the docs matching one query. */
export interface FilterSpec {
  type: 'filter';
  name: string;
  subs: AggregationSpec[];
  filter: ParsedFilter | null;
}

/** `filters`: one bucket per query, then optionally the docs matching none of them. */
export interface FiltersSpec {
  type: 'filters';
  name: string;
  subs: AggregationSpec[];
  /** Keys of named filters (sorted by key, as ES does); null for the anonymous (array) form. */
  keys: string[] | null;
  filters: (ParsedFilter | null)[];
  /** Key of the other bucket; null without one. */
  otherBucketKey: string | null;
  /** Named filters: buckets as an object by key (default) or a list with `key`. */
  keyed: boolean;
}

/** `missing`: the docs without a value for a field. */
export interface MissingSpec {
  type: 'missing';
  name: string;
  subs: AggregationSpec[];
  source: ValueSource;
}

/** Most filters one `filters` aggregation may list (each doc is tested against each). */
export const MAX_FILTERS = 1000;

/** Parses a filter query against the mapping; null (after checking it is an object) when parsed for rendering. */
export function parseFilter(body: unknown, fields: ReadonlyMap<string, FlatField> | null, now: number): ParsedFilter | null {
  if (fields === null) {
    expectObject(body, 'filter');
    return null;
  }
  return { query: parseQuery(body, fields, now), fields };
}

/** Parses `filter`: its body is the query itself. */
export function parseFilterSpec(name: string, body: unknown, fields: ReadonlyMap<string, FlatField> | null, subs: AggregationSpec[], now: number): FilterSpec {
  return { type: 'filter', name, subs, filter: parseFilter(body, fields, now) };
}

/** Parses `filters`: `filters` as an object of named queries or an array of anonymous ones, `other_bucket`, `other_bucket_key`, `keyed`. */
export function parseFiltersSpec(
  name: string,
  options: Record<string, unknown>,
  fields: ReadonlyMap<string, FlatField> | null,
  subs: AggregationSpec[],
  now: number,
): FiltersSpec {
  checkKeys(options, ['filters', 'other_bucket', 'other_bucket_key', 'keyed'], 'filters');
  const body = options.filters;
  let keys: string[] | null = null;
  let bodies: unknown[];
  if (Array.isArray(body)) {
    bodies = body;
  } else if (isDslObject(body)) {
    keys = Object.keys(body).sort();
    bodies = keys.map((key) => body[key]);
  } else {
    throw dslError(`[filters] [filters] must be an object of named queries or an array of queries in [${name}]`);
  }
  if (bodies.length === 0) throw dslError(`[filters] cannot be empty.`);
  if (bodies.length > MAX_FILTERS) throw dslError(`[filters] lists ${bodies.length} filters, at most ${MAX_FILTERS} are allowed`);
  const otherBucket = options.other_bucket === undefined ? null : readBoolean(options.other_bucket, 'other_bucket', 'filters');
  const otherKey = options.other_bucket_key === undefined ? null : readString(options.other_bucket_key, 'other_bucket_key', 'filters');
  // A key alone asks for the other bucket, as in ES.
  const otherBucketKey = otherBucket === false ? null : otherBucket === true || otherKey !== null ? (otherKey ?? '_other_') : null;
  const keyed = options.keyed === undefined ? true : readBoolean(options.keyed, 'keyed', 'filters');
  return { type: 'filters', name, subs, keys, filters: bodies.map((query) => parseFilter(query, fields, now)), otherBucketKey, keyed };
}

/** Parses `missing`. */
export function parseMissingSpec(name: string, options: Record<string, unknown>, fields: ReadonlyMap<string, FlatField> | null, subs: AggregationSpec[]): MissingSpec {
  checkKeys(options, ['field', 'script', 'value_type'], 'missing');
  return { type: 'missing', name, subs, source: valueSource(options, fields, 'missing') };
}
