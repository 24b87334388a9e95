/**
 * `query_string`: builds the queries of the Lucene syntax parsed by query-string-syntax.ts against
 * the mapping. A clause without a field targets `fields` (with `^boost` and `*` patterns) or
 * `default_field` (default `*`: every searchable field, numbers and dates included, and then
 * leniently, as ES); over
 * several fields a clause is the dis_max of its per-field queries (`type: best_fields`, with
 * `tie_breaker`) or their sum (`most_fields`). Bare terms are analysed like `match` (tokens joined
 * by `default_operator`), phrases like `match_phrase` (`phrase_slop` by default), wildcards and
 * `/regexps/` run through the bounded DFA of automaton.ts (terms normalised, not analysed, unless
 * `analyze_wildcard` splits a prefix), `term~N` is fuzzy (fuzzy-query.ts; `~` alone uses
 * `fuzziness`), ranges go through the `range` query. A boolean of prohibited clauses only matches
 * every document but those, as ES. Values that do not fit a field are a 400 unless `lenient`.
 */
import { analyze, normalizeTerm } from '../analysis/analyzer.ts';
import { EngineError } from '../errors.ts';
import type { AnalyzerName, FlatField } from '../mapping/mapping.ts';
import { compilePattern, DEFAULT_MAX_DETERMINIZED_STATES, type Dfa } from './automaton.ts';
import { DisMaxQuery, MatchAllQuery, MatchNoneQuery } from './basic-queries.ts';
import { BooleanQuery } from './boolean-query.ts';
import { checkKeys, dslError, readBoolean, readEnum, readInteger, readNumber, readScalarText, readString, resolveMinimumShouldMatch, type DslObject } from './dsl-reader.ts';
import { DEFAULT_MATCH_OPTIONS, isInvertedField, matchQuery, phraseQuery } from './field-queries.ts';
import { fuzzyTermQuery, parseFuzziness, readFuzzyOptions, type FuzzyOptions } from './fuzzy-query.ts';
import { AutomatonQuery, PrefixQuery } from './multi-term-query.ts';
import { readBoost, resolveFieldList, type BoostedFields } from './parse-full-text.ts';
import { MAX_REGEX_LENGTH } from './parse-pattern-queries.ts';
import { parseExists, parseRange } from './parse-term-level.ts';
import { hasWildcard, parseQueryStringSyntax, queryStringError, unescape, type QsNode } from './query-string-syntax.ts';
import { parseRegexp, parseWildcard, REGEXP_FLAGS } from './regexp-syntax.ts';
import type { Query } from './scorer.ts';

/** Keys of `query_string`. */
const QUERY_STRING_KEYS = [
  'query', 'default_field', 'fields', 'default_operator', 'analyzer', 'quote_analyzer', 'allow_leading_wildcard', 'analyze_wildcard',
  'fuzziness', 'fuzzy_prefix_length', 'fuzzy_max_expansions', 'fuzzy_transpositions', 'fuzzy_rewrite', 'phrase_slop', 'boost', 'lenient',
  'minimum_should_match', 'max_determinized_states', 'type', 'tie_breaker', 'time_zone', 'rewrite', 'auto_generate_synonyms_phrase_query',
  'enable_position_increments', 'escape', 'quote_field_suffix', '_name',
];

const ANALYZERS = ['standard', 'english', 'keyword', 'whitespace'] as const;

/** What building a clause needs. */
interface QsContext {
  text: string;
  fields: ReadonlyMap<string, FlatField>;
  defaults: BoostedFields;
  /** Whether the default fields are every field (`*`), which makes `*` match all and forces leniency. */
  defaultIsAll: boolean;
  operator: 'and' | 'or';
  analyzer: AnalyzerName | null;
  quoteAnalyzer: AnalyzerName | null;
  allowLeadingWildcard: boolean;
  analyzeWildcard: boolean;
  fuzzy: FuzzyOptions;
  phraseSlop: number;
  lenient: boolean;
  maxDeterminizedStates: number;
  mostFields: boolean;
  tieBreaker: number;
  timeZone: string | undefined;
  now: number;
}

/** `{query_string: {query, default_field | fields, default_operator, ...}}`; see the module comment. */
export function parseQueryString(body: DslObject, fields: ReadonlyMap<string, FlatField>, now: number): Query {
  const owner = 'query_string';
  checkKeys(body, QUERY_STRING_KEYS, owner);
  if (body.query === undefined || body.query === null) throw dslError(`[${owner}] must be provided with a [query]`);
  const text = readScalarText(body.query, 'query', owner);
  if (body.default_field !== undefined && body.fields !== undefined) throw dslError(`[${owner}] cannot use [fields] parameter in conjunction with [default_field]`);
  if (body.quote_field_suffix !== undefined && readString(body.quote_field_suffix, 'quote_field_suffix', owner) !== '') {
    throw dslError(`[${owner}] [quote_field_suffix] is not supported`);
  }
  const type = body.type === undefined ? 'best_fields' : readString(body.type, 'type', owner).toLowerCase();
  if (type !== 'best_fields' && type !== 'most_fields') throw dslError(`[${owner}] [type] [${type}] is not supported; supported: [best_fields, most_fields]`);
  for (const key of ['enable_position_increments', 'escape', 'auto_generate_synonyms_phrase_query']) if (body[key] !== undefined) readBoolean(body[key], key, owner);
  for (const key of ['rewrite', 'fuzzy_rewrite']) if (body[key] !== undefined) readString(body[key], key, owner);
  const fieldList = body.fields ?? (body.default_field === undefined ? undefined : [readString(body.default_field, 'default_field', owner)]);
  const defaultIsAll = fieldList === undefined || (Array.isArray(fieldList) && fieldList.length === 1 && fieldList[0] === '*');
  const transpositions = body.fuzzy_transpositions === undefined ? undefined : readBoolean(body.fuzzy_transpositions, 'fuzzy_transpositions', owner);
  const fuzziness = parseFuzziness(body.fuzziness ?? 'AUTO', owner);
  const context: QsContext = {
    text,
    fields,
    defaults: defaultIsAll ? everyQueryableField(fields) : resolveFieldList(fieldList, fields, owner),
    defaultIsAll,
    operator: body.default_operator === undefined ? 'or' : readEnum(body.default_operator, ['or', 'and'] as const, 'default_operator', owner),
    analyzer: body.analyzer === undefined ? null : readEnum(body.analyzer, ANALYZERS, 'analyzer', owner),
    quoteAnalyzer: body.quote_analyzer === undefined ? null : readEnum(body.quote_analyzer, ANALYZERS, 'quote_analyzer', owner),
    allowLeadingWildcard: body.allow_leading_wildcard === undefined ? true : readBoolean(body.allow_leading_wildcard, 'allow_leading_wildcard', owner),
    analyzeWildcard: body.analyze_wildcard === undefined ? false : readBoolean(body.analyze_wildcard, 'analyze_wildcard', owner),
    fuzzy: readFuzzyOptions(fuzziness, body.fuzzy_prefix_length, body.fuzzy_max_expansions, transpositions, owner),
    phraseSlop: body.phrase_slop === undefined ? 0 : readInteger(body.phrase_slop, 'phrase_slop', owner),
    lenient: body.lenient === undefined ? defaultIsAll : readBoolean(body.lenient, 'lenient', owner),
    maxDeterminizedStates:
      body.max_determinized_states === undefined ? DEFAULT_MAX_DETERMINIZED_STATES : readInteger(body.max_determinized_states, 'max_determinized_states', owner, 1),
    mostFields: type === 'most_fields',
    tieBreaker: body.tie_breaker === undefined ? 0 : readNumber(body.tie_breaker, 'tie_breaker', owner),
    timeZone: body.time_zone === undefined ? undefined : readString(body.time_zone, 'time_zone', owner),
    now,
  };
  const boost = readBoost(body.boost, owner);
  const syntax = text.trim() === '' ? null : parseQueryStringSyntax(text, context.operator);
  let query = syntax === null ? null : buildNode(syntax, context);
  if (query === null) return new MatchNoneQuery();
  if (body.minimum_should_match !== undefined && query instanceof BooleanQuery && query.clauses.should.length > 0) {
    const minimum = Math.max(1, resolveMinimumShouldMatch(body.minimum_should_match, query.clauses.should.length, owner));
    query = minimum > query.clauses.should.length ? new MatchNoneQuery() : new BooleanQuery(query.clauses, minimum, query.boost);
  }
  return boosted(query, boost);
}

/** The default fields of `*`: every mapped field a query can search (numbers, dates and booleans too, leniently, as ES). */
function everyQueryableField(fields: ReadonlyMap<string, FlatField>): BoostedFields {
  const all: BoostedFields = { fields: [], boosts: [] };
  for (const field of fields.values()) {
    if (field.searchable === false || field.keyPrefix !== undefined || field.type === 'binary' || field.type === 'geo_point') continue;
    all.fields.push(field);
    all.boosts.push(1);
  }
  return all;
}

/** `query` scored times `boost`. */
function boosted(query: Query, boost: number): Query {
  return boost === 1 ? query : new BooleanQuery({ must: [query], should: [], filter: [], mustNot: [] }, 0, boost);
}

function buildNode(node: QsNode, context: QsContext): Query | null {
  switch (node.kind) {
    case 'bool':
      return buildBool(node, context);
    case 'exists':
      return boosted(parseExists({ field: node.field }, context.fields), node.boost);
    case 'phrase':
      return perField(node.field, node.boost, context, (field, boost) =>
        phraseQuery(field, node.text, node.slop ?? context.phraseSlop, matchOptions(context, boost, context.quoteAnalyzer ?? context.analyzer), 'query_string', context.now),
      );
    case 'regexp':
      return buildRegexp(node.field, node.pattern, node.boost, context);
    case 'range':
      return buildRange(node.field, node.boost, context, node);
    case 'term':
      return buildTerm(node, context);
  }
}

function buildBool(node: Extract<QsNode, { kind: 'bool' }>, context: QsContext): Query | null {
  const must: Query[] = [];
  const should: Query[] = [];
  const mustNot: Query[] = [];
  for (const clause of node.clauses) {
    const query = buildNode(clause.node, context);
    if (query === null) continue;
    (clause.occur === 'must' ? must : clause.occur === 'should' ? should : mustNot).push(query);
  }
  if (must.length + should.length + mustNot.length === 0) return null;
  // A purely negative boolean matches every document but the prohibited ones (ES fixNegativeQuery).
  if (must.length + should.length === 0) must.push(new MatchAllQuery());
  const query = new BooleanQuery({ must, should, filter: [], mustNot }, must.length === 0 ? 1 : 0);
  return boosted(query, node.boost);
}

function matchOptions(context: QsContext, boost: number, analyzer: AnalyzerName | null) {
  return { ...DEFAULT_MATCH_OPTIONS, operator: context.operator, boost, analyzer, lenient: context.lenient };
}

/**
 * One clause over the fields `name` designates (the defaults when null): each field's query from
 * `build` (null: the field cannot take it), combined by dis_max or sum; an explicit field that
 * maps to nothing matches nothing. Under `lenient`, a field whose query fails is left out.
 */
function perField(name: string | null, boost: number, context: QsContext, build: (field: FlatField, boost: number) => Query | null): Query | null {
  const targets = name === null ? context.defaults : resolveFieldList([name], context.fields, 'query_string');
  if (targets.fields.length === 0) return name === null ? null : new MatchNoneQuery();
  const queries: Query[] = [];
  targets.fields.forEach((field, index) => {
    let query: Query | null;
    try {
      query = build(field, targets.boosts[index]!);
    } catch (error) {
      if (!(context.lenient && error instanceof EngineError && (error.code === 'parsing' || error.code === 'illegal_argument'))) throw error;
      query = null;
    }
    if (query !== null && !(query instanceof MatchNoneQuery && targets.fields.length > 1)) queries.push(query);
  });
  if (queries.length === 0) return new MatchNoneQuery();
  const combined =
    queries.length === 1
      ? queries[0]!
      : context.mostFields
        ? new BooleanQuery({ must: [], should: queries, filter: [], mustNot: [] }, 1)
        : new DisMaxQuery(queries, context.tieBreaker);
  return boosted(combined, boost);
}

/** The error for a term-level syntax on a field that only holds values (numbers, dates, booleans). */
function notOnField(kind: string, field: FlatField): EngineError {
  return dslError(`[query_string] Can only use ${kind} queries on keyword and text fields - not on [${field.path}] which is of type [${field.type}]`);
}

function buildTerm(node: Extract<QsNode, { kind: 'term' }>, context: QsContext): Query | null {
  const { raw } = node;
  const comparison = /^(>=|<=|>|<)/.exec(raw);
  if (comparison !== null && node.fuzzy === null) {
    const value = unescape(raw.slice(comparison[0].length));
    const op = comparison[0];
    const range = {
      lower: op.startsWith('>') ? value : null,
      upper: op.startsWith('<') ? value : null,
      includeLower: op === '>=',
      includeUpper: op === '<=',
    };
    return buildRange(node.field, node.boost, context, range);
  }
  if (node.fuzzy !== null) return buildFuzzy(node, context);
  if (hasWildcard(raw)) return buildWildcard(node.field, raw, node.boost, context);
  const text = unescape(raw);
  return perField(node.field, node.boost, context, (field, boost) => matchQuery(field, text, matchOptions(context, boost, context.analyzer), 'query_string', context.now));
}

function buildFuzzy(node: Extract<QsNode, { kind: 'term' }>, context: QsContext): Query | null {
  let fuzzy = context.fuzzy;
  if (node.fuzzy !== '') {
    const edits = Number(node.fuzzy);
    if (!Number.isFinite(edits)) throw queryStringError(context.text, `invalid fuzziness [~${node.fuzzy}]`);
    // Below 1 is Lucene's old similarity form: the query's `fuzziness` applies.
    if (edits >= 1) fuzzy = { ...fuzzy, fuzziness: parseFuzziness(String(edits), 'query_string') };
  }
  const text = unescape(node.raw);
  return perField(node.field, node.boost, context, (field, boost) => {
    if (!isInvertedField(field)) throw notOnField('fuzzy', field);
    return fuzzyTermQuery(field.path, normalizeTerm(context.analyzer ?? field.analyzer, text), fuzzy, boost);
  });
}

function buildWildcard(name: string | null, raw: string, boost: number, context: QsContext): Query | null {
  if (raw === '*') {
    if (name === '*' || (name === null && context.defaultIsAll)) return boosted(new MatchAllQuery(), boost);
    return perField(name, boost, context, (field) => parseExists({ field: field.path }, context.fields));
  }
  if (!context.allowLeadingWildcard && (raw.startsWith('*') || raw.startsWith('?'))) {
    throw queryStringError(context.text, "'*' or '?' not allowed as first character in WildcardQuery");
  }
  const stars = /\*+$/.exec(raw);
  const prefixOnly = stars !== null && !hasWildcard(raw.slice(0, stars.index)) && !raw.slice(0, stars.index).endsWith('\\');
  return perField(name, boost, context, (field, fieldBoost) => {
    if (!isInvertedField(field)) throw notOnField('wildcard', field);
    const analyzer = context.analyzer ?? field.analyzer;
    if (prefixOnly) {
      const prefix = unescape(raw.slice(0, stars!.index));
      if (context.analyzeWildcard) return analysedPrefix(field, prefix, analyzer, fieldBoost, context);
      return new PrefixQuery(field.path, normalizeTerm(analyzer, prefix), fieldBoost);
    }
    return new AutomatonQuery(field.path, compilePattern(parseWildcard(normalizeTerm(analyzer, raw), false)), raw, fieldBoost);
  });
}

/** `analyze_wildcard` on `text*`: the analysed tokens, the last one as a prefix, joined by the default operator. */
function analysedPrefix(field: FlatField, text: string, analyzer: AnalyzerName, boost: number, context: QsContext): Query {
  const tokens = analyze(analyzer, text);
  if (tokens.length === 0) return new PrefixQuery(field.path, '', boost);
  const clauses: Query[] = tokens.map((token, index) =>
    index === tokens.length - 1 ? new PrefixQuery(field.path, token.term) : matchQuery(field, token.term, DEFAULT_MATCH_OPTIONS, 'query_string', context.now),
  );
  if (clauses.length === 1) return new PrefixQuery(field.path, tokens[0]!.term, boost);
  return context.operator === 'and'
    ? new BooleanQuery({ must: clauses, should: [], filter: [], mustNot: [] }, 0, boost)
    : new BooleanQuery({ must: [], should: clauses, filter: [], mustNot: [] }, 1, boost);
}

function buildRegexp(name: string | null, pattern: string, boost: number, context: QsContext): Query | null {
  if (pattern.length > MAX_REGEX_LENGTH) {
    throw new EngineError('illegal_argument', `The length of regex [${pattern.length}] used in the [query_string] has exceeded the allowed maximum of [${MAX_REGEX_LENGTH}]. This maximum can be set by changing the [index.max_regex_length] index level setting.`);
  }
  let automaton: Dfa | null = null;
  return perField(name, boost, context, (field, fieldBoost) => {
    if (!isInvertedField(field)) throw notOnField('regexp', field);
    automaton ??= compilePattern(parseRegexp(pattern, REGEXP_FLAGS.ALL!, false), { maxDeterminizedStates: context.maxDeterminizedStates });
    return new AutomatonQuery(field.path, automaton, pattern, fieldBoost);
  });
}

/** Bounds of a range clause (null: open). */
interface RangeClause {
  lower: string | null;
  upper: string | null;
  includeLower: boolean;
  includeUpper: boolean;
}

function buildRange(name: string | null, boost: number, context: QsContext, range: RangeClause): Query | null {
  const options: DslObject = {};
  if (range.lower !== null) options[range.includeLower ? 'gte' : 'gt'] = range.lower;
  if (range.upper !== null) options[range.includeUpper ? 'lte' : 'lt'] = range.upper;
  if (context.timeZone !== undefined) options.time_zone = context.timeZone;
  return perField(name, boost, context, (field, fieldBoost) => parseRange({ [field.path]: { ...options, boost: fieldBoost } }, context.fields, context.now));
}
