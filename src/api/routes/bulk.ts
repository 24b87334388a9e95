/**
 * `_bulk` routes. The body is NDJSON (`application/x-ndjson`; `application/json` is accepted
 * too) read as bytes and split into lines here; document lines are parsed by their shards (see
 * bulk-body.ts; a line longer than `indexing.max_document_bytes` fails its item there, unparsed).
 * Items fail one by one; the valid ones are applied. The response is ES's
 * `{took, errors, items:[{<action>: {..., status}}]}`.
 */
import type { FastifyInstance } from 'fastify';
import { Type, type Static } from 'typebox';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { BulkItemResult, BulkResponse } from '../../node/node-service.ts';
import type { BulkItem, DocumentText } from '../../node/bulk.ts';
import type { WrittenDocument } from '../../node/refresh.ts';
import { parseBulkBody, type ParsedBulkEntry } from '../bulk-body.ts';
import { installRawBytesParser } from '../content-types.ts';
import { ERROR_TABLE, classifyError, errorCause } from '../errors.ts';
import type { DocumentService } from '../../node/document-service.ts';
import { CollectionParams, FlagParam, SOURCE_QUERY, WRITE_QUERY, flagSet, forcedRefreshField, querySchema, sourceOptions } from '../params.ts';
import type { AuthScope } from '../auth/auth-scope.ts';

const BulkQuery = querySchema({
  ...WRITE_QUERY,
  ...SOURCE_QUERY,
  require_alias: Type.Optional(FlagParam),
});

/** The URL parameters `run` reads. */
type BulkQueryValues = Static<typeof BulkQuery>;

/** What the bulk route needs: the document service. */
export interface BulkRouteOptions {
  documents: DocumentService;
}

/** Bulk routes (an encapsulated context with the raw-bytes body parser). */
export async function bulkRoutes(instance: FastifyInstance, options: BulkRouteOptions): Promise<void> {
  installRawBytesParser(instance);
  const app = instance.withTypeProvider<TypeBoxTypeProvider>();
  const { documents } = options;

  const run = async (collection: string | undefined, body: unknown, query: BulkQueryValues, scope: AuthScope) => {
    const { routing, refresh, require_alias: requireAlias } = query;
    const entries = parseBulkBody(body, documents.maxDocumentBytes());
    const items = entries.flatMap((entry) => (entry.kind === 'item' ? [entry.item] : []));
    // The URL's `_source` is the default of every update item's (what its `get` section returns).
    const source = sourceOptions(query);
    if (source !== undefined) for (const item of items) if (item.action === 'update' && item.source === undefined) item.source = source;
    // A key limited to namespaces may not reach any item's collection outside them: nothing is applied
    // (an item whose document line does not parse only fails, as it would have before reaching a collection).
    for (const item of items) {
      const target = item.collection ?? collection;
      if (target === undefined) continue;
      try {
        scope.requireCollection(target);
      } catch (error) {
        if (!item.text || textParses(item.text)) throw error;
      }
    }
    const response = items.length > 0 ? await documents.bulk(items, { collection, routing, requireAlias: requireAlias !== undefined && flagSet(requireAlias) }, (namespace) => scope.requireNamespace(namespace)) : { took: 0, errors: false, items: [] };
    // Only a request that asks for a refresh lists what it wrote (nothing to do otherwise).
    if (refresh !== undefined && refresh !== 'false') await documents.settleRefresh(refresh, writtenBy(items, response, collection, routing));
    return renderBulk(entries, response, collection, forcedRefreshField(refresh));
  };

  app.route({
    method: ['POST', 'PUT'],
    url: '/_bulk',
    config: { role: 'write' },
    schema: { querystring: BulkQuery },
    handler: async (request) => run(undefined, request.body, request.query, request.authScope),
  });

  app.route({
    method: ['POST', 'PUT'],
    url: '/:collection/_bulk',
    config: { role: 'write' },
    schema: { params: CollectionParams, querystring: BulkQuery },
    handler: async (request) => run(request.params.collection, request.body, request.query, request.authScope),
  });
}

/** Whether a document line parses (asked only of items that could be refused). */
function textParses(text: DocumentText): boolean {
  try {
    text.parse();
    return true;
  } catch {
    return false;
  }
}

/** Interleaves the node's item results with the items that failed to parse, in request order. */
/** The documents a bulk request wrote, for its `refresh` parameter: each applied item's shard, and every shard of a dual-write target. */
function writtenBy(items: readonly BulkItem[], response: BulkResponse, collection: string | undefined, routing: string | undefined): WrittenDocument[] {
  const written: WrittenDocument[] = [];
  response.items.forEach((result, position) => {
    const item = items[position];
    if ('response' in result && item !== undefined) written.push({ collection: item.collection ?? collection ?? result.response._index, id: result.response._id, routing: item.routing ?? routing });
    if (result.mirror && 'response' in result.mirror) written.push({ collection: result.mirror.response._index });
  });
  return written;
}

function renderBulk(entries: ParsedBulkEntry[], response: BulkResponse, collection: string | undefined, refreshed: { forced_refresh?: true }) {
  const items: Array<Record<string, Record<string, unknown>>> = [];
  let next = 0;
  let errors = response.errors;
  for (const entry of entries) {
    if (entry.kind === 'failed') {
      errors = true;
      items.push(renderFailure(entry.action, entry.index ?? collection ?? null, entry.id, entry.error));
      continue;
    }
    const result = response.items[next++]!;
    items.push(renderItem(result, refreshed));
    if (result.mirror) items.push(renderItem(result.mirror, refreshed));
  }
  return { took: response.took, errors, items };
}

function renderItem(result: BulkItemResult, refreshed: { forced_refresh?: true }): Record<string, Record<string, unknown>> {
  if ('error' in result) return renderFailure(result.action, result.index, result.id, result.error);
  const { response } = result;
  const status = response.result === 'created' ? 201 : response.result === 'not_found' ? 404 : 200;
  return { [result.action]: { ...response, ...refreshed, status } };
}

function renderFailure(action: string, index: string | null, id: string | null, error: unknown): Record<string, Record<string, unknown>> {
  const { code, reason } = classifyError(error, index ?? undefined);
  return {
    [action]: {
      _index: index,
      _id: id,
      status: ERROR_TABLE[code].status,
      error: errorCause(code, reason, index ?? undefined),
    },
  };
}
