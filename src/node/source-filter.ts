/**
 * `_source` filtering as Elasticsearch does it: `_source: false` drops the source, a pattern list
 * keeps matching fields, `{includes, excludes}` keeps the included fields minus the excluded ones.
 * Patterns are dotted paths with `*` wildcards; a pattern naming an object covers its whole subtree.
 * Source keys are copied as own keys (`setKey`), so any key, `__proto__` included, stays a field.
 * Patterns are matched by the shared linear-time `WildcardPattern` (a regex backtracked for minutes
 * on `*a*a*a*a*a*a*a*b`); absurd pattern lists are refused (`MAX_SOURCE_PATTERNS`, `MAX_SOURCE_PATTERN_LENGTH`).
 */
import { EngineError } from '../engine/errors.ts';
import { getOwn, setKey } from '../engine/mapping/json-value.ts';
import type { SourceOptions as MappingSourceOptions } from '../engine/mapping/mapping.ts';
import { WildcardPattern } from '../engine/query/wildcard-pattern.ts';
import { parseLossless } from './lossless-json.ts';
import { RawJson } from './raw-json.ts';

/** Most `_source` patterns (includes and excludes together) one request may give. */
export const MAX_SOURCE_PATTERNS = 1024;

/** Longest `_source` pattern, in characters. */
export const MAX_SOURCE_PATTERN_LENGTH = 4096;

/** A parsed `_source` request: drop everything, keep everything, or filter. */
export type SourceFilter = { kind: 'none' } | { kind: 'all' } | { kind: 'filter'; includes: string[]; excludes: string[] };

/** Keeps the whole source. */
export const WHOLE_SOURCE: SourceFilter = { kind: 'all' };

/** Where `_source` options can come from: the body's `_source` and the `_source*` query parameters. */
export interface SourceOptions {
  /** Body or query `_source`: boolean, pattern string (comma list), pattern array, or `{includes, excludes}`. */
  source?: unknown;
  /** `_source_includes` query parameter. */
  includes?: string[];
  /** `_source_excludes` query parameter. */
  excludes?: string[];
}

function patternList(value: unknown, what: string): string[] {
  if (value === undefined || value === null) return [];
  if (typeof value === 'string') return checkPatterns(value.split(',').map((part) => part.trim()).filter((part) => part !== ''), what);
  if (Array.isArray(value) && value.every((item) => typeof item === 'string')) return checkPatterns(value as string[], what);
  throw new EngineError('parsing', `[${what}] must be a string or an array of strings`);
}

/** Refuses a pattern list longer than MAX_SOURCE_PATTERNS or holding a pattern longer than MAX_SOURCE_PATTERN_LENGTH. */
function checkPatterns(patterns: string[], what: string): string[] {
  if (patterns.length > MAX_SOURCE_PATTERNS) {
    throw new EngineError('illegal_argument', `[${what}] has ${patterns.length} patterns, at most ${MAX_SOURCE_PATTERNS} are allowed`);
  }
  for (const pattern of patterns) {
    if (pattern.length > MAX_SOURCE_PATTERN_LENGTH) {
      throw new EngineError(
        'illegal_argument',
        `[${what}] holds a pattern of ${pattern.length} characters, at most ${MAX_SOURCE_PATTERN_LENGTH} are allowed`,
      );
    }
  }
  return patterns;
}

/** Parses `_source` options into a filter; throws EngineError('parsing') on a malformed value, 'illegal_argument' past the limits. */
export function parseSourceFilter(options: SourceOptions): SourceFilter {
  const { source } = options;
  let includes: string[] = [];
  let excludes: string[] = [];
  if (source === false || source === 'false') return { kind: 'none' };
  if (source !== undefined && source !== null && source !== true && source !== 'true') {
    if (typeof source === 'object' && !Array.isArray(source)) {
      const object = source as Record<string, unknown>;
      for (const key of Object.keys(object)) {
        if (!['includes', 'include', 'excludes', 'exclude'].includes(key)) {
          throw new EngineError('parsing', `unknown key [${key}] in [_source], expected includes or excludes`);
        }
      }
      includes = patternList(getOwn(object, 'includes') ?? getOwn(object, 'include'), '_source.includes');
      excludes = patternList(getOwn(object, 'excludes') ?? getOwn(object, 'exclude'), '_source.excludes');
    } else {
      includes = patternList(source, '_source');
    }
  }
  if (options.includes) includes = checkPatterns(options.includes, '_source_includes');
  if (options.excludes) excludes = checkPatterns(options.excludes, '_source_excludes');
  if (includes.length + excludes.length > MAX_SOURCE_PATTERNS) {
    throw new EngineError('illegal_argument', `[_source] has ${includes.length + excludes.length} patterns, at most ${MAX_SOURCE_PATTERNS} are allowed`);
  }
  if (includes.length === 0 && excludes.length === 0) return WHOLE_SOURCE;
  return { kind: 'filter', includes, excludes };
}

function compile(pattern: string): WildcardPattern {
  return new WildcardPattern(pattern);
}

function matchesAny(patterns: readonly WildcardPattern[], path: string): boolean {
  for (const pattern of patterns) if (pattern.matches(path)) return true;
  return false;
}

/** True when some pattern may match a path strictly below `path`. */
function mayMatchBelow(patterns: readonly WildcardPattern[], path: string): boolean {
  const below = `${path}.`;
  return patterns.some((pattern) => pattern.literalPrefix.startsWith(below) || below.startsWith(pattern.literalPrefix));
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value) && !(value instanceof RawJson);
}

function filterValue(value: unknown, path: string, includes: WildcardPattern[] | null, excludes: WildcardPattern[]): unknown {
  if (Array.isArray(value)) {
    const out: unknown[] = [];
    for (const element of value) {
      const filtered = filterValue(element, path, includes, excludes);
      if (filtered !== undefined) out.push(filtered);
    }
    return includes !== null && out.length === 0 ? undefined : out;
  }
  if (isPlainObject(value)) {
    const out = filterObject(value, path, includes, excludes);
    return includes !== null && Object.keys(out).length === 0 ? undefined : out;
  }
  // A scalar reached without a matching include is not kept.
  return includes === null ? value : undefined;
}

/** `includes` null means "everything at and below here is included". */
function filterObject(
  object: Record<string, unknown>,
  prefix: string,
  includes: WildcardPattern[] | null,
  excludes: WildcardPattern[],
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(object)) {
    const path = prefix === '' ? key : `${prefix}.${key}`;
    if (matchesAny(excludes, path)) continue;
    const value = object[key];
    let kept: unknown;
    if (includes === null || matchesAny(includes, path)) {
      kept = excludes.length === 0 || !(isPlainObject(value) || Array.isArray(value)) ? value : filterValue(value, path, null, excludes);
    } else if ((isPlainObject(value) || Array.isArray(value)) && mayMatchBelow(includes, path)) {
      kept = filterValue(value, path, includes, excludes);
    }
    if (kept !== undefined) setKey(out, key, kept);
  }
  return out;
}

/**
 * The part of a stored source that reads show under the collection mapping's root `_source`
 * options: nothing when `enabled: false`, else its `includes` minus its `excludes` (the whole
 * source without options). Requests then filter this view further.
 */
export function mappedSourceView(source: Record<string, unknown>, options: MappingSourceOptions | undefined): Record<string, unknown> | undefined {
  if (options === undefined) return source;
  if (options.enabled === false) return undefined;
  const includes = options.includes ?? [];
  const excludes = options.excludes ?? [];
  if (includes.length === 0 && excludes.length === 0) return source;
  return applySourceFilter(source, { kind: 'filter', includes, excludes });
}

/** Applies a filter to a document source; returns undefined for `_source: false`. */
export function applySourceFilter(source: Record<string, unknown>, filter: SourceFilter): Record<string, unknown> | undefined {
  if (filter.kind === 'none') return undefined;
  if (filter.kind === 'all') return source;
  const includes = filter.includes.length === 0 ? null : filter.includes.map(compile);
  return filterObject(source, '', includes, filter.excludes.map(compile));
}

/** A document as reads and fetches return it: the parsed source and, when known, its stored text. */
export interface SourceCarrier {
  source?: Record<string, unknown>;
  sourceText?: string;
}

/**
 * The `_source` a response shows: the stored text as it is when neither the mapping's `_source`
 * options nor the request's filter cut it; else the cut of a lossless parse of that text (kept
 * numbers keep their literals; strings are re-escaped as JSON.stringify does). A document known
 * only as a value (no text) is shown from its value.
 */
export function responseSource(document: SourceCarrier, mapping: MappingSourceOptions | undefined, filter: SourceFilter): Record<string, unknown> | RawJson | undefined {
  const { source, sourceText } = document;
  if ((source === undefined && sourceText === undefined) || filter.kind === 'none' || mapping?.enabled === false) return undefined;
  if (sourceText === undefined) {
    const visible = mappedSourceView(source!, mapping);
    return visible === undefined ? undefined : applySourceFilter(visible, filter);
  }
  const cutByMapping = (mapping?.includes?.length ?? 0) > 0 || (mapping?.excludes?.length ?? 0) > 0;
  if (!cutByMapping && filter.kind === 'all') return new RawJson(sourceText);
  const visible = mappedSourceView(parseLossless(sourceText) as Record<string, unknown>, mapping);
  return visible === undefined ? undefined : applySourceFilter(visible, filter);
}
