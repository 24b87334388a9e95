/**
 * `GET /_internal/recovery/files/{uuid}/{hold}?path=...`: a file of a primary copy, held unchanged
 * for a replica's file-based recovery (src/cluster/replication/replica-recovery.ts), streamed up
 * to the length the hold listed. Only files of a live hold can be read (else 404). Callers authenticate with
 * the node credential.
 */
import { createReadStream } from 'node:fs';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { INTERNAL_RECOVERY_FILES_PATH } from '../../cluster/remote/protocol.ts';
import type { CopyRoles } from '../../cluster/replication/copy-roles.ts';
import { EngineError } from '../../engine/errors.ts';
import { CatalogError } from '../../cluster/catalog-error.ts';
import { toRemoteError } from '../../cluster/remote/protocol.ts';
import { answer, failure } from './internal-envelope.ts';

/** What the route reads held files from. */
export interface InternalRecoveryRouteOptions {
  replication: Pick<CopyRoles, 'heldFile'>;
}

/** The held-file route. */
export async function internalRecoveryRoutes(instance: FastifyInstance, options: InternalRecoveryRouteOptions): Promise<void> {
  instance.get<{ Params: { uuid: string; hold: string }; Querystring: { path?: string } }>(
    `${INTERNAL_RECOVERY_FILES_PATH}/:uuid/:hold`,
    { config: { role: 'admin' } },
    async (request, reply) => {
      request.authScope.requireUnrestricted('the internal recovery API');
      const hold = Number(request.params.hold);
      const path = request.query.path;
      if (!Number.isSafeInteger(hold) || typeof path !== 'string' || path === '') {
        return failure(reply, new EngineError('illegal_argument', 'a held file is named by an integer hold and a path'));
      }
      try {
        const { dir, bytes } = options.replication.heldFile(request.params.uuid, hold, path);
        const body = bytes === 0 ? Readable.from([]) : createReadStream(join(dir, path), { start: 0, end: bytes - 1 });
        return reply.header('content-type', 'application/octet-stream').header('content-length', bytes).send(body);
      } catch (error) {
        // As the internal shard API: a copy or file this node does not hold is 404, with the reason.
        if (error instanceof CatalogError && error.code === 'shard_unavailable') return answer(reply, 404, { ok: false, error: toRemoteError(error) });
        return failure(reply, error);
      }
    },
  );
}
