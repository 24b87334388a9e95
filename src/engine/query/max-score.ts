/**
 * Top-k by score over a disjunction (or a single scorer) with block-max MaxScore pruning.
 *
 * The leaf is processed in windows that end at the nearest block boundary of the clauses'
 * skip data. In each window every clause has a bound (its block-max score).
 *
 * While every match must still be counted (the count has not passed track_total_hits), all
 * clauses are iterated, but a doc whose matching clauses' bounds cannot beat the top-k
 * threshold is only counted, not scored.
 *
 * Afterwards, clauses sorted by bound form a "non-essential" prefix whose bounds sum to at most
 * the threshold — a doc matching only those cannot enter the top k — and the rest are
 * "essential". Candidates come from the essential clauses only; non-essential clauses are
 * advanced to a candidate only while its partial score plus their remaining bounds can still
 * beat the threshold. A window whose total bound cannot beat it is skipped without touching
 * postings.
 *
 * Final scores are summed in clause order, so they are bit-identical to the exhaustive
 * DisjunctionScorer's whatever path a doc took.
 */
import type { LeafReader } from '../segment/leaf-reader.ts';
import { NO_MORE_DOCS } from '../segment/leaf-reader.ts';
import { BOUND_SLACK } from './scorer.ts';
import type { Scorer } from './scorer.ts';

/** What the pruning loop feeds and asks. */
export interface PruningSink {
  /** Takes a live doc and its score. */
  collect(doc: number, score: number): void;
  /** Counts a live doc known not to be competitive, without its score. */
  countOnly(doc: number): void;
  /** Docs scoring at most this cannot enter the top hits; -Infinity while anything can. */
  competitiveThreshold(): number;
  /** True while every match must be visited (exact counting). */
  mustVisitAll(): boolean;
  /** Whether a doc may be counted without knowing its score (false with min_score). */
  readonly countsWithoutScores: boolean;
  /** True once collection must end. */
  readonly stopped: boolean;
}

const LAST_DOC = NO_MORE_DOCS - 1;

/** Per-leaf working state of the loop (typed arrays indexed by clause). */
class LoopState {
  readonly order: Int32Array;
  readonly windowMax: Float64Array;
  readonly clauseScores: Float64Array;
  readonly matchedDoc: Int32Array;
  essentialStart = 0;
  nonEssentialBound = 0;
  windowEnd = LAST_DOC;
  threshold = -Infinity;
  /** Whether every doc is visited (counting) rather than only essential candidates. */
  visitAll = true;
  /** Whether windowMax holds bounds for the current window. */
  bounded = false;

  constructor(
    readonly clauses: readonly Scorer[],
    readonly leaf: LeafReader,
    readonly sink: PruningSink,
  ) {
    const count = clauses.length;
    this.order = new Int32Array(count);
    this.windowMax = new Float64Array(count);
    this.clauseScores = new Float64Array(count);
    this.matchedDoc = new Int32Array(count).fill(-1);
    for (let i = 0; i < count; i++) this.order[i] = i;
  }
}

/** Scores the docs of one leaf matching any of `clauses` into `sink`, pruning by block-max bounds. */
export function collectDisjunction(clauses: readonly Scorer[], leaf: LeafReader, sink: PruningSink): void {
  if (clauses.length === 0) return;
  const state = new LoopState(clauses, leaf, sink);
  let target = 0;
  while (target <= LAST_DOC && !sink.stopped) {
    if (!planWindow(state, target)) return;
    if (state.essentialStart === clauses.length) {
      target = state.windowEnd + 1;
      continue;
    }
    target = scoreWindow(state, target);
  }
}

/** Sets up the window starting at `target`; false when no clause has docs left. */
function planWindow(state: LoopState, target: number): boolean {
  const { clauses, order, windowMax, sink } = state;
  const clauseCount = clauses.length;
  state.threshold = sink.competitiveThreshold();
  state.visitAll = sink.mustVisitAll();
  state.bounded = state.threshold !== -Infinity && (!state.visitAll || sink.countsWithoutScores);
  state.essentialStart = 0;
  state.nonEssentialBound = 0;
  state.windowEnd = LAST_DOC;
  for (let i = 0; i < clauseCount; i++) order[i] = i;
  if (!state.bounded) return true;
  let anyLeft = false;
  for (let i = 0; i < clauseCount; i++) {
    const clause = clauses[i]!;
    if (clause.doc === NO_MORE_DOCS) continue;
    anyLeft = true;
    const blockEnd = clause.shallowAdvance(clause.doc > target ? clause.doc : target);
    if (blockEnd < state.windowEnd) state.windowEnd = blockEnd;
  }
  if (!anyLeft) return false;
  for (let i = 0; i < clauseCount; i++) {
    const clause = clauses[i]!;
    windowMax[i] = clause.doc === NO_MORE_DOCS || clause.doc > state.windowEnd ? 0 : clause.maxScore(state.windowEnd);
  }
  if (state.visitAll) return true;
  sortByWindowMax(order, windowMax);
  while (state.essentialStart < clauseCount) {
    const bound = state.nonEssentialBound + windowMax[order[state.essentialStart]!]!;
    if (bound > state.threshold) break;
    state.nonEssentialBound = bound;
    state.essentialStart++;
  }
  return true;
}

/** Insertion sort of clause indexes by ascending window bound (few clauses). */
function sortByWindowMax(order: Int32Array, windowMax: Float64Array): void {
  for (let i = 1; i < order.length; i++) {
    const clause = order[i]!;
    const bound = windowMax[clause]!;
    let j = i - 1;
    while (j >= 0 && windowMax[order[j]!]! > bound) {
      order[j + 1] = order[j]!;
      j--;
    }
    order[j + 1] = clause;
  }
}

/** Collects the window's competitive docs; returns the next target doc. */
function scoreWindow(state: LoopState, windowStart: number): number {
  const { clauses, order, windowMax, clauseScores, matchedDoc, leaf, sink, essentialStart, nonEssentialBound, windowEnd, threshold } = state;
  const clauseCount = clauses.length;
  const countOnlyCheck = state.bounded && state.visitAll;
  for (let j = essentialStart; j < clauseCount; j++) {
    const clause = clauses[order[j]!]!;
    if (clause.doc < windowStart) clause.advance(windowStart);
  }
  for (;;) {
    let doc = NO_MORE_DOCS;
    for (let j = essentialStart; j < clauseCount; j++) {
      const clauseDoc = clauses[order[j]!]!.doc;
      if (clauseDoc < doc) doc = clauseDoc;
    }
    if (doc > windowEnd) return doc === NO_MORE_DOCS && windowEnd === LAST_DOC ? NO_MORE_DOCS : windowEnd + 1;
    if (leaf.isLive(doc)) {
      let competitive = true;
      if (countOnlyCheck) {
        let bound = 0;
        for (let j = 0; j < clauseCount; j++) if (clauses[j]!.doc === doc) bound += windowMax[j]!;
        competitive = bound * BOUND_SLACK > threshold;
      }
      if (!competitive) {
        sink.countOnly(doc);
      } else {
        let partial = 0;
        for (let j = essentialStart; j < clauseCount; j++) {
          const index = order[j]!;
          const clause = clauses[index]!;
          if (clause.doc !== doc) continue;
          const score = clause.score();
          clauseScores[index] = score;
          matchedDoc[index] = doc;
          partial += score;
        }
        let remaining = nonEssentialBound;
        for (let j = essentialStart - 1; j >= 0; j--) {
          if ((partial + remaining) * BOUND_SLACK <= threshold) {
            competitive = false;
            break;
          }
          const index = order[j]!;
          const clause = clauses[index]!;
          remaining -= windowMax[index]!;
          let clauseDoc = clause.doc;
          if (clauseDoc < doc) clauseDoc = clause.advance(doc);
          if (clauseDoc === doc) {
            const score = clause.score();
            clauseScores[index] = score;
            matchedDoc[index] = doc;
            partial += score;
          }
        }
        if (competitive) {
          let score = 0;
          for (let i = 0; i < clauseCount; i++) if (matchedDoc[i] === doc) score += clauseScores[i]!;
          sink.collect(doc, score);
        }
      }
      if (sink.stopped) return NO_MORE_DOCS;
      if (sink.competitiveThreshold() !== threshold || sink.mustVisitAll() !== state.visitAll) {
        advanceEssentials(state, doc);
        return doc + 1;
      }
    }
    advanceEssentials(state, doc);
  }
}

/** Moves the essential clauses positioned on `doc` to their next doc. */
function advanceEssentials(state: LoopState, doc: number): void {
  const { clauses, order } = state;
  for (let j = state.essentialStart; j < clauses.length; j++) {
    const clause = clauses[order[j]!]!;
    if (clause.doc === doc) clause.nextDoc();
  }
}
