/**
 * The algebra of interval lists of one document, as Lucene's interval sources define it. A list
 * holds [start, end] spans of token positions sorted by start then end. `orderedIntervals` and
 * `unorderedIntervals` give the minimal spans holding one interval of every list (ordered: each
 * ending before the next starts; unordered: any order, overlaps allowed), `max_gaps` then keeping
 * those with at most that many positions the chosen intervals leave uncovered; `intervalFilter`
 * keeps the intervals of a list that (do not) contain, are (not) contained by, (do not) overlap,
 * come before or come after an interval of another list. Each runs in O(n log n) for n intervals.
 */

/** A span of token positions, both ends inclusive. */
export interface Interval {
  start: number;
  end: number;
}

/** Filters of a source by the intervals of another. */
export const INTERVAL_FILTERS = ['containing', 'contained_by', 'not_containing', 'not_contained_by', 'overlapping', 'not_overlapping', 'before', 'after'] as const;

/** One of INTERVAL_FILTERS. */
export type IntervalFilterKind = (typeof INTERVAL_FILTERS)[number];

/** The intervals of a list that pass a filter of the given kind against the intervals of another list. */
export function intervalFilter(kind: IntervalFilterKind): (intervals: readonly Interval[], filter: readonly Interval[]) => Interval[] {
  const test = filterTest(kind);
  return (intervals, filter) => {
    const index = new FilterIndex(filter);
    return intervals.filter((interval) => test(interval, index));
  };
}

/** The test a filter kind applies to each interval of its source. */
function filterTest(kind: IntervalFilterKind): (interval: Interval, index: FilterIndex) => boolean {
  switch (kind) {
    case 'containing':
      return (interval, index) => index.containedIn(interval);
    case 'not_containing':
      return (interval, index) => !index.containedIn(interval);
    case 'contained_by':
      return (interval, index) => index.contains(interval);
    case 'not_contained_by':
      return (interval, index) => !index.contains(interval);
    case 'overlapping':
      return (interval, index) => index.overlaps(interval);
    case 'not_overlapping':
      return (interval, index) => !index.overlaps(interval);
    case 'before':
      return (interval, index) => index.maxStart > interval.end;
    case 'after':
      return (interval, index) => index.minEnd < interval.start;
  }
}

/** First index of `list` (sorted by start) whose start is > `after`; `list.length` when none. */
function firstStartAfter(list: readonly Interval[], after: number): number {
  let low = 0;
  let high = list.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (list[middle]!.start > after) high = middle;
    else low = middle + 1;
  }
  return low;
}

/** For every index of a list sorted by start, the index of the interval ending first among it and the ones after it. */
function suffixMinEnd(list: readonly Interval[]): Int32Array {
  const best = new Int32Array(list.length);
  for (let i = list.length - 1; i >= 0; i--) {
    best[i] = i === list.length - 1 || list[i]!.end <= list[best[i + 1]!]!.end ? i : best[i + 1]!;
  }
  return best;
}

/** A filter source's intervals of one doc, indexed to answer the filter tests in logarithmic time. */
class FilterIndex {
  /** Largest end among the intervals up to each index. */
  private readonly prefixMaxEnd: Int32Array;
  private readonly suffixBest: Int32Array;
  readonly maxStart: number;
  readonly minEnd: number;

  constructor(private readonly list: readonly Interval[]) {
    this.prefixMaxEnd = new Int32Array(list.length);
    let maxEnd = -1;
    let minEnd = Infinity;
    list.forEach((interval, i) => {
      maxEnd = Math.max(maxEnd, interval.end);
      minEnd = Math.min(minEnd, interval.end);
      this.prefixMaxEnd[i] = maxEnd;
    });
    this.suffixBest = suffixMinEnd(list);
    this.maxStart = list.length === 0 ? -Infinity : list[list.length - 1]!.start;
    this.minEnd = minEnd;
  }

  /** Whether some filter interval lies within `outer`. */
  containedIn(outer: Interval): boolean {
    const from = firstStartAfter(this.list, outer.start - 1);
    return from < this.list.length && this.list[this.suffixBest[from]!]!.end <= outer.end;
  }

  /** Whether some filter interval covers `inner`. */
  contains(inner: Interval): boolean {
    const upTo = firstStartAfter(this.list, inner.start) - 1;
    return upTo >= 0 && this.prefixMaxEnd[upTo]! >= inner.end;
  }

  /** Whether some filter interval shares a position with `other`. */
  overlaps(other: Interval): boolean {
    const upTo = firstStartAfter(this.list, other.end) - 1;
    return upTo >= 0 && this.prefixMaxEnd[upTo]! >= other.start;
  }
}

/** Intervals sorted by start then end, without duplicates. */
export function sortUnique(intervals: Interval[]): Interval[] {
  intervals.sort((left, right) => left.start - right.start || left.end - right.end);
  return intervals.filter((interval, i) => i === 0 || interval.start !== intervals[i - 1]!.start || interval.end !== intervals[i - 1]!.end);
}

/** The union of interval lists, sorted and without duplicates. */
export function mergeIntervals(lists: ReadonlyArray<readonly Interval[]>): Interval[] {
  const all: Interval[] = [];
  for (const list of lists) all.push(...list);
  return sortUnique(all);
}

/** A candidate interval and its gaps. */
interface GappedInterval extends Interval {
  gaps: number;
}

/** The candidates that contain no other candidate, sorted, with at most `maxGaps` gaps (-1: any). */
function minimalIntervals(candidates: GappedInterval[], maxGaps: number): Interval[] {
  candidates.sort((left, right) => left.start - right.start || left.end - right.end);
  const kept: GappedInterval[] = [];
  let minEndAfter = Infinity;
  for (let i = candidates.length - 1; i >= 0; i--) {
    const candidate = candidates[i]!;
    // Within a start, the first (smallest end) candidate is the only one that can be minimal.
    if (i > 0 && candidates[i - 1]!.start === candidate.start) continue;
    if (candidate.end < minEndAfter) kept.push(candidate);
    minEndAfter = Math.min(minEndAfter, candidate.end);
  }
  kept.reverse();
  const result: Interval[] = [];
  for (const { start, end, gaps } of kept) if (maxGaps < 0 || gaps <= maxGaps) result.push({ start, end });
  return result;
}

/**
 * Minimal intervals made of one interval of each list, each ending before the next starts. For a
 * first interval, taking in each next list the interval ending first among those starting after the
 * previous end gives the smallest end; the minimal intervals are among these candidates.
 */
export function orderedIntervals(lists: ReadonlyArray<readonly Interval[]>, maxGaps: number): Interval[] {
  if (lists.some((list) => list.length === 0)) return [];
  if (lists.length === 1) return [...lists[0]!];
  const best = lists.map(suffixMinEnd);
  const candidates: GappedInterval[] = [];
  const first = lists[0]!;
  for (let i = 0; i < first.length; i++) {
    if (i > 0 && first[i]!.start === first[i - 1]!.start) continue;
    let end = first[i]!.end;
    let gaps = 0;
    let complete = true;
    for (let k = 1; k < lists.length; k++) {
      const list = lists[k]!;
      const from = firstStartAfter(list, end);
      if (from >= list.length) {
        complete = false;
        break;
      }
      const next = list[best[k]![from]!]!;
      gaps += next.start - end - 1;
      end = next.end;
    }
    if (complete) candidates.push({ start: first[i]!.start, end, gaps });
  }
  return minimalIntervals(candidates, maxGaps);
}

/**
 * Minimal intervals holding one interval of each list in any order (overlaps allowed). For every
 * start position, each list's interval ending first among those starting there or later spans a
 * candidate; every minimal interval is one of them. Gaps are the positions no chosen interval covers.
 */
export function unorderedIntervals(lists: ReadonlyArray<readonly Interval[]>, maxGaps: number): Interval[] {
  if (lists.some((list) => list.length === 0)) return [];
  if (lists.length === 1) return [...lists[0]!];
  const best = lists.map(suffixMinEnd);
  const starts = [...new Set(lists.flatMap((list) => list.map((interval) => interval.start)))].sort((left, right) => left - right);
  const candidates: GappedInterval[] = [];
  const chosen: Interval[] = new Array(lists.length);
  for (const start of starts) {
    let complete = true;
    for (let k = 0; k < lists.length; k++) {
      const list = lists[k]!;
      const from = firstStartAfter(list, start - 1);
      if (from >= list.length) {
        complete = false;
        break;
      }
      chosen[k] = list[best[k]![from]!]!;
    }
    if (!complete) break;
    candidates.push(spanOf(chosen));
  }
  return minimalIntervals(candidates, maxGaps);
}

/** The interval spanning `parts`, with the positions inside it none of them covers as gaps. */
function spanOf(parts: readonly Interval[]): GappedInterval {
  const sorted = [...parts].sort((left, right) => left.start - right.start);
  let covered = 0;
  let reached = -1;
  let end = -1;
  for (const part of sorted) {
    const from = Math.max(part.start, reached + 1);
    if (part.end >= from) covered += part.end - from + 1;
    reached = Math.max(reached, part.end);
    end = Math.max(end, part.end);
  }
  const start = sorted[0]!.start;
  return { start, end, gaps: end - start + 1 - covered };
}
