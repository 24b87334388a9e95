/**
 * `GET|POST /{collection}/_explain/{id}`: how one document scores against a query, or why it does
 * not match. The query runs as a search restricted to the document (`ids` filter) with `explain`,
 * so the figures are those of the shard holding it, exactly as a search scores it; the restriction
 * is left out of the answer. A document that does not exist is a 404 with `matched: false`, as ES.
 * With a `_source` parameter the answer carries the document's (filtered) source under `get`.
 */
import { EngineError } from '../engine/errors.ts';
import type { Explanation } from '../engine/query/explain.ts';
import { queryFromQ, type QueryStringParams } from './search-body.ts';

/** The `_explain` response body. */
export interface ExplainResponse {
  _index: string;
  _id: string;
  matched: boolean;
  explanation?: Explanation;
  /** With a `_source` parameter: the document's source so filtered (`_source` left out when it is `false`). */
  get?: { found: true; _source?: unknown };
}

/** Runs a search of one collection (through the search service, its lane and tracking). */
export type CollectionSearch = (body: Record<string, unknown>) => Promise<{ hits: { hits: Array<{ _index: string; _explanation?: Explanation; _source?: unknown }> } }>;

/** Explains document `id` of `collection` for the query of `body` (or `q`); `found` false: no such document (the route answers 404). */
export async function explainDocument(
  collection: string,
  id: string,
  body: unknown,
  params: { q?: string; qOptions?: QueryStringParams; source?: unknown },
  search: CollectionSearch,
): Promise<{ found: boolean; response: ExplainResponse }> {
  const request = body === undefined || body === null ? {} : body;
  if (typeof request !== 'object' || Array.isArray(request)) throw new EngineError('parsing', 'the explain body must be a JSON object');
  const unknown = Object.keys(request).find((key) => key !== 'query');
  if (unknown !== undefined) throw new EngineError('parsing', `request does not support [${unknown}]`);
  const query = params.q !== undefined ? queryFromQ(params.q, params.qOptions) : (request as { query?: unknown }).query;
  if (query === undefined) throw new EngineError('action_request_validation', 'Validation Failed: 1: query is missing;');
  const restricted = { bool: { must: [query], filter: [{ ids: { values: [id] } }] } };
  const source = params.source ?? false;
  const explained = await search({ query: restricted, explain: true, size: 1, _source: source });
  const hit = explained.hits.hits[0];
  const got = (found: { _source?: unknown }): Pick<ExplainResponse, 'get'> =>
    params.source === undefined ? {} : { get: found._source === undefined ? { found: true } : { found: true, _source: found._source } };
  if (hit !== undefined) {
    // The search's root is the restriction's `bool`: its first detail is the query's own explanation.
    const explanation = hit._explanation?.details[0] ?? hit._explanation;
    return { found: true, response: { _index: hit._index, _id: id, matched: true, ...(explanation === undefined ? {} : { explanation }), ...got(hit) } };
  }
  const existing = await search({ query: { ids: { values: [id] } }, size: 1, _source: source });
  const document = existing.hits.hits[0];
  if (document === undefined) return { found: false, response: { _index: collection, _id: id, matched: false } };
  return {
    found: true,
    response: { _index: document._index, _id: id, matched: false, explanation: { value: 0, description: 'no matching term: the document does not match the query', details: [] }, ...got(document) },
  };
}
