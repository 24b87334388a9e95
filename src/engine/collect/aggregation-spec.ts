/**
 * Parsing and validation of the aggregations DSL into specs. The same specs drive the shard
 * aggregators and the rendering of merged partials; rendering needs no mapping, so every spec
 * carries what it needs (formats, bounds, order).
 */
import { EngineError } from '../errors.ts';
import type { FlatField } from '../mapping/mapping.ts';
import {
  checkKeys,
  dslError,
  expectObject,
  readBoolean,
  readEnum,
  readInteger,
  readNumber,
  readString,
} from '../query/dsl-reader.ts';
import type { BucketOrder, ValueSource } from './aggregation-options.ts';
import {
  METRIC_TYPES,
  parseBucketOrder,
  parseDateOption,
  parseMissingValue,
  valueSource,
} from './aggregation-options.ts';
import type { BucketKey } from './aggregation-partials.ts';
import { parseCompositeSpec, type CompositeSpec } from './composite-spec.ts';
import { DatePattern } from './date-pattern.ts';
import { parseIpRangeSpec, type IpRangeSpec } from './ip-range.ts';
import { readTimeZone, type TimeZone } from '../query/time-zone.ts';
import { parseFilterSpec, parseFiltersSpec, parseMissingSpec, type FilterSpec, type FiltersSpec, type MissingSpec } from './filter-spec.ts';
import { parseHistogramSpec, type HistogramSpec } from './histogram-spec.ts';
import { parsePercentiles, type PercentilesSpec } from './percentiles.ts';
import { parsePipeline, PIPELINE_TYPES, type PipelineSpec } from './pipeline-spec.ts';
import { validatePipelines } from './pipelines.ts';
import { parseSignificantTerms, type SignificantTermsSpec } from './significant-terms.ts';
import { parseTopHits, type TopHitsSpec } from './top-hits.ts';
import { parseTermsValueFilter, type TermsValueFilter } from './terms-include.ts';

interface SpecBase {
  name: string;
  subs: AggregationSpec[];
}

/** `terms`. */
export interface TermsSpec extends SpecBase {
  type: 'terms';
  source: ValueSource;
  size: number;
  shardSize: number;
  minDocCount: number;
  order: BucketOrder[];
  missing: BucketKey | null;
  /** `include` / `exclude`; null when every value gets a bucket. */
  valueFilter: TermsValueFilter | null;
  /** `execution_hint: map`: how the profile names the collector (Trove collects keyword terms by ordinals either way). */
  mapHint: boolean;
}

/** `range` and `date_range`. */
export interface RangeSpec extends SpecBase {
  type: 'range';
  /** Which of the two the request named (their responses differ only in the `typed_keys` prefix). */
  requestedAs: 'range' | 'date_range';
  source: ValueSource;
  ranges: { key: string | null; from: number | null; to: number | null }[];
  keyed: boolean;
  /** Value counted for docs without one (`missing`); null to leave them out. */
  missing: number | null;
  /** `format` of a date range: how keys and `*_as_string` print and how `from` / `to` strings parse; null for ISO 8601. */
  datePattern: DatePattern | null;
  /** `time_zone` of a date range: how `from` / `to` strings without an offset parse and how dates print. */
  timeZone: TimeZone;
}

/** Metric aggregations. */
export interface MetricSpec extends SpecBase {
  type: 'min' | 'max' | 'sum' | 'avg' | 'stats' | 'extended_stats' | 'value_count' | 'cardinality';
  source: ValueSource;
  missing: BucketKey | null;
  /** `extended_stats`: standard deviations each side of the mean for `std_deviation_bounds` (default 2). */
  sigma: number;
}

/** Any aggregation spec. */
export type AggregationSpec = (TermsSpec | RangeSpec | HistogramSpec | MetricSpec | PercentilesSpec | FilterSpec | FiltersSpec | MissingSpec | PipelineSpec | CompositeSpec | TopHitsSpec | IpRangeSpec | SignificantTermsSpec) & {
  /** The aggregation's `meta` object, returned with its result as given. */
  meta?: Record<string, unknown>;
};

/**
 * Most ranges one `range` / `date_range` aggregation may list. Each document is tested against
 * every range, so 100 000 ranges held the event loop for minutes; ES has no such cap (only
 * `search.max_buckets`), 1000 leaves room for any real use.
 */
export const MAX_AGGREGATION_RANGES = 1000;

/** Aggregation types this engine implements. */
export const AGGREGATION_TYPES = ['terms', 'range', 'date_range', 'histogram', 'date_histogram', 'filter', 'filters', 'missing', 'composite', 'top_hits', 'ip_range', 'significant_terms', ...METRIC_TYPES, ...PIPELINE_TYPES];

/**
 * Parses a request's `aggs` object against the mapping; `now` anchors date math. With `fields`
 * null the mapping is not consulted (rendering of merged partials).
 */
export function parseAggregations(aggs: unknown, fields: ReadonlyMap<string, FlatField> | null, now = Date.now()): AggregationSpec[] {
  const object = expectObject(aggs, 'aggs');
  const specs = Object.entries(object).map(([name, body]) => parseAggregation(name, body, fields, now, 0));
  validatePipelines(specs);
  return specs;
}

function parseAggregation(
  name: string,
  body: unknown,
  fields: ReadonlyMap<string, FlatField> | null,
  now: number,
  depth: number,
): AggregationSpec {
  if (name === '' || /[[\]>]/.test(name)) {
    throw dslError(`Invalid aggregation name [${name}]. Aggregation names can contain any character except '[', ']', and '>'`);
  }
  if (depth > 16) throw dslError(`[${name}] aggregations are nested too deeply`);
  const object = expectObject(body, name);
  let type: string | null = null;
  let parameters: unknown;
  let subsBody: unknown;
  let meta: Record<string, unknown> | undefined;
  for (const [key, value] of Object.entries(object)) {
    if (key === 'aggs' || key === 'aggregations') {
      if (subsBody !== undefined) throw dslError(`Found two sub aggregation definitions under [${name}]`);
      subsBody = value;
    } else if (key === 'meta') {
      meta = expectObject(value, `${name}.meta`);
    } else if (type === null) {
      if (!AGGREGATION_TYPES.includes(key)) throw dslError(`Unknown aggregation type [${key}] for aggregation [${name}]`);
      type = key;
      parameters = value;
    } else {
      throw dslError(`Found two aggregation type definitions in [${name}]: [${type}] and [${key}]`);
    }
  }
  if (type === null) throw dslError(`Missing definition for aggregation [${name}]`);
  const spec = parseTyped(name, type, parameters, subsBody, fields, now, depth);
  if (meta !== undefined) spec.meta = meta;
  return spec;
}

/** One aggregation of a known type, its sub-aggregations parsed. */
function parseTyped(
  name: string,
  type: string,
  parameters: unknown,
  subsBody: unknown,
  fields: ReadonlyMap<string, FlatField> | null,
  now: number,
  depth: number,
): AggregationSpec {
  const subs =
    subsBody === undefined
      ? []
      : Object.entries(expectObject(subsBody, `${name}.aggs`)).map(([subName, subBody]) =>
          parseAggregation(subName, subBody, fields, now, depth + 1),
        );
  if (type === 'filter') return parseFilterSpec(name, parameters, fields, subs, now);
  const options = expectObject(parameters, type);
  if (METRIC_TYPES.has(type) || PIPELINE_TYPES.has(type) || type === 'top_hits') {
    if (subs.length > 0) throw dslError(`Aggregator [${name}] of type [${type}] cannot accept sub-aggregations`);
  }
  if (PIPELINE_TYPES.has(type)) return parsePipeline(name, type as PipelineSpec['type'], options);
  if (type === 'top_hits') return parseTopHits(name, options, fields);
  if (METRIC_TYPES.has(type)) {
    if (subs.length > 0) throw dslError(`Aggregator [${name}] of type [${type}] cannot accept sub-aggregations`);
    if (type === 'percentiles' || type === 'percentile_ranks') return parsePercentiles(name, type, options, fields, now);
    return parseMetric(name, type as MetricSpec['type'], options, fields, now);
  }
  switch (type) {
    case 'filters':
      return parseFiltersSpec(name, options, fields, subs, now);
    case 'missing':
      return parseMissingSpec(name, options, fields, subs);
    case 'composite':
      return parseCompositeSpec(name, options, fields, subs, now, depth);
    case 'ip_range':
      return parseIpRangeSpec(name, options, fields, subs);
    case 'significant_terms':
      return parseSignificantTerms(name, options, fields, subs, now);
    case 'terms':
      return parseTerms(name, options, fields, subs, now);
    case 'range':
    case 'date_range':
      return parseRange(name, type, options, fields, subs, now);
    default:
      return parseHistogramSpec(name, type as 'histogram' | 'date_histogram', options, fields, subs, now);
  }
}

function parseMetric(
  name: string,
  type: MetricSpec['type'],
  options: Record<string, unknown>,
  fields: ReadonlyMap<string, FlatField> | null,
  now: number,
): MetricSpec {
  const extended = type === 'extended_stats';
  checkKeys(options, ['field', 'missing', 'format', 'script', ...(extended ? ['sigma'] : type === 'cardinality' ? ['precision_threshold'] : [])], type);
  const threshold = options.precision_threshold;
  if (typeof threshold === 'number' && threshold < 0) throw dslError(`[precisionThreshold] must be greater than or equal to 0. Found [${threshold}] in [${name}]`);
  if (threshold !== undefined) readInteger(threshold, 'precision_threshold', type);
  const source = valueSource(options, fields, type);
  if (source.kind === 'keyword' && type !== 'value_count' && type !== 'cardinality') {
    throw new EngineError('illegal_argument', `Field [${source.field}] of type [keyword] is not supported for aggregation [${type}]`);
  }
  const sigma = options.sigma === undefined ? 2 : readNumber(options.sigma, 'sigma', type);
  if (sigma < 0) throw dslError(`[sigma] must be greater than or equal to 0. Found [${sigma}] in [${name}]`);
  return { type, name, subs: [], source, missing: parseMissingValue(options.missing, source, type, now), sigma };
}

function parseTerms(
  name: string,
  options: Record<string, unknown>,
  fields: ReadonlyMap<string, FlatField> | null,
  subs: AggregationSpec[],
  now: number,
): TermsSpec {
  checkKeys(
    options,
    [
      'field',
      'size',
      'shard_size',
      'min_doc_count',
      'shard_min_doc_count',
      'order',
      'missing',
      'include',
      'exclude',
      'show_term_doc_count_error',
      'execution_hint',
      'collect_mode',
      'format',
      'script',
      'value_type',
    ],
    'terms',
  );
  const source = valueSource(options, fields, 'terms');
  const size = options.size === undefined ? 10 : readInteger(options.size, 'size', 'terms', 1, 65_536);
  const defaultShardSize = Math.max(Math.floor(size * 1.5 + 10), size);
  const shardSize =
    options.shard_size === undefined ? defaultShardSize : Math.max(readInteger(options.shard_size, 'shard_size', 'terms', 1, 65_536), size);
  const minDocCount = options.min_doc_count === undefined ? 1 : readInteger(options.min_doc_count, 'min_doc_count', 'terms');
  if (options.collect_mode !== undefined) readEnum(options.collect_mode, ['breadth_first', 'depth_first'] as const, 'collect_mode', 'terms');
  if (options.show_term_doc_count_error !== undefined) readBoolean(options.show_term_doc_count_error, 'show_term_doc_count_error', 'terms');
  const order = parseBucketOrder(options.order, subs, 'terms', [
    { by: '_count', direction: 'desc', aggregation: '', stat: null },
  ]);
  const missing = parseMissingValue(options.missing, source, 'terms', now);
  const valueFilter = parseTermsValueFilter(options, name, source, now);
  const hint = options.execution_hint === undefined ? null : readEnum(options.execution_hint, ['map', 'global_ordinals', 'global_ordinals_hash', 'global_ordinals_low_cardinality'] as const, 'execution_hint', 'terms');
  return { type: 'terms', name, subs, source, size, shardSize, minDocCount, order, missing, valueFilter, mapHint: hint === 'map' };
}

function parseRange(
  name: string,
  type: 'range' | 'date_range',
  options: Record<string, unknown>,
  fields: ReadonlyMap<string, FlatField> | null,
  subs: AggregationSpec[],
  now: number,
): RangeSpec {
  checkKeys(options, ['field', 'ranges', 'keyed', 'format', 'missing', 'script', 'time_zone'], type);
  const source = valueSource(options, fields, type);
  if (type === 'date_range' && source.kind !== 'none' && source.format !== 'date') {
    throw new EngineError('illegal_argument', `Field [${source.field}] of type [${source.format}] is not supported for aggregation [date_range]`);
  }
  if (source.kind === 'keyword') {
    throw new EngineError('illegal_argument', `Field [${source.field}] of type [keyword] is not supported for aggregation [${type}]`);
  }
  if (!Array.isArray(options.ranges) || options.ranges.length === 0) throw dslError(`[${type}] [ranges] must be a non-empty array`);
  if (options.ranges.length > MAX_AGGREGATION_RANGES) {
    throw new EngineError('illegal_argument', `[${type}] [ranges] lists ${options.ranges.length} ranges, at most ${MAX_AGGREGATION_RANGES} are allowed`);
  }
  const dates = type === 'date_range' || source.format === 'date';
  const datePattern = dates && options.format !== undefined ? DatePattern.parse(readString(options.format, 'format', type), type) : null;
  const timeZone = readTimeZone(options.time_zone, type);
  const bound = (value: unknown, which: string): number | null => {
    if (value === undefined || value === null) return null;
    if (datePattern !== null && typeof value === 'string' && !value.startsWith('now')) {
      const millis = datePattern.parse(value, timeZone);
      if (millis !== null) return millis;
    }
    const dateLike = dates || (fields === null && typeof value === 'string' && Number.isNaN(Number(value)));
    return dateLike ? parseDateOption(value, which, type, now, timeZone) : readNumber(value, which, type);
  };
  const ranges = options.ranges.map((range) => {
    const object = expectObject(range, `${type}.ranges`);
    checkKeys(object, ['key', 'from', 'to'], `${type}.ranges`);
    const key = object.key === undefined ? null : readString(object.key, 'key', type);
    return { key, from: bound(object.from, 'from'), to: bound(object.to, 'to') };
  });
  // Buckets come back ordered by `from`, then `to` (an open end first, resp. last), as Elasticsearch orders its ranges.
  ranges.sort((left, right) => (left.from ?? -Infinity) - (right.from ?? -Infinity) || (left.to ?? Infinity) - (right.to ?? Infinity));
  const keyed = options.keyed === undefined ? false : readBoolean(options.keyed, 'keyed', type);
  const missing = options.missing === undefined || options.missing === null ? null : bound(options.missing, 'missing');
  const rangeSource: ValueSource = dates ? { ...source, format: 'date' } : source;
  return { type: 'range', requestedAs: type, name, subs, source: rangeSource, ranges, keyed, missing, datePattern, timeZone };
}

