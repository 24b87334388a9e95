/**
 * The `intervals` query: `{intervals: {field: {<rule>: {...}, boost, _name}}}` matches the docs in
 * which the rule (intervals-rules.ts) yields at least one interval of token positions
 * (intervals-sources.ts). The field must be indexed with positions (text fields); an unmapped
 * field matches nothing.
 *
 * Scoring follows Lucene's IntervalQuery: a doc's sloppy frequency is the sum over its intervals of
 * 1 / (end − start + 1), so tight matches weigh more, and its score is boost · freq / (freq + 1)
 * (always below the boost; no term statistics are involved).
 */
import type { FlatField } from '../mapping/mapping.ts';
import type { LeafReader } from '../segment/leaf-reader.ts';
import { NO_MORE_DOCS } from '../segment/leaf-reader.ts';
import { MatchNoneQuery } from './basic-queries.ts';
import { checkKeys, dslError, expectObject, readString, singleEntry, type DslObject } from './dsl-reader.ts';
import { INTERVAL_RULES, hasPositions, noPositions, parseIntervalRule } from './intervals-rules.ts';
import type { DocApproximation, IntervalsSource, LeafIntervals, ShardIntervals } from './intervals-sources.ts';
import { readBoost } from './parse-full-text.ts';
import type { HighlightTerms, Query, Weight } from './scorer.ts';
import { BOUND_SLACK, NO_SUB_QUERIES, Scorer, SimpleWeight } from './scorer.ts';
import type { SearchContext } from './search-context.ts';

/** Docs where an interval source over one field has at least one interval. */
export class IntervalsQuery implements Query {
  constructor(
    readonly field: string,
    readonly source: IntervalsSource,
    readonly boost = 1,
  ) {}

  createWeight(context: SearchContext, needsScores: boolean, boost: number): Weight {
    return new IntervalsWeight(this.source.bind(context), needsScores ? boost * this.boost : 0);
  }

  extractTerms(out: HighlightTerms): void {
    this.source.extractTerms(out);
  }

  subQueries(): readonly Query[] {
    return NO_SUB_QUERIES;
  }
}

class IntervalsWeight extends SimpleWeight {
  constructor(
    private readonly source: ShardIntervals,
    private readonly boost: number,
  ) {
    super();
  }

  scorer(leaf: LeafReader): Scorer | null {
    const intervals = this.source.leaf(leaf);
    return intervals === null ? null : new IntervalsScorer(intervals, this.boost);
  }
}

/** Iterates the candidate docs of a source and keeps those with an interval. */
export class IntervalsScorer extends Scorer {
  private readonly approximation: DocApproximation;
  private freq = 0;

  constructor(
    private readonly intervals: LeafIntervals,
    private readonly boost: number,
  ) {
    super();
    this.approximation = intervals.approximation;
  }

  nextDoc(): number {
    return this.confirm(this.approximation.nextDoc());
  }

  advance(target: number): number {
    return this.confirm(this.approximation.doc >= target ? this.approximation.doc : this.approximation.advance(target));
  }

  private confirm(candidate: number): number {
    let doc = candidate;
    while (doc !== NO_MORE_DOCS) {
      const found = this.intervals.intervals(doc);
      if (found.length > 0) {
        let freq = 0;
        for (const interval of found) freq += 1 / (interval.end - interval.start + 1);
        this.freq = freq;
        return (this.doc = doc);
      }
      doc = this.approximation.nextDoc();
    }
    return (this.doc = NO_MORE_DOCS);
  }

  /** The sloppy frequency of the current doc: the sum of 1 / width over its intervals. */
  get sloppyFreq(): number {
    return this.freq;
  }

  score(): number {
    return (this.boost * this.freq) / (this.freq + 1);
  }

  cost(): number {
    return this.approximation.cost();
  }

  maxScore(): number {
    return this.boost * BOUND_SLACK;
  }
}

/** `{intervals: {field: {<rule>: {...}, boost, _name}}}`. */
export function parseIntervalsQuery(body: DslObject, fields: ReadonlyMap<string, FlatField>): Query {
  const [path, value] = singleEntry(body, 'intervals');
  const options = expectObject(value, 'intervals');
  const rules = Object.keys(options).filter((key) => key !== 'boost' && key !== '_name');
  for (const key of rules) {
    if (!(INTERVAL_RULES as readonly string[]).includes(key)) {
      throw dslError(`[intervals] Unknown interval type [${key}], expecting one of [${INTERVAL_RULES.join(', ')}]`);
    }
  }
  if (rules.length === 0) throw dslError('[intervals] Missing intervals from interval query definition');
  if (rules.length > 1) throw dslError(`[intervals] Only one interval rule can be specified, found [${rules[0]}] and [${rules[1]}]`);
  checkKeys(options, [...INTERVAL_RULES, 'boost', '_name'], 'intervals');
  const boost = readBoost(options.boost, 'intervals');
  if (options._name !== undefined) readString(options._name, '_name', 'intervals');
  const field = fields.get(path) ?? null;
  if (field !== null && !hasPositions(field)) throw noPositions(path);
  const source = parseIntervalRule({ [rules[0]!]: options[rules[0]!] }, fields, field);
  return field === null ? new MatchNoneQuery() : new IntervalsQuery(path, source, boost);
}
