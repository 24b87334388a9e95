/**
 * Running pipeline aggregations on the rendered, merged aggregations of the coordinating node:
 * checking every `buckets_path` against the request's aggregation tree (a 400 before any shard
 * works), reading bucket values with the gap policy, the parent pipelines (`derivative`,
 * `cumulative_sum`, `bucket_sort`) over a bucket list, and the sibling ones (`avg_bucket`,
 * `sum_bucket`, `max_bucket`, `min_bucket`). Rendered objects are found by aggregation name
 * through `namedOutputs`, so `typed_keys` names do not get in the way.
 */
import { setKey } from '../mapping/json-value.ts';
import type { AggregationSpec } from './aggregation-spec.ts';
import { METRIC_TYPES } from './aggregation-options.ts';
import { PIPELINE_TYPES, validationError, type BucketsPath, type GapPolicy, type PipelineSpec } from './pipeline-spec.ts';
import { javaDouble } from './value-format.ts';

/** Aggregation types whose output is a list of buckets. */
const MULTI_BUCKET_TYPES: ReadonlySet<string> = new Set(['terms', 'range', 'histogram', 'date_histogram', 'filters', 'composite', 'significant_terms', 'ip_range']);
/** Aggregation types whose output is one bucket. */
const SINGLE_BUCKET_TYPES: ReadonlySet<string> = new Set(['filter', 'missing']);
/** Pipelines whose output is one value. */
const VALUE_PIPELINES: ReadonlySet<string> = new Set(['derivative', 'cumulative_sum', 'avg_bucket', 'sum_bucket', 'max_bucket', 'min_bucket']);
/** Parents `derivative` and `cumulative_sum` accept. */
const HISTOGRAM_TYPES: ReadonlySet<string> = new Set(['histogram', 'date_histogram']);
/** Stats a `stats` / `extended_stats` path may read. */
const STATS_NAMES = new Set(['count', 'min', 'max', 'avg', 'sum', 'sum_of_squares', 'variance', 'variance_population', 'variance_sampling', 'std_deviation', 'std_deviation_population', 'std_deviation_sampling']);

/** Whether a spec is a pipeline aggregation. */
export function isPipeline(spec: AggregationSpec): spec is PipelineSpec {
  return PIPELINE_TYPES.has(spec.type);
}

/** The aggregation type a spec was requested as (`date_range` for a date range). */
function requestedType(spec: AggregationSpec): string {
  return spec.type === 'range' ? spec.requestedAs : spec.type;
}

/** Checks every pipeline of a parsed request: its place in the tree and its paths. */
export function validatePipelines(specs: readonly AggregationSpec[], parent: AggregationSpec | null = null): void {
  for (const spec of specs) {
    if (!isPipeline(spec)) {
      validatePipelines(spec.subs, spec);
      continue;
    }
    switch (spec.type) {
      case 'derivative':
      case 'cumulative_sum':
        if (parent === null || !HISTOGRAM_TYPES.has(parent.type)) {
          throw validationError(`${spec.type} aggregation [${spec.name}] must have a histogram, date_histogram or auto_date_histogram as parent`);
        }
        checkBucketPath(specs, spec.bucketsPath!, false);
        break;
      case 'bucket_sort':
        if (parent === null || !MULTI_BUCKET_TYPES.has(requestedType(parent)) || parent.type === 'filters') {
          throw validationError(`bucket_sort aggregation [${spec.name}] must be declared inside of another aggregation`);
        }
        for (const key of spec.sort) checkBucketPath(specs, key.path, true);
        break;
      default: {
        const path = spec.bucketsPath!;
        const target = path.names.length > 0 ? specs.find((sibling) => sibling.name === path.names[0]) : undefined;
        if (target === undefined) throw validationError(`No aggregation found for path [${path.text}]`);
        if (!MULTI_BUCKET_TYPES.has(requestedType(target))) {
          throw validationError(`The first aggregation in buckets_path must be a multi-bucket aggregation for aggregation [${spec.name}]; found [${requestedType(target)}] for buckets path: ${path.text}`);
        }
        checkBucketPath(target.subs, { ...path, names: path.names.slice(1) }, false);
      }
    }
  }
}

/** Checks a path read from each bucket of an aggregation whose sub-aggregations are `subs`. */
function checkBucketPath(subs: readonly AggregationSpec[], path: BucketsPath, allowKey: boolean): void {
  const fail = (why: string): never => {
    throw validationError(`${why} for buckets_path [${path.text}]`);
  };
  let level = subs;
  for (let i = 0; i < path.names.length; i++) {
    const name = path.names[i]!;
    const target = level.find((spec) => spec.name === name);
    if (target === undefined) throw validationError(`No aggregation found for path [${path.text}]`);
    const last = i === path.names.length - 1;
    const type = requestedType(target);
    if (SINGLE_BUCKET_TYPES.has(type)) {
      if (last && path.stat !== '_count') fail(`[${name}] is a single-bucket aggregation: read its [_count] or a metric under it`);
      level = target.subs;
      continue;
    }
    if (!last) fail(`[${name}] has no sub-aggregation [${path.names[i + 1]}] to read`);
    if (MULTI_BUCKET_TYPES.has(type)) {
      if (path.stat !== '_bucket_count') fail(`buckets_path must reference either a number value or a single value numeric metric aggregation, got: [${type}]`);
      return;
    }
    if (VALUE_PIPELINES.has(type)) {
      if (path.stat !== null && path.stat !== 'value') fail(`[${name}] has a single value`);
      return;
    }
    if (!METRIC_TYPES.has(type)) fail(`[${name}] of type [${type}] has no value`);
    checkMetricStat(type, name, path.stat, fail);
    return;
  }
  if (path.stat === '_key' && !allowKey) fail('[_key] is not a number');
  if (path.stat !== '_count' && path.stat !== '_key') fail(`buckets_path must reference either a number value or a single value numeric metric aggregation`);
}

function checkMetricStat(type: string, name: string, stat: string | null, fail: (why: string) => never): void {
  if (type === 'stats' || type === 'extended_stats') {
    if (stat === null || !STATS_NAMES.has(stat)) fail(`[${name}] is a multi-value aggregation: name one of its stats (${[...STATS_NAMES].join(', ')})`);
  } else if (type === 'percentiles' || type === 'percentile_ranks') {
    if (stat === null || !Number.isFinite(Number(stat))) fail(`[${name}] is a multi-value aggregation: name a percent, as [${name}.99]`);
  } else if (stat !== null && stat !== 'value') {
    fail(`[${name}] is a single-value aggregation: it has no [${stat}]`);
  }
}

/** Each rendered aggregation object's outputs by aggregation name (names as requested, without `typed_keys` prefixes). */
const NAMED_OUTPUTS = new WeakMap<object, Map<string, unknown>>();

/** Records that `rendered` holds `value` as the output of the aggregation `name`. */
export function recordOutput(rendered: object, name: string, value: unknown): void {
  let outputs = NAMED_OUTPUTS.get(rendered);
  if (outputs === undefined) NAMED_OUTPUTS.set(rendered, (outputs = new Map()));
  outputs.set(name, value);
}

/** The output of the aggregation `name` inside `rendered`. */
export function outputNamed(rendered: unknown, name: string): Record<string, unknown> | undefined {
  if (typeof rendered !== 'object' || rendered === null) return undefined;
  return NAMED_OUTPUTS.get(rendered)?.get(name) as Record<string, unknown> | undefined;
}

/** A rendered multi-bucket output's buckets, keyed or not, as a list. */
export function renderedBuckets(output: Record<string, unknown> | undefined): { key: unknown; bucket: Record<string, unknown> }[] {
  const buckets = output?.buckets;
  if (Array.isArray(buckets)) return buckets.map((bucket: Record<string, unknown>) => ({ key: bucket.key, bucket }));
  if (typeof buckets === 'object' && buckets !== null) {
    return Object.entries(buckets as Record<string, Record<string, unknown>>).map(([key, bucket]) => ({ key: bucket.key ?? key, bucket }));
  }
  return [];
}

/** The raw value a path reads from one rendered bucket (null when it has none). */
function rawBucketValue(bucket: Record<string, unknown>, path: BucketsPath): unknown {
  let target: Record<string, unknown> | undefined = bucket;
  for (const name of path.names) target = outputNamed(target, name);
  if (target === undefined) return null;
  switch (path.stat) {
    case '_count':
      return target.doc_count;
    case '_key':
      return target.key;
    case '_bucket_count':
      return renderedBuckets(target).length;
    case null:
    case 'value':
      return target.value;
  }
  const values = target.values;
  if (Array.isArray(values)) return (values as { key: number; value: unknown }[]).find((entry) => entry.key === Number(path.stat))?.value ?? null;
  if (typeof values === 'object' && values !== null) {
    const entry = Object.entries(values).find(([key]) => Number(key) === Number(path.stat));
    return entry === undefined ? null : entry[1];
  }
  return target[path.stat];
}

/** A bucket's value under a gap policy: NaN for a gap that is skipped (ES BucketHelpers.resolveBucketValue). */
export function bucketValue(bucket: Record<string, unknown>, path: BucketsPath, gapPolicy: GapPolicy): number {
  const raw = rawBucketValue(bucket, path);
  const value = typeof raw === 'number' ? raw : NaN;
  const countRead = path.stat === '_count' || path.stat === '_bucket_count';
  const gap = !Number.isFinite(value) || (bucket.doc_count === 0 && !countRead);
  if (!gap) return value;
  if (gapPolicy === 'insert_zeros') return 0;
  if (gapPolicy === 'keep_values' && Number.isFinite(value)) return value;
  return NaN;
}

/** How pipeline outputs are named in the response (`typed_keys` prefixes them). */
export type OutputName = (spec: PipelineSpec) => string;

/** The `typed_keys` result type of a pipeline's output. */
export function pipelineResultType(spec: PipelineSpec): string {
  if (spec.type === 'derivative') return 'derivative';
  if (spec.type === 'max_bucket' || spec.type === 'min_bucket') return 'bucket_metric_value';
  return 'simple_value';
}

function numberOrNull(value: number): number | null {
  return Number.isFinite(value) ? value : null;
}

/**
 * Runs the parent pipelines among `subs` over a multi-bucket aggregation's rendered buckets, in
 * request order; returns the buckets to show (`bucket_sort` may reorder and cut them).
 */
export function applyParentPipelines(subs: readonly AggregationSpec[], buckets: Record<string, unknown>[], outputName: OutputName): Record<string, unknown>[] {
  let result = buckets;
  for (const spec of subs) {
    if (!isPipeline(spec)) continue;
    if (spec.type === 'derivative') addDerivative(spec, result, outputName(spec));
    else if (spec.type === 'cumulative_sum') addCumulativeSum(spec, result, outputName(spec));
    else if (spec.type === 'bucket_sort') result = bucketSort(spec, result);
  }
  return result;
}

function putOutput(bucket: Record<string, unknown>, spec: PipelineSpec, name: string, value: Record<string, unknown>): void {
  setKey(bucket, name, value);
  recordOutput(bucket, spec.name, value);
}

function addDerivative(spec: PipelineSpec, buckets: Record<string, unknown>[], name: string): void {
  let previous: number | null = null;
  let previousKey = 0;
  for (const bucket of buckets) {
    const value = bucketValue(bucket, spec.bucketsPath!, spec.gapPolicy);
    const key = typeof bucket.key === 'number' ? bucket.key : 0;
    if (previous !== null) {
      const gradient = value - previous;
      const output: Record<string, unknown> = { value: numberOrNull(gradient) };
      if (spec.unit !== null) output.normalized_value = numberOrNull(gradient / ((key - previousKey) / spec.unit));
      putOutput(bucket, spec, name, output);
    }
    // Like ES, a gap becomes the previous value too: the bucket after it has no derivative value either.
    previous = value;
    previousKey = key;
  }
}

function addCumulativeSum(spec: PipelineSpec, buckets: Record<string, unknown>[], name: string): void {
  let sum = 0;
  for (const bucket of buckets) {
    const value = bucketValue(bucket, spec.bucketsPath!, 'insert_zeros');
    sum += value;
    putOutput(bucket, spec, name, { value: sum });
  }
}

function compareSortValues(left: unknown, right: unknown): number {
  if (typeof left === 'number' && typeof right === 'number') return left - right;
  const leftText = String(left);
  const rightText = String(right);
  return leftText < rightText ? -1 : leftText > rightText ? 1 : 0;
}

function bucketSort(spec: PipelineSpec, buckets: Record<string, unknown>[]): Record<string, unknown>[] {
  const sortable: { bucket: Record<string, unknown>; values: unknown[] }[] = [];
  for (const bucket of buckets) {
    const values = spec.sort.map((key) => (key.path.stat === '_key' && key.path.names.length === 0 ? bucket.key : bucketValue(bucket, key.path, spec.gapPolicy)));
    if (spec.gapPolicy === 'skip' && values.some((value) => typeof value === 'number' && Number.isNaN(value))) continue;
    sortable.push({ bucket, values });
  }
  if (spec.sort.length > 0) {
    sortable.sort((left, right) => {
      for (let i = 0; i < spec.sort.length; i++) {
        const result = compareSortValues(left.values[i], right.values[i]);
        if (result !== 0) return spec.sort[i]!.direction === 'asc' ? result : -result;
      }
      return 0;
    });
  }
  const end = spec.size === null ? sortable.length : spec.from + spec.size;
  return sortable.slice(spec.from, end).map((entry) => entry.bucket);
}

/** The output of a sibling pipeline, computed over the rendered output of the sibling it names (`keys` print as ES prints bucket keys). */
export function siblingPipelineOutput(spec: PipelineSpec, siblings: object, specs: readonly AggregationSpec[]): Record<string, unknown> {
  const path = spec.bucketsPath!;
  const target = outputNamed(siblings, path.names[0]!);
  const targetSpec = specs.find((sibling) => sibling.name === path.names[0]);
  const inner: BucketsPath = { ...path, names: path.names.slice(1) };
  const values: { key: string; value: number }[] = [];
  for (const { key, bucket } of renderedBuckets(target)) {
    const value = bucketValue(bucket, inner, spec.gapPolicy);
    if (Number.isNaN(value)) continue;
    const keyText = typeof bucket.key_as_string === 'string' ? bucket.key_as_string : typeof key === 'number' && targetSpec?.type === 'histogram' ? javaDouble(key) : String(key);
    values.push({ key: keyText, value });
  }
  switch (spec.type) {
    case 'sum_bucket':
      return { value: values.reduce((sum, entry) => sum + entry.value, 0) };
    case 'avg_bucket':
      return { value: values.length === 0 ? null : values.reduce((sum, entry) => sum + entry.value, 0) / values.length };
    default: {
      const sign = spec.type === 'max_bucket' ? 1 : -1;
      const best = values.reduce((found, entry) => (sign * entry.value > sign * found ? entry.value : found), sign * -Infinity);
      return { value: values.length === 0 ? null : best, keys: values.filter((entry) => entry.value === best).map((entry) => entry.key) };
    }
  }
}
