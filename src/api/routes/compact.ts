/**
 * `POST /{collection}/_compact` (no body): manual compaction. Every node hosting primaries of the
 * collection queues one batch job and answers one row; a node that fails gets a failed row with
 * an ES error object, and the request still answers 200. Progress is read at `GET /_jobs/{job_id}`.
 * `max_num_segments` (default 1) is the segment count each shard is merged down to, as in ES
 * `_forcemerge`.
 */
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { CompactionRow } from '../../node/compaction.ts';
import { classifyError, errorCause, type ErrorCause } from '../errors.ts';
import { CollectionParams, optionalBody, querySchema } from '../params.ts';
import type { CompactionService } from '../../node/compaction-service.ts';

const CompactQuery = querySchema({
  max_num_segments: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000 })),
});

/** The request takes no body; an empty object is tolerated, any field is refused. */
const NoBody = optionalBody(Type.Object({}, { additionalProperties: false }));

/** One row of the response. */
type RenderedRow =
  | { node_id: string; node_name: string; job_id: string; primary_passes: number; status: 'queued' }
  | { node_id: string; node_name: string; status: 'failed'; error: ErrorCause };

function renderRow(row: CompactionRow): RenderedRow {
  if (row.queued) {
    return { node_id: row.nodeId, node_name: row.nodeName, job_id: row.queued.jobId, primary_passes: row.queued.primaryPasses, status: 'queued' };
  }
  const { code, reason } = classifyError(row.error);
  return { node_id: row.nodeId, node_name: row.nodeName, status: 'failed', error: errorCause(code, reason) };
}

/** What the compaction route needs: the compaction service. */
export interface CompactRouteOptions {
  compaction: CompactionService;
}

/** Compaction route. */
export async function compactRoutes(instance: FastifyInstance, options: CompactRouteOptions): Promise<void> {
  const app = instance.withTypeProvider<TypeBoxTypeProvider>();
  const { compaction } = options;

  app.post(
    '/:collection/_compact',
    { config: { role: 'manage' }, schema: { params: CollectionParams, querystring: CompactQuery, body: NoBody } },
    async (request) => {
      const result = await compaction.compact(request.params.collection, { maxSegments: request.query.max_num_segments ?? 1 });
      const nodes = result.rows.map(renderRow);
      for (const row of nodes) {
        if (row.status === 'failed') request.log.warn({ collection: result.collection, node: row.node_id, reason: row.error.reason }, 'compaction failed on a node');
      }
      return { collection: result.collection, nodes };
    },
  );
}
