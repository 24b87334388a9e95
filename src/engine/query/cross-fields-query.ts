/**
 * `multi_match` type `cross_fields`: term-centric matching over several fields as if they were one.
 * Fields are grouped by analyzer; in each group every analysed term becomes a `BlendedTermQuery`
 * (the term in any of the group's fields, scored per field with the largest document frequency the
 * term has in any of them — ES's BlendedTermQuery — and combined with dis_max and `tie_breaker`),
 * and the terms are combined with `operator` / `minimum_should_match`. Groups, and fields outside
 * the inverted index (numbers, dates), are combined with dis_max.
 */
import { analyze } from '../analysis/analyzer.ts';
import type { AnalyzerName, FlatField } from '../mapping/mapping.ts';
import type { LeafReader } from '../segment/leaf-reader.ts';
import { DisMaxQuery, MatchAllQuery, MatchNoneQuery } from './basic-queries.ts';
import { Bm25Scoring, bm25Idf } from './bm25.ts';
import { BooleanQuery } from './boolean-query.ts';
import { DisMaxScorer } from './boolean-scorers.ts';
import { resolveMinimumShouldMatch } from './dsl-reader.ts';
import type { MatchOptions } from './field-queries.ts';
import { isInvertedField, matchQuery } from './field-queries.ts';
import type { HighlightTerms, Query, Scorer, Weight } from './scorer.ts';
import { SimpleWeight } from './scorer.ts';
import type { SearchContext } from './search-context.ts';
import { TermQuery, TermScorer } from './term-query.ts';

/** One term in any of several fields, each field scored with the term's largest docFreq among them. */
export class BlendedTermQuery implements Query {
  /** The term in each field, boosted by the field's boost (counted by the clause limit, highlighted). */
  readonly fieldQueries: readonly TermQuery[];

  constructor(
    fields: readonly string[],
    readonly term: string,
    fieldBoosts: readonly number[],
    readonly tieBreaker: number,
  ) {
    this.fieldQueries = fields.map((field, index) => new TermQuery(field, term, fieldBoosts[index]!));
  }

  createWeight(context: SearchContext, needsScores: boolean, boost: number): Weight {
    let maxDocFreq = 0;
    for (const query of this.fieldQueries) maxDocFreq = Math.max(maxDocFreq, context.docFreq(query.field, query.term));
    const scorings = this.fieldQueries.map((query) => {
      if (!needsScores) return null;
      const idf = bm25Idf(maxDocFreq, Math.max(context.fieldStats(query.field).docCount, maxDocFreq));
      return Bm25Scoring.forField(context, query.field, idf, boost * query.boost, context.field(query.field)?.type === 'text');
    });
    const lengthNormalised = this.fieldQueries.map((query) => context.field(query.field)?.type === 'text');
    return new BlendedTermWeight(this, scorings, lengthNormalised);
  }

  extractTerms(out: HighlightTerms): void {
    for (const query of this.fieldQueries) query.extractTerms(out);
  }

  subQueries(): readonly Query[] {
    return this.fieldQueries;
  }
}

class BlendedTermWeight extends SimpleWeight {
  constructor(
    private readonly query: BlendedTermQuery,
    private readonly scorings: readonly (Bm25Scoring | null)[],
    private readonly lengthNormalised: readonly boolean[],
  ) {
    super();
  }

  scorer(leaf: LeafReader): Scorer | null {
    const scorers: Scorer[] = [];
    this.query.fieldQueries.forEach((query, index) => {
      const cursor = leaf.postings(query.field, query.term);
      if (cursor === null || cursor.docFreq === 0) return;
      scorers.push(new TermScorer(cursor, this.scorings[index]!, leaf, query.field, this.lengthNormalised[index]!));
    });
    if (scorers.length === 0) return null;
    return scorers.length === 1 ? scorers[0]! : new DisMaxScorer(scorers, this.query.tieBreaker);
  }
}

/** Fields searched, each with its `^boost`. */
export interface CrossFieldTargets {
  fields: readonly FlatField[];
  boosts: readonly number[];
}

/** The `cross_fields` query of `text` over the targets. */
export function crossFieldsQuery(targets: CrossFieldTargets, text: string, options: MatchOptions, tieBreaker: number, owner: string, now: number): Query {
  const groups = new Map<AnalyzerName, { paths: string[]; boosts: number[] }>();
  const queries: Query[] = [];
  targets.fields.forEach((field, index) => {
    const boost = targets.boosts[index]!;
    if (!isInvertedField(field)) {
      queries.push(matchQuery(field, text, { ...options, boost }, owner, now));
      return;
    }
    const analyzer = options.analyzer ?? field.analyzer;
    let group = groups.get(analyzer);
    if (group === undefined) {
      group = { paths: [], boosts: [] };
      groups.set(analyzer, group);
    }
    group.paths.push(field.path);
    group.boosts.push(boost);
  });
  for (const [analyzer, group] of groups) {
    const tokens = analyze(analyzer, text);
    if (tokens.length === 0) {
      if (options.zeroTermsQuery === 'all') queries.push(new MatchAllQuery());
      continue;
    }
    const terms = tokens.map((token) => new BlendedTermQuery(group.paths, token.term, group.boosts, tieBreaker));
    if (options.operator === 'and') {
      queries.push(new BooleanQuery({ must: terms, should: [], filter: [], mustNot: [] }, 0));
      continue;
    }
    const minimum =
      options.minimumShouldMatch === undefined ? 1 : Math.max(1, resolveMinimumShouldMatch(options.minimumShouldMatch, terms.length, owner));
    if (minimum > terms.length) continue;
    queries.push(terms.length === 1 ? terms[0]! : new BooleanQuery({ must: [], should: terms, filter: [], mustNot: [] }, minimum));
  }
  if (queries.length === 0) return new MatchNoneQuery();
  if (queries.length === 1) return new BooleanQuery({ must: [], should: queries, filter: [], mustNot: [] }, 1, options.boost);
  return new DisMaxQuery(queries, tieBreaker, options.boost);
}
