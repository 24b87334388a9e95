/**
 * `simple_query_string`: the forgiving query syntax of Elasticsearch — `+` (AND), `|` (OR),
 * `-` (NOT), `"phrase"` with optional `~slop`, `prefix*`, `( )` groups, `\` escapes; plain
 * whitespace means `default_operator`. Like Lucene's SimpleQueryParser it never fails on syntax
 * and builds its tree left to right: consecutive clauses joined by one operator form one boolean
 * query, and a change of operator wraps what was built so far. Each term is matched in every
 * target field and the per-field queries are summed (dis_max with tie_breaker 1).
 * Fuzzy `term~N` matches terms within N edits (`~` alone: 2, more than 2: 2), with the
 * `fuzzy_prefix_length`, `fuzzy_max_expansions` and `fuzzy_transpositions` options (fuzzy-query.ts).
 * The one syntax error is depth: a tree nested deeper than MAX_QUERY_DEPTH (open groups, or
 * changes of operator, each add a level) is a parsing error, not a stack overflow.
 */
import { normalizeTerm } from '../analysis/analyzer.ts';
import type { AnalyzerName, FlatField } from '../mapping/mapping.ts';
import { MatchAllQuery, MatchNoneQuery } from './basic-queries.ts';
import { BooleanQuery } from './boolean-query.ts';
import { NumericSetQuery } from './column-queries.ts';
import { checkKeys, dslError, readBoolean, readEnum, readScalarText, readString, resolveMinimumShouldMatch, type DslObject } from './dsl-reader.ts';
import { columnValue, DEFAULT_MATCH_OPTIONS, isInvertedField, matchQuery, phraseQuery } from './field-queries.ts';
import { MAX_EDITS } from './fuzzy-automaton.ts';
import { fuzzyTermQuery, readFuzzyOptions, type FuzzyOptions } from './fuzzy-query.ts';
import { PrefixQuery } from './multi-term-query.ts';
import { readBoost, resolveFieldList, type BoostedFields } from './parse-full-text.ts';
import { MAX_QUERY_DEPTH, queryTooDeep } from './query-limits.ts';
import type { Query } from './scorer.ts';

type Occur = 'must' | 'should';

/** Syntax tree of a simple query string; `height` counts the bool/not levels of a node. */
type SyntaxNode =
  | { kind: 'term'; text: string; prefix: boolean; fuzzyEdits: number }
  | { kind: 'phrase'; text: string; slop: number }
  | { kind: 'bool'; occur: Occur; clauses: SyntaxNode[]; height: number }
  | { kind: 'not'; node: SyntaxNode; height: number };

/** Parser state: the text, the read position and the number of groups open. */
interface SyntaxParser {
  text: string;
  position: number;
  openGroups: number;
}

const TERM_STOP = new Set([' ', '\t', '\n', '\r', '"', '(', ')', '|']);

/** Parses the query syntax into a tree (null when it holds no term); throws parsing past MAX_QUERY_DEPTH. */
export function parseSimpleSyntax(text: string, defaultOperator: Occur): SyntaxNode | null {
  const parser: SyntaxParser = { text, position: 0, openGroups: 0 };
  return parseSequence(parser, defaultOperator, false);
}

function heightOf(node: SyntaxNode): number {
  return node.kind === 'bool' || node.kind === 'not' ? node.height : 0;
}

/** `height`, refused when it passes MAX_QUERY_DEPTH. */
function checkedHeight(height: number): number {
  if (height > MAX_QUERY_DEPTH) throw queryTooDeep('simple_query_string');
  return height;
}

function parseGroup(parser: SyntaxParser, defaultOperator: Occur): SyntaxNode | null {
  if (parser.openGroups >= MAX_QUERY_DEPTH) throw queryTooDeep('simple_query_string');
  parser.openGroups++;
  const group = parseSequence(parser, defaultOperator, true);
  parser.openGroups--;
  return group;
}

function parseSequence(parser: SyntaxParser, defaultOperator: Occur, inGroup: boolean): SyntaxNode | null {
  const { text } = parser;
  let top: SyntaxNode | null = null;
  let current: Occur | null = null;
  let previous: Occur | null = null;
  let negations = 0;
  const add = (branch: SyntaxNode | null): void => {
    if (branch !== null) {
      const node: SyntaxNode = negations % 2 === 1 ? { kind: 'not', node: branch, height: checkedHeight(heightOf(branch) + 1) } : branch;
      if (top === null) {
        top = node;
      } else {
        const occur = current ?? defaultOperator;
        if (previous !== occur || top.kind !== 'bool') top = { kind: 'bool', occur, clauses: [top], height: checkedHeight(heightOf(top) + 1) };
        top.clauses.push(node);
        top.height = checkedHeight(Math.max(top.height, heightOf(node) + 1));
        previous = occur;
      }
    }
    negations = 0;
    current = null;
  };
  while (parser.position < text.length) {
    const char = text[parser.position]!;
    if (char === ')' && inGroup) {
      parser.position++;
      break;
    }
    if (char === ' ' || char === '\t' || char === '\n' || char === '\r' || char === ')') {
      parser.position++;
    } else if (char === '(') {
      parser.position++;
      add(parseGroup(parser, defaultOperator));
    } else if (char === '|') {
      current = 'should';
      parser.position++;
    } else if (char === '+') {
      current = 'must';
      parser.position++;
    } else if (char === '-') {
      negations++;
      parser.position++;
    } else if (char === '"') {
      add(readPhrase(parser));
    } else {
      add(readTerm(parser));
    }
  }
  return top;
}

function readPhrase(parser: SyntaxParser): SyntaxNode | null {
  const { text } = parser;
  let phrase = '';
  let index = parser.position + 1;
  while (index < text.length && text[index] !== '"') {
    if (text[index] === '\\' && index + 1 < text.length) index++;
    phrase += text[index];
    index++;
  }
  index++;
  let slop = 0;
  const slopMatch = /^~(\d+)/.exec(text.slice(index));
  if (slopMatch !== null) {
    slop = Math.min(Number(slopMatch[1]), 1000);
    index += slopMatch[0].length;
  }
  parser.position = index;
  return phrase.trim() === '' ? null : { kind: 'phrase', text: phrase, slop };
}

function readTerm(parser: SyntaxParser): SyntaxNode | null {
  const { text } = parser;
  let term = '';
  let prefix = false;
  let index = parser.position;
  while (index < text.length && !TERM_STOP.has(text[index]!)) {
    if (text[index] === '\\' && index + 1 < text.length) {
      term += text[index + 1];
      index += 2;
      continue;
    }
    term += text[index];
    index++;
  }
  parser.position = index;
  const fuzzy = /~(\d*)$/.exec(term);
  let fuzzyEdits = 0;
  if (fuzzy !== null) {
    term = term.slice(0, fuzzy.index);
    fuzzyEdits = fuzzy[1] === '' ? MAX_EDITS : Math.min(MAX_EDITS, Number(fuzzy[1]));
  }
  if (term.endsWith('*')) {
    prefix = true;
    fuzzyEdits = 0;
    term = withoutTrailingStars(term);
  }
  return term === '' ? null : { kind: 'term', text: term, prefix, fuzzyEdits };
}

/** `term` without its trailing `*`s (a loop: the regex `/\*+$/` is quadratic on `**…*x*`). */
function withoutTrailingStars(term: string): string {
  let end = term.length;
  while (end > 0 && term.charCodeAt(end - 1) === STAR) end--;
  return term.slice(0, end);
}

const STAR = 42;

interface BuildContext {
  targets: BoostedFields;
  defaultOperator: Occur;
  analyzer: AnalyzerName | null;
  /** `fuzzy_prefix_length`, `fuzzy_max_expansions`, `fuzzy_transpositions` (the edits come from each `term~N`). */
  fuzzy: FuzzyOptions;
  now: number;
}

/** Sum over the target fields of one per-field query (null fields skipped). */
function perField(context: BuildContext, build: (field: FlatField, boost: number) => Query | null): Query | null {
  const queries: Query[] = [];
  context.targets.fields.forEach((field, index) => {
    const query = build(field, context.targets.boosts[index]!);
    if (query !== null && !(query instanceof MatchNoneQuery)) queries.push(query);
  });
  if (queries.length === 0) return null;
  return queries.length === 1 ? queries[0]! : new BooleanQuery({ must: [], should: queries, filter: [], mustNot: [] }, 1);
}

function buildNode(node: SyntaxNode, context: BuildContext): Query | null {
  switch (node.kind) {
    case 'term':
      return perField(context, (field, boost) => {
        if (!isInvertedField(field)) {
          const value = node.prefix ? null : columnValue(field, node.text, false, context.now);
          return value === null ? null : new NumericSetQuery(field.path, [value], boost);
        }
        if (node.prefix) return new PrefixQuery(field.path, normalizeTerm(context.analyzer ?? field.analyzer, node.text), boost);
        if (node.fuzzyEdits > 0) {
          const fuzzy = { ...context.fuzzy, fuzziness: { kind: 'fixed' as const, edits: node.fuzzyEdits } };
          return fuzzyTermQuery(field.path, normalizeTerm(context.analyzer ?? field.analyzer, node.text), fuzzy, boost);
        }
        const operator = context.defaultOperator === 'must' ? 'and' : 'or';
        return matchQuery(field, node.text, { ...DEFAULT_MATCH_OPTIONS, operator, boost, analyzer: context.analyzer }, 'simple_query_string', context.now);
      });
    case 'phrase':
      return perField(context, (field, boost) =>
        isInvertedField(field)
          ? phraseQuery(field, node.text, node.slop, { ...DEFAULT_MATCH_OPTIONS, boost, analyzer: context.analyzer }, 'simple_query_string', context.now)
          : null,
      );
    case 'not': {
      const inner = buildNode(node.node, context);
      if (inner === null) return null;
      return new BooleanQuery({ must: [], should: [new MatchAllQuery()], filter: [], mustNot: [inner] }, 1);
    }
    case 'bool': {
      const clauses: Query[] = [];
      for (const clause of node.clauses) {
        const query = buildNode(clause, context);
        if (query !== null) clauses.push(query);
      }
      if (clauses.length === 0) return null;
      if (clauses.length === 1) return clauses[0]!;
      return node.occur === 'must'
        ? new BooleanQuery({ must: clauses, should: [], filter: [], mustNot: [] }, 0)
        : new BooleanQuery({ must: [], should: clauses, filter: [], mustNot: [] }, 1);
    }
  }
}

/** `{simple_query_string: {query, fields, default_operator, minimum_should_match, ...}}`. */
export function parseSimpleQueryString(body: DslObject, fields: ReadonlyMap<string, FlatField>, now: number): Query {
  const owner = 'simple_query_string';
  checkKeys(
    body,
    ['query', 'fields', 'default_operator', 'analyzer', 'flags', 'lenient', 'minimum_should_match', 'boost', 'analyze_wildcard', 'auto_generate_synonyms_phrase_query', 'fuzzy_prefix_length', 'fuzzy_max_expansions', 'fuzzy_transpositions', '_name'],
    owner,
  );
  if (body.query === undefined) throw dslError(`[${owner}] requires query value`);
  const text = readScalarText(body.query, 'query', owner);
  const operator = body.default_operator === undefined ? 'or' : readEnum(body.default_operator, ['or', 'and'] as const, 'default_operator', owner);
  if (body.flags !== undefined && typeof body.flags !== 'number') readString(body.flags, 'flags', owner);
  for (const key of ['lenient', 'analyze_wildcard', 'auto_generate_synonyms_phrase_query']) {
    if (body[key] !== undefined) readBoolean(body[key], key, owner);
  }
  const transpositions = body.fuzzy_transpositions === undefined ? undefined : readBoolean(body.fuzzy_transpositions, 'fuzzy_transpositions', owner);
  const fuzzy = readFuzzyOptions({ kind: 'fixed', edits: 0 }, body.fuzzy_prefix_length, body.fuzzy_max_expansions, transpositions, owner);
  const analyzer =
    body.analyzer === undefined ? null : readEnum(body.analyzer, ['standard', 'english', 'keyword', 'whitespace'] as const, 'analyzer', owner);
  const boost = readBoost(body.boost, owner);
  const defaultOperator: Occur = operator === 'and' ? 'must' : 'should';
  const syntax = parseSimpleSyntax(text, defaultOperator);
  const context: BuildContext = { targets: resolveFieldList(body.fields, fields, owner), defaultOperator, analyzer, fuzzy, now };
  let query = syntax === null ? null : buildNode(syntax, context);
  if (query === null) return new MatchNoneQuery();
  if (body.minimum_should_match !== undefined && query instanceof BooleanQuery && query.clauses.should.length > 0 && query.clauses.must.length === 0) {
    const minimum = Math.max(1, resolveMinimumShouldMatch(body.minimum_should_match, query.clauses.should.length, owner));
    query = minimum > query.clauses.should.length ? new MatchNoneQuery() : new BooleanQuery(query.clauses, minimum, query.boost);
  }
  return boost === 1 ? query : new BooleanQuery({ must: [query], should: [], filter: [], mustNot: [] }, 0, boost);
}
