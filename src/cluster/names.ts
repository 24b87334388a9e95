/**
 * Naming rules for collections and namespaces (Elasticsearch index name rules), and resolution
 * of search targets such as `logs-*,users` against the catalog's collection names.
 */
import { WildcardPattern } from '../engine/query/wildcard-pattern.ts';

const FORBIDDEN_CHARACTERS = ['\\', '/', '*', '?', '"', '<', '>', '|', ' ', ',', '#', ':'];
const MAX_NAME_BYTES = 255;

/** Why a collection or namespace name is invalid, or null when it is valid. */
export function invalidNameReason(name: string): string | null {
  if (typeof name !== 'string' || name.length === 0) return 'must not be empty';
  if (name === '.' || name === '..') return 'must not be "." or ".."';
  if (name !== name.toLowerCase()) return 'must be lowercase';
  if (/^[_\-+]/.test(name)) return 'must not start with "_", "-", or "+"';
  const forbidden = FORBIDDEN_CHARACTERS.find((character) => name.includes(character));
  if (forbidden !== undefined) {
    return `must not contain the following characters [${FORBIDDEN_CHARACTERS.join(', ')}]`;
  }
  if (/[\u0000-\u001f\u007f]/.test(name)) return 'must not contain control characters';
  if (Buffer.byteLength(name, 'utf8') > MAX_NAME_BYTES) return `is too long, must be at most ${MAX_NAME_BYTES} bytes`;
  return null;
}

/** A parsed search target: concrete names that must exist, and wildcard patterns that may match none. */
export interface ResolvedTarget {
  /** Matching collection (and alias) names, each once, in the order the target first selects them. */
  names: string[];
  /** Concrete names in the target that do not exist. */
  missing: string[];
}

/** A target pattern: `*` any run, `?` one character, matched by the engine's one linear-time matcher. */
function compileWildcard(pattern: string): WildcardPattern {
  return new WildcardPattern(pattern, { singleCharacter: true });
}

/**
 * Resolves a comma-separated target (`a,b*`, `*`, `_all`, `-excluded` after a wildcard) against
 * existing collection names and alias names, as Elasticsearch resolves index expressions: `_all`
 * and `*` select every collection, other wildcards and concrete names match collections and
 * aliases alike (the caller expands an alias into its collections).
 */
export function resolveTarget(target: string, existing: readonly string[], aliases: readonly string[] = []): ResolvedTarget {
  const selected = new Set<string>();
  const missing: string[] = [];
  const known = new Set([...existing, ...aliases]);
  const parts = target
    .split(',')
    .map((part) => part.trim())
    .filter((part) => part !== '');
  for (const part of parts) {
    if (part === '_all' || part === '*') {
      for (const name of existing) selected.add(name);
      continue;
    }
    if (part.startsWith('-') && selected.size > 0) {
      const exclude = compileWildcard(part.slice(1));
      for (const name of [...selected]) if (exclude.matches(name)) selected.delete(name);
      continue;
    }
    if (part.includes('*') || part.includes('?')) {
      const include = compileWildcard(part);
      for (const name of known) if (include.matches(name)) selected.add(name);
      continue;
    }
    if (known.has(part)) selected.add(part);
    else missing.push(part);
  }
  return { names: [...selected], missing };
}

/** True when a matches the simple wildcard pattern (`*` any run, `?` one character). */
export function matchesWildcard(pattern: string, value: string): boolean {
  return compileWildcard(pattern).matches(value);
}
