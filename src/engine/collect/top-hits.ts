/**
 * `top_hits`: the best documents of each bucket, by score or by a sort. Every shard keeps the
 * first `from + size` of each bucket (the same collectors as the search's own top hits) and
 * loads their documents; the coordinating node puts the shards' hits in one order, cuts the page
 * and renders the hits like search hits (`_source` filtering and highlighting happen there,
 * through the renderer the search service passes, since they need the collection's mapping).
 */
import { EngineError } from '../errors.ts';
import type { FlatField } from '../mapping/mapping.ts';
import { checkKeys, describe, dslError, isDslObject, readBoolean, readInteger } from '../query/dsl-reader.ts';
import type { LeafReader } from '../segment/leaf-reader.ts';
import type { AggregationPartials, TopHitsPartial, TopHit } from './aggregation-partials.ts';
import type { Aggregator, AggregationContext } from './aggregator.ts';
import type { BucketBudget } from './bucket-budget.ts';
import { compareSortValues, isScoreOrder, needsScore, parseSort, type SortKey, type SortValue } from './sort-spec.ts';
import { TopFieldCollector } from './top-field-collector.ts';
import { TopScoreCollector } from './top-score-collector.ts';

/** Largest `from + size` of one top_hits (ES `index.max_inner_result_window`). */
export const MAX_INNER_RESULT_WINDOW = 100;

/** `top_hits`. */
export interface TopHitsSpec {
  type: 'top_hits';
  name: string;
  subs: [];
  from: number;
  size: number;
  /** The request's `sort` (null: by score), kept to display sort values as the search does. */
  sortRequest: unknown;
  /** Parsed sort keys; null for score order. */
  sortKeys: SortKey[] | null;
  trackScores: boolean;
  version: boolean;
  seqNoPrimaryTerm: boolean;
  /** The request's `_source` option (undefined: the whole source). */
  source: unknown;
  /** The request's `highlight` object. */
  highlight: Record<string, unknown> | undefined;
  /** Each hit carries how the search's query scored it. */
  explain: boolean;
  /** The request's `fields`, `docvalue_fields` and `stored_fields`, read by the search service's renderer (they need the mapping). */
  hitFields: { fields?: unknown; docvalue_fields?: unknown; stored_fields?: unknown };
}

const HIT_FIELD_KEYS = ['fields', 'docvalue_fields', 'stored_fields'] as const;

/** Parses a `top_hits` aggregation. */
export function parseTopHits(name: string, options: Record<string, unknown>, fields: ReadonlyMap<string, FlatField> | null): TopHitsSpec {
  checkKeys(options, ['from', 'size', 'sort', '_source', 'highlight', 'version', 'seq_no_primary_term', 'track_scores', 'explain', ...HIT_FIELD_KEYS], 'top_hits');
  const hitFields: TopHitsSpec['hitFields'] = {};
  for (const key of HIT_FIELD_KEYS) {
    const value = options[key];
    if (value === undefined) continue;
    if (typeof value !== 'string' && !Array.isArray(value)) throw dslError(`[top_hits] [${key}] must be a field name or an array, got ${describe(value)}`);
    hitFields[key] = value;
  }
  const from = options.from === undefined ? 0 : readInteger(options.from, 'from', 'top_hits');
  const size = options.size === undefined ? 3 : readInteger(options.size, 'size', 'top_hits');
  if (from + size > MAX_INNER_RESULT_WINDOW) {
    throw new EngineError(
      'illegal_argument',
      `Top hits result window is too large, the top hits aggregator [${name}]'s from + size must be less than or equal to: [${MAX_INNER_RESULT_WINDOW}] but was [${from + size}]. This limit can be set by changing the [index.max_inner_result_window] index level setting.`,
    );
  }
  const source = options._source;
  if (source !== undefined && typeof source !== 'boolean' && typeof source !== 'string' && !Array.isArray(source) && !isDslObject(source)) {
    throw dslError(`[top_hits] [_source] must be a boolean, a string, an array or an object, got ${describe(source)}`);
  }
  if (options.highlight !== undefined && !isDslObject(options.highlight)) throw dslError('[top_hits] [highlight] must be an object');
  const keys = options.sort === undefined ? null : parseSort(options.sort, fields);
  return {
    type: 'top_hits',
    name,
    subs: [],
    from,
    size,
    sortRequest: options.sort,
    sortKeys: keys === null || isScoreOrder(keys) ? null : keys,
    trackScores: options.track_scores === undefined ? false : readBoolean(options.track_scores, 'track_scores', 'top_hits'),
    version: options.version === undefined ? false : readBoolean(options.version, 'version', 'top_hits'),
    seqNoPrimaryTerm: options.seq_no_primary_term === undefined ? false : readBoolean(options.seq_no_primary_term, 'seq_no_primary_term', 'top_hits'),
    source,
    highlight: options.highlight as Record<string, unknown> | undefined,
    explain: options.explain === undefined ? false : readBoolean(options.explain, 'explain', 'top_hits'),
    hitFields,
  };
}

/** Whether a top_hits needs the query's scores. */
export function topHitsNeedScores(spec: TopHitsSpec): boolean {
  return spec.sortKeys === null || spec.trackScores || needsScore(spec.sortKeys);
}

/** Shard collector of a `top_hits`: one top-docs collector per owner bucket. */
export class TopHitsAggregator implements Aggregator {
  readonly name: string;
  private readonly collectors: (TopScoreCollector | TopFieldCollector | undefined)[] = [];
  /** Leaf index each collector was last moved to. */
  private readonly collectorLeaves: number[] = [];
  private readonly totals: number[] = [];
  private leaf: LeafReader | null = null;
  private readonly scoresNeeded: boolean;

  constructor(
    private readonly spec: TopHitsSpec,
    private readonly context: AggregationContext,
  ) {
    this.name = spec.name;
    this.scoresNeeded = topHitsNeedScores(spec);
  }

  setLeaf(leaf: LeafReader): void {
    this.leaf = leaf;
  }

  collect(doc: number, owner: number): void {
    const { context, spec } = this;
    let collector = this.collectors[owner];
    if (collector === undefined) {
      const capacity = spec.from + spec.size;
      collector = spec.sortKeys === null ? new TopScoreCollector(capacity) : new TopFieldCollector(capacity, spec.sortKeys, null, this.scoresNeeded);
      this.collectors[owner] = collector;
      this.collectorLeaves[owner] = -1;
    }
    if (this.collectorLeaves[owner] !== context.leafIndex) {
      collector.setLeaf(context.leafIndex, this.leaf!, context.docBase);
      this.collectorLeaves[owner] = context.leafIndex;
    }
    collector.collect(doc, context.score);
    this.totals[owner] = (this.totals[owner] ?? 0) + 1;
  }

  partial(owner: number, _budget: BucketBudget): TopHitsPartial {
    const collector = this.collectors[owner];
    if (collector === undefined) return { type: 'top_hits', total: 0, maxScore: null, hits: [] };
    const withSource = (this.spec.source !== false && this.spec.source !== 'false') || this.spec.highlight !== undefined || Object.keys(this.spec.hitFields).length > 0;
    const shardHits = collector.hits();
    const hits = shardHits.map((hit): TopHit => {
      const document = this.context.loadDocument(hit.leaf, hit.doc, withSource);
      const score = this.scoresNeeded && !Number.isNaN(hit.score) ? hit.score : null;
      const loaded: TopHit = { index: '', id: document.id, score, version: document.version, seqNo: document.seqNo, primaryTerm: document.primaryTerm };
      if (document.source !== undefined) loaded.source = document.source;
      if (document.sourceText !== undefined) loaded.sourceText = document.sourceText;
      if (this.spec.explain) loaded.explanation = this.context.explain?.(hit.leaf, hit.doc) ?? { value: 0, description: 'no matching clause', details: [] };
      if (hit.sort !== undefined) loaded.sort = hit.sort as SortValue[];
      // An explicit `_score` sort shows the score as the hit's sort value, as the search does.
      else if (this.spec.sortRequest !== undefined && score !== null) loaded.sort = [score];
      return loaded;
    });
    let maxScore: number | null = null;
    if (collector instanceof TopScoreCollector) maxScore = hits.length > 0 ? hits[0]!.score : null;
    else if (!Number.isNaN(collector.maxScore)) maxScore = collector.maxScore;
    return { type: 'top_hits', total: this.totals[owner] ?? 0, maxScore, hits };
  }
}

/** Merges two shards' top hits: all their hits (cut when rendered, in shard order for ties). */
export function mergeTopHitsPartials(left: TopHitsPartial, right: TopHitsPartial): TopHitsPartial {
  const scores = [left.maxScore, right.maxScore].filter((score): score is number => score !== null);
  return { type: 'top_hits', total: left.total + right.total, maxScore: scores.length === 0 ? null : Math.max(...scores), hits: [...left.hits, ...right.hits] };
}

/** The page of merged hits: in the spec's order (ties keep shard order), from `from`, at most `size`. */
export function topHitsPage(spec: TopHitsSpec, partial: TopHitsPartial): TopHit[] {
  const keys = spec.sortKeys;
  const ordered = [...partial.hits].sort((left, right) =>
    keys === null ? (right.score ?? -Infinity) - (left.score ?? -Infinity) : compareSortValues(keys, left.sort ?? [], right.sort ?? []),
  );
  return ordered.slice(spec.from, spec.from + spec.size);
}

/** Writes the collection's name into every top hit of one shard's partials (the shard does not know it). */
export function stampTopHitsIndex(partials: AggregationPartials, index: string): AggregationPartials {
  for (const partial of Object.values(partials)) {
    if (partial.type === 'top_hits') for (const hit of partial.hits) hit.index = index;
    if ('aggs' in partial) stampTopHitsIndex(partial.aggs, index);
    if ('buckets' in partial) for (const bucket of partial.buckets as { aggs: AggregationPartials }[]) stampTopHitsIndex(bucket.aggs, index);
  }
  return partials;
}

/** Renders one top hit as a search hit (`_source` filtering and highlighting are up to the search service). */
export type TopHitRenderer = (hit: TopHit, spec: TopHitsSpec) => Record<string, unknown>;

/** The rendering without a search service: the whole source, meta fields as asked. */
export function plainTopHit(hit: TopHit, spec: TopHitsSpec): Record<string, unknown> {
  const rendered: Record<string, unknown> = { _index: hit.index, _id: hit.id, _score: hit.score };
  if (spec.version) rendered._version = hit.version;
  if (spec.seqNoPrimaryTerm) {
    rendered._seq_no = hit.seqNo;
    rendered._primary_term = hit.primaryTerm;
  }
  if (hit.source !== undefined && spec.source !== false) rendered._source = hit.source;
  if (hit.sort !== undefined) rendered.sort = hit.sort;
  if (hit.explanation !== undefined) rendered._explanation = hit.explanation;
  return rendered;
}

/** Renders a merged top_hits: `hits.total` (the bucket's doc count), `max_score` and the page. */
export function renderTopHits(spec: TopHitsSpec, partial: TopHitsPartial, renderHit: TopHitRenderer): Record<string, unknown> {
  return {
    hits: {
      total: { value: partial.total, relation: 'eq' },
      max_score: partial.maxScore,
      hits: topHitsPage(spec, partial).map((hit) => renderHit(hit, spec)),
    },
  };
}
