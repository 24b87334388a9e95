/**
 * DSL parser of the rules of an `intervals` query: `match`, `prefix`, `wildcard`, `regexp`,
 * `fuzzy`, `all_of` and `any_of`, each (match, all_of, any_of) with an optional `filter`
 * (`containing`, `contained_by`, `not_containing`, `not_contained_by`, `overlapping`,
 * `not_overlapping`, `before`, `after`; `script` is refused). Rules become the interval sources of
 * intervals-sources.ts; multi-term rules expand when the query is bound to a shard.
 */
import { analyze, normalizeTerm } from '../analysis/analyzer.ts';
import { EngineError } from '../errors.ts';
import type { AnalyzerName, FlatField } from '../mapping/mapping.ts';
import { compilePattern, DEFAULT_MAX_DETERMINIZED_STATES, type Dfa } from './automaton.ts';
import { checkKeys, dslError, expectObject, readBoolean, readEnum, readInteger, readScalarText, readString, type DslObject } from './dsl-reader.ts';
import { editsFor, FuzzyQuery, parseFuzziness, readFuzzyOptions } from './fuzzy-query.ts';
import {
  ConjunctionSource,
  EmptySource,
  ExtendSource,
  FilteredSource,
  MAX_INTERVAL_EXPANSIONS,
  MultiTermSource,
  OrSource,
  TermSource,
  type IntervalsSource,
  type TermExpansion,
} from './intervals-sources.ts';
import { INTERVAL_FILTERS, type IntervalFilterKind } from './intervals-algebra.ts';
import { forEachAcceptedTerm } from './multi-term-query.ts';
import { MAX_REGEX_LENGTH } from './parse-pattern-queries.ts';
import { MAX_CLAUSE_COUNT, MAX_QUERY_DEPTH, queryTooDeep, tooManyClauses } from './query-limits.ts';
import { parseRegexp, parseWildcard, REGEXP_FLAGS } from './regexp-syntax.ts';
import type { SearchContext } from './search-context.ts';

/** The rules an `intervals` query (and a rule's filter) takes. */
export const INTERVAL_RULES = ['match', 'any_of', 'all_of', 'prefix', 'wildcard', 'regexp', 'fuzzy'] as const;

/** How the sources of `match` and `all_of` are put together. */
export const INTERVAL_MODES = ['ordered', 'unordered', 'unordered_no_overlap'] as const;

type IntervalMode = (typeof INTERVAL_MODES)[number];

const ANALYZERS: readonly AnalyzerName[] = ['standard', 'english', 'keyword', 'whitespace'];

/** State shared while parsing one query's rules. */
interface RuleContext {
  fields: ReadonlyMap<string, FlatField>;
  /** The queried field (null when unmapped: the rules are still checked, the query matches nothing). */
  field: FlatField | null;
  /** Term sources built so far, bounded by the clause limit. */
  terms: number;
}

/** The 400 of a field whose positions are not indexed. */
export function noPositions(path: string): EngineError {
  return new EngineError('illegal_argument', `Cannot create intervals over field [${path}] with no positions indexed`);
}

/** Whether a field keeps token positions (text fields; not flattened keys). */
export function hasPositions(field: FlatField): boolean {
  return field.storage === 'text' && field.keyPrefix === undefined;
}

/** Parses one rule object (`{match: {...}}`) of the query's field. */
export function parseIntervalRule(value: unknown, fields: ReadonlyMap<string, FlatField>, field: FlatField | null): IntervalsSource {
  const source = parseRule(value, { fields, field, terms: 0 }, 0);
  // unordered_no_overlap reuses its sources, so the tree reads more of them than the rules name.
  if (source.size > MAX_CLAUSE_COUNT) throw tooManyClauses();
  return source;
}

function parseRule(value: unknown, context: RuleContext, depth: number): IntervalsSource {
  if (depth > MAX_QUERY_DEPTH) throw queryTooDeep('intervals');
  const object = expectObject(value, 'intervals');
  const keys = Object.keys(object);
  if (keys.length === 0) throw dslError('[intervals] Missing intervals from interval query definition');
  if (keys.length > 1) throw dslError(`[intervals] Only one interval rule can be specified, found [${keys[0]}] and [${keys[1]}]`);
  return parseNamedRule(keys[0]!, object[keys[0]!], context, depth);
}

/** Parses the rule `type` with its options. */
function parseNamedRule(type: string, body: unknown, context: RuleContext, depth: number): IntervalsSource {
  if (!(INTERVAL_RULES as readonly string[]).includes(type)) {
    throw dslError(`[intervals] Unknown interval type [${type}], expecting one of [${INTERVAL_RULES.join(', ')}]`);
  }
  const options = expectObject(body, type);
  switch (type) {
    case 'match':
      return withFilter(parseMatchRule(options, context), options, context, depth);
    case 'any_of':
      checkKeys(options, ['intervals', 'filter'], type);
      return withFilter(new OrSource(parseRuleList(options, type, context, depth)), options, context, depth);
    case 'all_of':
      return withFilter(parseAllOf(options, context, depth), options, context, depth);
    case 'prefix':
      return parsePrefixRule(options, context);
    case 'wildcard':
      return parseWildcardRule(options, context);
    case 'regexp':
      return parseRegexpRule(options, context);
    default:
      return parseFuzzyRule(options, context);
  }
}

function parseRuleList(options: DslObject, owner: string, context: RuleContext, depth: number): IntervalsSource[] {
  if (!Array.isArray(options.intervals) || options.intervals.length === 0) throw dslError(`[${owner}] requires a non-empty [intervals] array of rules`);
  return options.intervals.map((rule) => parseRule(rule, context, depth + 1));
}

/** Reads `mode` (or the older `ordered` flag); `mode` wins when both are given. */
function readMode(options: DslObject, owner: string): IntervalMode {
  if (options.mode !== undefined) return readEnum(options.mode, INTERVAL_MODES, 'mode', owner);
  if (options.ordered !== undefined) return readBoolean(options.ordered, 'ordered', owner) ? 'ordered' : 'unordered';
  return 'unordered';
}

/** `max_gaps`: an integer, -1 (the default) or any negative value for no limit. */
function readMaxGaps(options: DslObject, owner: string): number {
  if (options.max_gaps === undefined) return -1;
  const maxGaps = readInteger(options.max_gaps, 'max_gaps', owner, -(2 ** 31));
  return maxGaps < 0 ? -1 : maxGaps;
}

/** Puts sources together as `mode` says, with at most `maxGaps` gaps (-1: any). */
function combineSources(sources: IntervalsSource[], mode: IntervalMode, maxGaps: number): IntervalsSource {
  if (sources.length === 1) return sources[0]!;
  if (mode !== 'unordered_no_overlap') return new ConjunctionSource(sources, mode === 'ordered', maxGaps);
  // Without overlaps, sources pair up from the left: (a then b, or b then a), then that with c, ...
  let combined = sources[0]!;
  for (const next of sources.slice(1)) {
    combined = new OrSource([new ConjunctionSource([combined, next], true, maxGaps), new ConjunctionSource([next, combined], true, maxGaps)]);
  }
  return combined;
}

function parseAllOf(options: DslObject, context: RuleContext, depth: number): IntervalsSource {
  checkKeys(options, ['intervals', 'max_gaps', 'ordered', 'mode', 'filter'], 'all_of');
  const sources = parseRuleList(options, 'all_of', context, depth);
  return combineSources(sources, readMode(options, 'all_of'), readMaxGaps(options, 'all_of'));
}

/** The field a rule reads: its `use_field` when given (null when that one is unmapped), else the query's. */
function targetField(options: DslObject, owner: string, context: RuleContext): FlatField | null {
  if (options.use_field === undefined) return context.field;
  const path = readString(options.use_field, 'use_field', owner);
  const field = context.fields.get(path);
  if (field !== undefined && !hasPositions(field)) throw noPositions(path);
  return field ?? null;
}

function readAnalyzer(options: DslObject, owner: string, field: FlatField | null): AnalyzerName {
  if (options.analyzer !== undefined) {
    const name = readString(options.analyzer, 'analyzer', owner);
    const analyzer = ANALYZERS.find((known) => known === name);
    if (analyzer === undefined) throw dslError(`[${owner}] analyzer [${name}] not found`);
    return analyzer;
  }
  return field?.analyzer ?? 'standard';
}

function countTerm(context: RuleContext): void {
  if (++context.terms > MAX_CLAUSE_COUNT) throw tooManyClauses();
}

/** `{match: {query, max_gaps, ordered | mode, analyzer, use_field, filter}}`: the analysed words. */
function parseMatchRule(options: DslObject, context: RuleContext): IntervalsSource {
  checkKeys(options, ['query', 'max_gaps', 'ordered', 'mode', 'analyzer', 'use_field', 'filter'], 'match');
  if (options.query === undefined || options.query === null) throw dslError('[match] requires a [query]');
  const text = readScalarText(options.query, 'query', 'match');
  const maxGaps = readMaxGaps(options, 'match');
  const mode = readMode(options, 'match');
  const field = targetField(options, 'match', context);
  const tokens = analyze(readAnalyzer(options, 'match', field), text);
  if (field === null || tokens.length === 0) return new EmptySource();
  const sources: IntervalsSource[] = [];
  let previous = -1;
  for (const token of tokens) {
    countTerm(context);
    const term = new TermSource(field.path, token.term);
    // Words the analyzer dropped (stop words) before this one still take their places.
    const skipped = previous < 0 ? 0 : token.position - previous - 1;
    sources.push(skipped > 0 ? new ExtendSource(term, skipped) : term);
    previous = token.position;
  }
  return combineSources(sources, mode, maxGaps);
}

/** Wraps a rule's source in its `filter`, when it has one. */
function withFilter(source: IntervalsSource, options: DslObject, context: RuleContext, depth: number): IntervalsSource {
  if (options.filter === undefined) return source;
  const filter = expectObject(options.filter, 'filter');
  const keys = Object.keys(filter);
  if (keys.length !== 1) throw dslError(`[filter] requires exactly one of [${INTERVAL_FILTERS.join(', ')}], found ${keys.length}`);
  const kind = keys[0]!;
  if (kind === 'script') throw dslError('[intervals] script filters are not supported');
  if (!(INTERVAL_FILTERS as readonly string[]).includes(kind)) throw dslError(`[filter] Unknown filter type [${kind}], expecting one of [${INTERVAL_FILTERS.join(', ')}, script]`);
  return new FilteredSource(source, kind as IntervalFilterKind, parseRule(filter[kind], context, depth + 1));
}

/** A multi-term source, or nothing when the field is unmapped. */
function multiTerm(field: FlatField | null, expansion: TermExpansion, context: RuleContext, maxExpansions = MAX_INTERVAL_EXPANSIONS): IntervalsSource {
  countTerm(context);
  return field === null ? new EmptySource() : new MultiTermSource(field.path, expansion, maxExpansions);
}

/** The distinct terms of the shard's field the automaton accepts, up to `limit` + 1. */
function automatonExpansion(field: string, automaton: Dfa, description: string, prefix?: string): TermExpansion {
  const literal = automaton.literalPrefix();
  return {
    description,
    automaton,
    prefix,
    expand(context: SearchContext, limit: number): string[] {
      const found = new Set<string>();
      for (const leaf of context.leaves) {
        if (found.size > limit) break;
        forEachAcceptedTerm(leaf, field, automaton, literal, (_terms, term) => {
          if (found.size <= limit) found.add(term);
        });
      }
      return [...found];
    },
  };
}

/** `{prefix: {prefix, analyzer, use_field}}`: terms starting with the (normalised) prefix. */
function parsePrefixRule(options: DslObject, context: RuleContext): IntervalsSource {
  checkKeys(options, ['prefix', 'analyzer', 'use_field'], 'prefix');
  if (options.prefix === undefined || options.prefix === null) throw dslError('[prefix] requires a [prefix]');
  const raw = readScalarText(options.prefix, 'prefix', 'prefix');
  const field = targetField(options, 'prefix', context);
  const prefix = normalizeTerm(readAnalyzer(options, 'prefix', field), raw);
  const automaton = compilePattern(parseWildcard(`${prefix.replace(/[\\*?]/g, '\\$&')}*`, false));
  return multiTerm(field, automatonExpansion(field?.path ?? '', automaton, `${prefix}*`, prefix), context);
}

/** `{wildcard: {pattern, analyzer, use_field}}`: terms the (normalised) wildcard pattern matches. */
function parseWildcardRule(options: DslObject, context: RuleContext): IntervalsSource {
  checkKeys(options, ['pattern', 'analyzer', 'use_field'], 'wildcard');
  if (options.pattern === undefined || options.pattern === null) throw dslError('[wildcard] requires a [pattern]');
  const raw = readString(options.pattern, 'pattern', 'wildcard');
  const field = targetField(options, 'wildcard', context);
  const pattern = normalizeTerm(readAnalyzer(options, 'wildcard', field), raw);
  const automaton = compilePattern(parseWildcard(pattern, false));
  return multiTerm(field, automatonExpansion(field?.path ?? '', automaton, pattern), context);
}

/** `{regexp: {pattern, flags, case_insensitive, max_expansions, use_field}}`: terms the regular expression matches. */
function parseRegexpRule(options: DslObject, context: RuleContext): IntervalsSource {
  checkKeys(options, ['pattern', 'flags', 'case_insensitive', 'max_expansions', 'use_field'], 'regexp');
  if (options.pattern === undefined || options.pattern === null) throw dslError('[regexp] requires a [pattern]');
  const pattern = readString(options.pattern, 'pattern', 'regexp');
  if (pattern.length > MAX_REGEX_LENGTH) {
    throw new EngineError('illegal_argument', `The length of regex [${pattern.length}] used in the [intervals] regexp rule has exceeded the allowed maximum of [${MAX_REGEX_LENGTH}].`);
  }
  let flags = REGEXP_FLAGS.ALL!;
  if (options.flags !== undefined && options.flags !== '') {
    flags = 0;
    for (const name of readString(options.flags, 'flags', 'regexp').split('|')) {
      const flag = REGEXP_FLAGS[name.trim().toUpperCase()];
      if (flag === undefined) throw dslError(`[regexp] Unknown regexp flag [${name}]`);
      flags |= flag;
    }
  }
  const caseInsensitive = options.case_insensitive === undefined ? false : readBoolean(options.case_insensitive, 'case_insensitive', 'regexp');
  const maxExpansions =
    options.max_expansions === undefined ? MAX_INTERVAL_EXPANSIONS : readInteger(options.max_expansions, 'max_expansions', 'regexp', 1, MAX_INTERVAL_EXPANSIONS);
  const field = targetField(options, 'regexp', context);
  const automaton = compilePattern(parseRegexp(pattern, flags, caseInsensitive), { maxDeterminizedStates: DEFAULT_MAX_DETERMINIZED_STATES });
  return multiTerm(field, automatonExpansion(field?.path ?? '', automaton, pattern), context, maxExpansions);
}

/** `{fuzzy: {term, fuzziness (AUTO), prefix_length (0), transpositions (true), analyzer, use_field}}`: terms within the edit distance. */
function parseFuzzyRule(options: DslObject, context: RuleContext): IntervalsSource {
  checkKeys(options, ['term', 'fuzziness', 'prefix_length', 'transpositions', 'analyzer', 'use_field'], 'fuzzy');
  if (options.term === undefined || options.term === null) throw dslError('[fuzzy] requires a [term]');
  const raw = readScalarText(options.term, 'term', 'fuzzy');
  const fuzziness = parseFuzziness(options.fuzziness ?? 'AUTO', 'fuzzy');
  const transpositions = options.transpositions === undefined ? undefined : readBoolean(options.transpositions, 'transpositions', 'fuzzy');
  const fuzzy = readFuzzyOptions(fuzziness, options.prefix_length, undefined, transpositions, 'fuzzy');
  const field = targetField(options, 'fuzzy', context);
  const term = normalizeTerm(readAnalyzer(options, 'fuzzy', field), raw);
  const edits = editsFor(fuzziness, term);
  if (field === null || edits === 0 || fuzzy.prefixLength >= [...term].length) {
    countTerm(context);
    return field === null ? new EmptySource() : new TermSource(field.path, term);
  }
  const query = new FuzzyQuery(field.path, term, edits, { ...fuzzy, maxExpansions: MAX_INTERVAL_EXPANSIONS + 1 });
  return multiTerm(
    field,
    {
      description: `${term}~${edits}`,
      expand: (shard, limit) => query.expand(shard.leaves).slice(0, limit + 1).map(({ term: expanded }) => expanded),
    },
    context,
  );
}
