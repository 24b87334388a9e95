/**
 * Query building for one mapped field, shared by the DSL parsers: analysed matching, phrases,
 * phrase prefixes and bool prefixes (text and keyword fields), exact values on any field type, and
 * value parsing for numeric, date and boolean columns.
 */
import { analyze } from '../analysis/analyzer.ts';
import { EngineError } from '../errors.ts';
import { DATE_TYPES, type AnalyzerName, type FlatField } from '../mapping/mapping.ts';
import { MatchAllQuery, MatchNoneQuery } from './basic-queries.ts';
import { BooleanQuery } from './boolean-query.ts';
import { parseDateWithFormats } from '../mapping/date.ts';
import { roundToHalfFloat } from '../mapping/field-value.ts';
import { encodeIp } from '../mapping/ip.ts';
import { KeywordRangeQuery, NumericSetQuery } from './column-queries.ts';
import { assertSearchable, cidrBounds, keywordTerm } from './typed-values.ts';
import { parseDateValue } from './date-math.ts';
import { describe, dslError } from './dsl-reader.ts';
import { resolveMinimumShouldMatch } from './dsl-reader.ts';
import { editsFor, fuzzyTermQuery, type FuzzyOptions } from './fuzzy-query.ts';
import { PrefixQuery } from './multi-term-query.ts';
import { PhrasePrefixQuery } from './phrase-prefix-query.ts';
import { PhraseQuery } from './phrase-query.ts';
import type { Query } from './scorer.ts';
import { TermQuery } from './term-query.ts';
import { exactLongTerm } from './exact-long-queries.ts';
import { WildcardPattern } from './wildcard-pattern.ts';
import { rangeFieldTermQuery } from './range-field-queries.ts';
import { TimeZone } from './time-zone.ts';

/** Options of an analysed match on one field. */
export interface MatchOptions {
  operator: 'or' | 'and';
  /** Raw minimum_should_match spec, or undefined. */
  minimumShouldMatch: unknown;
  boost: number;
  /** Query-time analyzer overriding the field's. */
  analyzer: AnalyzerName | null;
  /** What an empty analysis matches. */
  zeroTermsQuery: 'none' | 'all';
  /** Values that do not fit a numeric/date/boolean field match nothing instead of failing. */
  lenient: boolean;
  /** Fuzzy matching of each analysed term (`fuzziness` and its options); null: exact terms. */
  fuzzy: FuzzyOptions | null;
}

/** Default match options (ES defaults). */
export const DEFAULT_MATCH_OPTIONS: MatchOptions = {
  operator: 'or',
  minimumShouldMatch: undefined,
  boost: 1,
  analyzer: null,
  zeroTermsQuery: 'none',
  lenient: false,
  fuzzy: null,
};

/** One analysed term of a match: exact, or fuzzy when the options ask for it. */
function analysedTermQuery(field: FlatField, term: string, options: MatchOptions, boost = 1): Query {
  return options.fuzzy === null ? new TermQuery(field.path, term, boost) : fuzzyTermQuery(field.path, term, options.fuzzy, boost);
}

/** Whether a field is answered from an inverted index (text and keyword-like types) rather than a column. */
export function isInvertedField(field: FlatField): boolean {
  return field.storage === 'text' || field.storage === 'keyword';
}

/**
 * A numeric, date or boolean field value as stored in columns (dates as epoch millis, booleans
 * as 0/1); null when the value does not fit the field.
 */
export function columnValue(field: FlatField, value: unknown, roundUp: boolean, now: number): number | null {
  if (field.type === 'boolean') {
    if (value === true || value === 'true') return 1;
    if (value === false || value === 'false') return 0;
    return null;
  }
  if (DATE_TYPES.has(field.type)) {
    const formatted = field.dateFormats === undefined ? null : parseDateWithFormats(value, field.dateFormats, field.path);
    return formatted ?? parseDateValue(value, roundUp, now);
  }
  let number: number | null = null;
  if (typeof value === 'number') number = Number.isFinite(value) ? value : null;
  else if (typeof value === 'string' && value.trim() !== '') {
    const parsed = Number(value);
    number = Number.isFinite(parsed) ? parsed : null;
  }
  if (number === null) return null;
  // Values are compared as the column holds them: rounded to the field's precision.
  if (field.type === 'half_float') return roundToHalfFloat(number);
  if (field.type === 'scaled_float') return Math.round(number * (field.scalingFactor ?? 1)) / (field.scalingFactor ?? 1);
  return number;
}

/** Like `columnValue`, but a value that does not fit is a parsing error naming the query. */
export function requireColumnValue(field: FlatField, value: unknown, owner: string, now: number, roundUp = false): number {
  const parsed = columnValue(field, value, roundUp, now);
  if (parsed === null) {
    throw dslError(`[${owner}] failed to parse ${describe(value)} as a [${field.type}] value for field [${field.path}]`);
  }
  return parsed;
}

/** Exact-value query (ES `term`): the raw term on inverted fields, the parsed value on columns. */
export function exactValueQuery(field: FlatField, value: unknown, boost: number, owner: string, now: number): Query {
  assertSearchable(field);
  if (field.range !== undefined) return rangeFieldTermQuery(field, value, { zone: TimeZone.UTC, now, owner }, boost);
  const cidr = cidrBounds(field, value, owner);
  if (cidr !== null) return new KeywordRangeQuery(field.path, cidr, boost);
  if (field.storage === 'keyword') return new TermQuery(field.path, keywordTerm(field, value, owner), boost);
  if (isInvertedField(field)) {
    if (typeof value !== 'string' && typeof value !== 'number' && typeof value !== 'boolean') {
      throw dslError(`[${owner}] value of field [${field.path}] must be a string, number or boolean, got ${describe(value)}`);
    }
    return new TermQuery(field.path, String(value), boost);
  }
  return exactLongTerm(field, value, boost, owner) ?? new NumericSetQuery(field.path, [requireColumnValue(field, value, owner, now)], boost);
}

/** Analysed match of `text` in one field (ES `match` on that field). */
export function matchQuery(field: FlatField, text: string, options: MatchOptions, owner: string, now: number): Query {
  assertSearchable(field);
  if (field.range !== undefined) {
    // A range field matches the ranges holding the value; `lenient` turns a value that is not one into no match.
    try {
      return exactValueQuery(field, text, options.boost, owner, now);
    } catch (error) {
      if (options.lenient && error instanceof EngineError) return new MatchNoneQuery();
      throw error;
    }
  }
  if (field.type === 'ip' || (field.keyPrefix !== undefined && options.fuzzy === null)) {
    if (options.lenient && field.type === 'ip' && !text.includes('/') && encodeIp(text) === null) return new MatchNoneQuery();
    return exactValueQuery(field, text, options.boost, owner, now);
  }
  if (!isInvertedField(field)) {
    if (options.fuzzy !== null && editsFor(options.fuzzy.fuzziness, text) > 0) {
      if (options.lenient) return new MatchNoneQuery();
      throw dslError(`[${owner}] Can only use fuzzy queries on keyword and text fields - not on [${field.path}] which is of type [${field.type}]`);
    }
    const exact = exactLongTerm(field, text, options.boost, owner);
    if (exact !== null) return exact;
    const value = columnValue(field, text, false, now);
    if (value === null) {
      if (options.lenient) return new MatchNoneQuery();
      requireColumnValue(field, text, owner, now);
    }
    return new NumericSetQuery(field.path, [value!], options.boost);
  }
  const tokens = analyze(options.analyzer ?? field.analyzer, text);
  if (tokens.length === 0) return options.zeroTermsQuery === 'all' ? new MatchAllQuery(options.boost) : new MatchNoneQuery();
  const terms = tokens.map((token) => analysedTermQuery(field, token.term, options));
  if (options.operator === 'and') return new BooleanQuery({ must: terms, should: [], filter: [], mustNot: [] }, 0, options.boost);
  const minimum =
    options.minimumShouldMatch === undefined ? 1 : Math.max(1, resolveMinimumShouldMatch(options.minimumShouldMatch, terms.length, owner));
  if (minimum > terms.length) return new MatchNoneQuery();
  if (terms.length === 1) return analysedTermQuery(field, tokens[0]!.term, options, options.boost);
  return new BooleanQuery({ must: [], should: terms, filter: [], mustNot: [] }, minimum, options.boost);
}

/** Phrase match of `text` in one field (ES `match_phrase`). */
export function phraseQuery(field: FlatField, text: string, slop: number, options: MatchOptions, owner: string, now: number): Query {
  assertSearchable(field);
  if (!isInvertedField(field) || field.type === 'ip' || field.keyPrefix !== undefined) return matchQuery(field, text, options, owner, now);
  const tokens = analyze(options.analyzer ?? field.analyzer, text);
  if (tokens.length === 0) return options.zeroTermsQuery === 'all' ? new MatchAllQuery(options.boost) : new MatchNoneQuery();
  if (tokens.length === 1) return new TermQuery(field.path, tokens[0]!.term, options.boost);
  const first = tokens[0]!.position;
  return new PhraseQuery(
    field.path,
    tokens.map((token) => token.term),
    tokens.map((token) => token.position - first),
    slop,
    options.boost,
  );
}

/** Phrase whose last term is a prefix (ES `match_phrase_prefix`), expanded to at most `maxExpansions` terms. */
export function phrasePrefixQuery(
  field: FlatField,
  text: string,
  slop: number,
  maxExpansions: number,
  options: MatchOptions,
  owner: string,
  now: number,
): Query {
  assertSearchable(field);
  if (!isInvertedField(field) || field.type === 'ip' || field.keyPrefix !== undefined) return matchQuery(field, text, options, owner, now);
  const tokens = analyze(options.analyzer ?? field.analyzer, text);
  if (tokens.length === 0) return options.zeroTermsQuery === 'all' ? new MatchAllQuery(options.boost) : new MatchNoneQuery();
  const first = tokens[0]!.position;
  const last = tokens[tokens.length - 1]!;
  return new PhrasePrefixQuery(
    field.path,
    tokens.slice(0, -1).map((token) => token.term),
    last.term,
    tokens.map((token) => token.position - first),
    slop,
    maxExpansions,
    options.boost,
  );
}

/**
 * ES `match_bool_prefix`: every analysed term but the last as a term query, the last as a
 * (constant-score) prefix query, combined by `operator` and `minimum_should_match`.
 */
export function boolPrefixQuery(field: FlatField, text: string, options: MatchOptions, owner: string, now: number): Query {
  assertSearchable(field);
  if (!isInvertedField(field) || field.type === 'ip' || field.keyPrefix !== undefined) return matchQuery(field, text, options, owner, now);
  const tokens = analyze(options.analyzer ?? field.analyzer, text);
  if (tokens.length === 0) return new MatchNoneQuery();
  const clauses: Query[] = tokens.slice(0, -1).map((token) => analysedTermQuery(field, token.term, options));
  clauses.push(new PrefixQuery(field.path, tokens[tokens.length - 1]!.term));
  if (clauses.length === 1) return new PrefixQuery(field.path, tokens[0]!.term, options.boost);
  if (options.operator === 'and') return new BooleanQuery({ must: clauses, should: [], filter: [], mustNot: [] }, 0, options.boost);
  const minimum =
    options.minimumShouldMatch === undefined ? 1 : Math.max(1, resolveMinimumShouldMatch(options.minimumShouldMatch, clauses.length, owner));
  if (minimum > clauses.length) return new MatchNoneQuery();
  return new BooleanQuery({ must: [], should: clauses, filter: [], mustNot: [] }, minimum, options.boost);
}

/** Field paths matching a pattern with `*` wildcards, in mapping order; inverted fields only for wildcards. */
export function expandFieldPattern(pattern: string, fields: ReadonlyMap<string, FlatField>): FlatField[] {
  if (!pattern.includes('*')) {
    const field = fields.get(pattern);
    return field === undefined ? [] : [field];
  }
  const expression = new WildcardPattern(pattern);
  const matched: FlatField[] = [];
  for (const field of fields.values()) {
    if (isInvertedField(field) && field.searchable && field.keyPrefix === undefined && expression.matches(field.path)) matched.push(field);
  }
  return matched;
}
