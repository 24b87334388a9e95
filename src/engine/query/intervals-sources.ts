/**
 * Interval sources of the `intervals` query. An interval is a span [start, end] of token positions
 * (both inclusive) in one document. A source is leaf-independent; bound to a shard (which expands
 * multi-term rules over its term dictionary) it yields, per leaf, a doc approximation (a superset
 * of the docs holding an interval) and the intervals of a doc, sorted by start then end.
 *
 * Sources find the intervals of one doc as intervals-algebra.ts combines and filters them; a
 * source matching nothing in a leaf drops out there (a conjunction or a positive filter with it
 * matches nothing, a disjunction or a `not_` filter goes on without it).
 */
import { EngineError } from '../errors.ts';
import type { LeafReader, PostingsCursor } from '../segment/leaf-reader.ts';
import { NO_MORE_DOCS } from '../segment/leaf-reader.ts';
import type { Dfa } from './automaton.ts';
import { intervalFilter, mergeIntervals, orderedIntervals, sortUnique, unorderedIntervals, type Interval, type IntervalFilterKind } from './intervals-algebra.ts';
import { addHighlightAutomaton } from './multi-term-query.ts';
import type { HighlightTerms } from './scorer.ts';
import { addHighlightTerm } from './scorer.ts';
import type { SearchContext } from './search-context.ts';

/** Iterates candidate docs of one leaf in increasing order (a superset of the docs with intervals). */
export interface DocApproximation {
  /** Current doc: -1 before the first move, NO_MORE_DOCS at the end. */
  readonly doc: number;
  /** Moves to the next candidate doc and returns it. */
  nextDoc(): number;
  /** Moves to the first candidate doc >= target (target > doc) and returns it. */
  advance(target: number): number;
  /** Estimated number of candidate docs. */
  cost(): number;
}

/** The intervals of one source in one leaf. */
export interface LeafIntervals {
  /** Candidate docs; `intervals` is only asked for docs in non-decreasing order. */
  readonly approximation: DocApproximation;
  /** Intervals of `doc` sorted by start then end (empty when none); moves the approximation to `doc` when behind. */
  intervals(doc: number): readonly Interval[];
}

/** A source bound to one shard. */
export interface ShardIntervals {
  /** The source's intervals in a leaf, or null when it can have none there. */
  leaf(leaf: LeafReader): LeafIntervals | null;
}

/** A leaf-independent interval source: one rule of an `intervals` query. */
export interface IntervalsSource {
  /** Term and pattern sources read when bound, counting each time a shared sub-source is bound again. */
  readonly size: number;
  /** Binds the source to a shard; multi-term sources expand over its terms here. */
  bind(context: SearchContext): ShardIntervals;
  /** Adds the terms (or prefixes, or automata) whose positions the source reads, for highlighting. */
  extractTerms(out: HighlightTerms): void;
}

const NONE: readonly Interval[] = Object.freeze([]);

/** Moves an approximation to `doc` when behind it; whether it is then on `doc`. */
function reach(approximation: DocApproximation, doc: number): boolean {
  if (approximation.doc < doc) approximation.advance(doc);
  return approximation.doc === doc;
}

/** A postings cursor seen as a doc approximation. */
class CursorApproximation implements DocApproximation {
  constructor(readonly cursor: PostingsCursor) {}

  get doc(): number {
    return this.cursor.doc;
  }

  nextDoc(): number {
    return this.cursor.next();
  }

  advance(target: number): number {
    return this.cursor.advance(target);
  }

  cost(): number {
    return this.cursor.docFreq;
  }
}

/** Docs any of the approximations is on. */
class UnionApproximation implements DocApproximation {
  doc = -1;

  constructor(private readonly parts: readonly DocApproximation[]) {}

  nextDoc(): number {
    return this.advance(this.doc + 1);
  }

  advance(target: number): number {
    let doc = NO_MORE_DOCS;
    for (const part of this.parts) {
      if (part.doc < target) part.advance(target);
      if (part.doc < doc) doc = part.doc;
    }
    return (this.doc = doc);
  }

  cost(): number {
    let cost = 0;
    for (const part of this.parts) cost += part.cost();
    return cost;
  }
}

/** Docs every approximation is on (the cheapest leads). */
class ConjunctionApproximation implements DocApproximation {
  doc = -1;
  private readonly parts: DocApproximation[];

  constructor(parts: readonly DocApproximation[]) {
    this.parts = [...parts].sort((left, right) => left.cost() - right.cost());
  }

  nextDoc(): number {
    return this.advance(this.doc + 1);
  }

  advance(target: number): number {
    let doc = target;
    let agreed = 0;
    // Each round either agrees on a doc or moves `doc` forward, so the loop ends with the parts.
    while (doc !== NO_MORE_DOCS) {
      for (const part of this.parts) {
        if (part.doc < doc) part.advance(doc);
        if (part.doc > doc) {
          doc = part.doc;
          agreed = 0;
          break;
        }
        agreed++;
      }
      if (agreed === this.parts.length) return (this.doc = doc);
    }
    return (this.doc = NO_MORE_DOCS);
  }

  cost(): number {
    return this.parts[0]!.cost();
  }
}

/** A doc approximation over a conjunction or union, or its only part. */
function combine(parts: readonly DocApproximation[], conjunction: boolean): DocApproximation {
  if (parts.length === 1) return parts[0]!;
  return conjunction ? new ConjunctionApproximation(parts) : new UnionApproximation(parts);
}

/** Positions of the cursors on `doc`, merged into single-position intervals. */
function positionIntervals(cursors: readonly PostingsCursor[], doc: number): Interval[] {
  const positions: number[] = [];
  for (const cursor of cursors) {
    if (cursor.doc < doc) cursor.advance(doc);
    if (cursor.doc !== doc) continue;
    const list = cursor.positions();
    for (let i = 0; i < list.length; i++) positions.push(list[i]!);
  }
  if (cursors.length > 1) positions.sort((left, right) => left - right);
  const intervals: Interval[] = [];
  for (let i = 0; i < positions.length; i++) {
    if (i > 0 && positions[i] === positions[i - 1]) continue;
    intervals.push({ start: positions[i]!, end: positions[i]! });
  }
  return intervals;
}

/** Leaf intervals of a set of terms: the positions of any of them. */
class TermsLeafIntervals implements LeafIntervals {
  readonly approximation: DocApproximation;
  private cachedDoc = -1;
  private cached: readonly Interval[] = NONE;

  constructor(private readonly cursors: readonly PostingsCursor[]) {
    this.approximation = combine(cursors.map((cursor) => new CursorApproximation(cursor)), false);
  }

  intervals(doc: number): readonly Interval[] {
    if (doc !== this.cachedDoc) {
      this.cachedDoc = doc;
      this.cached = reach(this.approximation, doc) ? positionIntervals(this.cursors, doc) : NONE;
    }
    return this.cached;
  }
}

/** The leaf intervals of the given terms of `field`, or null when none of them is in the leaf with positions. */
function termsLeaf(leaf: LeafReader, field: string, terms: readonly string[]): LeafIntervals | null {
  if (!leaf.hasPositions(field)) return null;
  const cursors: PostingsCursor[] = [];
  for (const term of terms) {
    const cursor = leaf.postings(field, term);
    if (cursor !== null && cursor.docFreq > 0) cursors.push(cursor);
  }
  return cursors.length === 0 ? null : new TermsLeafIntervals(cursors);
}

/** The positions of one term. */
export class TermSource implements IntervalsSource {
  readonly size = 1;

  constructor(
    readonly field: string,
    readonly term: string,
  ) {}

  bind(): ShardIntervals {
    return { leaf: (leaf) => termsLeaf(leaf, this.field, [this.term]) };
  }

  extractTerms(out: HighlightTerms): void {
    addHighlightTerm(out.terms, this.field, this.term);
  }
}

/** Most terms a multi-term rule expands to on a shard (Lucene's default for interval sources). */
export const MAX_INTERVAL_EXPANSIONS = 128;

/** How a multi-term source finds its terms on a shard. */
export interface TermExpansion {
  /** The rule as shown in errors, such as `out*`. */
  readonly description: string;
  /** The distinct matching terms of the shard, at most `limit` + 1 of them (one more says the limit was passed). */
  expand(context: SearchContext, limit: number): string[];
  /** The literal prefix highlighting uses, when the rule is a prefix. */
  readonly prefix?: string;
  /** The automaton highlighting uses, when the rule has one. */
  readonly automaton?: Dfa;
}

/** The positions of any term a pattern (prefix, wildcard, regexp, fuzzy) expands to. */
export class MultiTermSource implements IntervalsSource {
  readonly size = 1;

  constructor(
    readonly field: string,
    readonly expansion: TermExpansion,
    readonly maxExpansions = MAX_INTERVAL_EXPANSIONS,
  ) {}

  bind(context: SearchContext): ShardIntervals {
    const terms = this.expansion.expand(context, this.maxExpansions);
    if (terms.length > this.maxExpansions) throw tooManyExpansions(this.expansion.description, this.maxExpansions);
    return { leaf: (leaf) => (terms.length === 0 ? null : termsLeaf(leaf, this.field, terms)) };
  }

  extractTerms(out: HighlightTerms): void {
    if (this.expansion.prefix !== undefined) addHighlightTerm(out.prefixes, this.field, this.expansion.prefix);
    if (this.expansion.automaton !== undefined) addHighlightAutomaton(out, this.field, this.expansion.automaton);
  }
}

/** The 400 of a pattern rule matching more terms than allowed on a shard. */
export function tooManyExpansions(description: string, limit: number): EngineError {
  return new EngineError('illegal_argument', `[intervals] pattern [${description}] expanded to too many terms (limit ${limit})`);
}

/** A source with no intervals (empty analysed text, an unmapped `use_field`). */
export class EmptySource implements IntervalsSource {
  readonly size = 0;

  bind(): ShardIntervals {
    return { leaf: () => null };
  }

  extractTerms(): void {}
}

/** Intervals computed from the sub-sources' intervals of the same doc. */
class CombinedLeafIntervals implements LeafIntervals {
  private cachedDoc = -1;
  private cached: readonly Interval[] = NONE;

  constructor(
    readonly approximation: DocApproximation,
    private readonly compute: (doc: number) => readonly Interval[],
  ) {}

  intervals(doc: number): readonly Interval[] {
    if (doc !== this.cachedDoc) {
      this.cachedDoc = doc;
      this.cached = reach(this.approximation, doc) ? this.compute(doc) : NONE;
    }
    return this.cached;
  }
}

/** The intervals of a source with their starts moved back by `before` positions (a query word after removed stop words). */
export class ExtendSource implements IntervalsSource {
  readonly size: number;

  constructor(
    readonly source: IntervalsSource,
    readonly before: number,
  ) {
    this.size = source.size;
  }

  bind(context: SearchContext): ShardIntervals {
    const bound = this.source.bind(context);
    return {
      leaf: (leaf) => {
        const part = bound.leaf(leaf);
        if (part === null) return null;
        return new CombinedLeafIntervals(part.approximation, (doc) =>
          sortUnique(part.intervals(doc).map((interval) => ({ start: Math.max(0, interval.start - this.before), end: interval.end }))),
        );
      },
    };
  }

  extractTerms(out: HighlightTerms): void {
    this.source.extractTerms(out);
  }
}

function sumSizes(sources: readonly IntervalsSource[]): number {
  let size = 0;
  for (const source of sources) size += source.size;
  return size;
}

/** The intervals of any of the sources (ES `any_of`). */
export class OrSource implements IntervalsSource {
  readonly size: number;

  constructor(readonly sources: readonly IntervalsSource[]) {
    this.size = sumSizes(sources);
  }

  bind(context: SearchContext): ShardIntervals {
    const bound = this.sources.map((source) => source.bind(context));
    return {
      leaf: (leaf) => {
        const parts = bound.map((source) => source.leaf(leaf)).filter((part): part is LeafIntervals => part !== null);
        if (parts.length <= 1) return parts[0] ?? null;
        return new CombinedLeafIntervals(combine(parts.map((part) => part.approximation), false), (doc) => mergeIntervals(parts.map((part) => part.intervals(doc))));
      },
    };
  }

  extractTerms(out: HighlightTerms): void {
    for (const source of this.sources) source.extractTerms(out);
  }
}

/** Minimal intervals holding an interval of every source, ordered or not, with at most `maxGaps` gaps (-1: any). */
export class ConjunctionSource implements IntervalsSource {
  readonly size: number;

  constructor(
    readonly sources: readonly IntervalsSource[],
    readonly ordered: boolean,
    readonly maxGaps: number,
  ) {
    this.size = sumSizes(sources);
  }

  bind(context: SearchContext): ShardIntervals {
    const bound = this.sources.map((source) => source.bind(context));
    return {
      leaf: (leaf) => {
        const parts: LeafIntervals[] = [];
        for (const source of bound) {
          const part = source.leaf(leaf);
          if (part === null) return null;
          parts.push(part);
        }
        const combineLists = this.ordered ? orderedIntervals : unorderedIntervals;
        return new CombinedLeafIntervals(combine(parts.map((part) => part.approximation), true), (doc) =>
          combineLists(parts.map((part) => part.intervals(doc)), this.maxGaps),
        );
      },
    };
  }

  extractTerms(out: HighlightTerms): void {
    for (const source of this.sources) source.extractTerms(out);
  }
}

/** The intervals of `source` that pass a filter against the intervals of `filter`. */
export class FilteredSource implements IntervalsSource {
  readonly size: number;

  constructor(
    readonly source: IntervalsSource,
    readonly kind: IntervalFilterKind,
    readonly filter: IntervalsSource,
  ) {
    this.size = source.size + filter.size;
  }

  bind(context: SearchContext): ShardIntervals {
    const source = this.source.bind(context);
    const filter = this.filter.bind(context);
    const negative = this.kind.startsWith('not_');
    return {
      leaf: (leaf) => {
        const main = source.leaf(leaf);
        if (main === null) return null;
        const other = filter.leaf(leaf);
        if (other === null) return negative ? main : null;
        const approximation = negative ? main.approximation : combine([main.approximation, other.approximation], true);
        const keep = intervalFilter(this.kind);
        return new CombinedLeafIntervals(approximation, (doc) => {
          const intervals = main.intervals(doc);
          return intervals.length === 0 ? NONE : keep(intervals, other.intervals(doc));
        });
      },
    };
  }

  extractTerms(out: HighlightTerms): void {
    this.source.extractTerms(out);
  }
}
