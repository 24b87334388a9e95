/**
 * Single-document routes: index (`_doc`, `_create`), get/exists (`_doc`, `_source`), delete, and
 * partial update (`_update`, whose operator semantics live in the engine). Their bodies are
 * documents or update bodies: longer than `indexing.max_document_bytes`, one is refused before it
 * is parsed (an encapsulated context with the document body parsers).
 */
import type { FastifyInstance } from 'fastify';
import { Type, type Static } from 'typebox';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { EngineError } from '../../engine/errors.ts';
import type { NamespaceCheck } from '../../node/auto-create.ts';
import type { DocumentService } from '../../node/document-service.ts';
import type { AuthScope } from '../auth/auth-scope.ts';
import { installDocumentParsers, receivedText } from '../content-types.ts';
import {
  AnyObject,
  CollectionParams,
  CONCURRENCY_QUERY,
  VERSION_QUERY,
  DocumentParams,
  SOURCE_QUERY,
  WRITE_QUERY,
  FlagParam,
  commaList,
  flagSet,
  forcedRefreshField,
  querySchema,
  sourceOptions,
} from '../params.ts';

const IndexQuery = querySchema({
  ...WRITE_QUERY,
  ...CONCURRENCY_QUERY,
  ...VERSION_QUERY,
  op_type: Type.Optional(Type.Union([Type.Literal('index'), Type.Literal('create')])),
  require_alias: Type.Optional(FlagParam),
});

const CreateQuery = querySchema({ ...WRITE_QUERY, require_alias: Type.Optional(FlagParam) });

const GetQuery = querySchema({
  ...SOURCE_QUERY,
  routing: Type.Optional(Type.String({ minLength: 1 })),
  preference: Type.Optional(Type.String()),
  realtime: Type.Optional(Type.String()),
  refresh: Type.Optional(Type.String()),
  stored_fields: Type.Optional(Type.String()),
  version: Type.Optional(Type.Integer({ minimum: 0 })),
  // A read checks `version` for equality whatever the version type (as Elasticsearch does).
  version_type: Type.Optional(Type.Union([Type.Literal('internal'), Type.Literal('external'), Type.Literal('external_gte')])),
});

const DeleteQuery = querySchema({ ...WRITE_QUERY, ...CONCURRENCY_QUERY, ...VERSION_QUERY });

const UpdateQuery = querySchema({
  ...WRITE_QUERY,
  ...CONCURRENCY_QUERY,
  ...SOURCE_QUERY,
  retry_on_conflict: Type.Optional(Type.Integer({ minimum: 0 })),
  require_alias: Type.Optional(FlagParam),
});

const UpdateBody = Type.Object(
  {
    doc: Type.Optional(AnyObject),
    ops: Type.Optional(
      Type.Array(
        Type.Object(
          { op: Type.String({ minLength: 1 }), field: Type.String({ minLength: 1 }), value: Type.Optional(Type.Unknown()) },
          { additionalProperties: false },
        ),
      ),
    ),
    upsert: Type.Optional(AnyObject),
    doc_as_upsert: Type.Optional(Type.Boolean()),
    detect_noop: Type.Optional(Type.Boolean()),
    _source: Type.Optional(Type.Unknown()),
  },
  { additionalProperties: false },
);

type IndexQueryType = Static<typeof IndexQuery>;

function writeParams(query: IndexQueryType) {
  return { routing: query.routing, ifSeqNo: query.if_seq_no, ifPrimaryTerm: query.if_primary_term, version: query.version, versionType: query.version_type };
}

/** `realtime` of a get: `false` reads what searches see (the refreshed view of an `index.visibility: refresh` collection). */
export function realtimeParam(query: { realtime?: string }): { realtime?: boolean } {
  return query.realtime === undefined ? {} : { realtime: query.realtime !== 'false' };
}

/** `refresh` of a get: `true` (or bare) refreshes the document's shard first; anything else does nothing. */
export function refreshBeforeGet(refresh: string | undefined): 'true' | undefined {
  return flagSet(refresh) ? 'true' : undefined;
}

/** `require_alias` of an index, create or update request. */
function requireAliasParam(query: { require_alias?: string }): { requireAlias?: boolean } {
  return query.require_alias === undefined ? {} : { requireAlias: flagSet(query.require_alias) };
}

/** The caller's namespace check, for a write that may create its collection (`action.auto_create_index`). */
function namespaceCheck(scope: AuthScope): NamespaceCheck {
  return (namespace) => scope.requireNamespace(namespace);
}

/**
 * A write's answer once its `refresh` parameter is settled: `true` refreshes, and `wait_for` waits
 * for, the copies of the written shard when its collection makes writes visible on refresh
 * (`index.visibility: refresh`); nothing to do otherwise.
 */
async function settled<T extends { _id: string }>(documents: DocumentService, collection: string, query: { refresh?: string; routing?: string }, response: T): Promise<T> {
  if (query.refresh !== undefined) await documents.settleRefresh(query.refresh, [{ collection, id: response._id, routing: query.routing }]);
  return response;
}

/** What the document routes need: the document service. */
export interface DocumentRouteOptions {
  documents: DocumentService;
}

/** Document routes. */
export async function documentRoutes(instance: FastifyInstance, options: DocumentRouteOptions): Promise<void> {
  const { documents } = options;
  installDocumentParsers(instance, () => documents.maxDocumentBytes());
  const app = instance.withTypeProvider<TypeBoxTypeProvider>();

  app.route({
    method: ['PUT', 'POST'],
    url: '/:collection/_doc/:id',
    config: { role: 'write' },
    schema: { params: DocumentParams, querystring: IndexQuery, body: AnyObject },
    handler: async (request, reply) => {
      const { collection, id } = request.params;
      const written = await documents.index(collection, id, request.body, { ...writeParams(request.query), ...requireAliasParam(request.query), opType: request.query.op_type, sourceJson: receivedText(request.body) }, namespaceCheck(request.authScope));
      const response = await settled(documents, collection, request.query, written);
      return reply.status(response.result === 'created' ? 201 : 200).send({ ...response, ...forcedRefreshField(request.query.refresh) });
    },
  });

  app.post(
    '/:collection/_doc',
    { config: { role: 'write' }, schema: { params: CollectionParams, querystring: IndexQuery, body: AnyObject } },
    async (request, reply) => {
      const written = await documents.index(request.params.collection, undefined, request.body, {
        ...writeParams(request.query),
        ...requireAliasParam(request.query),
        opType: request.query.op_type,
        sourceJson: receivedText(request.body),
      }, namespaceCheck(request.authScope));
      const response = await settled(documents, request.params.collection, request.query, written);
      return reply.status(201).send({ ...response, ...forcedRefreshField(request.query.refresh) });
    },
  );

  app.route({
    method: ['PUT', 'POST'],
    url: '/:collection/_create/:id',
    config: { role: 'write' },
    schema: { params: DocumentParams, querystring: CreateQuery, body: AnyObject },
    handler: async (request, reply) => {
      const { collection, id } = request.params;
      const written = await documents.index(collection, id, request.body, { routing: request.query.routing, ...requireAliasParam(request.query), opType: 'create', sourceJson: receivedText(request.body) }, namespaceCheck(request.authScope));
      const response = await settled(documents, collection, request.query, written);
      return reply.status(201).send({ ...response, ...forcedRefreshField(request.query.refresh) });
    },
  });

  app.get(
    '/:collection/_doc/:id',
    { config: { role: 'read' }, schema: { params: DocumentParams, querystring: GetQuery } },
    async (request, reply) => {
      const { collection, id } = request.params;
      const { query } = request;
      if (query.refresh !== undefined) await documents.settleRefresh(refreshBeforeGet(query.refresh), [{ collection, id, routing: query.routing }]);
      const response = await documents.get(collection, id, { routing: query.routing, source: sourceOptions(query), storedFields: commaList(query.stored_fields), version: query.version, ...realtimeParam(query) });
      return reply.status(response.found ? 200 : 404).send(response);
    },
  );

  app.head(
    '/:collection/_doc/:id',
    { config: { role: 'read' }, schema: { params: DocumentParams, querystring: GetQuery } },
    async (request, reply) => {
      const { collection, id } = request.params;
      if (request.query.refresh !== undefined) await documents.settleRefresh(refreshBeforeGet(request.query.refresh), [{ collection, id, routing: request.query.routing }]).catch(() => undefined);
      const response = await documents.get(collection, id, { routing: request.query.routing, source: { source: false }, ...realtimeParam(request.query) }).catch(() => null);
      return reply.status(response?.found ? 200 : 404).send();
    },
  );

  app.get(
    '/:collection/_source/:id',
    { config: { role: 'read' }, schema: { params: DocumentParams, querystring: GetQuery } },
    async (request) => {
      const { collection, id } = request.params;
      if (request.query.refresh !== undefined) await documents.settleRefresh(refreshBeforeGet(request.query.refresh), [{ collection, id, routing: request.query.routing }]);
      const response = await documents.get(collection, id, { routing: request.query.routing, source: sourceOptions(request.query), ...realtimeParam(request.query) });
      if (!response.found) throw new EngineError('document_missing', `Document not found [${collection}]/[${id}]`);
      // A collection whose mapping disables `_source` keeps none to return (as Elasticsearch: 404).
      if (response._source === undefined && sourceOptions(request.query) === undefined) throw new EngineError('document_missing', `Source not found [${collection}]/[${id}]`);
      return response._source ?? {};
    },
  );

  app.delete(
    '/:collection/_doc/:id',
    { config: { role: 'write' }, schema: { params: DocumentParams, querystring: DeleteQuery } },
    async (request, reply) => {
      const { collection, id } = request.params;
      const response = await settled(documents, collection, request.query, await documents.delete(collection, id, writeParams(request.query)));
      return reply.status(response.result === 'not_found' ? 404 : 200).send({ ...response, ...forcedRefreshField(request.query.refresh) });
    },
  );

  app.post(
    '/:collection/_update/:id',
    { config: { role: 'write' }, schema: { params: DocumentParams, querystring: UpdateQuery, body: UpdateBody } },
    async (request, reply) => {
      const { collection, id } = request.params;
      const written = await documents.update(collection, id, request.body, {
        ...writeParams(request.query),
        ...requireAliasParam(request.query),
        retryOnConflict: request.query.retry_on_conflict,
        source: sourceOptions(request.query),
      }, namespaceCheck(request.authScope));
      const response = await settled(documents, collection, request.query, written);
      return reply.status(response.result === 'created' ? 201 : 200).send({ ...response, ...forcedRefreshField(request.query.refresh) });
    },
  );
}
