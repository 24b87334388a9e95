/**
 * Limits on the size and shape of one query, as Elasticsearch enforces them, checked before the
 * query runs so that a hostile request costs a 400 and not the event loop: nesting depth (compound
 * DSL queries and `simple_query_string` syntax alike) and the total number of clauses of the built
 * query tree (ES `indices.query.bool.max_clause_count`).
 */
import { EngineError } from '../errors.ts';
import { dslError } from './dsl-reader.ts';
import type { Query } from './scorer.ts';

/** Deepest nesting of compound queries, and of `simple_query_string` groups and operator changes (protects the stack). */
export const MAX_QUERY_DEPTH = 64;

/**
 * Most leaf queries one query tree may hold (ES `indices.query.bool.max_clause_count`). Every leaf
 * counts once: a `term`, a `range`, a `terms` (whatever its number of values, bounded by
 * `index.max_terms_count` instead), and each term an analysed query (`match`, `multi_match`,
 * `simple_query_string`) expands to, in each field it targets.
 */
export const MAX_CLAUSE_COUNT = 1024;

/** The parsing error for a query nested deeper than MAX_QUERY_DEPTH; `owner` names the query. */
export function queryTooDeep(owner: string | null): EngineError {
  const prefix = owner === null ? '' : `[${owner}] `;
  return dslError(`${prefix}query is nested deeper than ${MAX_QUERY_DEPTH} levels`);
}

/** Throws illegal_argument when the query tree holds more than MAX_CLAUSE_COUNT leaf queries. */
export function checkClauseCount(query: Query): void {
  let count = 0;
  const pending: Query[] = [query];
  while (pending.length > 0) {
    const subQueries = pending.pop()!.subQueries();
    if (subQueries.length > 0) {
      for (const subQuery of subQueries) pending.push(subQuery);
    } else if (++count > MAX_CLAUSE_COUNT) {
      throw tooManyClauses();
    }
  }
}

/** The illegal_argument error for a query of more than MAX_CLAUSE_COUNT leaf queries. */
export function tooManyClauses(): EngineError {
  return new EngineError(
    'illegal_argument',
    `Query contains too many clauses: more than [${MAX_CLAUSE_COUNT}] (the limit set by [indices.query.bool.max_clause_count]; every leaf query counts, and so does each term of analysed query text, in each field searched, and each term a fuzzy term expands to)`,
  );
}
