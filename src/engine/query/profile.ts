/**
 * Query profiling (ES `profile: true`): the parsed query tree is wrapped node by node — compound
 * `bool`, `dis_max` and `constant_score` queries rebuilt around wrapped clauses, every other
 * query a leaf of the tree — so that each node's weight and scorers time their own calls
 * (`create_weight`, `build_scorer`, `next_doc`, `advance`, `score`, `shallow_advance`,
 * `compute_max_score`, `count`) and count them. A node's `time_in_nanos` is the sum of its
 * breakdown and includes its children's, as in ES. Profiling costs a clock read per call.
 */
import type { LeafReader } from '../segment/leaf-reader.ts';
import { ConstantScoreQuery, DisMaxQuery } from './basic-queries.ts';
import { BooleanQuery } from './boolean-query.ts';
import { describeQuery, queryType } from './query-description.ts';
import type { HighlightTerms, Query, Weight } from './scorer.ts';
import { Scorer } from './scorer.ts';
import type { SearchContext } from './search-context.ts';
import { ProfileNode, type ProfileTree } from './profile-node.ts';

/** Timed operations of a profiled query node. */
const TIMED = ['create_weight', 'build_scorer', 'next_doc', 'advance', 'score', 'shallow_advance', 'compute_max_score', 'count'] as const;
type Timed = (typeof TIMED)[number];

/** One node of a query profile, as ES renders it. */
export type QueryProfile = ProfileTree;

/** A profiled query node's timings. */
type QueryProfileNode = ProfileNode<Timed>;

/** A query wrapped for profiling, with the tree of its timings. */
export interface ProfiledQuery {
  query: Query;
  /** The rendered profile tree (call once the phase is done). */
  render(): QueryProfile;
}

/** Wraps a parsed query (and its compound clauses) for profiling. */
export function profileQuery(query: Query): ProfiledQuery {
  const root = wrap(query);
  return { query: root, render: () => root.node.render() };
}

function wrap(query: Query): TimedQuery {
  const node: QueryProfileNode = new ProfileNode(queryType(query), describeQuery(query), TIMED);
  const child = (inner: Query): Query => {
    const wrapped = wrap(inner);
    node.children.push(wrapped.node);
    return wrapped;
  };
  let rebuilt = query;
  if (query instanceof BooleanQuery) {
    const { must, should, filter, mustNot } = query.clauses;
    rebuilt = new BooleanQuery({ must: must.map(child), should: should.map(child), filter: filter.map(child), mustNot: mustNot.map(child) }, query.minimumShouldMatch, query.boost);
  } else if (query instanceof DisMaxQuery) {
    rebuilt = new DisMaxQuery(query.queries.map(child), query.tieBreaker, query.boost);
  } else if (query instanceof ConstantScoreQuery) {
    rebuilt = new ConstantScoreQuery(child(query.filter), query.boost);
  }
  return new TimedQuery(rebuilt, node);
}

class TimedQuery implements Query {
  constructor(
    private readonly inner: Query,
    readonly node: QueryProfileNode,
  ) {}

  createWeight(context: SearchContext, needsScores: boolean, boost: number): Weight {
    const started = performance.now();
    const weight = this.inner.createWeight(context, needsScores, boost);
    this.node.add('create_weight', started);
    return new TimedWeight(weight, this.node);
  }

  extractTerms(out: HighlightTerms): void {
    this.inner.extractTerms(out);
  }

  subQueries(): readonly Query[] {
    return this.inner.subQueries();
  }
}

class TimedWeight implements Weight {
  constructor(
    private readonly inner: Weight,
    private readonly node: QueryProfileNode,
  ) {}

  scorer(leaf: LeafReader, leafIndex: number): Scorer | null {
    const started = performance.now();
    const scorer = this.inner.scorer(leaf, leafIndex);
    this.node.add('build_scorer', started);
    return scorer === null ? null : new TimedScorer(scorer, this.node);
  }

  disjunctionClauses(leaf: LeafReader, leafIndex: number): Scorer[] | null {
    const started = performance.now();
    const clauses = this.inner.disjunctionClauses(leaf, leafIndex);
    this.node.add('build_scorer', started);
    return clauses === null ? null : clauses.map((scorer) => new TimedScorer(scorer, this.node));
  }

  count(leaf: LeafReader, leafIndex: number): number {
    const started = performance.now();
    const count = this.inner.count(leaf, leafIndex);
    this.node.add('count', started);
    return count;
  }
}

class TimedScorer extends Scorer {
  constructor(
    private readonly inner: Scorer,
    private readonly node: QueryProfileNode,
  ) {
    super();
    this.doc = inner.doc;
  }

  nextDoc(): number {
    const started = performance.now();
    this.doc = this.inner.nextDoc();
    this.node.add('next_doc', started);
    return this.doc;
  }

  advance(target: number): number {
    const started = performance.now();
    this.doc = this.inner.advance(target);
    this.node.add('advance', started);
    return this.doc;
  }

  score(): number {
    const started = performance.now();
    const score = this.inner.score();
    this.node.add('score', started);
    return score;
  }

  cost(): number {
    return this.inner.cost();
  }

  override shallowAdvance(target: number): number {
    const started = performance.now();
    const end = this.inner.shallowAdvance(target);
    this.node.add('shallow_advance', started);
    return end;
  }

  maxScore(upTo: number): number {
    const started = performance.now();
    const bound = this.inner.maxScore(upTo);
    this.node.add('compute_max_score', started);
    return bound;
  }
}
