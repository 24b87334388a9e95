/**
 * `POST /{collection}/_forcemerge`: Elasticsearch's force merge, the same job as `_compact`
 * (src/node/force-merge.ts). Waits for the merge by default and answers ES's
 * `{_shards: {total, successful, failed, failures?}}`; `wait_for_completion=false` answers
 * `{task}` at once, the job id to read at `GET /_jobs/{job_id}`. `primary_only` (OpenSearch) is
 * accepted: the job merges primary copies either way. Also `GET|POST [/{collection}]/_flush`
 * (src/node/flush.ts).
 */
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { CompactionService } from '../../node/compaction-service.ts';
import { forceMerge, type ForceMergeFailure } from '../../node/force-merge.ts';
import { classifyError, errorCause } from '../errors.ts';
import { CollectionParams, FlagParam, flagSet, optionalBody, querySchema } from '../params.ts';

const ForceMergeQuery = querySchema({
  max_num_segments: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000 })),
  wait_for_completion: Type.Optional(FlagParam),
  only_expunge_deletes: Type.Optional(FlagParam),
  flush: Type.Optional(FlagParam),
  primary_only: Type.Optional(FlagParam),
});

const FlushQuery = querySchema({
  force: Type.Optional(FlagParam),
  wait_if_ongoing: Type.Optional(FlagParam),
  ignore_unavailable: Type.Optional(FlagParam),
  allow_no_indices: Type.Optional(FlagParam),
  expand_wildcards: Type.Optional(Type.String()),
});

const NoBody = optionalBody(Type.Object({}, { additionalProperties: false }));

function renderFailure(failure: ForceMergeFailure): Record<string, unknown> {
  const { code, reason } = classifyError(failure.error, failure.index);
  return { shard: failure.shard, index: failure.index, reason: errorCause(code, reason) };
}

/** What the force-merge route needs: the compaction service. */
export interface ForceMergeRouteOptions {
  compaction: CompactionService;
}

/** Force-merge route. */
export async function forceMergeRoutes(instance: FastifyInstance, options: ForceMergeRouteOptions): Promise<void> {
  const app = instance.withTypeProvider<TypeBoxTypeProvider>();
  const { compaction } = options;

  app.post(
    '/:collection/_forcemerge',
    { config: { role: 'manage' }, schema: { params: CollectionParams, querystring: ForceMergeQuery, body: NoBody } },
    async (request) => {
      const { query } = request;
      const waitForCompletion = query.wait_for_completion === undefined || flagSet(query.wait_for_completion);
      const result = await forceMerge(compaction, request.params.collection, { maxSegments: query.max_num_segments ?? 1, waitForCompletion });
      const failures = result.failures.map(renderFailure);
      if (result.kind === 'started') return { task: result.jobIds.join(','), ...(failures.length > 0 ? { failures } : {}) };
      const shards: Record<string, unknown> = { total: result.total, successful: result.successful, failed: result.failures.length };
      if (failures.length > 0) shards.failures = failures;
      return { _shards: shards };
    },
  );

  app.route({
    method: ['GET', 'POST'],
    url: '/_flush',
    config: { role: 'write' },
    schema: { querystring: FlushQuery, body: NoBody },
    handler: async (request) => compaction.flush(request.authScope.narrowTarget('_all'), { ignoreUnavailable: flagSet(request.query.ignore_unavailable) }),
  });
  app.route({
    method: ['GET', 'POST'],
    url: '/:collection/_flush',
    config: { role: 'write', collectionTarget: true },
    schema: { params: CollectionParams, querystring: FlushQuery, body: NoBody },
    handler: async (request) => compaction.flush(request.params.collection, { ignoreUnavailable: flagSet(request.query.ignore_unavailable) }),
  });
}
