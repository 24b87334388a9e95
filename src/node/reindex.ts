/**
 * `_reindex` requests: the body (`source`, `dest`, `max_docs`, `conflicts`) parsed into the run of
 * by-query.ts that reads the source a page at a time and writes each document into the
 * destination through the bulk path. What Trove does not do is refused with a 400 naming it:
 * a remote source, scripts, ingest pipelines, a destination routing, sliced and sorted sources.
 */
import { EngineError } from '../engine/errors.ts';
import { isPlainObject } from '../engine/mapping/json-value.ts';
import type { ByQueryRequest, ReindexDestination } from './by-query.ts';

/** A parsed `_reindex` body. */
export interface ReindexPlan {
  /** The source target (collections, aliases, patterns), comma-joined. */
  source: string;
  request: ByQueryRequest;
  conflicts?: 'abort' | 'proceed';
  /** `source.size`: documents per batch. */
  batchSize?: number;
}

/** Largest batch: a page of the search API. */
const MAX_BATCH_SIZE = 10_000;

function refuse(what: string, why: string): never {
  throw new EngineError('illegal_argument', `[${what}] is not supported by _reindex: ${why}`);
}

function checkKeys(object: Record<string, unknown>, allowed: readonly string[], owner: string): void {
  for (const key of Object.keys(object)) if (!allowed.includes(key)) throw new EngineError('parsing', `[${owner}] unknown field [${key}]`);
}

function names(value: unknown, owner: string): string[] {
  const list = Array.isArray(value) ? value : typeof value === 'string' ? value.split(',') : null;
  const parts = list?.map((part) => (typeof part === 'string' ? part.trim() : '')).filter((part) => part !== '');
  if (!parts || parts.length === 0 || parts.length !== list!.length) {
    throw new EngineError('action_request_validation', `Validation Failed: 1: use _all if you really want to copy from all existing indexes; [${owner}] must name collections;`);
  }
  return parts;
}

function parseSource(value: unknown): { indices: string[]; query: unknown; batchSize?: number; sourceFilter: unknown } {
  if (!isPlainObject(value)) throw new EngineError('action_request_validation', 'Validation Failed: 1: source is missing;');
  if (value.remote !== undefined) refuse('source.remote', 'Trove reindexes between collections of this cluster only; read the remote cluster with a client and _bulk into Trove instead');
  if (value.slice !== undefined) refuse('source.slice', 'a reindex runs as one slice');
  if (value.sort !== undefined) refuse('source.sort', 'documents are read in index order');
  checkKeys(value, ['index', 'query', 'size', '_source'], 'source');
  if (value.query !== undefined && !isPlainObject(value.query)) throw new EngineError('parsing', '[source.query] must be an object');
  let batchSize: number | undefined;
  if (value.size !== undefined) {
    if (typeof value.size !== 'number' || !Number.isInteger(value.size) || value.size < 1 || value.size > MAX_BATCH_SIZE) {
      throw new EngineError('illegal_argument', `[source.size] must be an integer between 1 and ${MAX_BATCH_SIZE}, got [${String(value.size)}]`);
    }
    batchSize = value.size;
  }
  const sourceFilter = value._source ?? true;
  if (sourceFilter === false) throw new EngineError('illegal_argument', '[source._source] cannot be false: the documents copied need their source');
  return { indices: names(value.index, 'source.index'), query: value.query ?? { match_all: {} }, batchSize, sourceFilter };
}

function parseDestination(value: unknown, sourceFilter: unknown): ReindexDestination {
  if (!isPlainObject(value) || value.index === undefined) throw new EngineError('action_request_validation', 'Validation Failed: 1: index must be specified;');
  if (value.pipeline !== undefined) refuse('dest.pipeline', 'Trove has no ingest pipelines');
  if (value.routing !== undefined && value.routing !== 'keep') refuse('dest.routing', 'documents keep the routing of their id in the destination');
  checkKeys(value, ['index', 'op_type', 'version_type', 'routing'], 'dest');
  if (typeof value.index !== 'string' || value.index === '' || /[,*?]/.test(value.index)) {
    throw new EngineError('illegal_argument', `[dest.index] must name one collection or alias, got [${String(value.index)}]`);
  }
  const opType = value.op_type ?? 'index';
  if (opType !== 'index' && opType !== 'create') throw new EngineError('illegal_argument', `[dest.op_type] must be [index] or [create], got [${String(opType)}]`);
  const versionType = value.version_type ?? 'internal';
  if (versionType !== 'internal' && versionType !== 'external' && versionType !== 'external_gte') {
    throw new EngineError('illegal_argument', `[dest.version_type] must be [internal], [external] or [external_gte], got [${String(versionType)}]`);
  }
  return { index: value.index, opType, versionType, sourceFilter };
}

/** `max_docs` (or the older top-level `size`): -1 or absent is every document. */
function maxDocsOf(value: unknown): number | null {
  if (value === undefined || value === -1) return null;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 1) {
    throw new EngineError('action_request_validation', `Validation Failed: 1: maxDocs should be greater than 0 if the request is limited to some number of documents or -1 if it isn't but it was [${String(value)}];`);
  }
  return value;
}

/** Parses a `_reindex` body (see the module comment); a bad one is a 400 that changes nothing. */
export function parseReindexBody(body: unknown): ReindexPlan {
  if (!isPlainObject(body)) throw new EngineError('parsing', 'the _reindex body must be a JSON object');
  if (body.script !== undefined) refuse('script', 'Trove runs no scripts; reindex, then change the copies with _update_by_query and its [ops]');
  checkKeys(body, ['source', 'dest', 'max_docs', 'size', 'conflicts'], 'reindex');
  const source = parseSource(body.source);
  const destination = parseDestination(body.dest, source.sourceFilter);
  if (body.conflicts !== undefined && body.conflicts !== 'abort' && body.conflicts !== 'proceed') {
    throw new EngineError('illegal_argument', `conflicts may only be "proceed" or "abort" but was [${String(body.conflicts)}]`);
  }
  const maxDocs = maxDocsOf(body.max_docs ?? body.size);
  return {
    source: source.indices.join(','),
    request: { kind: 'reindex', query: source.query, maxDocs, change: null, destination },
    conflicts: body.conflicts as 'abort' | 'proceed' | undefined,
    batchSize: source.batchSize,
  };
}
