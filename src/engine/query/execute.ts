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
import { createAggregators } from '../collect/aggregator-factory.ts';
import { parseAggregations } from '../collect/aggregation-spec.ts';
import { ShardCollector } from '../collect/shard-collector.ts';
import { isScoreOrder, needsScore, parseSearchAfter, parseSort, SCORE_SORT } from '../collect/sort-spec.ts';
import { TopFieldCollector } from '../collect/top-field-collector.ts';
import { TopScoreCollector } from '../collect/top-score-collector.ts';
import { collectDisjunction } from './max-score.ts';
import { parseQuery } from './parse-query.ts';
import { SearchContext } from './search-context.ts';
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

/** Runs the query phase of a search on one shard's leaves. */
export function executeQuery(
  leaves: readonly LeafReader[],
  fields: ReadonlyMap<string, FlatField>,
  request: ShardSearchRequest,
): ShardQueryResult {
  const now = Date.now();
  const from = requireCount(request.from, 'from');
  const size = requireCount(request.size, 'size');
  if (request.searchAfter === undefined && from + size > MAX_RESULT_WINDOW) {
    throw new EngineError(
      'illegal_argument',
      `Result window is too large, from + size must be less than or equal to: [${MAX_RESULT_WINDOW}] but was [${from + size}]. See the scroll api for a more efficient way to request large data sets.`,
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
  const query = parseQuery(request.query, fields, now);
  const explicitSort = request.sort === undefined ? null : parseSort(request.sort, fields);
  const sortKeys = explicitSort ?? (request.searchAfter !== undefined ? SCORE_SORT : null);
  const scoreOrder = sortKeys === null || (isScoreOrder(sortKeys) && request.searchAfter === undefined);
  const searchAfter = request.searchAfter === undefined ? null : parseSearchAfter(request.searchAfter, sortKeys!, fields);
  const aggsRequest = request.aggs ?? request.aggregations;
  const aggregators = aggsRequest === undefined ? null : createAggregators(parseAggregations(aggsRequest, fields, now));
  const needsScores = scoreOrder || needsScore(sortKeys!) || request.minScore !== undefined;
  const trackTotalHits = trackTotalHitsLimit(request.trackTotalHits);
  const capacity = from + size;
  const fieldCollector = scoreOrder ? null : new TopFieldCollector(capacity, sortKeys!, searchAfter, needsScores);
  const collector = new ShardCollector({
    hits: fieldCollector ?? new TopScoreCollector(capacity),
    aggregators,
    minScore: request.minScore ?? -Infinity,
    trackTotalHits,
    deadline: request.timeoutMs === undefined ? Infinity : now + request.timeoutMs,
  });
  const context = new SearchContext(leaves, fields);
  const weight = query.createWeight(context, needsScores, 1);
  for (let leafIndex = 0; leafIndex < leaves.length && !collector.stopped; leafIndex++) {
    const leaf = leaves[leafIndex]!;
    const knownMatches = collector.canCountUpFront ? weight.count(leaf, leafIndex) : -1;
    collector.setLeaf(leafIndex, leaf, context.docBases[leafIndex]!, knownMatches);
    if (knownMatches >= 0 && capacity === 0) continue;
    let clauses = weight.disjunctionClauses(leaf, leafIndex);
    if (clauses === null) {
      const scorer = weight.scorer(leaf, leafIndex);
      clauses = scorer === null ? [] : [scorer];
    }
    collectDisjunction(clauses, leaf, collector);
  }
  const hits = collector.topHits();
  if (scoreOrder && sortKeys !== null) for (const hit of hits) hit.sort = [hit.score];
  return {
    total: collector.total(),
    // Sorted on fields with `_score` among the keys (`[_score, _doc]`), the best score of any match, as OpenSearch.
    maxScore: scoreOrder ? (hits.length > 0 ? hits[0]!.score : null) : Number.isNaN(fieldCollector!.maxScore) ? null : fieldCollector!.maxScore,
    hits,
    aggs: collector.aggregationPartials(),
    timedOut: collector.timedOut,
  };
}

/** Number of live docs matching a query (ES `_count`). */
export function countQuery(leaves: readonly LeafReader[], fields: ReadonlyMap<string, FlatField>, query: unknown): number {
  const parsed = parseQuery(query, fields);
  let count = 0;
  const weight = parsed.createWeight(new SearchContext(leaves, fields), false, 1);
  for (let leafIndex = 0; leafIndex < leaves.length; leafIndex++) {
    const leaf = leaves[leafIndex]!;
    const known = weight.count(leaf, leafIndex);
    if (known >= 0) {
      count += known;
      continue;
    }
    const scorer = weight.scorer(leaf, leafIndex);
    if (scorer === null) continue;
    for (let doc = scorer.nextDoc(); doc !== NO_MORE_DOCS; doc = scorer.nextDoc()) if (leaf.isLive(doc)) count++;
  }
  return count;
}
