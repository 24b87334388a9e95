/**
 * Renders merged aggregation partials in the Elasticsearch response shape: final bucket order,
 * size and min_doc_count for terms, empty-bucket filling for histograms, metric values, and the
 * `*_as_string` forms of dates and booleans. Every rendered bucket is counted against the
 * request's bucket budget (`search.max_buckets`) as it is built.
 */
import { decodeIp } from '../mapping/ip.ts';
import { setKey } from '../mapping/json-value.ts';
import type {
  AggregationPartial,
  AggregationPartials,
  CompositePartial,
  DigestPartial,
  HdrPartial,
  IpRangePartial,
  SignificantTermsPartial,
  TopHitsPartial,
  ExtendedStatsPartial,
  FiltersPartial,
  SingleBucketPartial,
  HistogramPartial,
  KeyedBucketPartial,
  RangePartial,
  StatsPartial,
  TermsPartial,
  ValueFormat,
} from './aggregation-partials.ts';
import { cardinalityValue, partialNamed } from './aggregation-partials.ts';
import type { AggregationSpec, MetricSpec, RangeSpec, TermsSpec } from './aggregation-spec.ts';
import { parseAggregations } from './aggregation-spec.ts';
import { BucketBudget } from './bucket-budget.ts';
import { renderExtendedStats } from './extended-stats.ts';
import { filtersBucketKeys } from './filter-aggregators.ts';
import type { FiltersSpec } from './filter-spec.ts';
import { renderPercentiles } from './percentiles.ts';
import { compareBuckets } from './bucket-order.ts';
import type { HistogramSpec } from './histogram-spec.ts';
import { histogramKey, histogramKeyText, nextHistogramKey } from './histogram-spec.ts';
import { rangeBucketKey } from './numeric-bucket-aggregators.ts';
import { exactDigits, isExactString } from './exact-sort-values.ts';
import { compareCompositeKeys, renderCompositeKey, type CompositeSpec } from './composite-spec.ts';
import type { PipelineSpec } from './pipeline-spec.ts';
import { applyParentPipelines, isPipeline, pipelineResultType, recordOutput, siblingPipelineOutput, type OutputName } from './pipelines.ts';
import { ipRangeBucketHeads } from './ip-range.ts';
import { significantBuckets, type SignificantTermsSpec } from './significant-terms.ts';
import { plainTopHit, renderTopHits, type TopHitRenderer } from './top-hits.ts';
import { typedKeyPrefix } from './typed-keys.ts';
import { formatValue } from './value-format.ts';

/** What rendering carries down the aggregation tree: the request's bucket budget and how names are written. */
interface RenderContext {
  budget: BucketBudget;
  /** ES `typed_keys`: each name is written `<type>#<name>`. */
  typedKeys: boolean;
  renderTopHit: TopHitRenderer;
  exactNumber: (digits: string) => unknown;
}

/** Rendering options of `renderAggregations`. */
export interface RenderAggregationsOptions {
  /** ES `typed_keys`: prefix every aggregation name with its type (`sterms#by_tag`, `avg#price`). */
  typedKeys?: boolean;
  /** How `top_hits` hits render (the search service filters `_source` and highlights); the whole source by default. */
  renderTopHit?: TopHitRenderer;
  /** How a `terms` key of a long beyond ±(2^53 − 1) renders from its digits (the response writes a JSON number as is); its digits by default. */
  exactNumber?: (digits: string) => unknown;
}

/** Renders merged partials for the request's `aggs` (ES response `aggregations` object); throws past MAX_BUCKETS buckets. */
export function renderAggregations(partials: AggregationPartials, aggsRequest: unknown, options: RenderAggregationsOptions = {}): Record<string, unknown> {
  return renderSpecs({}, parseAggregations(aggsRequest, null), partials, {
    budget: new BucketBudget(),
    typedKeys: options.typedKeys === true,
    renderTopHit: options.renderTopHit ?? plainTopHit,
    exactNumber: options.exactNumber ?? ((digits: string) => digits),
  });
}

/** Adds each spec's rendering to `rendered` under the spec's name (names are user input: own keys only). */
function renderSpecs(
  rendered: Record<string, unknown>,
  specs: readonly AggregationSpec[],
  partials: AggregationPartials,
  context: RenderContext,
): Record<string, unknown> {
  for (const spec of specs) {
    if (isPipeline(spec)) continue;
    const partial = partialNamed(partials, spec.name) ?? emptyPartial(spec);
    const output = withMeta(renderOne(spec, partial, context), spec.meta);
    setKey(rendered, context.typedKeys ? `${typedKeyPrefix(spec, partial)}#${spec.name}` : spec.name, output);
    recordOutput(rendered, spec.name, output);
  }
  // Sibling pipelines, once the aggregations they read are rendered (parent ones ran inside their parent).
  for (const spec of specs) {
    if (!isPipeline(spec) || !spec.type.endsWith('_bucket')) continue;
    const output = withMeta(siblingPipelineOutput(spec, rendered, specs), spec.meta);
    setKey(rendered, pipelineOutputName(context)(spec), output);
    recordOutput(rendered, spec.name, output);
  }
  return rendered;
}

/** An aggregation's output with its request `meta` first, as Elasticsearch returns it. */
function withMeta<T>(output: T, meta: Record<string, unknown> | undefined): T {
  if (meta === undefined || output === null || typeof output !== 'object') return output;
  return { meta, ...output };
}

/** How a pipeline's output is named in the response. */
function pipelineOutputName(context: RenderContext): OutputName {
  return (spec) => (context.typedKeys ? `${pipelineResultType(spec)}#${spec.name}` : spec.name);
}

/** The partial of an aggregation that saw no document. */
function emptyPartial(spec: Exclude<AggregationSpec, PipelineSpec>): AggregationPartial {
  switch (spec.type) {
    case 'filter':
    case 'missing':
      return { type: 'single_bucket', docCount: 0, aggs: {} };
    case 'filters':
      return { type: 'filters', buckets: filtersBucketKeys(spec).map((key) => ({ key, docCount: 0, aggs: {} })) };
    case 'composite':
      return { type: 'composite', buckets: [] };
    case 'top_hits':
      return { type: 'top_hits', total: 0, maxScore: null, hits: [] };
    case 'ip_range':
      return { type: 'ip_range', buckets: [] };
    case 'significant_terms':
      return { type: 'significant_terms', format: spec.source.format, subsetSize: 0, supersetSize: 0, buckets: [] };
  }
  const format: ValueFormat = spec.source.format;
  switch (spec.type) {
    case 'terms':
      return { type: 'terms', format, buckets: [], otherDocCount: 0, errorBound: 0 };
    case 'range':
      return {
        type: 'range',
        format,
        buckets: spec.ranges.map((range) => ({ key: rangeBucketKey(spec, range), from: range.from, to: range.to, docCount: 0, aggs: {} })),
      };
    case 'histogram':
    case 'date_histogram':
      return { type: 'histogram', format, buckets: [] };
    case 'value_count':
      return { type: 'value_count', count: 0 };
    case 'cardinality':
      return { type: 'cardinality', values: [], sketch: null };
    case 'extended_stats':
      return { type: 'extended_stats', format, count: 0, sum: 0, sumOfSquares: 0, min: null, max: null };
    case 'percentiles':
    case 'percentile_ranks':
      if (spec.hdrDigits !== null) return { type: 'hdr', format, digits: spec.hdrDigits, encoded: '' };
      return { type: 'digest', format, compression: spec.compression, means: [], weights: [] };
    default:
      return { type: 'stats', format, count: 0, sum: 0, min: null, max: null };
  }
}

function renderOne(spec: Exclude<AggregationSpec, PipelineSpec>, partial: AggregationPartial, context: RenderContext): Record<string, unknown> {
  switch (spec.type) {
    case 'terms':
      return renderTerms(spec, partial as TermsPartial, context);
    case 'range':
      return renderRange(spec, partial as RangePartial, context);
    case 'histogram':
    case 'date_histogram':
      return renderHistogram(spec, partial as HistogramPartial, context);
    case 'filter':
    case 'missing': {
      const bucket = partial as SingleBucketPartial;
      context.budget.consume(1);
      return renderSpecs({ doc_count: bucket.docCount }, spec.subs, bucket.aggs, context);
    }
    case 'filters':
      return renderFilters(spec, partial as FiltersPartial, context);
    case 'composite':
      return renderComposite(spec, partial as CompositePartial, context);
    case 'top_hits':
      return renderTopHits(spec, partial as TopHitsPartial, context.renderTopHit);
    case 'significant_terms':
      return renderSignificantTerms(spec, partial as SignificantTermsPartial, context);
    case 'ip_range': {
      const heads = ipRangeBucketHeads(spec, partial as IpRangePartial);
      context.budget.consume(heads.length);
      const buckets = heads.map(({ head, aggs }) => renderSpecs(head, spec.subs, aggs, context));
      return keyedBuckets(applyParentPipelines(spec.subs, buckets, pipelineOutputName(context)), spec.keyed);
    }
    case 'percentiles':
    case 'percentile_ranks':
      return renderPercentiles(spec, partial as DigestPartial | HdrPartial);
    case 'extended_stats':
      return renderExtendedStats(partial as ExtendedStatsPartial, spec.sigma);
    default:
      return renderMetric(spec, partial);
  }
}

/** `composite`: the first `size` keys of the merged shards' keys, and `after_key` to ask for the next page. */
function renderComposite(spec: CompositeSpec, partial: CompositePartial, context: RenderContext): Record<string, unknown> {
  const kept = [...partial.buckets].sort((left, right) => compareCompositeKeys(spec.sources, left.key, right.key)).slice(0, spec.size);
  context.budget.consume(kept.length);
  const buckets = kept.map((bucket) => renderSpecs({ key: renderCompositeKey(spec.sources, bucket.key), doc_count: bucket.docCount }, spec.subs, bucket.aggs, context));
  const rendered: Record<string, unknown> = {};
  if (kept.length > 0) rendered.after_key = renderCompositeKey(spec.sources, kept[kept.length - 1]!.key);
  rendered.buckets = applyParentPipelines(spec.subs, buckets, pipelineOutputName(context));
  return rendered;
}

/** `significant_terms`: foreground and background sizes, then the most significant terms with their scores. */
function renderSignificantTerms(spec: SignificantTermsSpec, partial: SignificantTermsPartial, context: RenderContext): Record<string, unknown> {
  const shown = significantBuckets(spec, partial);
  context.budget.consume(shown.length);
  const buckets = shown.map((bucket) => {
    const rendered: Record<string, unknown> = { key: partial.format === 'ip' && typeof bucket.key === 'string' ? decodeIp(bucket.key) : bucket.key };
    if (typeof bucket.key === 'number' && partial.format === 'date') rendered.key_as_string = formatValue(bucket.key, 'date');
    Object.assign(rendered, { doc_count: bucket.docCount, score: bucket.score, bg_count: bucket.bgCount });
    return renderSpecs(rendered, spec.subs, bucket.aggs, context);
  });
  return { doc_count: partial.subsetSize, bg_count: partial.supersetSize, buckets: applyParentPipelines(spec.subs, buckets, pipelineOutputName(context)) };
}

/** `filters` buckets: an object by key for named filters (unless `keyed: false`), a list for anonymous ones. */
function renderFilters(spec: FiltersSpec, partial: FiltersPartial, context: RenderContext): Record<string, unknown> {
  context.budget.consume(partial.buckets.length);
  const rendered = partial.buckets.map((bucket) => ({ key: bucket.key, body: renderSpecs({ doc_count: bucket.docCount }, spec.subs, bucket.aggs, context) }));
  if (spec.keys === null) return { buckets: rendered.map(({ body }) => body) };
  if (!spec.keyed) return { buckets: rendered.map(({ key, body }) => ({ key, ...body })) };
  const keyed: Record<string, unknown> = {};
  for (const { key, body } of rendered) setKey(keyed, key, body);
  return { buckets: keyed };
}

function renderKeyedBucket(
  bucket: KeyedBucketPartial,
  format: ValueFormat,
  subs: readonly AggregationSpec[],
  keyAsStringFirst: boolean,
  context: RenderContext,
  printDate: ((millis: number) => string) | null = null,
): Record<string, unknown> {
  const rendered: Record<string, unknown> = {};
  let keyAsString: string | null = null;
  if (typeof bucket.key === 'number' && format === 'date' && printDate !== null) keyAsString = printDate(bucket.key);
  else if (typeof bucket.key === 'number' && (format === 'date' || format === 'boolean')) keyAsString = formatValue(bucket.key, format);
  if (keyAsStringFirst && keyAsString !== null) rendered.key_as_string = keyAsString;
  rendered.key = format === 'ip' && typeof bucket.key === 'string' ? decodeIp(bucket.key) : isExactString(bucket.key) ? context.exactNumber(exactDigits(bucket.key)) : bucket.key;
  if (!keyAsStringFirst && keyAsString !== null) rendered.key_as_string = keyAsString;
  rendered.doc_count = bucket.docCount;
  return renderSpecs(rendered, subs, bucket.aggs, context);
}

function renderTerms(spec: TermsSpec, partial: TermsPartial, context: RenderContext): Record<string, unknown> {
  const sorted = [...partial.buckets].sort((left, right) => compareBuckets(spec.order, left, right));
  const shown = sorted.filter((bucket) => bucket.docCount >= spec.minDocCount).slice(0, spec.size);
  context.budget.consume(shown.length);
  let shownCount = 0;
  let totalCount = partial.otherDocCount;
  for (const bucket of shown) shownCount += bucket.docCount;
  for (const bucket of partial.buckets) totalCount += bucket.docCount;
  const buckets = shown.map((bucket) => renderKeyedBucket(bucket, partial.format, spec.subs, false, context));
  return {
    doc_count_error_upper_bound: partial.errorBound,
    sum_other_doc_count: totalCount - shownCount,
    buckets: applyParentPipelines(spec.subs, buckets, pipelineOutputName(context)),
  };
}

function renderRange(spec: RangeSpec, partial: RangePartial, context: RenderContext): Record<string, unknown> {
  const dates = partial.format === 'date';
  const asString = (value: number): string => (spec.datePattern === null ? formatValue(value, 'date', spec.timeZone) : spec.datePattern.format(value, spec.timeZone));
  context.budget.consume(partial.buckets.length);
  const allBuckets = partial.buckets.map((bucket) => {
    const rendered: Record<string, unknown> = { key: bucket.key };
    if (bucket.from !== null) {
      rendered.from = bucket.from;
      if (dates) rendered.from_as_string = asString(bucket.from);
    }
    if (bucket.to !== null) {
      rendered.to = bucket.to;
      if (dates) rendered.to_as_string = asString(bucket.to);
    }
    rendered.doc_count = bucket.docCount;
    return renderSpecs(rendered, spec.subs, bucket.aggs, context);
  });
  return keyedBuckets(applyParentPipelines(spec.subs, allBuckets, pipelineOutputName(context)), spec.keyed);
}

/** Range buckets as a list, or with `keyed` as an object by key (each without its `key`). */
function keyedBuckets(buckets: Record<string, unknown>[], keyed: boolean): Record<string, unknown> {
  if (!keyed) return { buckets };
  const byKey: Record<string, unknown> = {};
  for (const bucket of buckets) {
    const { key, ...rest } = bucket;
    setKey(byKey, String(key), rest);
  }
  return { buckets: byKey };
}

/** Adds the empty buckets of a min_doc_count 0 histogram between the bounds, each counted in the bucket budget as it is made. */
function fillHistogram(spec: HistogramSpec, buckets: readonly KeyedBucketPartial[], context: RenderContext): KeyedBucketPartial[] {
  let first = buckets.length > 0 ? (buckets[0]!.key as number) : null;
  let last = buckets.length > 0 ? (buckets[buckets.length - 1]!.key as number) : null;
  const bounds = spec.extendedBounds;
  if (bounds?.min != null) {
    const key = histogramKey(spec, bounds.min);
    first = first === null ? key : Math.min(first, key);
  }
  if (bounds?.max != null) {
    const key = histogramKey(spec, bounds.max);
    last = last === null ? key : Math.max(last, key);
  }
  if (first === null || last === null) {
    context.budget.consume(buckets.length);
    return [...buckets];
  }
  const byKey = new Map<number, KeyedBucketPartial>();
  for (const bucket of buckets) byKey.set(bucket.key as number, bucket);
  const filled: KeyedBucketPartial[] = [];
  for (let key = first; key <= last; key = nextHistogramKey(spec, key)) {
    context.budget.consume(1);
    filled.push(byKey.get(key) ?? { key, docCount: 0, aggs: {} });
  }
  return filled;
}

/** The buckets of a min_doc_count > 0 histogram, counted in the bucket budget. */
function keptHistogramBuckets(spec: HistogramSpec, buckets: readonly KeyedBucketPartial[], context: RenderContext): KeyedBucketPartial[] {
  const kept = buckets.filter((bucket) => bucket.docCount >= spec.minDocCount);
  context.budget.consume(kept.length);
  return kept;
}

function renderHistogram(spec: HistogramSpec, partial: HistogramPartial, context: RenderContext): Record<string, unknown> {
  let buckets = spec.minDocCount === 0 ? fillHistogram(spec, partial.buckets, context) : keptHistogramBuckets(spec, partial.buckets, context);
  const keyAscending = spec.order[0]!.by === '_key' && spec.order[0]!.direction === 'asc';
  if (!keyAscending) buckets = [...buckets].sort((left, right) => compareBuckets(spec.order, left, right));
  const format: ValueFormat = spec.type === 'date_histogram' ? 'date' : 'number';
  const rendered = applyParentPipelines(
    spec.subs,
    buckets.map((bucket) => renderKeyedBucket(bucket, format, spec.subs, true, context, (millis) => histogramKeyText(spec, millis))),
    pipelineOutputName(context),
  );
  if (!spec.keyed) return { buckets: rendered };
  const keyed: Record<string, unknown> = {};
  for (const bucket of rendered) setKey(keyed, String(bucket.key_as_string ?? bucket.key), bucket);
  return { buckets: keyed };
}

function withString(rendered: Record<string, unknown>, name: string, value: number | null, format: ValueFormat): void {
  rendered[name] = value;
  if (value !== null && format === 'date') rendered[`${name}_as_string`] = formatValue(value, 'date');
}

function renderMetric(spec: MetricSpec, partial: AggregationPartial): Record<string, unknown> {
  if (partial.type === 'value_count') return { value: partial.count };
  if (partial.type === 'cardinality') return { value: cardinalityValue(partial) };
  const stats = partial as StatsPartial;
  const average = stats.count === 0 ? null : stats.sum / stats.count;
  const rendered: Record<string, unknown> = {};
  switch (spec.type) {
    case 'min':
      withString(rendered, 'value', stats.min, stats.format);
      return rendered;
    case 'max':
      withString(rendered, 'value', stats.max, stats.format);
      return rendered;
    case 'sum':
      return { value: stats.sum };
    case 'avg':
      withString(rendered, 'value', average, stats.format);
      return rendered;
    default:
      rendered.count = stats.count;
      withString(rendered, 'min', stats.min, stats.format);
      withString(rendered, 'max', stats.max, stats.format);
      withString(rendered, 'avg', average, stats.format);
      rendered.sum = stats.sum;
      return rendered;
  }
}
