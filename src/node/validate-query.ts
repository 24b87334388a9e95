/**
 * `_validate/query`: whether a query parses against each selected collection's mapping, without
 * running it (Elasticsearch's `valid`, and with `explain` one entry per collection with its error).
 * Parsing is what a search does first, with the same limits (nesting, clause count, terms count).
 */
import { EngineError, TroveError } from '../engine/errors.ts';
import { parseQuery } from '../engine/query/parse-query.ts';
import { resolveCollections } from './collections.ts';
import type { NodeContext } from './node-context.ts';
import { parseCount, type QueryStringParams } from './search-body.ts';

/** One collection's finding (listed with `explain`). */
export interface QueryExplanation {
  index: string;
  valid: boolean;
  explanation?: string;
  error?: string;
}

/** The `_validate/query` response body. */
export interface ValidateQueryResponse {
  _shards: { total: number; successful: number; failed: number };
  valid: boolean;
  error?: string;
  explanations?: QueryExplanation[];
}

/** Validates the query of `body` (or `q`) against every collection `target` selects. */
export function validateQuery(context: NodeContext, target: string, body: unknown, params: { q?: string; qOptions?: QueryStringParams; explain?: boolean }): ValidateQueryResponse {
  const selected = resolveCollections(context, target);
  let query: unknown;
  try {
    const unsupported = body !== null && typeof body === 'object' ? Object.keys(body).find((key) => key !== 'query') : undefined;
    if (unsupported !== undefined) throw new EngineError('parsing', `request does not support [${unsupported}]`);
    query = parseCount(body, params);
  } catch (error) {
    if (!(error instanceof TroveError)) throw error;
    return { _shards: { total: 1, successful: 1, failed: 0 }, valid: false, ...(params.explain ? { error: error.message } : {}) };
  }
  const explanations: QueryExplanation[] = selected.map((hosted) => {
    try {
      parseQuery(query, hosted.fields);
      return { index: hosted.meta.name, valid: true, explanation: JSON.stringify(query ?? { match_all: {} }) };
    } catch (error) {
      if (!(error instanceof TroveError)) throw error;
      return { index: hosted.meta.name, valid: false, error: error.message };
    }
  });
  const valid = explanations.every((entry) => entry.valid);
  const response: ValidateQueryResponse = { _shards: { total: selected.length, successful: selected.length, failed: 0 }, valid };
  if (params.explain) response.explanations = explanations;
  return response;
}
