/**
 * Everything one shard's query phase collects from matching live docs: the total count, the top
 * hits (by score or by sort keys), aggregations, min_score filtering and the timeout. It also
 * tells the pruning loop which scores can still matter and whether every match must be counted.
 */
import type { ShardHit, TotalHits } from '../query/search-request.ts';
import type { LeafReader } from '../segment/leaf-reader.ts';
import type { AggregationPartials } from './aggregation-partials.ts';
import type { AggregatorGroup } from './aggregator.ts';
import { BucketBudget } from './bucket-budget.ts';
import type { TopFieldCollector } from './top-field-collector.ts';
import { TopScoreCollector } from './top-score-collector.ts';

/** Collected docs between two deadline checks. */
const DEADLINE_CHECK_INTERVAL = 1024;

/** Options of a shard collector. */
export interface ShardCollectorOptions {
  hits: TopScoreCollector | TopFieldCollector;
  aggregators: AggregatorGroup | null;
  /** Docs scoring below are dropped; -Infinity when min_score is not set. */
  minScore: number;
  /** Count exactly up to this many hits (Infinity: always exact). */
  trackTotalHits: number;
  /** Date.now() after which collection stops; Infinity for none. */
  deadline: number;
}

/** The collectors of one shard search, fed in increasing (leaf, doc) order. */
export class ShardCollector {
  /** Docs collected (matching, live, not below min_score). */
  count = 0;
  timedOut = false;
  /** Set when nothing more needs collecting (timeout, or the count is all that was asked). */
  stopped = false;
  private untilDeadlineCheck = DEADLINE_CHECK_INTERVAL;
  private readonly hits: TopScoreCollector | TopFieldCollector;
  private readonly aggregators: AggregatorGroup | null;
  private readonly minScore: number;
  /** Largest score that min_score rejects (scores at or below can be skipped). */
  private readonly minScoreFloor: number;
  private readonly trackTotalHits: number;
  private readonly deadline: number;
  private readonly countOnlyRequest: boolean;
  /** The hits collector when it ranks by score (its heap threshold drives pruning). */
  private readonly scoreHits: TopScoreCollector | null;
  /** Current competitive threshold: the heap's once full, never below the min_score floor. */
  private threshold: number;
  /** Whether the current leaf's matches were counted up front (collect then does not count). */
  private leafCounted = false;

  constructor(options: ShardCollectorOptions) {
    this.hits = options.hits;
    this.aggregators = options.aggregators;
    this.minScore = options.minScore;
    this.minScoreFloor = options.minScore > 0 ? options.minScore * (1 - 1e-12) : -Infinity;
    this.trackTotalHits = options.trackTotalHits;
    this.deadline = options.deadline;
    this.countOnlyRequest = options.hits.capacity === 0 && options.aggregators === null;
    this.scoreHits = options.hits instanceof TopScoreCollector ? options.hits : null;
    this.threshold = this.scoreHits !== null && this.scoreHits.capacity === 0 ? Infinity : this.minScoreFloor;
  }

  /**
   * Starts a leaf. `knownMatches` is the leaf's exact number of matching live docs when the
   * weight knows it without iterating (-1 otherwise); the leaf is then counted up front and its
   * docs only need visiting for the top hits.
   */
  setLeaf(leafIndex: number, leaf: LeafReader, docBase: number, knownMatches = -1): void {
    this.hits.setLeaf(leafIndex, leaf, docBase);
    if (this.aggregators !== null) {
      this.aggregators.context.leafIndex = leafIndex;
      this.aggregators.context.docBase = docBase;
      this.aggregators.setLeaf(leaf);
    }
    this.leafCounted = knownMatches >= 0;
    if (this.leafCounted) {
      this.count += knownMatches;
      if (this.countOnlyRequest && this.count > this.trackTotalHits) this.stopped = true;
    }
  }

  /** Whether a leaf may be counted up front: only when no match can be dropped by min_score or needs aggregating. */
  get canCountUpFront(): boolean {
    return this.minScore === -Infinity && this.aggregators === null;
  }

  /** Collects a matching live doc of the current leaf. */
  collect(doc: number, score: number): void {
    if (score < this.minScore) return;
    this.hits.collect(doc, score);
    if (this.scoreHits !== null) {
      const threshold = this.scoreHits.threshold();
      if (threshold > this.threshold) this.threshold = threshold;
    }
    if (this.aggregators !== null) {
      this.aggregators.context.score = score;
      this.aggregators.collect(doc, 0);
    }
    if (!this.leafCounted) this.count++;
    if (--this.untilDeadlineCheck === 0) {
      this.untilDeadlineCheck = DEADLINE_CHECK_INTERVAL;
      if (Date.now() > this.deadline) {
        this.timedOut = true;
        this.stopped = true;
      }
    }
    if (this.countOnlyRequest && this.count > this.trackTotalHits) this.stopped = true;
  }

  /** Stops collection (as timed out) once the deadline has passed; true when it has. */
  checkDeadline(): boolean {
    if (this.deadline !== Infinity && Date.now() > this.deadline) {
      this.timedOut = true;
      this.stopped = true;
    }
    return this.timedOut;
  }

  /**
   * True while every match must be visited: when sorting by field or aggregating, and while the
   * count has not passed track_total_hits (unless the leaf was counted up front).
   */
  mustVisitAll(): boolean {
    if (this.scoreHits === null || this.aggregators !== null) return true;
    return !this.leafCounted && this.count <= this.trackTotalHits;
  }

  /**
   * Docs whose score cannot exceed this cannot enter the top hits: the score-heap threshold
   * once the heap is full (and below min_score); -Infinity while any doc may enter.
   */
  competitiveThreshold(): number {
    return this.threshold;
  }

  /** Exact count, or track_total_hits with relation `gte` once the count passed it. */
  total(): TotalHits {
    if (this.count > this.trackTotalHits) return { value: this.trackTotalHits, relation: 'gte' };
    return { value: this.count, relation: 'eq' };
  }

  /** The kept hits in order. */
  topHits(): ShardHit[] {
    return this.hits.hits();
  }

  /** Aggregation partials of the top-level bucket; throws once they would hold more than MAX_BUCKETS buckets. */
  aggregationPartials(): AggregationPartials | undefined {
    return this.aggregators?.partials(0, new BucketBudget());
  }
}
