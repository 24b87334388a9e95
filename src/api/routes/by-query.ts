/**
 * `POST /{collection}/_delete_by_query` and `POST /{collection}/_update_by_query`
 * (src/node/by-query.ts): Elasticsearch's by-query APIs over one collection. The body is
 * `{query?, max_docs?, conflicts?}`, plus for updates Trove's partial-update `ops` and/or `doc`
 * (`script` is refused). By default the request waits and answers ES's by-query response (409 when
 * its `failures` hold version conflicts, as ES); `wait_for_completion=false` answers `{task}` at
 * once, the job id to read at `GET /_jobs/{job_id}`.
 *
 * `POST /_reindex` (src/node/reindex.ts) runs the same way from `source` into `dest`; a key limited
 * to namespaces names the source and destination concretely, inside them.
 */
import type { FastifyInstance, FastifyReply } from 'fastify';
import { Type } from 'typebox';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { ByQueryFailure, ByQueryKind, ByQueryStatus } from '../../node/by-query.ts';
import type { ByQueryService } from '../../node/by-query-service.ts';
import type { AuthScope } from '../auth/auth-scope.ts';
import { ApiError, ERROR_TABLE, errorCause, type ErrorCode } from '../errors.ts';
import { AnyObject, CollectionParams, FlagParam, flagSet, optionalBody, querySchema } from '../params.ts';

/** Largest batch: a page of the search API (`from + size` at most 10 000). */
const MAX_BATCH_SIZE = 10_000;

const ByQueryQuery = querySchema({
  conflicts: Type.Optional(Type.Union([Type.Literal('abort'), Type.Literal('proceed')])),
  refresh: Type.Optional(Type.Union([FlagParam, Type.Literal('wait_for')])),
  wait_for_completion: Type.Optional(FlagParam),
  scroll_size: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_BATCH_SIZE })),
  batch_size: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_BATCH_SIZE })),
  requests_per_second: Type.Optional(Type.String()),
  slices: Type.Optional(Type.String()),
  max_docs: Type.Optional(Type.Integer({ minimum: 1 })),
  q: Type.Optional(Type.String()),
  scroll: Type.Optional(Type.String()),
  timeout: Type.Optional(Type.String()),
  wait_for_active_shards: Type.Optional(Type.String()),
});

/** `requests_per_second`: `-1` (or absent) is unthrottled; else a positive number of documents per second. */
function requestsPerSecond(value: string | undefined): number | null {
  if (value === undefined || value.trim() === '-1') return null;
  const rate = Number(value);
  if (value.trim() === '' || !Number.isFinite(rate) || rate <= 0) {
    throw new ApiError('invalid_parameter', `[requests_per_second] must be a float greater than 0. Use -1 to disable throttling, got [${value}]`);
  }
  return rate;
}

/** `slices`: only one slice (`1` or `auto`, which means one here). */
function checkSlices(value: string | undefined): void {
  if (value === undefined || value === '1' || value === 'auto') return;
  throw new ApiError('invalid_parameter', `[slices] of [${value}] is not supported: Trove runs a by-query request as one slice; use [1] or [auto]`);
}

const ReindexQuery = querySchema({
  refresh: Type.Optional(Type.Union([FlagParam, Type.Literal('wait_for')])),
  wait_for_completion: Type.Optional(FlagParam),
  requests_per_second: Type.Optional(Type.String()),
  slices: Type.Optional(Type.String()),
  max_docs: Type.Optional(Type.Integer({ minimum: 1 })),
  scroll: Type.Optional(Type.String()),
  timeout: Type.Optional(Type.String()),
  wait_for_active_shards: Type.Optional(Type.String()),
  require_alias: Type.Optional(FlagParam),
});

/** Refuses (403) a reindex whose source or destination is outside the caller's namespaces (concrete names only for a limited key). */
function requireReindexTargets(scope: AuthScope, body: Record<string, unknown>): void {
  const source = body.source as { index?: unknown } | undefined;
  const dest = body.dest as { index?: unknown } | undefined;
  const indices = Array.isArray(source?.index) ? source.index : [source?.index];
  for (const name of [...indices, dest?.index]) if (typeof name === 'string') scope.requireConcreteCollections(name);
}

/** The answer of a run: its task id, or its response (409 when its failures hold conflicts, as ES). */
function answer(result: Awaited<ReturnType<ByQueryService['run']>>, reply: FastifyReply) {
  if (result.kind === 'started') return reply.send({ task: result.task });
  const rendered = renderByQueryStatus(result.status);
  const statuses = (rendered.failures as Array<{ status: number }>).map((failure) => failure.status);
  return reply.status(statuses.length > 0 ? Math.max(...statuses) : 200).send(rendered);
}

/** A failed document as ES lists it: `{index, id, cause, status}`. */
function renderFailure(failure: ByQueryFailure) {
  const code = (Object.hasOwn(ERROR_TABLE, failure.code) ? failure.code : 'internal') as ErrorCode;
  return { index: failure.index, id: failure.id, cause: errorCause(code, failure.reason, failure.index), status: ERROR_TABLE[code].status };
}

/** A by-query status (or result) with its failures rendered as ES renders them. */
export function renderByQueryStatus(status: Record<string, unknown>): Record<string, unknown> {
  const failures = (status as ByQueryStatus).failures ?? [];
  return { ...status, failures: failures.map(renderFailure) };
}

/** What the by-query routes need: the by-query service. */
export interface ByQueryRouteOptions {
  byQuery: ByQueryService;
}

/** By-query routes. */
export async function byQueryRoutes(instance: FastifyInstance, options: ByQueryRouteOptions): Promise<void> {
  const app = instance.withTypeProvider<TypeBoxTypeProvider>();
  const { byQuery } = options;

  for (const kind of ['delete', 'update'] as const satisfies readonly ByQueryKind[]) {
    app.post(
      `/:collection/_${kind}_by_query`,
      { config: { role: 'write' }, schema: { params: CollectionParams, querystring: ByQueryQuery, body: optionalBody(AnyObject) } },
      async (request, reply) => {
        const { query } = request;
        checkSlices(query.slices);
        const rate = requestsPerSecond(query.requests_per_second);
        let body = request.body ?? {};
        if (query.max_docs !== undefined) body = { ...body, max_docs: query.max_docs };
        const result = await byQuery.run(kind, request.params.collection, body, {
          conflicts: query.conflicts,
          batchSize: query.scroll_size ?? query.batch_size ?? 1000,
          requestsPerSecond: rate,
          q: query.q,
          waitForCompletion: query.wait_for_completion === undefined || flagSet(query.wait_for_completion),
          refresh: query.refresh,
        });
        return answer(result, reply);
      },
    );
  }

  app.post('/_reindex', { config: { role: 'write' }, schema: { querystring: ReindexQuery, body: AnyObject } }, async (request, reply) => {
    const { query } = request;
    checkSlices(query.slices);
    const rate = requestsPerSecond(query.requests_per_second);
    let body = request.body as Record<string, unknown>;
    requireReindexTargets(request.authScope, body);
    if (query.max_docs !== undefined) body = { ...body, max_docs: query.max_docs };
    const waitForCompletion = query.wait_for_completion === undefined || flagSet(query.wait_for_completion);
    const requireAlias = query.require_alias !== undefined && flagSet(query.require_alias);
    const result = await byQuery.reindex(body, { batchSize: 1000, requestsPerSecond: rate, waitForCompletion, requireAlias, refresh: query.refresh }, (namespace) => request.authScope.requireNamespace(namespace));
    return answer(result, reply);
  });
}
