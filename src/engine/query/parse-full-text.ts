/** DSL parsers of the full-text queries: match, match_phrase, multi_match, simple_query_string. */
import type { AnalyzerName, FlatField } from '../mapping/mapping.ts';
import { DisMaxQuery, MatchNoneQuery } from './basic-queries.ts';
import { BooleanQuery } from './boolean-query.ts';
import {
  asArray,
  checkKeys,
  dslError,
  isDslObject,
  readBoolean,
  readEnum,
  readInteger,
  readNumber,
  readScalarText,
  readString,
  singleEntry,
  type DslObject,
} from './dsl-reader.ts';
import type { MatchOptions } from './field-queries.ts';
import { expandFieldPattern, matchQuery, phraseQuery } from './field-queries.ts';
import type { Query } from './scorer.ts';

/** Analyzers a query may name. */
const ANALYZERS: readonly AnalyzerName[] = ['standard', 'english', 'keyword', 'whitespace'];

/** A boost: a non-negative number. */
export function readBoost(value: unknown, owner: string): number {
  if (value === undefined) return 1;
  const boost = readNumber(value, 'boost', owner);
  if (boost < 0) throw dslError(`[${owner}] negative [boost] are not allowed.`);
  return boost;
}

/** Rejects fuzziness other than 0 (fuzzy matching is not implemented yet). */
function checkFuzziness(options: DslObject, owner: string): void {
  const fuzziness = options.fuzziness;
  if (fuzziness === undefined || fuzziness === 0 || fuzziness === '0') return;
  throw dslError(`[${owner}] fuzziness [${String(fuzziness)}] is not supported`);
}

/** Reads the options match-like queries share. */
function readMatchOptions(options: DslObject, owner: string): MatchOptions {
  checkFuzziness(options, owner);
  if (options.prefix_length !== undefined) readInteger(options.prefix_length, 'prefix_length', owner);
  if (options.max_expansions !== undefined) readInteger(options.max_expansions, 'max_expansions', owner, 1);
  if (options.fuzzy_transpositions !== undefined) readBoolean(options.fuzzy_transpositions, 'fuzzy_transpositions', owner);
  if (options.auto_generate_synonyms_phrase_query !== undefined) {
    readBoolean(options.auto_generate_synonyms_phrase_query, 'auto_generate_synonyms_phrase_query', owner);
  }
  return {
    operator: options.operator === undefined ? 'or' : readEnum(options.operator, ['or', 'and'] as const, 'operator', owner),
    minimumShouldMatch: options.minimum_should_match ?? undefined,
    boost: readBoost(options.boost, owner),
    analyzer: options.analyzer === undefined ? null : readEnum(options.analyzer, ANALYZERS, 'analyzer', owner),
    zeroTermsQuery:
      options.zero_terms_query === undefined ? 'none' : readEnum(options.zero_terms_query, ['none', 'all'] as const, 'zero_terms_query', owner),
    lenient: options.lenient === undefined ? false : readBoolean(options.lenient, 'lenient', owner),
  };
}

const MATCH_KEYS = [
  'query',
  'operator',
  'minimum_should_match',
  'boost',
  'analyzer',
  'zero_terms_query',
  'lenient',
  'fuzziness',
  'prefix_length',
  'max_expansions',
  'fuzzy_transpositions',
  'auto_generate_synonyms_phrase_query',
];

/** `{match: {field: text | {query, ...}}}`. */
export function parseMatch(body: DslObject, fields: ReadonlyMap<string, FlatField>, now: number): Query {
  const [path, value] = singleEntry(body, 'match');
  const options = isDslObject(value) ? value : { query: value };
  checkKeys(options, MATCH_KEYS, 'match');
  if (options.query === undefined) throw dslError('[match] requires query value');
  const text = readScalarText(options.query, 'query', 'match');
  const matchOptions = readMatchOptions(options, 'match');
  const field = fields.get(path);
  return field === undefined ? new MatchNoneQuery() : matchQuery(field, text, matchOptions, 'match', now);
}

/** `{match_phrase: {field: text | {query, slop, ...}}}`. */
export function parseMatchPhrase(body: DslObject, fields: ReadonlyMap<string, FlatField>, now: number): Query {
  const [path, value] = singleEntry(body, 'match_phrase');
  const options = isDslObject(value) ? value : { query: value };
  checkKeys(options, ['query', 'slop', 'boost', 'analyzer', 'zero_terms_query'], 'match_phrase');
  if (options.query === undefined) throw dslError('[match_phrase] requires query value');
  const text = readScalarText(options.query, 'query', 'match_phrase');
  const slop = options.slop === undefined ? 0 : readInteger(options.slop, 'slop', 'match_phrase');
  const matchOptions = readMatchOptions(options, 'match_phrase');
  const field = fields.get(path);
  return field === undefined ? new MatchNoneQuery() : phraseQuery(field, text, slop, matchOptions, 'match_phrase', now);
}

/** A field pattern with an optional `^boost`, resolved against the mapping. */
export interface BoostedFields {
  fields: FlatField[];
  boosts: number[];
}

/** Resolves `fields` of multi_match / simple_query_string (`*` patterns, `^boost`); default `*`. */
export function resolveFieldList(value: unknown, fields: ReadonlyMap<string, FlatField>, owner: string): BoostedFields {
  const patterns = value === undefined ? ['*'] : asArray(value);
  const resolved: BoostedFields = { fields: [], boosts: [] };
  const seen = new Set<string>();
  for (const pattern of patterns) {
    const text = readString(pattern, 'fields', owner);
    const caret = text.lastIndexOf('^');
    const name = caret < 0 ? text : text.slice(0, caret);
    const boost = caret < 0 ? 1 : readBoost(text.slice(caret + 1), owner);
    for (const field of expandFieldPattern(name, fields)) {
      if (seen.has(field.path)) continue;
      seen.add(field.path);
      resolved.fields.push(field);
      resolved.boosts.push(boost);
    }
  }
  return resolved;
}

/** `{multi_match: {query, fields, type, operator, minimum_should_match, tie_breaker, slop, ...}}`. */
export function parseMultiMatch(body: DslObject, fields: ReadonlyMap<string, FlatField>, now: number): Query {
  checkKeys(body, [...MATCH_KEYS, 'fields', 'type', 'tie_breaker', 'slop'], 'multi_match');
  if (body.query === undefined) throw dslError('[multi_match] requires query value');
  const text = readScalarText(body.query, 'query', 'multi_match');
  const type =
    body.type === undefined
      ? 'best_fields'
      : readEnum(body.type, ['best_fields', 'most_fields', 'phrase', 'cross_fields', 'phrase_prefix', 'bool_prefix'] as const, 'type', 'multi_match');
  if (type === 'cross_fields' || type === 'phrase_prefix' || type === 'bool_prefix') {
    throw dslError(`[multi_match] type [${type}] is not supported`);
  }
  const tieBreaker = body.tie_breaker === undefined ? 0 : readNumber(body.tie_breaker, 'tie_breaker', 'multi_match');
  const slop = body.slop === undefined ? 0 : readInteger(body.slop, 'slop', 'multi_match');
  const options = readMatchOptions(body, 'multi_match');
  const targets = resolveFieldList(body.fields, fields, 'multi_match');
  const queries = targets.fields.map((field, index) => {
    const fieldOptions = { ...options, boost: targets.boosts[index]! };
    return type === 'phrase'
      ? phraseQuery(field, text, slop, fieldOptions, 'multi_match', now)
      : matchQuery(field, text, fieldOptions, 'multi_match', now);
  });
  if (queries.length === 0) return new MatchNoneQuery();
  if (type === 'most_fields') return new BooleanQuery({ must: [], should: queries, filter: [], mustNot: [] }, 1, options.boost);
  if (queries.length === 1) return new BooleanQuery({ must: [], should: queries, filter: [], mustNot: [] }, 1, options.boost);
  return new DisMaxQuery(queries, tieBreaker, options.boost);
}
