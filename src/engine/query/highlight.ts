/**
 * Plain highlighter: re-analyses a hit's field values with the field's analyzer and wraps the
 * tokens the query matches (its terms, and terms starting with its prefixes) in tags. Values
 * are cut into fragments of about `fragment_size` characters at token boundaries; the best
 * `number_of_fragments` fragments (most distinct matched terms, then most matches) are returned
 * in text order, or by score with `order: "score"`; `number_of_fragments: 0` returns whole values.
 * Phrase queries highlight each of their terms wherever it occurs.
 */
import { analyze, type Token } from '../analysis/analyzer.ts';
import { EngineError } from '../errors.ts';
import { setKey } from '../mapping/json-value.ts';
import { FieldMap, FLATTENED_TYPES, type FlatField } from '../mapping/mapping.ts';
import { asArray, checkKeys, dslError, expectObject, isDslObject, readBoolean, readEnum, readInteger, readString, singleEntry, type DslObject } from './dsl-reader.ts';
import { parseQuery } from './parse-query.ts';
import type { Dfa } from './automaton.ts';
import type { HighlightTerms } from './scorer.ts';
import { WildcardPattern } from './wildcard-pattern.ts';

interface HighlightOptions {
  preTags: string[];
  postTags: string[];
  fragmentSize: number;
  numberOfFragments: number;
  requireFieldMatch: boolean;
  orderByScore: boolean;
  noMatchSize: number;
  encodeHtml: boolean;
  highlightQuery: unknown;
  /** `type`: which Elasticsearch highlighter was asked for (the fragments are the same; the analysed-length limit differs). */
  type: 'plain' | 'unified' | 'fvh';
  /** `max_analyzer_offset`: only this many leading characters of each value are analysed (matches beyond are not marked). */
  maxAnalyzerOffset: number | undefined;
}

/** The analysed-length limit of a hit's collection (`index.highlight.max_analyzed_offset`) and how its errors name the hit. */
export interface HighlightLimits {
  maxAnalyzedOffset: number;
  collection: string;
  id: string;
}

const OPTION_KEYS = [
  'pre_tags',
  'post_tags',
  'fragment_size',
  'number_of_fragments',
  'require_field_match',
  'type',
  'order',
  'no_match_size',
  'encoder',
  'highlight_query',
  'tags_schema',
  'boundary_scanner',
  'boundary_chars',
  'boundary_max_scan',
  'boundary_scanner_locale',
  'fragmenter',
  'fragment_offset',
  'matched_fields',
  'phrase_limit',
  'max_analyzed_offset',
  'max_analyzer_offset',
  'force_source',
];

function readTags(value: unknown, name: string): string[] {
  const tags = asArray(value).map((tag) => readString(tag, name, 'highlight'));
  if (tags.length === 0) throw dslError(`[highlight] [${name}] must not be empty`);
  return tags;
}

function readOptions(object: DslObject, base: HighlightOptions): HighlightOptions {
  const options = { ...base };
  if (object.tags_schema !== undefined && readEnum(object.tags_schema, ['styled'] as const, 'tags_schema', 'highlight') === 'styled') {
    options.preTags = ['<em class="hlt">'];
    options.postTags = ['</em>'];
  }
  if (object.pre_tags !== undefined) options.preTags = readTags(object.pre_tags, 'pre_tags');
  if (object.post_tags !== undefined) options.postTags = readTags(object.post_tags, 'post_tags');
  if (object.fragment_size !== undefined) options.fragmentSize = readInteger(object.fragment_size, 'fragment_size', 'highlight', 1);
  if (object.number_of_fragments !== undefined) {
    options.numberOfFragments = readInteger(object.number_of_fragments, 'number_of_fragments', 'highlight');
  }
  if (object.require_field_match !== undefined) options.requireFieldMatch = readBoolean(object.require_field_match, 'require_field_match', 'highlight');
  if (object.order !== undefined) options.orderByScore = readEnum(object.order, ['score', 'none'] as const, 'order', 'highlight') === 'score';
  if (object.no_match_size !== undefined) options.noMatchSize = readInteger(object.no_match_size, 'no_match_size', 'highlight');
  if (object.encoder !== undefined) options.encodeHtml = readEnum(object.encoder, ['default', 'html'] as const, 'encoder', 'highlight') === 'html';
  if (object.type !== undefined) options.type = readEnum(object.type, ['plain', 'unified', 'fvh'] as const, 'type', 'highlight');
  const offset = object.max_analyzer_offset ?? object.max_analyzed_offset;
  if (offset !== undefined) options.maxAnalyzerOffset = readInteger(offset, 'max_analyzer_offset', 'highlight', 1);
  if (object.highlight_query !== undefined) options.highlightQuery = object.highlight_query;
  return options;
}

/** Requested fields with their options, in request order. */
function requestedFields(request: DslObject, base: HighlightOptions): [string, HighlightOptions][] {
  if (request.fields === undefined) throw dslError('[highlight] requires [fields]');
  const entries: [string, unknown][] = [];
  if (Array.isArray(request.fields)) {
    for (const entry of request.fields) entries.push(singleEntry(expectObject(entry, 'highlight.fields'), 'highlight.fields'));
  } else {
    entries.push(...Object.entries(expectObject(request.fields, 'highlight.fields')));
  }
  return entries.map(([name, value]) => {
    const object = value === null || value === undefined ? {} : expectObject(value, `highlight.fields.${name}`);
    checkKeys(object, OPTION_KEYS, 'highlight');
    return [name, readOptions(object, base)];
  });
}

/**
 * The string values of a field in a source document (multi-fields read their parent's value);
 * a keyword value longer than `ignore_above` was not indexed, so it is not among them.
 */
function fieldValues(source: Record<string, unknown>, field: FlatField, fields: ReadonlyMap<string, FlatField>): string[] {
  let value = valueAt(source, field.path);
  if (value === undefined) {
    const parent = field.path.slice(0, field.path.lastIndexOf('.'));
    if (parent !== '' && fields.has(parent)) value = valueAt(source, parent);
  }
  const values: string[] = [];
  const visit = (item: unknown): void => {
    if (Array.isArray(item)) item.forEach(visit);
    else if (typeof item === 'string' && !(field.storage === 'keyword' && field.ignoreAbove !== undefined && item.length > field.ignoreAbove)) values.push(item);
  };
  visit(value);
  return values;
}

function valueAt(source: unknown, path: string): unknown {
  if (!isDslObject(source)) return Array.isArray(source) ? source.flatMap((item) => asArray(valueAt(item, path))) : undefined;
  if (Object.hasOwn(source, path)) return source[path];
  const parts = path.split('.');
  for (let split = 1; split < parts.length; split++) {
    const head = parts.slice(0, split).join('.');
    if (Object.hasOwn(source, head)) {
      const nested = valueAt(source[head], parts.slice(split).join('.'));
      if (nested !== undefined) return nested;
    }
  }
  return undefined;
}

function escapeHtml(text: string, encode: boolean): string {
  if (!encode) return text;
  return text.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`);
}

interface Fragment {
  start: number;
  end: number;
  distinct: number;
  matches: number;
}

/** Highlights one value; returns its fragments with their scores. */
function highlightValue(text: string, tokens: readonly Token[], matched: readonly boolean[], options: HighlightOptions): { text: string; fragment: Fragment }[] {
  const whole = options.numberOfFragments === 0;
  const fragments: Fragment[] = [];
  let current: Fragment = { start: 0, end: text.length, distinct: 0, matches: 0 };
  let seen = new Set<string>();
  for (let i = 0; i < tokens.length; i++) {
    const token = tokens[i]!;
    if (!whole && token.endOffset - current.start > options.fragmentSize && i > 0 && token.startOffset > current.start) {
      current.end = token.startOffset;
      fragments.push(current);
      current = { start: token.startOffset, end: text.length, distinct: 0, matches: 0 };
      seen = new Set();
    }
    if (matched[i]) {
      current.matches++;
      if (!seen.has(token.term)) {
        seen.add(token.term);
        current.distinct++;
      }
    }
  }
  fragments.push(current);
  return fragments
    .filter((fragment) => fragment.matches > 0)
    .map((fragment) => {
      let output = '';
      let cursor = fragment.start;
      for (let i = 0; i < tokens.length; i++) {
        const token = tokens[i]!;
        if (!matched[i] || token.startOffset < fragment.start || token.endOffset > fragment.end) continue;
        output += escapeHtml(text.slice(cursor, token.startOffset), options.encodeHtml);
        output += options.preTags[0]! + escapeHtml(text.slice(token.startOffset, token.endOffset), options.encodeHtml) + options.postTags[0]!;
        cursor = token.endOffset;
      }
      output += escapeHtml(text.slice(cursor, fragment.end), options.encodeHtml);
      return { text: whole ? output : output.trim(), fragment };
    });
}

function matchesTerm(term: string, terms: ReadonlySet<string> | undefined, prefixes: ReadonlySet<string> | undefined, automata: ReadonlySet<Dfa> | undefined): boolean {
  if (terms?.has(term)) return true;
  if (prefixes !== undefined) for (const prefix of prefixes) if (term.startsWith(prefix)) return true;
  if (automata !== undefined) for (const automaton of automata) if (automaton.matches(term)) return true;
  return false;
}

function collectTerms(query: unknown, fields: ReadonlyMap<string, FlatField>): HighlightTerms {
  const terms: HighlightTerms = { terms: new Map(), prefixes: new Map(), automata: new Map() };
  parseQuery(query, fields).extractTerms(terms);
  return terms;
}

function unionOf<T>(map: Map<string, Set<T>>): Set<T> {
  const union = new Set<T>();
  for (const set of map.values()) for (const term of set) union.add(term);
  return union;
}

/** Highlights the requested fields of a hit's source for the query (ES `highlight`, plain highlighter). */
export function highlight(
  source: Record<string, unknown>,
  request: unknown,
  query: unknown,
  fields: ReadonlyMap<string, FlatField>,
  limits?: HighlightLimits,
): Record<string, string[]> {
  const object = expectObject(request, 'highlight');
  checkKeys(object, [...OPTION_KEYS, 'fields'], 'highlight');
  const defaults: HighlightOptions = {
    preTags: ['<em>'],
    postTags: ['</em>'],
    fragmentSize: 100,
    numberOfFragments: 5,
    requireFieldMatch: true,
    orderByScore: false,
    noMatchSize: 0,
    encodeHtml: false,
    highlightQuery: undefined,
    type: 'unified',
    maxAnalyzerOffset: undefined,
  };
  const base = readOptions(object, defaults);
  const queryTerms = new Map<unknown, HighlightTerms>();
  const termsFor = (dsl: unknown): HighlightTerms => {
    let terms = queryTerms.get(dsl);
    if (terms === undefined) {
      terms = collectTerms(dsl, fields);
      queryTerms.set(dsl, terms);
    }
    return terms;
  };
  const result: Record<string, string[]> = {};
  const candidates = highlightCandidates(fields);
  for (const [pattern, options] of requestedFields(object, base)) {
    const expression = new WildcardPattern(pattern);
    for (const field of candidates) {
      const shown = field.displayPath ?? field.path;
      if (!isHighlightable(field) || !expression.matches(shown) || Object.hasOwn(result, shown)) continue;
      const extracted = termsFor(options.highlightQuery ?? query);
      const terms = options.requireFieldMatch ? extracted.terms.get(field.path) : unionOf(extracted.terms);
      const prefixes = options.requireFieldMatch ? extracted.prefixes.get(field.path) : unionOf(extracted.prefixes);
      const automata = options.requireFieldMatch ? extracted.automata!.get(field.path) : unionOf(extracted.automata!);
      const fragments: { text: string; fragment: Fragment }[] = [];
      const values = fieldValues(source, field, fields);
      for (const value of values) {
        if (options.maxAnalyzerOffset === undefined) checkAnalyzedLength(value, field, options, limits);
        const tokens = analyze(field.analyzer, options.maxAnalyzerOffset === undefined ? value : value.slice(0, options.maxAnalyzerOffset));
        const matched = tokens.map((token) => matchesTerm(token.term, terms, prefixes, automata));
        fragments.push(...highlightValue(value, tokens, matched, options));
      }
      if (fragments.length === 0) {
        if (options.noMatchSize > 0 && values.length > 0) setKey(result, shown, [escapeHtml(values[0]!.slice(0, options.noMatchSize), options.encodeHtml)]);
        continue;
      }
      let chosen = fragments;
      if (options.numberOfFragments > 0) {
        const ranked = fragments
          .map((entry, index) => ({ entry, index }))
          .sort((left, right) => right.entry.fragment.distinct - left.entry.fragment.distinct || right.entry.fragment.matches - left.entry.fragment.matches || left.index - right.index)
          .slice(0, options.numberOfFragments);
        if (!options.orderByScore) ranked.sort((left, right) => left.index - right.index);
        chosen = ranked.map(({ entry }) => entry);
      }
      setKey(result, shown, chosen.map((entry) => entry.text));
    }
  }
  return result;
}

/**
 * Refuses (400) to analyse a value longer than the collection's `index.highlight.max_analyzed_offset`,
 * as Elasticsearch does, unless the unified highlighter can read the field's indexed offsets.
 */
function checkAnalyzedLength(value: string, field: FlatField, options: HighlightOptions, limits: HighlightLimits | undefined): void {
  if (limits === undefined || value.length <= limits.maxAnalyzedOffset || (field.offsets === true && options.type !== 'plain')) return;
  throw new EngineError(
    'illegal_argument',
    `The length of [${field.path}] field of [${limits.id}] doc of [${limits.collection}] index has exceeded [${limits.maxAnalyzedOffset}] - maximum allowed to be analyzed for highlighting. This maximum can be set by changing the [index.highlight.max_analyzed_offset] index level setting. For large texts, indexing with offsets or term vectors is recommended!`,
  );
}

/** The fields a highlight pattern may name: the mapped fields, then each field alias as its target shown under the alias's name. */
function highlightCandidates(fields: ReadonlyMap<string, FlatField>): FlatField[] {
  const candidates = [...fields.values()];
  if (!(fields instanceof FieldMap)) return candidates;
  for (const [alias, target] of fields.aliases()) {
    const field = fields.get(target);
    if (field !== undefined) candidates.push({ ...field, displayPath: alias });
  }
  return candidates;
}

/** Text and keyword-like fields whose source values are their terms (not `ip` terms, not a flattened field's keyed companion). */
function isHighlightable(field: FlatField): boolean {
  return (field.storage === 'text' || field.storage === 'keyword') && field.type !== 'ip' && field.keyPrefix === undefined && !FLATTENED_TYPES.has(field.type);
}
