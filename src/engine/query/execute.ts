/**
 * The query phase of one shard: parse the request, bind the query to the shard's statistics,
 * and drive each leaf's clauses into the collectors through one loop (max-score.ts), which
 * visits every match while the collectors need it (counting, sorting by field, aggregating)
 * and prunes by block-max bounds once only the top hits by score remain to be found.
 */
import { EngineError } from '../errors.ts';
import type { FlatField } from '../mapping/mapping.ts';
import type { LeafReader } from '../segment/leaf-reader.ts';
import { NO_MORE_DOCS } from '../segment/leaf-reader.ts';
import { aggregationsNeedScores, createAggregators } from '../collect/aggregator-factory.ts';
import { AggregationContext, leafDocumentLoader, type DocumentLoader } from '../collect/aggregator.ts';
import { parseAggregations } from '../collect/aggregation-spec.ts';
import { ShardCollector } from '../collect/shard-collector.ts';
import { isScoreOrder, needsScore, parseSearchAfter, parseSort, SCORE_SORT } from '../collect/sort-spec.ts';
import { TopFieldCollector } from '../collect/top-field-collector.ts';
import { TopScoreCollector } from '../collect/top-score-collector.ts';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { SegmentReader } from '../segment/segment-reader.ts';
import { collectDisjunction } from './max-score.ts';
import type { Scorer, Weight } from './scorer.ts';
import { parseQuery } from './parse-query.ts';
import { explainDocument, type Explanation } from './explain.ts';
import { profileQuery, type ProfiledQuery } from './profile.ts';
import type { AggregationProfileNode } from '../collect/aggregation-profile.ts';
import { SearchContext } from './search-context.ts';
import { assertColumnExact } from './exact-long-queries.ts';
import { DEFAULT_TRACK_TOTAL_HITS, MAX_RESULT_WINDOW, type ShardQueryResult, type ShardSearchRequest } from './search-request.ts';

export { parseQuery } from './parse-query.ts';

function requireCount(value: unknown, name: string): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0) {
    throw new EngineError('illegal_argument', `[${name}] must be a non-negative integer, got [${String(value)}]`);
  }
  return value;
}

function trackTotalHitsLimit(value: ShardSearchRequest['trackTotalHits']): number {
  if (value === undefined) return DEFAULT_TRACK_TOTAL_HITS;
  if (value === true) return Infinity;
  if (value === false) return 0;
  return requireCount(value, 'track_total_hits');
}

/** `_shard_doc` values of one shard span 2^32 docs: the shard's position is the high part (as Elasticsearch). */
export const SHARD_DOC_SPAN = 2 ** 32;

/** Longest slice of query work between two yields when a query phase runs in slices (`runInSlices`). */
export const QUERY_SLICE_MS = 50;

/** Runs the query phase of a search on one shard's leaves, to the end. */
export function executeQuery(
  leaves: readonly LeafReader[],
  fields: ReadonlyMap<string, FlatField>,
  request: ShardSearchRequest,
): ShardQueryResult {
  const run = startQuery(leaves, fields, request);
  run.step(Infinity);
  return run.result();
}

/** Number of live docs matching a query (ES `_count`), to the end. */
export function countQuery(leaves: readonly LeafReader[], fields: ReadonlyMap<string, FlatField>, query: unknown): number {
  const run = startCount(leaves, fields, query);
  run.step(Infinity);
  return run.result().total.value;
}

/** A `_count`: the query phase of `query` that only counts (no scores, no hits). */
export function startCount(leaves: readonly LeafReader[], fields: ReadonlyMap<string, FlatField>, query: unknown): QueryPhaseRun {
  return startQuery(leaves, fields, { query, from: 0, size: 0, trackTotalHits: true }, { countOnly: true });
}

/**
 * Runs a query phase in slices of about `sliceMs`, yielding to the event loop between them, so
 * that one search over a large shard never holds its thread for long; the search `timeout` is
 * checked at every slice too.
 */
export async function runInSlices(run: QueryPhaseRun, sliceMs = QUERY_SLICE_MS): Promise<ShardQueryResult> {
  while (!run.step(performance.now() + sliceMs)) await nextTurn();
  return run.result();
}

/** Starts the query phase of a search on one shard's leaves (validating the request); drive it with `step`. */
export function startQuery(
  leaves: readonly LeafReader[],
  fields: ReadonlyMap<string, FlatField>,
  request: ShardSearchRequest,
  options: { countOnly?: boolean; loadDocument?: DocumentLoader } = {},
): QueryPhaseRun {
  const now = Date.now();
  const from = requireCount(request.from, 'from');
  const size = requireCount(request.size, 'size');
  const window = request.maxResultWindow ?? MAX_RESULT_WINDOW;
  if (request.searchAfter === undefined && from + size > window) {
    throw new EngineError(
      'illegal_argument',
      `Result window is too large, from + size must be less than or equal to: [${window}] but was [${from + size}]. See the scroll api for a more efficient way to request large data sets.`,
    );
  }
  if (request.searchAfter !== undefined && from > 0) {
    throw new EngineError('illegal_argument', '`from` parameter must be set to 0 when `search_after` is used.');
  }
  if (request.minScore !== undefined && (typeof request.minScore !== 'number' || !Number.isFinite(request.minScore))) {
    throw new EngineError('illegal_argument', '[min_score] must be a number');
  }
  if (request.aggs !== undefined && request.aggregations !== undefined) {
    throw new EngineError('parsing', 'Found two aggregation definitions: [aggs] and [aggregations]');
  }
  const parseStarted = performance.now();
  const parsed = parseQuery(request.query, fields, now);
  const rewriteNanos = Math.round((performance.now() - parseStarted) * 1e6);
  const profiled = request.profile === true ? profileQuery(parsed) : null;
  const query = profiled?.query ?? parsed;
  const explicitSort = request.sort === undefined ? null : parseSort(request.sort, fields);
  const sortKeys = explicitSort ?? (request.searchAfter !== undefined ? SCORE_SORT : null);
  const scoreOrder = sortKeys === null || (isScoreOrder(sortKeys) && request.searchAfter === undefined);
  const searchAfter = request.searchAfter === undefined ? null : parseSearchAfter(request.searchAfter, sortKeys!, fields);
  const aggsRequest = request.aggs ?? request.aggregations;
  const aggregationSpecs = aggsRequest === undefined ? null : parseAggregations(aggsRequest, fields, now);
  // Keys of mode min or max sort such values exactly (exact-sort-values.ts); a sum, average or median would round them.
  if (sortKeys !== null) {
    const averaged = sortKeys.filter((key) => key.kind === 'numeric' && key.mode !== 'min' && key.mode !== 'max');
    assertColumnExact(averaged.map((key) => key.field), `Sorting with mode [${averaged[0]?.mode}]`, fields, leaves);
  }
  const aggregationProfile: AggregationProfileNode[] | null = profiled === null ? null : [];
  const aggregators =
    aggregationSpecs === null ? null : createAggregators(
          aggregationSpecs,
          new AggregationContext(options.loadDocument ?? leafDocumentLoader(leaves), leaves, (leafIndex, doc) => explainDocument(parsed, leaves, fields, leafIndex, doc)),
          aggregationProfile,
        );
  const needsScores =
    options.countOnly !== true &&
    (scoreOrder || needsScore(sortKeys!) || request.minScore !== undefined || (aggregationSpecs !== null && aggregationsNeedScores(aggregationSpecs)));
  const trackTotalHits = trackTotalHitsLimit(request.trackTotalHits);
  const capacity = from + size;
  if (request.shardIndex === undefined && sortKeys?.some((key) => key.kind === 'shard_doc')) {
    throw new EngineError('action_request_validation', 'Validation Failed: 1: [_shard_doc] sort field cannot be used without [point in time] search;');
  }
  const shardDocBase = (request.shardIndex ?? 0) * SHARD_DOC_SPAN;
  const fieldCollector = scoreOrder ? null : new TopFieldCollector(capacity, sortKeys!, searchAfter, needsScores, shardDocBase);
  const collector = new ShardCollector({
    hits: fieldCollector ?? new TopScoreCollector(capacity),
    aggregators,
    minScore: request.minScore ?? -Infinity,
    trackTotalHits,
    deadline: request.timeoutMs === undefined ? Infinity : now + request.timeoutMs,
  });
  const context = new SearchContext(leaves, fields);
  const weight = query.createWeight(context, needsScores, 1);
  const extras: PhaseExtras = {
    explain: request.explain === true ? (leafIndex, doc) => explainDocument(parsed, leaves, fields, leafIndex, doc) : null,
    profile:
      profiled === null
        ? null
        : { query: profiled, rewriteNanos, collectNanos: 0, collector: fieldCollector === null ? 'SimpleTopScoreDocCollector' : 'TopFieldCollector', aggregations: aggregationProfile ?? [] },
  };
  return new QueryPhaseRun(leaves, context, weight, collector, capacity, scoreOrder, sortKeys !== null, fieldCollector, extras);
}

/** What a query phase adds to its hits and result on request: explanations, a profile. */
interface PhaseExtras {
  explain: ((leafIndex: number, doc: number) => Explanation | null) | null;
  profile: { query: ProfiledQuery; rewriteNanos: number; collectNanos: number; collector: string; aggregations: AggregationProfileNode[] } | null;
}

/**
 * One shard's query phase in progress. `step` works leaf by leaf and, inside a leaf, window by
 * window; it may stop between two windows once its time is up and carry on at the next call.
 * Segments and snapshot leaves pause; a live in-memory layer (bounded by `epoch.max_docs` /
 * `epoch.max_bytes`) still takes writes, so outside a snapshot it is collected in one go.
 */
export class QueryPhaseRun {
  private leafIndex = 0;
  /** The current leaf's clauses once it has started; null between leaves. */
  private clauses: Scorer[] | null = null;
  /** Where the current leaf resumes. */
  private target = 0;

  constructor(
    private readonly leaves: readonly LeafReader[],
    private readonly context: SearchContext,
    private readonly weight: Weight,
    private readonly collector: ShardCollector,
    private readonly capacity: number,
    private readonly scoreOrder: boolean,
    private readonly sortedByScore: boolean,
    private readonly fieldCollector: TopFieldCollector | null,
    private readonly extras: PhaseExtras = { explain: null, profile: null },
  ) {}

  /** Works until the phase is done (true) or `performance.now()` passes `until` (false: call again). */
  step(until: number): boolean {
    if (this.extras.profile === null) return this.work(until);
    const started = performance.now();
    try {
      return this.work(until);
    } finally {
      this.extras.profile.collectNanos += Math.round((performance.now() - started) * 1e6);
    }
  }

  private work(until: number): boolean {
    const { leaves, collector, weight } = this;
    collector.checkDeadline();
    while (this.leafIndex < leaves.length && !collector.stopped) {
      const leaf = leaves[this.leafIndex]!;
      if (this.clauses === null) {
        const knownMatches = collector.canCountUpFront ? weight.count(leaf, this.leafIndex) : -1;
        collector.setLeaf(this.leafIndex, leaf, this.context.docBases[this.leafIndex]!, knownMatches);
        if (knownMatches >= 0 && this.capacity === 0) {
          this.leafIndex++;
          continue;
        }
        let clauses = weight.disjunctionClauses(leaf, this.leafIndex);
        if (clauses === null) {
          const scorer = weight.scorer(leaf, this.leafIndex);
          clauses = scorer === null ? [] : [scorer];
        }
        this.clauses = clauses;
        this.target = 0;
      }
      const pausable = leaf instanceof SegmentReader || leaf.pausable === true ? until : Infinity;
      this.target = collectDisjunction(this.clauses, leaf, collector, this.target, pausable);
      if (this.target !== NO_MORE_DOCS) return false;
      this.clauses = null;
      this.leafIndex++;
      if (performance.now() >= until && this.leafIndex < leaves.length) return false;
    }
    return true;
  }

  /** The phase's answer (call once `step` returned true). */
  result(): ShardQueryResult {
    const { collector, fieldCollector } = this;
    const hits = collector.topHits();
    if (this.scoreOrder && this.sortedByScore) for (const hit of hits) hit.sort = [hit.score];
    // Before the profile renders: building the partials is part of the aggregations' timings.
    const aggs = collector.aggregationPartials();
    const { explain, profile } = this.extras;
    if (explain !== null) {
      for (const hit of hits) hit.explanation = explain(hit.leaf, hit.doc) ?? { value: 0, description: 'no matching clause', details: [] };
    }
    return {
      ...(profile === null
        ? {}
        : {
            profile: {
              query: [profile.query.render()],
              rewrite_time: profile.rewriteNanos,
              collector: [{ name: profile.collector, reason: 'search_top_hits', time_in_nanos: profile.collectNanos }],
              aggregations: profile.aggregations.map((node) => node.render()),
            },
          }),
      total: collector.total(),
      // Sorted on fields with `_score` among the keys (`[_score, _doc]`), the best score of any match, as OpenSearch.
      maxScore: this.scoreOrder ? (hits.length > 0 ? hits[0]!.score : null) : Number.isNaN(fieldCollector!.maxScore) ? null : fieldCollector!.maxScore,
      hits,
      aggs,
      timedOut: collector.timedOut,
    };
  }
}
