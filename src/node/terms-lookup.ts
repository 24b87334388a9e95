/**
 * Terms lookup (Elasticsearch `terms` with an object instead of a list): the values of `path` in
 * another document (`index`, `id`, optional `routing`) or in the documents a `query` matches in
 * `index` (OpenSearch), put in place of the lookup before the query reaches any shard. A missing
 * document or path gives no terms (the query matches nothing); a missing collection is its 404.
 */
import { EngineError } from '../engine/errors.ts';
import { isPlainObject } from '../engine/mapping/json-value.ts';

/** Most documents a lookup by query reads (as a search page: `index.max_result_window`'s default). */
export const MAX_LOOKUP_DOCUMENTS = 10_000;

/** How lookups read their documents: one by id, or those a query matches. */
export interface TermsLookupSource {
  /** The source of document `id` of `collection` (null when missing). */
  byId(collection: string, id: string, routing: string | undefined): Promise<unknown>;
  /** The sources of up to `size` documents of `collection` matching `query`. */
  byQuery(collection: string, query: unknown, size: number): Promise<unknown[]>;
}

const LOOKUP_KEYS = new Set(['index', 'id', 'path', 'routing', 'query', 'store']);

/** The query with every terms lookup in it replaced by the values it finds (the query itself when it has none). */
export function resolveTermsLookups(query: unknown, source: TermsLookupSource): Promise<unknown> {
  // Most queries have none: no walk that awaits per key.
  return hasTermsLookup(query) ? resolveEveryLookup(query, source) : Promise.resolve(query);
}

async function resolveEveryLookup(query: unknown, source: TermsLookupSource): Promise<unknown> {
  if (Array.isArray(query)) return Promise.all(query.map((item) => resolveEveryLookup(item, source)));
  if (!isPlainObject(query)) return query;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(query)) {
    out[key] = key === 'terms' && isPlainObject(value) ? await resolveTermsClause(value, source) : await resolveEveryLookup(value, source);
  }
  return out;
}

/** Whether `resolveEveryLookup` would look anything up in the query. */
function hasTermsLookup(query: unknown): boolean {
  if (Array.isArray(query)) return query.some(hasTermsLookup);
  if (!isPlainObject(query)) return false;
  for (const [key, value] of Object.entries(query)) {
    if (key === 'terms' && isPlainObject(value) ? Object.values(value).some(isLookup) : hasTermsLookup(value)) return true;
  }
  return false;
}

async function resolveTermsClause(clause: Record<string, unknown>, source: TermsLookupSource): Promise<Record<string, unknown>> {
  const out: Record<string, unknown> = {};
  for (const [field, value] of Object.entries(clause)) {
    out[field] = isLookup(value) ? await lookupValues(field, value, source) : value;
  }
  return out;
}

function isLookup(value: unknown): value is Record<string, unknown> {
  return isPlainObject(value) && Object.hasOwn(value, 'index') && Object.hasOwn(value, 'path');
}

async function lookupValues(field: string, lookup: Record<string, unknown>, source: TermsLookupSource): Promise<unknown[]> {
  const unknown = Object.keys(lookup).find((key) => !LOOKUP_KEYS.has(key));
  if (unknown !== undefined) throw new EngineError('parsing', `[terms] lookup of field [${field}] does not support [${unknown}]`);
  const { index, id, path, routing, query } = lookup;
  if (typeof index !== 'string' || index === '') throw new EngineError('parsing', `[terms] lookup of field [${field}] needs an [index]`);
  if (typeof path !== 'string' || path === '') throw new EngineError('parsing', `[terms] lookup of field [${field}] needs a [path]`);
  if ((id === undefined) === (query === undefined)) throw new EngineError('parsing', `[terms] lookup of field [${field}] needs exactly one of [id] and [query]`);
  if (routing !== undefined && typeof routing !== 'string') throw new EngineError('parsing', `[terms] lookup [routing] of field [${field}] must be a string`);
  const documents = id !== undefined ? [await source.byId(index, lookupId(id, field), routing as string | undefined)] : await source.byQuery(index, query, MAX_LOOKUP_DOCUMENTS);
  const values = new Set<unknown>();
  for (const document of documents) for (const value of valuesAt(document, path.split('.'))) values.add(value);
  return [...values];
}

function lookupId(id: unknown, field: string): string {
  if (typeof id === 'string' && id !== '') return id;
  if (typeof id === 'number' && Number.isFinite(id)) return String(id);
  throw new EngineError('parsing', `[terms] lookup [id] of field [${field}] must be a non-empty string`);
}

/** The scalar values at a dotted path of a source (arrays at any step are walked; nulls left out). */
function valuesAt(value: unknown, path: readonly string[]): unknown[] {
  if (Array.isArray(value)) return value.flatMap((item) => valuesAt(item, path));
  if (path.length === 0) return value === null || value === undefined || typeof value === 'object' ? [] : [value];
  if (!isPlainObject(value)) return [];
  const [head, ...rest] = path;
  return Object.hasOwn(value, head!) ? valuesAt(value[head!], rest) : [];
}
