import assert from 'node:assert/strict';
import { test } from 'node:test';
import pino from 'pino';
import type { ChangeEntry } from '../../engine/shard/operations.ts';
import type { ShardPlacement } from '../catalog.ts';
import type { ChangeBounds, ShardHandle } from '../shard-handle.ts';
import { ReplicatedPrimary, type PrimaryContext } from './replicated-primary.ts';

const logger = pino({ level: 'silent' });
const PLACEMENT: ShardPlacement = { shard: 0, primary: 'n1', replicas: ['n2'], primaryTerm: 2, inSync: ['n1', 'n2'] };

/** A copy whose log holds seqs 1..durableSeq, all durable. */
function copyWithLog(durableSeq: number): ShardHandle {
  const copy = {
    changeBounds: async (): Promise<ChangeBounds> => ({ firstSeq: 1, durableSeq }),
    readChanges: async (afterSeq: number, limit: number): Promise<ChangeEntry[]> => {
      const entries: ChangeEntry[] = [];
      for (let seq = afterSeq + 1; seq <= Math.min(durableSeq, afterSeq + limit); seq++) {
        entries.push({ seq, timestamp: seq, id: `d${seq}`, op: 'index', version: 1 });
      }
      return entries;
    },
    readRecords: async () => [],
  };
  return copy as unknown as ShardHandle;
}

/** What a primary needs of its node: one placement, replicas answering through `call`. */
function contextWith(placement: ShardPlacement, call: PrimaryContext['peers']['call']): PrimaryContext {
  return {
    address: { collection: 'c', collectionUuid: 'u', shard: 0 },
    uuid: 's0',
    nodeId: 'n1',
    placement: () => placement,
    coordinator: {
      markInSync: async () => undefined,
      markStale: async () => undefined,
      leaseValidUntil: () => Number.POSITIVE_INFINITY,
    } as unknown as PrimaryContext['coordinator'],
    peers: { call },
    logger,
  };
}

/** A primary over `copy` whose replica on n2 answers its position when `answer` is called. */
function primaryWithReplica(copy: ShardHandle, durableSeq: number): { primary: ReplicatedPrimary; answer: (lastSeq: number) => void } {
  let answer: (lastSeq: number) => void = () => assert.fail('the replica was not asked for its position');
  const context = contextWith(PLACEMENT, (_nodeId, method) => {
    if (method === 'replica.position') return new Promise((resolve) => (answer = (lastSeq) => resolve({ lastSeq })));
    return Promise.resolve({ lastSeq: durableSeq });
  });
  return { primary: new ReplicatedPrimary(copy, context, durableSeq), answer: (lastSeq) => answer(lastSeq) };
}

test('a new primary does not end its change feed below what its in-sync replica holds before it knows the replica position', async () => {
  const { primary, answer } = primaryWithReplica(copyWithLog(10), 10);
  let answered: ChangeBounds | null = null;
  const bounds = primary.changeBounds().then((value) => (answered = value));
  await new Promise((resolve) => setTimeout(resolve, 20));
  // A reader that saw seq 8 under the previous primary would find its cursor past a log ending at 0.
  assert.equal(answered, null, `answered ${JSON.stringify(answered)} before the replica's position was known`);
  answer(8);
  assert.deepEqual(await bounds, { firstSeq: 1, durableSeq: 8 });
  assert.deepEqual((await primary.readChanges(6, 10)).map((entry) => entry.seq), [7, 8]);
  primary.stop(new Error('test over'));
});

test('a primary that stopped keeps its change feed at the checkpoint it reached', async () => {
  const { primary, answer } = primaryWithReplica(copyWithLog(10), 10);
  const first = primary.changeBounds();
  await new Promise((resolve) => setTimeout(resolve, 0));
  answer(8);
  assert.equal((await first).durableSeq, 8);
  primary.stop(new Error('deposed'));
  assert.equal((await primary.changeBounds()).durableSeq, 8);
  assert.deepEqual((await primary.readChanges(6, 10)).map((entry) => entry.seq), [7, 8]);
  assert.equal((await primary.waitForChanges(8, 50)).durableSeq, 8);
});

test('a primary stopped before it knew its replica position refuses to say where its change feed ends', async () => {
  const { primary } = primaryWithReplica(copyWithLog(10), 10);
  const bounds = primary.changeBounds();
  primary.stop(new Error('deposed'));
  await assert.rejects(bounds, (error: Error & { code?: string }) => error.code === 'shard_unavailable');
});

test('a primary without replicas ends its change feed at its own durable seq', async () => {
  const copy = copyWithLog(10);
  const primary = new ReplicatedPrimary(copy, contextWith({ ...PLACEMENT, replicas: [], inSync: ['n1'] }, () => assert.fail('no replica to call')), 10);
  assert.equal((await primary.changeBounds()).durableSeq, 10);
  primary.stop(new Error('deposed'));
  assert.equal((await primary.changeBounds()).durableSeq, 10);
});

test('a long poll on a new primary wakes once the replica position is known, and before that reports nothing new', async () => {
  const { primary, answer } = primaryWithReplica(copyWithLog(10), 10);
  assert.equal((await primary.waitForChanges(8, 30)).durableSeq, 8);
  const woken = primary.waitForChanges(5, 10_000);
  await new Promise((resolve) => setTimeout(resolve, 0));
  answer(8);
  assert.equal((await woken).durableSeq, 8);
  primary.stop(new Error('test over'));
});
