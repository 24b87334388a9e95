/**
 * `function_score`: the inner query's score combined with functions (field_value_factor and
 * weight, each optionally restricted by a filter), e.g. ranking by an inplace popularity column.
 */
import { EngineError } from '../errors.ts';
import type { LeafReader, NumericColumn } from '../segment/leaf-reader.ts';
import { NO_MORE_DOCS } from '../segment/leaf-reader.ts';
import type { HighlightTerms, Query, Weight } from './scorer.ts';
import { Scorer, SimpleWeight } from './scorer.ts';
import type { SearchContext } from './search-context.ts';

/** Modifiers `field_value_factor` applies to factor · value. */
export const FIELD_VALUE_MODIFIERS = [
  'none',
  'log',
  'log1p',
  'log2p',
  'ln',
  'ln1p',
  'ln2p',
  'square',
  'sqrt',
  'reciprocal',
] as const;
/** One of FIELD_VALUE_MODIFIERS. */
export type FieldValueModifier = (typeof FIELD_VALUE_MODIFIERS)[number];

/** How the functions' values combine. */
export const SCORE_MODES = ['multiply', 'sum', 'avg', 'first', 'max', 'min'] as const;
/** One of SCORE_MODES. */
export type ScoreMode = (typeof SCORE_MODES)[number];

/** How the combined function value combines with the query score. */
export const BOOST_MODES = ['multiply', 'replace', 'sum', 'avg', 'max', 'min'] as const;
/** One of BOOST_MODES. */
export type BoostMode = (typeof BOOST_MODES)[number];

/** `field_value_factor` parameters. */
export interface FieldValueFactor {
  field: string;
  factor: number;
  modifier: FieldValueModifier;
  /** Value used when the doc has none; null makes a missing value an error. */
  missing: number | null;
}

/** One scoring function. */
export interface ScoreFunction {
  filter: Query | null;
  /** Multiplier of the function value (the whole value for a weight-only function); null when absent. */
  weight: number | null;
  fieldValueFactor: FieldValueFactor | null;
}

/** Parsed `function_score` options. */
export interface FunctionScoreOptions {
  functions: readonly ScoreFunction[];
  scoreMode: ScoreMode;
  boostMode: BoostMode;
  maxBoost: number;
  minScore: number | null;
  boost: number;
}

/** Applies a modifier to factor · value. */
export function modifyFieldValue(modifier: FieldValueModifier, input: number): number {
  switch (modifier) {
    case 'none':
      return input;
    case 'log':
      return Math.log10(input);
    case 'log1p':
      return Math.log10(input + 1);
    case 'log2p':
      return Math.log10(input + 2);
    case 'ln':
      return Math.log(input);
    case 'ln1p':
      return Math.log1p(input);
    case 'ln2p':
      return Math.log(input + 2);
    case 'square':
      return input * input;
    case 'sqrt':
      return Math.sqrt(input);
    case 'reciprocal':
      return 1 / input;
  }
}

/** Scores `query` docs by combining its score with the functions. */
export class FunctionScoreQuery implements Query {
  constructor(
    readonly query: Query,
    readonly options: FunctionScoreOptions,
  ) {}

  createWeight(context: SearchContext, needsScores: boolean, boost: number): Weight {
    const needsQueryScores = needsScores && this.options.boostMode !== 'replace';
    const scoreDocs = needsScores || this.options.minScore !== null;
    return new FunctionScoreWeight(
      this.query.createWeight(context, needsQueryScores, 1),
      this.options.functions.map((fn) => (fn.filter === null ? null : fn.filter.createWeight(context, false, 1))),
      this.options,
      scoreDocs,
      boost * this.options.boost,
    );
  }

  extractTerms(out: HighlightTerms): void {
    this.query.extractTerms(out);
  }

  subQueries(): readonly Query[] {
    const filters = this.options.functions.map((fn) => fn.filter).filter((filter): filter is Query => filter !== null);
    return [this.query, ...filters];
  }
}

class FunctionScoreWeight extends SimpleWeight {
  constructor(
    private readonly inner: Weight,
    private readonly filters: readonly (Weight | null)[],
    private readonly options: FunctionScoreOptions,
    private readonly scoreDocs: boolean,
    private readonly boost: number,
  ) {
    super();
  }

  scorer(leaf: LeafReader, leafIndex: number): Scorer | null {
    const inner = this.inner.scorer(leaf, leafIndex);
    if (inner === null) return null;
    const filters = this.filters.map((weight) => (weight === null ? null : weight.scorer(leaf, leafIndex)));
    const columns = this.options.functions.map((fn) =>
      fn.fieldValueFactor === null ? null : leaf.numericColumn(fn.fieldValueFactor.field),
    );
    return new FunctionScoreScorer(inner, filters, columns, this.options, this.scoreDocs, this.boost);
  }
}

class FunctionScoreScorer extends Scorer {
  private currentScore = 0;

  constructor(
    private readonly inner: Scorer,
    /** Per function: its filter's scorer; null when the function has no filter. */
    private readonly filters: readonly (Scorer | null)[],
    private readonly columns: readonly (NumericColumn | null)[],
    private readonly options: FunctionScoreOptions,
    private readonly scoreDocs: boolean,
    private readonly boost: number,
  ) {
    super();
  }

  nextDoc(): number {
    return this.accept(this.inner.nextDoc());
  }

  advance(target: number): number {
    return this.accept(this.inner.advance(target));
  }

  private accept(candidate: number): number {
    let doc = candidate;
    while (doc !== NO_MORE_DOCS) {
      this.doc = doc;
      if (!this.scoreDocs) return doc;
      this.currentScore = this.computeScore();
      if (this.options.minScore === null || this.currentScore >= this.options.minScore) return doc;
      doc = this.inner.nextDoc();
    }
    return (this.doc = NO_MORE_DOCS);
  }

  score(): number {
    return this.currentScore;
  }

  cost(): number {
    return this.inner.cost();
  }

  maxScore(): number {
    return Infinity;
  }

  private functionMatches(index: number): boolean {
    const filter = this.filters[index];
    if (filter === undefined) return false;
    if (filter === null) return this.options.functions[index]!.filter === null;
    let filterDoc = filter.doc;
    if (filterDoc < this.doc) filterDoc = filter.advance(this.doc);
    return filterDoc === this.doc;
  }

  private functionValue(index: number): number {
    const fn = this.options.functions[index]!;
    const factor = fn.fieldValueFactor;
    let value = 1;
    if (factor !== null) {
      const column = this.columns[index];
      let raw: number | null = null;
      if (column !== null && column !== undefined && column.count(this.doc) > 0) raw = column.value(this.doc, 0);
      else raw = factor.missing;
      if (raw === null) throw new EngineError('illegal_argument', `Missing value for field [${factor.field}]`);
      value = modifyFieldValue(factor.modifier, factor.factor * raw);
      if (!Number.isFinite(value) || value < 0) {
        throw new EngineError(
          'illegal_argument',
          `field_value_factor on [${factor.field}] produced an invalid score [${value}]: modifier [${factor.modifier}] of ${factor.factor * raw}`,
        );
      }
    }
    return fn.weight === null ? value : value * fn.weight;
  }

  private computeScore(): number {
    const { functions, scoreMode, boostMode, maxBoost } = this.options;
    let combined = scoreMode === 'multiply' ? 1 : 0;
    let weightSum = 0;
    let matched = 0;
    for (let i = 0; i < functions.length; i++) {
      if (!this.functionMatches(i)) continue;
      const value = this.functionValue(i);
      matched++;
      switch (scoreMode) {
        case 'multiply':
          combined *= value;
          break;
        case 'sum':
          combined += value;
          break;
        case 'avg':
          combined += value;
          weightSum += functions[i]!.weight ?? 1;
          break;
        case 'first':
          if (matched === 1) combined = value;
          break;
        case 'max':
          combined = matched === 1 ? value : Math.max(combined, value);
          break;
        case 'min':
          combined = matched === 1 ? value : Math.min(combined, value);
          break;
      }
    }
    if (matched === 0) combined = 1;
    else if (scoreMode === 'avg') combined /= weightSum;
    if (combined > maxBoost) combined = maxBoost;
    const queryScore = boostMode === 'replace' ? 0 : this.inner.score();
    let result: number;
    switch (boostMode) {
      case 'multiply':
        result = queryScore * combined;
        break;
      case 'replace':
        result = combined;
        break;
      case 'sum':
        result = queryScore + combined;
        break;
      case 'avg':
        result = (queryScore + combined) / 2;
        break;
      case 'max':
        result = Math.max(queryScore, combined);
        break;
      case 'min':
        result = Math.min(queryScore, combined);
        break;
    }
    return result * this.boost;
  }
}
