/**
 * Deep pagination: scroll continuation and clearing (`_search/scroll`), and point in time in both
 * spellings, OpenSearch's (`_search/point_in_time`, with its `_all` listing and delete) and
 * Elasticsearch's (`_pit`). Opening a scroll and searching a point in time go through `_search`
 * (routes/search.ts). Scroll and point-in-time ids name the collections they read: a caller
 * limited to some namespaces is refused (403) one that reaches outside them, and the `_all`
 * forms, which reach every namespace, need an unrestricted key.
 */
import type { FastifyInstance } from 'fastify';
import { Type, type Static } from 'typebox';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { AuthScope } from '../auth/auth-scope.ts';
import { EngineError } from '../../engine/errors.ts';
import type { CreatedPointInTime } from '../../node/point-in-time.ts';
import type { SearchService } from '../../node/search-service.ts';
import { CollectionParams, FlagParam, flagSet, optionalBody, querySchema } from '../params.ts';

const IdList = Type.Union([Type.String(), Type.Array(Type.String())]);
const TimeValue = Type.Union([Type.String({ minLength: 1 }), Type.Integer()]);

const ScrollQuery = querySchema({
  scroll: Type.Optional(Type.String({ minLength: 1 })),
  scroll_id: Type.Optional(Type.String({ minLength: 1 })),
  rest_total_hits_as_int: Type.Optional(FlagParam),
});
const ScrollBody = Type.Object({ scroll_id: Type.Optional(Type.String({ minLength: 1 })), scroll: Type.Optional(TimeValue) }, { additionalProperties: false });
const ClearScrollBody = Type.Object({ scroll_id: Type.Optional(IdList) }, { additionalProperties: false });
const ScrollIdParams = Type.Object({ scroll_id: Type.String({ minLength: 1 }) });

const PitQuery = querySchema({
  keep_alive: Type.Optional(Type.String({ minLength: 1 })),
  ignore_unavailable: Type.Optional(FlagParam),
  allow_partial_pit_creation: Type.Optional(FlagParam),
  preference: Type.Optional(Type.String()),
  routing: Type.Optional(Type.String()),
  expand_wildcards: Type.Optional(Type.String()),
});
const DeletePitBody = Type.Object({ pit_id: Type.Optional(IdList) }, { additionalProperties: false });
const CloseEsPitBody = Type.Object({ id: Type.String({ minLength: 1 }) }, { additionalProperties: false });

/** What the scroll continuation routes read of a request. */
interface ScrollRequest {
  body?: Static<typeof ScrollBody> | null;
  query: Static<typeof ScrollQuery>;
  authScope: AuthScope;
}

/** What the scroll and point-in-time routes need. */
export interface ScrollRouteOptions {
  search: SearchService;
}


function idList(value: string | string[] | undefined, name: string): string[] {
  const ids = (value === undefined ? [] : Array.isArray(value) ? value : [value]).flatMap((id) => id.split(',')).map((id) => id.trim()).filter((id) => id !== '');
  if (ids.length === 0) throw new EngineError('action_request_validation', `Validation Failed: 1: no ${name} specified;`);
  return ids;
}

/** Scroll and point-in-time routes. */
export async function scrollRoutes(instance: FastifyInstance, options: ScrollRouteOptions): Promise<void> {
  const app = instance.withTypeProvider<TypeBoxTypeProvider>();
  const { search } = options;

  app.route({
    method: ['GET', 'POST'],
    url: '/_search/scroll',
    config: { role: 'read' },
    schema: { querystring: ScrollQuery, body: optionalBody(ScrollBody) },
    handler: async (request) => {
      const scrollId = request.body?.scroll_id ?? request.query.scroll_id;
      if (scrollId === undefined) throw new EngineError('action_request_validation', 'Validation Failed: 1: scrollId is missing;');
      return nextPage(request, scrollId);
    },
  });

  app.route({
    method: ['GET', 'POST'],
    url: '/_search/scroll/:scroll_id',
    config: { role: 'read' },
    schema: { params: ScrollIdParams, querystring: ScrollQuery, body: optionalBody(ScrollBody) },
    handler: async (request) => nextPage(request, request.params.scroll_id),
  });

  /** The next page of scroll `scrollId`, with the keep-alive of the body or the URL. */
  const nextPage = (request: ScrollRequest, scrollId: string): Promise<unknown> => {
    const scroll = request.body?.scroll ?? request.query.scroll;
    return search.continueScroll(scrollId, scroll === undefined ? undefined : String(scroll), { restTotalHitsAsInt: flagSet(request.query.rest_total_hits_as_int) }, request.authScope.requireCollections);
  };

  const clear = async (scope: AuthScope, ids: string[], reply: { code(status: number): unknown }): Promise<unknown> => {
    if (ids.includes('_all')) {
      scope.requireUnrestricted('clear every scroll');
      return search.clearScrolls('_all', scope.requireCollections);
    }
    const cleared = await search.clearScrolls(ids, scope.requireCollections);
    if (cleared.num_freed === 0) reply.code(404);
    return cleared;
  };

  app.route({
    method: 'DELETE',
    url: '/_search/scroll',
    config: { role: 'read' },
    schema: { querystring: querySchema({ scroll_id: Type.Optional(Type.String({ minLength: 1 })) }), body: optionalBody(ClearScrollBody) },
    handler: async (request, reply) => clear(request.authScope, idList(request.body?.scroll_id ?? request.query.scroll_id, 'scroll ids'), reply),
  });

  app.route({
    method: 'DELETE',
    url: '/_search/scroll/:scroll_id',
    config: { role: 'read' },
    schema: { params: ScrollIdParams },
    handler: async (request, reply) => clear(request.authScope, idList(request.params.scroll_id, 'scroll ids'), reply),
  });

  const createPit = (request: { params: { collection: string }; query: Static<typeof PitQuery> }): Promise<CreatedPointInTime> =>
    search.createPointInTime(request.params.collection, request.query.keep_alive, flagSet(request.query.ignore_unavailable));

  app.route({
    method: 'POST',
    url: '/:collection/_search/point_in_time',
    config: { role: 'read', collectionTarget: true },
    schema: { params: CollectionParams, querystring: PitQuery },
    handler: async (request) => {
      const created = await createPit(request);
      return { pit_id: created.id, _shards: created.shards, creation_time: created.creationTime };
    },
  });

  app.route({
    method: 'POST',
    url: '/:collection/_pit',
    config: { role: 'read', collectionTarget: true },
    schema: { params: CollectionParams, querystring: PitQuery },
    handler: async (request) => {
      const created = await createPit(request);
      return { id: created.id, _shards: created.shards };
    },
  });

  app.route({
    method: 'DELETE',
    url: '/_search/point_in_time',
    config: { role: 'read' },
    schema: { body: optionalBody(DeletePitBody) },
    handler: async (request, reply) => {
      const closed = await search.deletePointsInTime(idList(request.body?.pit_id, 'pit ids'), request.authScope.requireCollections);
      if (closed.every((pit) => pit.freed === 0)) reply.code(404);
      return { pits: closed.map((pit) => ({ successful: pit.freed > 0, pit_id: pit.id })) };
    },
  });

  app.route({
    method: 'DELETE',
    url: '/_search/point_in_time/_all',
    config: { role: 'read' },
    handler: async (request) => {
      request.authScope.requireUnrestricted('delete every point in time');
      const ids = await search.deleteEveryPointInTime();
      return { pits: ids.map((id) => ({ successful: true, pit_id: id })) };
    },
  });

  app.route({
    method: 'GET',
    url: '/_search/point_in_time/_all',
    config: { role: 'read' },
    handler: async (request) => {
      request.authScope.requireUnrestricted('list every point in time');
      return { pits: await search.listPointsInTime() };
    },
  });

  app.route({
    method: 'DELETE',
    url: '/_pit',
    config: { role: 'read' },
    schema: { body: CloseEsPitBody },
    handler: async (request, reply) => {
      const [closed] = await search.deletePointsInTime([request.body.id], request.authScope.requireCollections);
      if (closed!.freed === 0) reply.code(404);
      return { succeeded: true, num_freed: closed!.freed };
    },
  });
}
