/**
 * DSL parsers of the pattern queries `wildcard`, `regexp` and `fuzzy` on keyword and text fields (a
 * text field's terms, i.e. its analysed tokens). All compile to one DFA at parse time (automaton.ts),
 * so a pattern too complex to determinize is a 400 before any leaf is read, and each term of the
 * dictionary is then matched in linear time. Scores are constant (the boost), as ES's default
 * `constant_score` rewrite; the other rewrite methods are accepted and run the same way.
 */
import { normalizeTerm } from '../analysis/analyzer.ts';
import { EngineError } from '../errors.ts';
import type { FlatField } from '../mapping/mapping.ts';
import { compilePattern, DEFAULT_MAX_DETERMINIZED_STATES } from './automaton.ts';
import { MatchNoneQuery } from './basic-queries.ts';
import { checkKeys, dslError, isDslObject, readBoolean, readInteger, readScalarText, readString, singleEntry, type DslObject } from './dsl-reader.ts';
import { assertSearchable, supportsTermPatterns } from './typed-values.ts';
import { fuzzyTermQuery, parseFuzziness, readFuzzyOptions } from './fuzzy-query.ts';
import { AutomatonQuery } from './multi-term-query.ts';
import { readBoost } from './parse-full-text.ts';
import { parseRegexp, parseWildcard, REGEXP_FLAGS } from './regexp-syntax.ts';
import type { Query } from './scorer.ts';

/** Longest regexp accepted (ES `index.max_regex_length`). */
export const MAX_REGEX_LENGTH = 1000;

const REWRITE = /^(constant_score|constant_score_boolean|constant_score_filter|scoring_boolean|top_terms_(boost_|blended_freqs_)?\d+)$/;

/** Checks `rewrite` (accepted for compatibility; every method runs as constant_score). */
function checkRewrite(options: DslObject, owner: string): void {
  if (options.rewrite === undefined) return;
  const rewrite = readString(options.rewrite, 'rewrite', owner);
  if (!REWRITE.test(rewrite)) throw dslError(`[${owner}] Failed to parse rewrite_method [${rewrite}]`);
}

/** The field a pattern query targets; null when unmapped (matches nothing, like ES). */
function patternField(path: string, fields: ReadonlyMap<string, FlatField>, owner: string): FlatField | null {
  const field = fields.get(path);
  if (field === undefined) return null;
  assertSearchable(field);
  if (!supportsTermPatterns(field)) {
    throw dslError(`[${owner}] Can only use ${owner} queries on keyword and text fields - not on [${path}] which is of type [${field.type}]`);
  }
  if (field.keyPrefix !== undefined) throw dslError(`[${owner}] queries on a key of a flattened field are not supported (field [${path}]); query the whole flattened field`);
  return field;
}

/** `{wildcard: {field: pattern | {value | wildcard, boost, case_insensitive, rewrite, _name}}}`. */
export function parseWildcardQuery(body: DslObject, fields: ReadonlyMap<string, FlatField>): Query {
  const [path, value] = singleEntry(body, 'wildcard');
  const options = isDslObject(value) ? value : { value };
  checkKeys(options, ['value', 'wildcard', 'boost', 'rewrite', 'case_insensitive', '_name'], 'wildcard');
  const raw = options.value ?? options.wildcard;
  if (raw === undefined || raw === null) throw dslError('[wildcard] No value specified for wildcard query');
  const pattern = readString(raw, 'value', 'wildcard');
  const caseInsensitive = options.case_insensitive === undefined ? false : readBoolean(options.case_insensitive, 'case_insensitive', 'wildcard');
  checkRewrite(options, 'wildcard');
  const boost = readBoost(options.boost, 'wildcard');
  const field = patternField(path, fields, 'wildcard');
  if (field === null) return new MatchNoneQuery();
  const automaton = compilePattern(parseWildcard(normalizeTerm(field.analyzer, pattern), caseInsensitive));
  return new AutomatonQuery(path, automaton, pattern, boost);
}

/** Reads `flags` ("INTERVAL|ANYSTRING", case-insensitive names) or `flags_value`; default ALL. */
function readFlags(options: DslObject): number {
  if (options.flags_value !== undefined) return readInteger(options.flags_value, 'flags_value', 'regexp', -(2 ** 31));
  if (options.flags === undefined || options.flags === '') return REGEXP_FLAGS.ALL!;
  const text = readString(options.flags, 'flags', 'regexp');
  let flags = 0;
  for (const name of text.split('|')) {
    const flag = REGEXP_FLAGS[name.trim().toUpperCase()];
    if (flag === undefined) throw dslError(`[regexp] Unknown regexp flag [${name}]`);
    flags |= flag;
  }
  return flags;
}

/**
 * `{regexp: {field: pattern | {value, flags, flags_value, case_insensitive,
 * max_determinized_states, boost, rewrite, _name}}}`.
 */
export function parseRegexpQuery(body: DslObject, fields: ReadonlyMap<string, FlatField>): Query {
  const [path, value] = singleEntry(body, 'regexp');
  const options = isDslObject(value) ? value : { value };
  checkKeys(options, ['value', 'flags', 'flags_value', 'case_insensitive', 'max_determinized_states', 'boost', 'rewrite', '_name'], 'regexp');
  if (options.value === undefined || options.value === null) throw dslError('[regexp] value cannot be null');
  const pattern = readString(options.value, 'value', 'regexp');
  const flags = readFlags(options);
  const caseInsensitive = options.case_insensitive === undefined ? false : readBoolean(options.case_insensitive, 'case_insensitive', 'regexp');
  const maxDeterminizedStates =
    options.max_determinized_states === undefined
      ? DEFAULT_MAX_DETERMINIZED_STATES
      : readInteger(options.max_determinized_states, 'max_determinized_states', 'regexp', 1);
  checkRewrite(options, 'regexp');
  const boost = readBoost(options.boost, 'regexp');
  if (pattern.length > MAX_REGEX_LENGTH) {
    throw new EngineError(
      'illegal_argument',
      `The length of regex [${pattern.length}] used in the Regexp Query request has exceeded the allowed maximum of [${MAX_REGEX_LENGTH}]. This maximum can be set by changing the [index.max_regex_length] index level setting.`,
    );
  }
  const tree = parseRegexp(pattern, flags, caseInsensitive);
  const field = patternField(path, fields, 'regexp');
  if (field === null) return new MatchNoneQuery();
  return new AutomatonQuery(path, compilePattern(tree, { maxDeterminizedStates }), pattern, boost);
}

/**
 * `{fuzzy: {field: value | {value, fuzziness (AUTO), prefix_length (0), max_expansions (50),
 * transpositions (true), rewrite, boost, _name}}}`: scored as fuzzy-query.ts describes.
 */
export function parseFuzzyQuery(body: DslObject, fields: ReadonlyMap<string, FlatField>): Query {
  const owner = 'fuzzy';
  const [path, value] = singleEntry(body, owner);
  const options = isDslObject(value) ? value : { value };
  checkKeys(options, ['value', 'fuzziness', 'prefix_length', 'max_expansions', 'transpositions', 'rewrite', 'boost', '_name'], owner);
  if (options.value === undefined || options.value === null) throw dslError('[fuzzy] query requires a value');
  const text = readScalarText(options.value, 'value', owner);
  const fuzziness = options.fuzziness === undefined ? parseFuzziness('AUTO', owner) : parseFuzziness(options.fuzziness, owner);
  const transpositions = options.transpositions === undefined ? undefined : readBoolean(options.transpositions, 'transpositions', owner);
  const fuzzy = readFuzzyOptions(fuzziness, options.prefix_length, options.max_expansions, transpositions, owner);
  checkRewrite(options, owner);
  const boost = readBoost(options.boost, owner);
  const field = patternField(path, fields, owner);
  if (field === null) return new MatchNoneQuery();
  return fuzzyTermQuery(path, normalizeTerm(field.analyzer, text), fuzzy, boost);
}
