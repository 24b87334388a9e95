/**
 * `POST /_internal/node/{method}`: the internal node API other nodes call through their peer
 * handles (src/cluster/remote/peer-nodes.ts): this node's trash (`trash.*`, the `NodeTrash`
 * methods), its compaction of a collection's primaries (`compact`) and its jobs (`jobs.*`), and its own node views
 * (`node.info`, `node.stats`, `node.settings`, `node.putSettings`), and replication between copies
 * (`replica.apply`, `replica.position`, `primary.track`). Bodies, envelopes, statuses and
 * the caller's catalog revision work as in the internal shard API (internal-envelope.ts).
 *
 * Callers authenticate with the node credential, which acts as an unrestricted `admin`.
 */
import type { FastifyInstance } from 'fastify';
import { REMOTE_NODE_METHODS, INTERNAL_NODE_PATH, type RemoteNodeMethod } from '../../cluster/remote/protocol.ts';
import type { CollectionMeta } from '../../cluster/catalog.ts';
import { EngineError } from '../../engine/errors.ts';
import type { CompactionNode, CompactOptions } from '../../node/compaction.ts';
import type { InternalNodeServices } from '../../node/internal-node-services.ts';
import type { NodeViews } from '../../node/node-views.ts';
import type { TrashIntent } from '../../trash/trash-store.ts';
import { recordsFromWire } from '../../cluster/replication/replication-wire.ts';
import { answer, awaitCallerRevision, failure, installInternalJsonParser } from './internal-envelope.ts';

/** What the internal node route serves: this node's trash, compaction and views. */
export type InternalNodeRouteOptions = InternalNodeServices;

type Dispatch = (options: InternalNodeRouteOptions, args: unknown[], views: NodeViews) => Promise<unknown>;

/** One entry per method; arguments are trusted to have the interfaces' types (callers are nodes). */
const DISPATCH: Readonly<Record<RemoteNodeMethod, Dispatch>> = {
  'trash.list': ({ trash }) => trash.list(),
  'trash.prepareDelete': ({ trash }, [intent]) => trash.prepareDelete(intent as TrashIntent),
  'trash.abortDelete': ({ trash }, [itemId]) => trash.abortDelete(itemId as string),
  'trash.finishDelete': ({ trash }, [itemId, revision]) => trash.finishDelete(itemId as string, revision as number),
  'trash.verify': ({ trash }, [itemId]) => trash.verify(itemId as string),
  'trash.prepareRestore': ({ trash }, [itemId]) => trash.prepareRestore(itemId as string),
  'trash.abortRestore': ({ trash }, [itemId]) => trash.abortRestore(itemId as string),
  'trash.finishRestore': ({ trash }, [itemId]) => trash.finishRestore(itemId as string),
  'trash.purge': ({ trash }, [itemId]) => trash.purge(itemId as string),
  compact: ({ compaction }, [collection, options]) => compaction().compact(collection as CollectionMeta, options as CompactOptions),
  'jobs.get': async ({ jobs }, [id]) => jobs.get(id as string),
  'jobs.list': async ({ jobs }) => jobs.list(),
  'node.info': (_options, _args, views) => views.info(),
  'node.stats': (_options, _args, views) => views.stats(),
  'node.settings': (_options, _args, views) => views.settings(),
  'node.putSettings': (_options, [changes], views) => views.putSettings((changes ?? {}) as Record<string, unknown>),
  'node.shardStates': async ({ shardStates }) => shardStates(),
  'node.recoveries': async ({ replication }) => replication.recoveries(),
  'replica.apply': ({ replication }, [uuid, term, records]) => replication.replicaApply(uuid as string, term as number, recordsFromWire(records)),
  'replica.position': ({ replication }, [uuid, term]) => replication.replicaPosition(uuid as string, term as number),
  'primary.track': async ({ replication }, [uuid, nodeId, seq, term]) => {
    await replication.primaryTrack(uuid as string, nodeId as string, seq as number, term as number);
    return null;
  },
};

/** The internal node route. */
export async function internalNodeRoutes(instance: FastifyInstance, options: InternalNodeRouteOptions): Promise<void> {
  installInternalJsonParser(instance);
  const views = options.views(() => instance.security?.counters.snapshot() ?? null);
  const methods: ReadonlySet<string> = new Set(REMOTE_NODE_METHODS);

  instance.post<{ Params: { method: string }; Body: unknown }>(`${INTERNAL_NODE_PATH}/:method`, { config: { role: 'admin' } }, async (request, reply) => {
    request.authScope.requireUnrestricted('the internal node API');
    const { method } = request.params;
    const body = request.body as { args?: unknown; revision?: unknown } | null | undefined;
    const args = body?.args;
    if (!methods.has(method)) return failure(reply, new EngineError('illegal_argument', `[${method}] is not a method of the internal node API`));
    if (!Array.isArray(args)) return failure(reply, new EngineError('illegal_argument', 'the body must be {"args": [...]}'));
    // Node views answer at once, even on a node cut off from the catalog; the rest act on catalog state.
    if (!method.startsWith('node.')) await awaitCallerRevision(options.waitForRevision, body?.revision);
    try {
      return answer(reply, 200, { ok: true, value: await DISPATCH[method as RemoteNodeMethod](options, args, views) });
    } catch (error) {
      return failure(reply, error);
    }
  });
}
