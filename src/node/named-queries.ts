/**
 * Named queries (`_name` on a query clause): each hit of a search lists the names of the clauses
 * it matches under `matched_queries`, or with `include_named_queries_score` maps each name to the
 * clause's own score. After the page is known, each named clause runs once more as a search of
 * the same target restricted to the page's documents, so the answer is exactly "does this
 * document match this clause", scored as the clause scores it alone.
 */
import { isPlainObject } from '../engine/mapping/json-value.ts';

/** A clause of a query that carries `_name`, as a query of its own. */
export interface NamedQuery {
  name: string;
  query: Record<string, unknown>;
}

/** The named clauses of a query, in the order they appear (a name used twice keeps its first clause). */
export function namedQueries(query: unknown): NamedQuery[] {
  const found = new Map<string, Record<string, unknown>>();
  const visit = (node: unknown): void => {
    if (Array.isArray(node)) {
      node.forEach(visit);
      return;
    }
    if (!isPlainObject(node)) return;
    for (const [type, body] of Object.entries(node)) {
      if (!isPlainObject(body)) {
        if (Array.isArray(body)) visit(body);
        continue;
      }
      // `_name` sits on the query's body (`bool`, `terms`, `ids`...) or on its field's options (`match`, `term`, `range`...).
      const name = nameOf(body) ?? Object.values(body).map((options) => (isPlainObject(options) ? nameOf(options) : undefined)).find((value) => value !== undefined);
      if (name !== undefined && !found.has(name)) found.set(name, { [type]: body });
      visit(body);
    }
  };
  visit(query);
  return [...found].map(([name, clause]) => ({ name, query: clause }));
}

function nameOf(body: Record<string, unknown>): string | undefined {
  return typeof body._name === 'string' && body._name !== '' ? body._name : undefined;
}

/** A hit's identity across the collections of a search. */
export function hitKey(collection: string, id: string): string {
  return `${collection}\u0000${id}`;
}

/** `matched_queries` of one hit: the names it matched (in query order), or each with its score. */
export function matchedQueries(key: string, matches: ReadonlyMap<string, ReadonlyMap<string, number>>, withScores: boolean): string[] | Record<string, number> | undefined {
  const names = [...matches].filter(([, scores]) => scores.has(key));
  if (names.length === 0) return undefined;
  if (!withScores) return names.map(([name]) => name);
  return Object.fromEntries(names.map(([name, scores]) => [name, scores.get(key)!]));
}
