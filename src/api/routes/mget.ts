/** `_mget` routes: several realtime gets; per-document errors are rendered as ES error causes. */
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { MultiGetResponse } from '../../node/node-service.ts';
import { EngineError } from '../../engine/errors.ts';
import { classifyError, errorCause } from '../errors.ts';
import type { DocumentService } from '../../node/document-service.ts';
import { CollectionParams, SOURCE_QUERY, commaList, querySchema, sourceOptions } from '../params.ts';
import { realtimeParam, refreshBeforeGet } from './documents.ts';

const MgetQuery = querySchema({
  ...SOURCE_QUERY,
  routing: Type.Optional(Type.String({ minLength: 1 })),
  preference: Type.Optional(Type.String()),
  realtime: Type.Optional(Type.String()),
  refresh: Type.Optional(Type.String()),
  stored_fields: Type.Optional(Type.String()),
});

const MgetBody = Type.Object(
  {
    docs: Type.Optional(
      Type.Array(
        Type.Object(
          {
            _index: Type.Optional(Type.String({ minLength: 1 })),
            _id: Type.Optional(Type.String({ minLength: 1 })),
            routing: Type.Optional(Type.String({ minLength: 1 })),
            _source: Type.Optional(Type.Unknown()),
            stored_fields: Type.Optional(Type.Union([Type.String(), Type.Array(Type.String())])),
          },
          { additionalProperties: false },
        ),
      ),
    ),
    ids: Type.Optional(Type.Array(Type.String({ minLength: 1 }))),
  },
  { additionalProperties: false },
);

/** Refuses entries without an `_id`, naming them as Elasticsearch does. */
function checkIds(docs: readonly { _id?: string }[] | undefined): void {
  const missing = (docs ?? []).flatMap((doc, position) => (doc._id === undefined ? [position] : []));
  if (missing.length > 0) throw new EngineError('action_request_validation', `Validation Failed: ${missing.map((position, index) => `${index + 1}: id is missing for doc ${position};`).join(' ')}`);
}

/** What the multi-get routes need: the document service. */
export interface MultiGetRouteOptions {
  documents: DocumentService;
}

/** Multi-get routes. */
export async function mgetRoutes(instance: FastifyInstance, options: MultiGetRouteOptions): Promise<void> {
  const app = instance.withTypeProvider<TypeBoxTypeProvider>();
  const { documents } = options;

  app.route({
    method: ['GET', 'POST'],
    url: '/_mget',
    config: { role: 'read' },
    schema: { querystring: MgetQuery, body: MgetBody },
    handler: async (request) => {
      checkIds(request.body.docs);
      const missing = (request.body.docs ?? []).findIndex((doc) => doc._index === undefined);
      if (missing >= 0) throw new EngineError('action_request_validation', `Validation Failed: 1: index is missing for doc ${missing};`);
      if (request.body.ids !== undefined) throw new EngineError('action_request_validation', 'Validation Failed: 1: [ids] needs a collection in the URL;');
      for (const doc of request.body.docs ?? []) request.authScope.requireCollection(doc._index!);
      await refreshFirst(documents, request.query.refresh, request.body);
      return render(await documents.mget(request.body, { routing: request.query.routing, source: sourceOptions(request.query), storedFields: commaList(request.query.stored_fields), ...realtimeParam(request.query) }));
    },
  });

  app.route({
    method: ['GET', 'POST'],
    url: '/:collection/_mget',
    config: { role: 'read' },
    schema: { params: CollectionParams, querystring: MgetQuery, body: MgetBody },
    handler: async (request) => {
      checkIds(request.body.docs);
      for (const doc of request.body.docs ?? []) if (doc._index !== undefined) request.authScope.requireCollection(doc._index);
      await refreshFirst(documents, request.query.refresh, request.body, request.params.collection);
      return render(
        await documents.mget(request.body, {
          collection: request.params.collection,
          routing: request.query.routing,
          source: sourceOptions(request.query),
          storedFields: commaList(request.query.stored_fields),
          ...realtimeParam(request.query),
        }),
      );
    },
  });
}

/** `refresh=true` on `_mget`: refreshes the collections it reads first (those with `index.visibility: refresh`). */
async function refreshFirst(documents: DocumentService, refresh: string | undefined, body: { docs?: Array<{ _index?: string }> }, collection?: string): Promise<void> {
  if (refresh === undefined) return;
  const names = new Set((body.docs ?? []).map((doc) => doc._index ?? collection).filter((name): name is string => name !== undefined));
  if (collection !== undefined) names.add(collection);
  await documents.settleRefresh(refreshBeforeGet(refresh), [...names].map((name) => ({ collection: name })));
}

function render(response: MultiGetResponse) {
  return {
    docs: response.docs.map((doc) => {
      if (!('error' in doc)) return doc;
      const { code, reason } = classifyError(doc.error, doc._index ?? undefined);
      return { _index: doc._index, _id: doc._id, error: errorCause(code, reason, doc._index ?? undefined) };
    }),
  };
}
