/**
 * What the internal APIs between nodes (internal-shards.ts, internal-node.ts) share: bodies parsed
 * by a plain `JSON.parse` (the callers are nodes of the cluster; the nesting and `__proto__`
 * checks of user bodies were made where a request entered the cluster), answers sent as envelopes
 * (src/cluster/remote/protocol.ts) with the status the error table gives an error's code, and the
 * bounded wait until this node has applied the catalog revision the caller routed with.
 */
import type { FastifyBaseLogger, FastifyInstance, FastifyReply } from 'fastify';
import { toRemoteError, type RemoteEnvelope } from '../../cluster/remote/protocol.ts';
import { TroveError } from '../../engine/errors.ts';
import { ApiError, renderError } from '../errors.ts';

/** Longest wait for the caller's catalog revision before a call goes ahead without it. */
export const REVISION_WAIT_MS = 5_000;

/** Sends an envelope as JSON text (so that no response hook reshapes it). */
export function answer(reply: FastifyReply, status: number, envelope: RemoteEnvelope): FastifyReply {
  return reply.status(status).type('application/json; charset=utf-8').send(JSON.stringify(envelope));
}

/** An error as a status and envelope; one without a code is a defect of this node, logged with its stack. */
export function failureAnswer(error: unknown, log: FastifyBaseLogger): { status: number; body: RemoteEnvelope } {
  if (!(error instanceof TroveError)) log.error({ err: error }, 'internal call failed');
  return { status: renderError(error).status, body: { ok: false, error: toRemoteError(error) } };
}

/** Sends an error as an envelope (see `failureAnswer`). */
export function failure(reply: FastifyReply, error: unknown): FastifyReply {
  const { status, body } = failureAnswer(error, reply.log);
  return answer(reply, status, body);
}

/** Replaces the instance's body parsers with a plain JSON one (see the module comment). */
export function installInternalJsonParser(instance: FastifyInstance): void {
  instance.removeAllContentTypeParsers();
  instance.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) => {
    try {
      done(null, JSON.parse(body as string));
    } catch (error) {
      done(new ApiError('invalid_json', `Failed to parse request body: ${(error as Error).message}`));
    }
  });
}

/** Waits until `waitForRevision(revision)` resolves, at most `REVISION_WAIT_MS`; a missing or non-numeric revision does not wait. */
export async function awaitCallerRevision(waitForRevision: ((revision: number) => Promise<void>) | undefined, revision: unknown): Promise<void> {
  if (waitForRevision === undefined || typeof revision !== 'number') return;
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<void>((resolve) => (timer = setTimeout(resolve, REVISION_WAIT_MS)));
  await Promise.race([waitForRevision(revision).catch(() => undefined), late]);
  clearTimeout(timer);
}
