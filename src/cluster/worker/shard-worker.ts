/**
 * Entry of a shard worker thread: hosts shard copies by uuid through `LocalShardHandle` and
 * answers the requests of its `WorkerShardHost` (messages in protocol.ts).
 *
 * Fault point (tests only): with `worker.exit_after_writes:<n>` in `TROVE_FAULTS`, the first
 * worker of a slot calls `process.exit(1)` (ending only this thread) when its n-th write,
 * writeBatch or writePrepared request arrives, before applying it.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { EngineError } from '../../engine/errors.ts';
import { heapReleaseStats } from '../../engine/memory/heap-release.ts';
import type { ShardHit, ShardSearchRequest } from '../../engine/query/search-request.ts';
import { LocalShardHandle } from '../local-shard-handle.ts';
import type { ReaderUse } from '../shard-handle.ts';
import type { WriteBatchRequest } from '../write-batch.ts';
import type { CallRequest, ReplyMessage, ShardWorkerData, ToWorkerMessage } from './protocol.ts';
import { decodeOps, encodeBatchResults, packRecords, toWireError, unpackRecords } from './wire.ts';
import { createPortLogger } from './worker-logging.ts';

const EXIT_AFTER_WRITES_FAULT = 'worker.exit_after_writes';

interface HostedShard {
  handle: LocalShardHandle;
  /** Added to the handle's context numbers, so that a restarted shard never reuses one. */
  contextBase: number;
}

if (!parentPort) throw new Error('shard-worker.ts runs only as a worker thread');
const port = parentPort;
const data = workerData as ShardWorkerData;
const logger = createPortLogger(port, data.logLevel);
const shards = new Map<string, Promise<HostedShard>>();
const waits = new Map<number, AbortController>();
const exitAfterWrites = data.honourFaults ? parseExitAfterWrites(process.env.TROVE_FAULTS) : null;
let writesReceived = 0;

port.on('message', (message: ToWorkerMessage) => {
  if (message.type === 'cancel') {
    waits.get(message.id)?.abort();
    return;
  }
  if (message.type === 'call' && (message.method === 'write' || message.method === 'writeBatch' || message.method === 'writePrepared')) {
    writesReceived++;
    if (writesReceived === exitAfterWrites) process.exit(1);
  }
  answer(message).then(
    (value) => reply({ type: 'reply', id: message.id, ok: true, value }),
    (error: unknown) => reply({ type: 'reply', id: message.id, ok: false, error: toWireError(error) }),
  );
});

/**
 * Posts a reply; a value that cannot be cloned fails its request instead of the thread. A
 * Uint8Array value (packed replication records) owns its ArrayBuffer, which is transferred.
 */
function reply(message: ReplyMessage): void {
  try {
    port.postMessage(message, message.ok && message.value instanceof Uint8Array ? [message.value.buffer as ArrayBuffer] : []);
  } catch (error) {
    port.postMessage({ type: 'reply', id: message.id, ok: false, error: toWireError(error) } satisfies ReplyMessage);
  }
}

async function answer(message: Exclude<ToWorkerMessage, { type: 'cancel' }>): Promise<unknown> {
  switch (message.type) {
    case 'open': {
      const { spec, contextBase } = message;
      if (shards.has(spec.uuid)) throw new EngineError('illegal_argument', `shard [${spec.uuid}] is already open`);
      const opening = LocalShardHandle.open(spec, logger).then((handle) => ({ handle, contextBase }));
      shards.set(spec.uuid, opening);
      opening.catch(() => shards.delete(spec.uuid));
      await opening;
      return null;
    }
    case 'call':
      return call(await hosted(message.uuid), message);
    case 'wait': {
      const controller = new AbortController();
      waits.set(message.id, controller);
      try {
        const { handle } = await hosted(message.uuid);
        return await handle.waitForChanges(message.afterSeq, message.timeoutMs, controller.signal);
      } finally {
        waits.delete(message.id);
      }
    }
    case 'close': {
      const shard = hosted(message.uuid);
      shards.delete(message.uuid);
      return (await shard).handle.close();
    }
    case 'thread_stats':
      return heapReleaseStats();
  }
}

async function call({ handle, contextBase }: HostedShard, { uuid, method, args }: CallRequest): Promise<unknown> {
  switch (method) {
    case 'writeBatch':
      return encodeBatchResults(await handle.writeBatch(decodeOps(args[0] as Uint8Array)));
    case 'query': {
      const phase = await handle.query(args[0] as ShardSearchRequest, args[1] as ReaderUse | undefined);
      return { ...phase, context: phase.context + contextBase };
    }
    case 'prepareBatch': {
      const prepared = await handle.prepareBatch(args[0] as WriteBatchRequest);
      return { ...prepared, batch: prepared.batch + contextBase };
    }
    case 'writePrepared': {
      const batch = args[0] as number;
      if (batch <= contextBase) {
        throw new EngineError('shard_worker_failed', `prepared batch [${batch}] of shard [${uuid}] is gone (its worker thread restarted)`);
      }
      return encodeBatchResults(await handle.writePrepared(batch - contextBase, args[1] as number[]));
    }
    case 'fetch': {
      const context = args[0] as number;
      if (context <= contextBase) {
        throw new EngineError('illegal_argument', `search context [${context}] of shard [${uuid}] is gone (its worker thread restarted)`);
      }
      return handle.fetch(context - contextBase, args[1] as ShardHit[]);
    }
    case 'freeContext': {
      const context = args[0] as number;
      return context > contextBase ? handle.freeContext(context - contextBase) : undefined;
    }
    case 'readRecords':
      return packRecords(await handle.readRecords(args[0] as number, args[1] as number, args[2] as number));
    case 'applyRecords':
      return handle.applyRecords(unpackRecords(args[0] as Uint8Array));
    case 'holdFiles': {
      const held = await handle.holdFiles();
      return { ...held, hold: held.hold + contextBase };
    }
    case 'releaseFiles': {
      const hold = args[0] as number;
      return hold > contextBase ? handle.releaseFiles(hold - contextBase) : undefined;
    }
    default:
      return (handle[method] as (...values: unknown[]) => Promise<unknown>).apply(handle, args);
  }
}

/** The shard, once its open (possibly still running) has finished. */
function hosted(uuid: string): Promise<HostedShard> {
  const shard = shards.get(uuid);
  if (!shard) throw new EngineError('shard_closed', `shard [${uuid}] is not open in this worker thread`);
  return shard;
}

function parseExitAfterWrites(faults: string | undefined): number | null {
  for (const entry of (faults ?? '').split(',')) {
    const [point, argument] = entry.trim().split(':');
    if (point === EXIT_AFTER_WRITES_FAULT && Number(argument) > 0) return Number(argument);
  }
  return null;
}
