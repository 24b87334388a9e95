/**
 * Entry point of the query DSL: dispatches on the query type and parses the compound queries
 * (bool, constant_score, function_score, dis_max, boosting) recursively. Every malformed input is an
 * EngineError('parsing') naming the query and key; unknown fields match nothing, like ES. The
 * built query must respect the limits of query-limits.ts (depth, total clauses).
 */
import type { FlatField } from '../mapping/mapping.ts';
import { ConstantScoreQuery, DisMaxQuery, MatchAllQuery, MatchNoneQuery } from './basic-queries.ts';
import { BooleanQuery, type BooleanClauses } from './boolean-query.ts';
import { BoostingQuery } from './boosting-query.ts';
import { asArray, checkKeys, dslError, expectObject, readEnum, readNumber, readString, resolveMinimumShouldMatch, singleEntry, type DslObject } from './dsl-reader.ts';
import {
  BOOST_MODES,
  FIELD_VALUE_MODIFIERS,
  FunctionScoreQuery,
  SCORE_MODES,
  type FieldValueFactor,
  type ScoreFunction,
} from './function-score-query.ts';
import { parseMatch, parseMatchBoolPrefix, parseMatchPhrase, parseMatchPhrasePrefix, readBoost } from './parse-full-text.ts';
import { parseMultiMatch } from './parse-multi-match.ts';
import { parseFuzzyQuery, parseRegexpQuery, parseWildcardQuery } from './parse-pattern-queries.ts';
import { parseGeoBoundingBox, parseGeoDistance } from './geo-queries.ts';
import { parseIntervalsQuery } from './intervals-query.ts';
import { parseExists, parseIds, parsePrefix, parseRange, parseTerm, parseTerms } from './parse-term-level.ts';
import { checkClauseCount, MAX_QUERY_DEPTH, queryTooDeep } from './query-limits.ts';
import type { Query } from './scorer.ts';
import { parseQueryString } from './query-string.ts';
import { parseSimpleQueryString } from './simple-query-string.ts';
import { parseSliceFilter } from './slice-query.ts';
import { parseDistanceFeature } from './distance-feature-query.ts';

/** Query types this engine implements. */
export const QUERY_TYPES = [
  'match_all',
  'match_none',
  'match',
  'match_phrase',
  'match_phrase_prefix',
  'match_bool_prefix',
  'multi_match',
  'simple_query_string',
  'term',
  'terms',
  'range',
  'exists',
  'geo_bounding_box',
  'geo_distance',
  'distance_feature',
  'ids',
  'prefix',
  'wildcard',
  'regexp',
  'fuzzy',
  'query_string',
  'bool',
  'constant_score',
  'function_score',
  'dis_max',
  'boosting',
  'intervals',
  // The document filter of sliced scrolls and points in time (slice-query.ts).
  '_slice',
];

interface ParseContext {
  fields: ReadonlyMap<string, FlatField>;
  now: number;
}

/** Parses an Elasticsearch query DSL object against the mapping and checks its limits. `now` anchors date math. */
export function parseQuery(dsl: unknown, fields: ReadonlyMap<string, FlatField>, now = Date.now()): Query {
  if (dsl === undefined) return new MatchAllQuery();
  const query = parseNode(dsl, { fields, now }, 0);
  checkClauseCount(query);
  return query;
}

function parseNode(dsl: unknown, context: ParseContext, depth: number): Query {
  if (depth > MAX_QUERY_DEPTH) throw queryTooDeep(null);
  const object = expectObject(dsl, 'query');
  const [type, body] = singleEntry(object, 'query');
  if (type === 'nested') throw dslError('[nested] queries are not supported: the fields of nested objects stay in the source only (map them with include_in_parent to query them on the document)');
  if (!QUERY_TYPES.includes(type)) throw dslError(`unknown query [${type}]`);
  const options = expectObject(body, type);
  const { fields, now } = context;
  switch (type) {
    case 'match_all':
      checkKeys(options, ['boost', '_name'], type);
      return new MatchAllQuery(readBoost(options.boost, type));
    case 'match_none':
      checkKeys(options, ['_name'], type);
      return new MatchNoneQuery();
    case 'match':
      return parseMatch(options, fields, now);
    case 'match_phrase':
      return parseMatchPhrase(options, fields, now);
    case 'match_phrase_prefix':
      return parseMatchPhrasePrefix(options, fields, now);
    case 'match_bool_prefix':
      return parseMatchBoolPrefix(options, fields, now);
    case 'multi_match':
      return parseMultiMatch(options, fields, now);
    case 'simple_query_string':
      return parseSimpleQueryString(options, fields, now);
    case 'term':
      return parseTerm(options, fields, now);
    case 'terms':
      return parseTerms(options, fields, now);
    case 'range':
      return parseRange(options, fields, now);
    case 'exists':
      return parseExists(options, fields);
    case 'geo_bounding_box':
      return parseGeoBoundingBox(options, fields);
    case 'geo_distance':
      return parseGeoDistance(options, fields);
    case 'distance_feature':
      return parseDistanceFeature(options, fields, now);
    case 'ids':
      return parseIds(options);
    case '_slice':
      return parseSliceFilter(options);
    case 'prefix':
      return parsePrefix(options, fields);
    case 'wildcard':
      return parseWildcardQuery(options, fields);
    case 'regexp':
      return parseRegexpQuery(options, fields);
    case 'fuzzy':
      return parseFuzzyQuery(options, fields);
    case 'query_string':
      return parseQueryString(options, fields, now);
    case 'bool':
      return parseBool(options, context, depth);
    case 'constant_score':
      checkKeys(options, ['filter', 'boost', '_name'], type);
      if (options.filter === undefined) throw dslError('[constant_score] requires a \'filter\' element');
      return new ConstantScoreQuery(parseNode(options.filter, context, depth + 1), readBoost(options.boost, type));
    case 'dis_max':
      return parseDisMax(options, context, depth);
    case 'boosting':
      return parseBoosting(options, context, depth);
    case 'intervals':
      return parseIntervalsQuery(options, fields);
    default:
      return parseFunctionScore(options, context, depth);
  }
}

/** `{dis_max: {queries: [...] | {...}, tie_breaker, boost, _name}}`. */
function parseDisMax(options: DslObject, context: ParseContext, depth: number): Query {
  checkKeys(options, ['queries', 'tie_breaker', 'boost', '_name'], 'dis_max');
  if (options.queries === undefined || options.queries === null) throw dslError('[dis_max] requires \'queries\' field with at least one clause');
  const queries = parseClauses(options.queries, context, depth);
  const tieBreaker = options.tie_breaker === undefined ? 0 : readNumber(options.tie_breaker, 'tie_breaker', 'dis_max');
  if (tieBreaker < 0 || tieBreaker > 1) throw dslError(`[dis_max] [tie_breaker] must be in [0, 1], got [${tieBreaker}]`);
  const boost = readBoost(options.boost, 'dis_max');
  return queries.length === 0 ? new MatchNoneQuery() : new DisMaxQuery(queries, tieBreaker, boost);
}

/** `{boosting: {positive, negative, negative_boost, boost, _name}}`. */
function parseBoosting(options: DslObject, context: ParseContext, depth: number): Query {
  checkKeys(options, ['positive', 'negative', 'negative_boost', 'boost', '_name'], 'boosting');
  if (options.positive === undefined) throw dslError("[boosting] query requires 'positive' query to be set'");
  if (options.negative === undefined) throw dslError("[boosting] query requires 'negative' query to be set'");
  const negativeBoost = options.negative_boost === undefined ? -1 : readNumber(options.negative_boost, 'negative_boost', 'boosting');
  if (negativeBoost < 0) throw dslError("[boosting] query requires 'negative_boost' to be set to be a positive value'");
  const positive = parseNode(options.positive, context, depth + 1);
  const negative = parseNode(options.negative, context, depth + 1);
  return new BoostingQuery(positive, negative, negativeBoost, readBoost(options.boost, 'boosting'));
}

function parseClauses(value: unknown, context: ParseContext, depth: number): Query[] {
  if (value === undefined || value === null) return [];
  return asArray(value).map((clause) => parseNode(clause, context, depth + 1));
}

function parseBool(options: DslObject, context: ParseContext, depth: number): Query {
  checkKeys(options, ['must', 'should', 'filter', 'must_not', 'minimum_should_match', 'boost', 'adjust_pure_negative', '_name'], 'bool');
  const clauses: BooleanClauses = {
    must: parseClauses(options.must, context, depth),
    should: parseClauses(options.should, context, depth),
    filter: parseClauses(options.filter, context, depth),
    mustNot: parseClauses(options.must_not, context, depth),
  };
  const boost = readBoost(options.boost, 'bool');
  const required = clauses.must.length + clauses.filter.length > 0;
  let minimum = 0;
  if (options.minimum_should_match !== undefined && options.minimum_should_match !== null) {
    minimum = resolveMinimumShouldMatch(options.minimum_should_match, clauses.should.length, 'bool');
  }
  // A should-only bool needs at least one should clause to match; with must/filter, should is optional.
  if (!required && clauses.should.length > 0) minimum = Math.max(1, minimum);
  if (minimum > clauses.should.length) return new MatchNoneQuery();
  return new BooleanQuery(clauses, minimum, boost);
}

function parseFieldValueFactor(value: unknown): FieldValueFactor {
  const options = expectObject(value, 'field_value_factor');
  checkKeys(options, ['field', 'factor', 'modifier', 'missing'], 'field_value_factor');
  return {
    field: readString(options.field, 'field', 'field_value_factor'),
    factor: options.factor === undefined ? 1 : readNumber(options.factor, 'factor', 'field_value_factor'),
    modifier: options.modifier === undefined ? 'none' : readEnum(options.modifier, FIELD_VALUE_MODIFIERS, 'modifier', 'field_value_factor'),
    missing: options.missing === undefined || options.missing === null ? null : readNumber(options.missing, 'missing', 'field_value_factor'),
  };
}

function parseScoreFunction(value: unknown, context: ParseContext, depth: number): ScoreFunction {
  const options = expectObject(value, 'function_score.functions');
  checkKeys(options, ['filter', 'weight', 'field_value_factor'], 'function_score');
  const scoreFunction: ScoreFunction = {
    filter: options.filter === undefined ? null : parseNode(options.filter, context, depth + 1),
    weight: options.weight === undefined ? null : readNumber(options.weight, 'weight', 'function_score'),
    fieldValueFactor: options.field_value_factor === undefined ? null : parseFieldValueFactor(options.field_value_factor),
  };
  if (scoreFunction.weight === null && scoreFunction.fieldValueFactor === null) {
    throw dslError('[function_score] a function needs [field_value_factor] or [weight] (other score functions are not supported)');
  }
  return scoreFunction;
}

function parseFunctionScore(options: DslObject, context: ParseContext, depth: number): Query {
  checkKeys(
    options,
    ['query', 'functions', 'field_value_factor', 'weight', 'boost_mode', 'score_mode', 'max_boost', 'min_score', 'boost', 'filter', '_name'],
    'function_score',
  );
  if (options.filter !== undefined) throw dslError('[function_score] [filter] belongs inside [functions] entries');
  const query = options.query === undefined ? new MatchAllQuery() : parseNode(options.query, context, depth + 1);
  let functions: ScoreFunction[];
  if (options.functions !== undefined) {
    if (!Array.isArray(options.functions)) throw dslError('[function_score] [functions] must be an array');
    if (options.field_value_factor !== undefined || options.weight !== undefined) {
      throw dslError('[function_score] already found [functions] array, now encountering a top-level function');
    }
    functions = options.functions.map((fn) => parseScoreFunction(fn, context, depth));
  } else if (options.field_value_factor !== undefined || options.weight !== undefined) {
    functions = [parseScoreFunction({ field_value_factor: options.field_value_factor, weight: options.weight }, context, depth)];
  } else {
    functions = [];
  }
  return new FunctionScoreQuery(query, {
    functions,
    scoreMode: options.score_mode === undefined ? 'multiply' : readEnum(options.score_mode, SCORE_MODES, 'score_mode', 'function_score'),
    boostMode: options.boost_mode === undefined ? 'multiply' : readEnum(options.boost_mode, BOOST_MODES, 'boost_mode', 'function_score'),
    maxBoost: options.max_boost === undefined ? Number.MAX_VALUE : readNumber(options.max_boost, 'max_boost', 'function_score'),
    minScore: options.min_score === undefined ? null : readNumber(options.min_score, 'min_score', 'function_score'),
    boost: readBoost(options.boost, 'function_score'),
  });
}
