/**
 * Top-k by score over a disjunction (or a single scorer) with block-max MaxScore pruning.
 *
 * While every match must still be visited (the count has not passed track_total_hits, or the
 * top-k heap is not full yet) the leaf is scored term-at-a-time in windows of WINDOW_SIZE docs:
 * each clause in turn adds its scores into a per-window array and marks its docs in a bitset,
 * then the window's docs are collected in order. Tight per-clause loops are much cheaper than
 * merging the clauses doc by doc.
 *
 * Once pruning is allowed, the leaf is processed in windows that end at the nearest block
 * boundary of the clauses' skip data, where every clause has a bound (its block-max score).
 * Clauses sorted by bound form a "non-essential" prefix whose bounds sum to at most the
 * threshold — a doc matching only those cannot enter the top k — and the rest are "essential".
 * Candidates come from the essential clauses only; non-essential clauses are advanced to a
 * candidate only while its partial score plus their remaining bounds can still beat the
 * threshold. A window whose total bound cannot beat it is skipped without touching postings.
 *
 * Scores are summed in clause order on both paths, so they are bit-identical to the exhaustive
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
  /** Docs scoring at most this cannot enter the top hits; -Infinity while anything can. */
  competitiveThreshold(): number;
  /** True while every match must be visited (exact counting). */
  mustVisitAll(): boolean;
  /** True once collection must end. */
  readonly stopped: boolean;
}

const LAST_DOC = NO_MORE_DOCS - 1;

/** Docs per term-at-a-time window (a multiple of 32). */
const WINDOW_SIZE = 2048;

/**
 * Term-at-a-time window buffers, shared by every search of the thread: a window is filled and
 * consumed within one synchronous call, and a search that pauses between windows (see
 * `collectDisjunction`'s `until`) builds its loop state afresh when it resumes.
 */
const windowScores = new Float64Array(WINDOW_SIZE);
const windowBits = new Uint32Array(WINDOW_SIZE >>> 5);

/** Per-clause arrays, shared like the window buffers and grown to the largest clause count seen. */
let clauseCapacity = 0;
let sharedOrder = new Int32Array(0);
let sharedWindowMax = new Float64Array(0);
let sharedClauseScores = new Float64Array(0);
let sharedMatchedDoc = new Int32Array(0);

function ensureClauseCapacity(count: number): void {
  if (count <= clauseCapacity) return;
  clauseCapacity = Math.max(count, 2 * clauseCapacity, 16);
  sharedOrder = new Int32Array(clauseCapacity);
  sharedWindowMax = new Float64Array(clauseCapacity);
  sharedClauseScores = new Float64Array(clauseCapacity);
  sharedMatchedDoc = new Int32Array(clauseCapacity);
}

/** Per-leaf working state of the loop (arrays indexed by clause). */
class LoopState {
  readonly order: Int32Array;
  readonly windowMax: Float64Array;
  readonly clauseScores: Float64Array;
  readonly matchedDoc: Int32Array;
  readonly hasDeletions: boolean;
  essentialStart = 0;
  nonEssentialBound = 0;
  windowEnd = LAST_DOC;
  threshold = -Infinity;
  /** Whether pruning is possible in the current window (else every doc is scored). */
  pruning = false;

  constructor(
    readonly clauses: readonly Scorer[],
    readonly leaf: LeafReader,
    readonly sink: PruningSink,
  ) {
    const count = clauses.length;
    ensureClauseCapacity(count);
    this.order = sharedOrder;
    this.windowMax = sharedWindowMax;
    this.clauseScores = sharedClauseScores;
    this.matchedDoc = sharedMatchedDoc;
    this.matchedDoc.fill(-1, 0, count);
    for (let i = 0; i < count; i++) this.order[i] = i;
    this.hasDeletions = leaf.numLiveDocs() !== leaf.maxDoc;
  }
}

/**
 * Scores the docs of one leaf matching any of `clauses` into `sink`, pruning by block-max bounds,
 * from doc `from` on. Returns NO_MORE_DOCS once the leaf is done (or the sink stopped); with an
 * `until` (a `performance.now()` time) it may pause between two windows once that time has
 * passed, and returns the doc to resume from: the clauses keep their positions, so calling again
 * with that `from` and the same clauses carries on exactly where it stopped.
 */
export function collectDisjunction(clauses: readonly Scorer[], leaf: LeafReader, sink: PruningSink, from = 0, until = Infinity): number {
  if (clauses.length === 0) return NO_MORE_DOCS;
  const state = new LoopState(clauses, leaf, sink);
  let target = from;
  while (target <= LAST_DOC && !sink.stopped) {
    if (until !== Infinity && target !== from && performance.now() >= until) return target;
    if (!planWindow(state, target)) return NO_MORE_DOCS;
    if (!state.pruning) {
      target = scoreAllInWindow(state, target);
    } else if (state.essentialStart === clauses.length) {
      target = state.windowEnd + 1;
    } else {
      target = scoreWindow(state, target);
    }
  }
  return NO_MORE_DOCS;
}

/** Sets up the window starting at `target`; false when no clause has docs left. */
function planWindow(state: LoopState, target: number): boolean {
  const { clauses, order, windowMax, sink } = state;
  const clauseCount = clauses.length;
  state.threshold = sink.competitiveThreshold();
  state.pruning = state.threshold !== -Infinity && !sink.mustVisitAll();
  state.essentialStart = 0;
  state.nonEssentialBound = 0;
  state.windowEnd = LAST_DOC;
  if (!state.pruning) return true;
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
  for (let i = 0; i < clauseCount; i++) order[i] = i;
  sortByWindowMax(order, windowMax, clauseCount);
  while (state.essentialStart < clauseCount) {
    const bound = state.nonEssentialBound + windowMax[order[state.essentialStart]!]!;
    if (bound > state.threshold) break;
    state.nonEssentialBound = bound;
    state.essentialStart++;
  }
  return true;
}

/**
 * Scores every doc of the next window term-at-a-time and collects them; returns the next
 * target doc. The window starts at the first doc any clause has at or after `target`.
 */
function scoreAllInWindow(state: LoopState, target: number): number {
  const { clauses, leaf, sink } = state;
  let start = NO_MORE_DOCS;
  for (let i = 0; i < clauses.length; i++) {
    const clause = clauses[i]!;
    const doc = clause.doc < target ? clause.advance(target) : clause.doc;
    if (doc < start) start = doc;
  }
  if (start === NO_MORE_DOCS) return NO_MORE_DOCS;
  const end = start + WINDOW_SIZE - 1;
  const hasDeletions = state.hasDeletions;
  if (clauses.length === 1) {
    // One clause is already in doc order: no need for the window buffers.
    const clause = clauses[0]!;
    for (let doc = clause.doc; doc <= end; doc = clause.nextDoc()) {
      if (hasDeletions && !leaf.isLive(doc)) continue;
      sink.collect(doc, clause.score());
      if (sink.stopped) return NO_MORE_DOCS;
    }
    return end + 1;
  }
  windowBits.fill(0);
  for (let i = 0; i < clauses.length; i++) {
    const clause = clauses[i]!;
    for (let doc = clause.doc; doc <= end; doc = clause.nextDoc()) {
      const offset = doc - start;
      const word = offset >>> 5;
      const bit = 1 << (offset & 31);
      const score = clause.score();
      if ((windowBits[word]! & bit) === 0) {
        windowBits[word]! |= bit;
        windowScores[offset] = score;
      } else {
        windowScores[offset]! += score;
      }
    }
  }
  for (let word = 0; word < windowBits.length; word++) {
    let bits = windowBits[word]!;
    while (bits !== 0) {
      const offset = (word << 5) + (31 - Math.clz32(bits & -bits));
      bits &= bits - 1;
      const doc = start + offset;
      if (hasDeletions && !leaf.isLive(doc)) continue;
      sink.collect(doc, windowScores[offset]!);
    }
    if (sink.stopped) return NO_MORE_DOCS;
  }
  return end + 1;
}

/** Insertion sort of clause indexes by ascending window bound (few clauses). */
function sortByWindowMax(order: Int32Array, windowMax: Float64Array, count: number): void {
  for (let i = 1; i < count; i++) {
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
  const hasDeletions = state.hasDeletions;
  for (let j = essentialStart; j < clauseCount; j++) {
    const clause = clauses[order[j]!]!;
    if (clause.doc < windowStart) clause.advance(windowStart);
  }
  if (clauseCount === 1) return scoreOneClauseWindow(state, clauses[0]!);
  for (;;) {
    let doc = NO_MORE_DOCS;
    for (let j = essentialStart; j < clauseCount; j++) {
      const clauseDoc = clauses[order[j]!]!.doc;
      if (clauseDoc < doc) doc = clauseDoc;
    }
    if (doc > windowEnd) return doc === NO_MORE_DOCS && windowEnd === LAST_DOC ? NO_MORE_DOCS : windowEnd + 1;
    if (!hasDeletions || leaf.isLive(doc)) {
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
      let competitive = true;
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
        // While pruning nothing needs counting, so a doc the heap would reject is not handed over.
        if (score > threshold) {
          sink.collect(doc, score);
          if (sink.stopped) return NO_MORE_DOCS;
          if (sink.competitiveThreshold() !== threshold) {
            advanceEssentials(state, doc);
            return doc + 1;
          }
        }
      }
    }
    advanceEssentials(state, doc);
  }
}

/** `scoreWindow` for a single (essential) clause: its docs in order, each collected when its score beats the threshold. */
function scoreOneClauseWindow(state: LoopState, clause: Scorer): number {
  const { leaf, sink, windowEnd, threshold, hasDeletions } = state;
  let doc = clause.doc;
  for (; doc <= windowEnd; doc = clause.nextDoc()) {
    if (hasDeletions && !leaf.isLive(doc)) continue;
    const score = clause.score();
    if (score > threshold) {
      sink.collect(doc, score);
      if (sink.stopped) return NO_MORE_DOCS;
      if (sink.competitiveThreshold() !== threshold) {
        clause.nextDoc();
        return doc + 1;
      }
    }
  }
  return doc === NO_MORE_DOCS && windowEnd === LAST_DOC ? NO_MORE_DOCS : windowEnd + 1;
}

/** Moves the essential clauses positioned on `doc` to their next doc. */
function advanceEssentials(state: LoopState, doc: number): void {
  const { clauses, order } = state;
  for (let j = state.essentialStart; j < clauses.length; j++) {
    const clause = clauses[order[j]!]!;
    if (clause.doc === doc) clause.nextDoc();
  }
}
