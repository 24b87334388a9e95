/**
 * Elasticsearch's `filter_path` response filtering: a comma list of dotted paths where `*`
 * matches within one field name, `**` matches any number of levels and a leading `-` excludes.
 * Arrays are transparent (the path applies to every element).
 */
import { matchesWildcard } from '../engine/query/wildcard-pattern.ts';
import { parseLossless } from '../node/lossless-json.ts';
import { RawJson } from '../node/raw-json.ts';

type Pattern = readonly string[];

/** Filters a JSON response body by a `filter_path` value; unmatched parts are dropped. */
export function applyFilterPath(body: unknown, filterPath: string): unknown {
  const includes: Pattern[] = [];
  const excludes: Pattern[] = [];
  for (const raw of filterPath.split(',')) {
    const entry = raw.trim();
    if (entry === '' || entry === '-') continue;
    if (entry.startsWith('-')) excludes.push(entry.slice(1).split('.'));
    else includes.push(entry.split('.'));
  }
  let result = body;
  if (includes.length > 0) result = include(result, includes) ?? {};
  if (excludes.length > 0) result = exclude(result, excludes);
  return result;
}

function include(value: unknown, patterns: Pattern[]): unknown {
  if (value instanceof RawJson) return include(parseLossless(value.text), patterns);
  if (Array.isArray(value)) {
    const kept = [];
    for (const element of value) {
      const filtered = include(element, patterns);
      if (filtered !== undefined) kept.push(filtered);
    }
    return kept.length > 0 ? kept : undefined;
  }
  if (value === null || typeof value !== 'object') return undefined;
  const out: Record<string, unknown> = {};
  let any = false;
  for (const [key, child] of Object.entries(value)) {
    const remaining = advance(patterns, key);
    if (remaining.length === 0) continue;
    const filtered = remaining.some((pattern) => pattern.length === 0) ? child : include(child, remaining);
    if (filtered === undefined) continue;
    out[key] = filtered;
    any = true;
  }
  return any ? out : undefined;
}

function exclude(value: unknown, patterns: Pattern[]): unknown {
  if (value instanceof RawJson) return exclude(parseLossless(value.text), patterns);
  if (Array.isArray(value)) return value.map((element) => exclude(element, patterns));
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const [key, child] of Object.entries(value)) {
    const remaining = advance(patterns, key);
    if (remaining.some((pattern) => pattern.length === 0)) continue;
    out[key] = remaining.length > 0 ? exclude(child, remaining) : child;
  }
  return out;
}

/** The patterns left after matching one field name; an empty pattern means "matched fully". */
function advance(patterns: Pattern[], key: string): Pattern[] {
  const next: Pattern[] = [];
  for (const pattern of patterns) {
    const head = pattern[0];
    if (head === undefined) continue;
    if (head === '**') {
      next.push(pattern);
      const afterAny = pattern.slice(1);
      if (afterAny.length === 0) next.push(afterAny);
      else if (segmentMatches(afterAny[0]!, key)) next.push(afterAny.slice(1));
      continue;
    }
    if (segmentMatches(head, key)) next.push(pattern.slice(1));
  }
  return next;
}

function segmentMatches(segment: string, key: string): boolean {
  return matchesWildcard(segment, key);
}
