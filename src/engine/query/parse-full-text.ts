/**
 * DSL parsers of the single-field full-text queries: match, match_phrase, match_phrase_prefix,
 * match_bool_prefix; and what multi_match (parse-multi-match.ts) shares with them.
 */
import type { AnalyzerName, FlatField } from '../mapping/mapping.ts';
import { MatchNoneQuery } from './basic-queries.ts';
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
import { parseFuzziness, readFuzzyOptions, type FuzzyOptions } from './fuzzy-query.ts';
import { boolPrefixQuery, expandFieldPattern, matchQuery, phrasePrefixQuery, phraseQuery } from './field-queries.ts';
import { DEFAULT_PHRASE_PREFIX_EXPANSIONS } from './phrase-prefix-query.ts';
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

/** The fuzzy options of a match-like query: `fuzziness`, `prefix_length`, `max_expansions`, `fuzzy_transpositions`; null without fuzziness. */
function readMatchFuzziness(options: DslObject, owner: string): FuzzyOptions | null {
  const transpositions = options.fuzzy_transpositions === undefined ? undefined : readBoolean(options.fuzzy_transpositions, 'fuzzy_transpositions', owner);
  const fuzzy = readFuzzyOptions({ kind: 'fixed', edits: 0 }, options.prefix_length, options.max_expansions, transpositions, owner);
  if (options.fuzziness === undefined || options.fuzziness === null) return null;
  return { ...fuzzy, fuzziness: parseFuzziness(options.fuzziness, owner) };
}

/** Reads the options match-like queries share. */
export function readMatchOptions(options: DslObject, owner: string): MatchOptions {
  if (options.fuzzy_rewrite !== undefined) readString(options.fuzzy_rewrite, 'fuzzy_rewrite', owner);
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
    fuzzy: readMatchFuzziness(options, owner),
  };
}

/** Keys of `match` (multi_match accepts them too). */
export const MATCH_KEYS = [
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
  'fuzzy_rewrite',
  'auto_generate_synonyms_phrase_query',
  '_name',
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
  checkKeys(options, ['query', 'slop', 'boost', 'analyzer', 'zero_terms_query', '_name'], 'match_phrase');
  if (options.query === undefined) throw dslError('[match_phrase] requires query value');
  const text = readScalarText(options.query, 'query', 'match_phrase');
  const slop = options.slop === undefined ? 0 : readInteger(options.slop, 'slop', 'match_phrase');
  const matchOptions = readMatchOptions(options, 'match_phrase');
  const field = fields.get(path);
  return field === undefined ? new MatchNoneQuery() : phraseQuery(field, text, slop, matchOptions, 'match_phrase', now);
}

/** `{match_phrase_prefix: {field: text | {query, slop, max_expansions, ...}}}`. */
export function parseMatchPhrasePrefix(body: DslObject, fields: ReadonlyMap<string, FlatField>, now: number): Query {
  const owner = 'match_phrase_prefix';
  const [path, value] = singleEntry(body, owner);
  const options = isDslObject(value) ? value : { query: value };
  checkKeys(options, ['query', 'slop', 'max_expansions', 'boost', 'analyzer', 'zero_terms_query', '_name'], owner);
  if (options.query === undefined) throw dslError(`[${owner}] requires query value`);
  const text = readScalarText(options.query, 'query', owner);
  const slop = options.slop === undefined ? 0 : readInteger(options.slop, 'slop', owner);
  const maxExpansions = readMaxExpansions(options, owner);
  const matchOptions = readMatchOptions({ ...options, max_expansions: undefined }, owner);
  const field = fields.get(path);
  return field === undefined ? new MatchNoneQuery() : phrasePrefixQuery(field, text, slop, maxExpansions, matchOptions, owner, now);
}

/** `max_expansions` of the phrase-prefix queries (default 50). */
export function readMaxExpansions(options: DslObject, owner: string): number {
  return options.max_expansions === undefined ? DEFAULT_PHRASE_PREFIX_EXPANSIONS : readInteger(options.max_expansions, 'max_expansions', owner, 1);
}

/** Keys of `match_bool_prefix`. */
const BOOL_PREFIX_KEYS = [
  '_name',
  'query',
  'analyzer',
  'operator',
  'minimum_should_match',
  'fuzziness',
  'prefix_length',
  'max_expansions',
  'fuzzy_transpositions',
  'fuzzy_rewrite',
  'boost',
  '_name',
];

/** `{match_bool_prefix: {field: text | {query, operator, minimum_should_match, analyzer, ...}}}`. */
export function parseMatchBoolPrefix(body: DslObject, fields: ReadonlyMap<string, FlatField>, now: number): Query {
  const owner = 'match_bool_prefix';
  const [path, value] = singleEntry(body, owner);
  const options = isDslObject(value) ? value : { query: value };
  checkKeys(options, BOOL_PREFIX_KEYS, owner);
  if (options.query === undefined) throw dslError(`[${owner}] requires query value`);
  const text = readScalarText(options.query, 'query', owner);
  const matchOptions = readMatchOptions(options, owner);
  const field = fields.get(path);
  return field === undefined ? new MatchNoneQuery() : boolPrefixQuery(field, text, matchOptions, owner, now);
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
