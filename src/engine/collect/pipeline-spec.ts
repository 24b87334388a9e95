/**
 * Pipeline aggregations: they read no document, only the output of other aggregations, and run
 * on the coordinating node after the shard merge (pipelines.ts). Parent pipelines (`derivative`,
 * `cumulative_sum`, `bucket_sort`) sit under a multi-bucket aggregation and work on its buckets;
 * sibling pipelines (`avg_bucket`, `sum_bucket`, `max_bucket`, `min_bucket`) sit next to one and
 * reduce its buckets to a value. `buckets_path` is `agg>agg>metric`, with `metric.stat` for
 * multi-value metrics, `_count`, `_key` and `agg>_bucket_count`; every path is checked against
 * the request's aggregation tree while parsing.
 */
import { EngineError } from '../errors.ts';
import { checkKeys, dslError, isDslObject, readEnum, readInteger, readString, asArray, singleEntry } from '../query/dsl-reader.ts';

/** Parent pipeline types (they live under a multi-bucket aggregation). */
export const PARENT_PIPELINE_TYPES = ['derivative', 'cumulative_sum', 'bucket_sort'] as const;
/** Sibling pipeline types (they reduce the buckets of a sibling aggregation). */
export const SIBLING_PIPELINE_TYPES = ['avg_bucket', 'sum_bucket', 'max_bucket', 'min_bucket'] as const;
/** Every pipeline aggregation type. */
export const PIPELINE_TYPES: ReadonlySet<string> = new Set([...PARENT_PIPELINE_TYPES, ...SIBLING_PIPELINE_TYPES]);

/** What a pipeline does with a bucket whose value is missing (empty bucket, metric without a value). */
export type GapPolicy = 'skip' | 'insert_zeros' | 'keep_values';

/** A parsed `buckets_path`: aggregation names, then what is read from the last one. */
export interface BucketsPath {
  text: string;
  /** Aggregation names from the pipeline's level (sibling) or from the parent's bucket (parent). */
  names: string[];
  /** `_count`, `_key`, `_bucket_count`, or a metric's stat (`value` for single-value metrics), or null for the metric's value. */
  stat: string | null;
}

/** One `bucket_sort` key. */
export interface BucketSortKey {
  path: BucketsPath;
  direction: 'asc' | 'desc';
}

/** A pipeline aggregation. */
export interface PipelineSpec {
  type: (typeof PARENT_PIPELINE_TYPES)[number] | (typeof SIBLING_PIPELINE_TYPES)[number];
  name: string;
  subs: [];
  /** The value read (null for `bucket_sort`). */
  bucketsPath: BucketsPath | null;
  gapPolicy: GapPolicy;
  /** `derivative` `unit` in milliseconds (adds `normalized_value`); null without one. */
  unit: number | null;
  /** `bucket_sort`. */
  sort: BucketSortKey[];
  from: number;
  size: number | null;
}

const UNIT_MILLIS: Record<string, number> = {
  ms: 1,
  s: 1000,
  '1s': 1000,
  second: 1000,
  m: 60_000,
  '1m': 60_000,
  minute: 60_000,
  h: 3_600_000,
  '1h': 3_600_000,
  hour: 3_600_000,
  d: 86_400_000,
  '1d': 86_400_000,
  day: 86_400_000,
  w: 604_800_000,
  '1w': 604_800_000,
  week: 604_800_000,
};

/** Parses a `buckets_path` string. */
export function parseBucketsPath(text: string, owner: string): BucketsPath {
  if (text === '') throw validationError(`[${owner}] buckets_path must not be empty`);
  const names = text.split('>');
  let last = names.pop()!;
  let stat: string | null = null;
  const bracket = /^(.*)\[(.+)\]$/.exec(last);
  if (bracket !== null) {
    last = bracket[1]!;
    stat = bracket[2]!;
  } else if (!last.startsWith('_') && last.includes('.')) {
    stat = last.slice(last.indexOf('.') + 1);
    last = last.slice(0, last.indexOf('.'));
  }
  if (last === '_count' || last === '_key' || last === '_bucket_count') {
    if (stat !== null) throw validationError(`[${owner}] invalid buckets_path [${text}]`);
    return { text, names, stat: last };
  }
  if (names.some((name) => name === '') || last === '') throw validationError(`[${owner}] invalid buckets_path [${text}]`);
  return { text, names: [...names, last], stat };
}

/** Parses a pipeline aggregation's options (`fields` are not needed: pipelines read aggregations). */
export function parsePipeline(name: string, type: PipelineSpec['type'], options: Record<string, unknown>): PipelineSpec {
  const spec: PipelineSpec = { type, name, subs: [], bucketsPath: null, gapPolicy: 'skip', unit: null, sort: [], from: 0, size: null };
  if (type === 'bucket_sort') {
    checkKeys(options, ['sort', 'from', 'size', 'gap_policy'], type);
    spec.sort = asArray(options.sort ?? []).map((entry) => parseSortKey(entry, type));
    spec.from = options.from === undefined ? 0 : readInteger(options.from, 'from', type);
    spec.size = options.size === undefined || options.size === null ? null : readInteger(options.size, 'size', type, 1);
  } else {
    checkKeys(options, type === 'derivative' ? ['buckets_path', 'gap_policy', 'format', 'unit'] : ['buckets_path', 'gap_policy', 'format'], type);
    if (options.buckets_path === undefined) throw dslError(`[${type}] Required [buckets_path]`);
    spec.bucketsPath = parseBucketsPath(readPathOption(options.buckets_path, type), type);
    if (options.format !== undefined) throw dslError(`[${type}] [format] is not supported on pipeline aggregations`);
    if (options.unit !== undefined) {
      const unit = readString(options.unit, 'unit', type);
      if (!Object.hasOwn(UNIT_MILLIS, unit)) throw dslError(`[${type}] unsupported [unit] [${unit}]: use one of s, m, h, d, w (or second, minute, hour, day, week)`);
      spec.unit = UNIT_MILLIS[unit]!;
    }
  }
  if (type === 'cumulative_sum' && options.gap_policy !== undefined) throw dslError('[cumulative_sum] unknown field [gap_policy]');
  if (options.gap_policy !== undefined) spec.gapPolicy = readEnum(options.gap_policy, ['skip', 'insert_zeros', 'keep_values'] as const, 'gap_policy', type);
  return spec;
}

/** `buckets_path` as a string, or the single-entry object form ES also takes. */
function readPathOption(value: unknown, type: string): string {
  if (isDslObject(value)) {
    const entries = Object.values(value);
    if (entries.length !== 1) throw dslError(`[${type}] buckets_path must name exactly one path`);
    return readString(entries[0], 'buckets_path', type);
  }
  if (Array.isArray(value)) {
    if (value.length !== 1) throw dslError(`[${type}] buckets_path must name exactly one path`);
    return readString(value[0], 'buckets_path', type);
  }
  return readString(value, 'buckets_path', type);
}

function parseSortKey(entry: unknown, type: string): BucketSortKey {
  if (typeof entry === 'string') return { path: parseBucketsPath(entry, type), direction: 'asc' };
  if (!isDslObject(entry)) throw dslError(`[${type}] [sort] entries must be strings or objects`);
  const [path, order] = singleEntry(entry, `${type}.sort`);
  let direction: unknown = order;
  if (isDslObject(order)) {
    checkKeys(order, ['order'], `${type}.sort`);
    direction = order.order ?? 'asc';
  }
  return { path: parseBucketsPath(path, type), direction: readEnum(direction, ['asc', 'desc'] as const, 'order', `${type}.sort`) };
}

/** An invalid pipeline (ES: a request validation failure, 400). */
export function validationError(message: string): EngineError {
  return new EngineError('action_request_validation', `Validation Failed: 1: ${message};`);
}
