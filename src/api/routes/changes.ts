/**
 * `GET|POST /{collection}/_changes`: the change feed (PRODUCT.md 4.5). Parameters come in the
 * query string for both methods (CouchDB clients post, with an empty JSON object as the body).
 * The cursor is checked before the response starts, so a bad or expired cursor is a plain error
 * response; the feed itself is streamed, with the headers sent at once so that a waiting client
 * knows the feed is open. `heartbeat=true` means a heartbeat every 60 s, as in CouchDB.
 */
import { once } from 'node:events';
import type { ServerResponse } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import type { FastifyInstance } from 'fastify';
import { Type, type Static } from 'typebox';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { ChangesRequest } from '../../node/node-service.ts';
import type { ChangeFeedService } from '../../node/change-feed-service.ts';
import { CollectionParams, FlagParam, flagSet, optionalBody, querySchema } from '../params.ts';

/** Longest `timeout` and `heartbeat` accepted (one day, in ms). */
const MAX_WAIT_MS = 86_400_000;
const DEFAULT_HEARTBEAT_MS = 60_000;
/** Longest a graceful stop waits for finished feeds' responses to be written. */
const FINISH_WAIT_MS = 5000;

const ChangesQuery = querySchema({
  since: Type.Optional(Type.String()),
  limit: Type.Optional(Type.Integer({ minimum: 0 })),
  feed: Type.Optional(Type.Union([Type.Literal('normal'), Type.Literal('longpoll'), Type.Literal('continuous'), Type.Literal('eventsource')])),
  timeout: Type.Optional(Type.Integer({ minimum: 0, maximum: MAX_WAIT_MS })),
  heartbeat: Type.Optional(Type.Union([Type.Literal('true'), Type.Literal('false'), Type.Integer({ minimum: 1, maximum: MAX_WAIT_MS })])),
  include_docs: Type.Optional(FlagParam),
  seq_interval: Type.Optional(Type.Integer({ minimum: 1 })),
});

/** CouchDB clients post `{}`; no body field is defined. */
const ChangesBody = Type.Object({}, { additionalProperties: false });

function changesRequest(query: Static<typeof ChangesQuery>, lastEventId: string | undefined): ChangesRequest {
  const heartbeat = query.heartbeat;
  return {
    // An EventSource reconnecting sends the id of the last event it saw instead of a cursor.
    since: query.since ?? (query.feed === 'eventsource' ? lastEventId : undefined),
    limit: query.limit,
    feed: query.feed,
    timeoutMs: query.timeout,
    heartbeatMs: heartbeat === undefined || heartbeat === 'false' ? null : heartbeat === 'true' ? DEFAULT_HEARTBEAT_MS : heartbeat,
    includeDocs: flagSet(query.include_docs),
    seqInterval: query.seq_interval,
  };
}

/** What the change-feed route needs: the change-feed service. */
export interface ChangesRouteOptions {
  changes: ChangeFeedService;
}

/** The change-feed route. */
export async function changesRoutes(instance: FastifyInstance, options: ChangesRouteOptions): Promise<void> {
  const app = instance.withTypeProvider<TypeBoxTypeProvider>();
  const { changes } = options;

  // Feeds that never end on their own (continuous with heartbeat) would hold a graceful stop: they
  // are finished, and the stop waits until their responses are written, so that their keep-alive
  // connections are idle when the server closes idle connections.
  const responses = new Set<ServerResponse>();
  app.addHook('preClose', async () => {
    await changes.changeFeeds.finishAll();
    const written = [...responses].map((response) => once(response, 'close').catch(() => undefined));
    const timeout = new AbortController();
    await Promise.race([Promise.all(written), sleep(FINISH_WAIT_MS, undefined, { ref: false, signal: timeout.signal }).catch(() => undefined)]);
    timeout.abort();
  });

  app.route({
    method: ['GET', 'POST'],
    url: '/:collection/_changes',
    config: { role: 'read' },
    schema: { params: CollectionParams, querystring: ChangesQuery, body: optionalBody(ChangesBody) },
    handler: async (request, reply) => {
      const lastEventId = request.headers['last-event-id'];
      const feed = await changes.open(request.params.collection, changesRequest(request.query, typeof lastEventId === 'string' ? lastEventId : undefined));
      reply.raw.once('pipe', () => reply.raw.flushHeaders());
      responses.add(reply.raw);
      reply.raw.once('close', () => responses.delete(reply.raw));
      return reply.code(200).type(feed.contentType).header('cache-control', 'no-cache').send(feed);
    },
  });
}
