import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, rename, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { pino, type Logger } from 'pino';
import { EngineError } from '../../engine/errors.ts';
import type { Mapping } from '../../engine/mapping/mapping.ts';
import type { IndexOp, WriteResult } from '../../engine/shard/operations.ts';
import { DEFAULT_ENGINE_SETTINGS } from '../../engine/shard/settings.ts';
import { LocalShardHandle } from '../local-shard-handle.ts';
import type { ShardHandle, ShardOpenSpec } from '../shard-handle.ts';
import { WorkerShardHost } from './worker-shard-host.ts';
import { assertSameAnswers, exerciseReplication, exerciseShardHandle } from '../shard-handle-parity.fixture.ts';

const MAPPING: Mapping = { properties: { title: { type: 'text' }, n: { type: 'long' } } };
const FIXTURE = fileURLToPath(new URL('./worker-start.fixture.ts', import.meta.url));

async function withTempDir(body: (root: string) => Promise<void>): Promise<void> {
  const root = await mkdtemp(path.join(os.tmpdir(), 'trove-worker-'));
  try {
    await body(root);
  } finally {
    await rm(root, { recursive: true, force: true });
  }
}

function spec(root: string, uuid: string, dirName = uuid): ShardOpenSpec {
  const bindings = { collection: 'docs', shard: uuid };
  return { dir: path.join(root, dirName), uuid, mapping: MAPPING, settings: DEFAULT_ENGINE_SETTINGS, bindings };
}

function capturingLogger(): { logger: Logger; lines: Array<Record<string, unknown>> } {
  const lines: Array<Record<string, unknown>> = [];
  const logger = pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) });
  return { logger, lines };
}

/** Polls `condition` every 20 ms; fails after `timeoutMs`. */
async function until(condition: () => boolean | Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) assert.fail(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

test('every handle method answers through a 2-worker pool as a LocalShardHandle does', async () => {
  await withTempDir(async (root) => {
    const logger = pino({ level: 'silent' });
    const host = new WorkerShardHost({ workers: 2, logger });
    assert.equal(host.description, 'workers:2');
    try {
      // Two shards, one per worker, each compared with the same shard run in this thread.
      const remote = await Promise.all(['s0', 's1'].map((uuid) => host.open(spec(root, uuid, `${uuid}-worker`))));
      const local = await Promise.all(['s0', 's1'].map((uuid) => LocalShardHandle.open(spec(root, uuid, `${uuid}-local`), logger)));
      const [remoteAnswers, localAnswers] = await Promise.all([
        Promise.all(remote.map((handle) => exerciseShardHandle(handle))),
        Promise.all(local.map((handle) => exerciseShardHandle(handle))),
      ]);
      remoteAnswers.forEach((answers, index) => assertSameAnswers(answers, localAnswers[index]!, `shard s${index}`));
      const batch = remoteAnswers[0]!.find(([name]) => name === 'writeBatch')![1] as Array<Record<string, unknown>>;
      assert.deepEqual(batch[0], { error: 'EngineError', code: 'version_conflict', message: batch[0]!.message });
      await assert.rejects(remote[0]!.get('a'), (error: unknown) => error instanceof EngineError && error.code === 'shard_closed');
    } finally {
      await host.close();
    }
  });
});

test('replication calls answer through worker threads as through LocalShardHandles', async () => {
  await withTempDir(async (root) => {
    const logger = pino({ level: 'silent' });
    const host = new WorkerShardHost({ workers: 2, logger });
    try {
      const [primary, replica] = await Promise.all(['rp', 'rr'].map((uuid) => host.open(spec(root, uuid, `${uuid}-worker`))));
      const [localPrimary, localReplica] = await Promise.all(['rp', 'rr'].map((uuid) => LocalShardHandle.open(spec(root, uuid, `${uuid}-local`), logger)));
      const [workerAnswers, localAnswers] = await Promise.all([exerciseReplication(primary!, replica!), exerciseReplication(localPrimary!, localReplica!)]);
      assertSameAnswers(workerAnswers, localAnswers, 'worker vs local');
      await Promise.all([localPrimary!.close(), localReplica!.close()]);
    } finally {
      await host.close();
    }
  });
});

test('a restarted worker reopens its shard with the primary term set last; holds from before the restart are gone', async () => {
  await withTempDir(async (root) => {
    const host = new WorkerShardHost({ workers: 1, logger: pino({ level: 'silent' }) });
    try {
      const shard = await host.open({ ...spec(root, 'term'), primaryTerm: 2 });
      assert.equal((await shard.write({ kind: 'index', id: 'a', source: { title: 'two' } })).primaryTerm, 2);
      await shard.setPrimaryTerm(5);
      await assert.rejects(shard.setPrimaryTerm(4), (error: unknown) => error instanceof EngineError && error.code === 'illegal_argument');
      const held = await shard.holdFiles();
      await host.terminateWorkerOf('term');
      assert.equal((await shard.write({ kind: 'index', id: 'b', source: { title: 'five' } })).primaryTerm, 5);
      assert.deepEqual(await shard.historyPosition(), { firstSeq: 1, lastSeq: 2, lastTerm: 5 });
      await shard.releaseFiles(held.hold);
      const again = await shard.holdFiles();
      assert.ok(again.hold > held.hold, 'hold numbers are not reused after a restart');
      await shard.releaseFiles(again.hold);
      await shard.epoch();
    } finally {
      await host.close();
    }
  });
});

test('a restarted worker reopens its shards with their latest mapping and settings; old search contexts are gone', async () => {
  await withTempDir(async (root) => {
    const { logger, lines } = capturingLogger();
    const host = new WorkerShardHost({ workers: 2, logger });
    try {
      const shard = await host.open(spec(root, 'reopen'));
      await shard.writeBatch([1, 2, 3].map((n) => ({ kind: 'index', id: `d${n}`, source: { title: 'before', n } })));
      const stale = await shard.query({ from: 0, size: 10 });
      await shard.setMapping({ properties: { ...MAPPING.properties, tag: { type: 'keyword' } } });
      await shard.updateSettings({ epochMaxDocs: 3 });
      await shard.write({ kind: 'index', id: 'red', source: { title: 'tagged', tag: 'red' } });
      await host.terminateWorkerOf('reopen');
      await assert.rejects(
        shard.fetch(stale.context, stale.result.hits),
        (error: unknown) => error instanceof EngineError && error.code === 'illegal_argument' && /gone/.test(error.message),
      );
      await shard.freeContext(stale.context);
      assert.equal(await shard.count({ term: { tag: 'red' } }), 1, 'the WAL replays with the mapping set before the failure');
      const fresh = await shard.query({ from: 0, size: 10 });
      assert.ok(fresh.context > stale.context, 'context numbers are not reused after a restart');
      assert.equal((await shard.fetch(fresh.context, fresh.result.hits)).length, 4);
      const epochsBefore = (await shard.stats()).epochs;
      await shard.writeBatch([4, 5, 6].map((n) => ({ kind: 'index', id: `e${n}`, source: { title: 'after', n } })));
      await until(async () => (await shard.stats()).epochs > epochsBefore, 5_000, 'an epoch under the updated epochMaxDocs');
      assert.ok(lines.some((line) => line.msg === 'replayed WAL' && line.collection === 'docs'), 'the worker logs reach the host logger');
      assert.ok(lines.some((line) => line.msg === 'reopened a shard in a new worker thread'));
    } finally {
      await host.close();
    }
  });
});

interface Acknowledged {
  source: Record<string, unknown>;
  version: number;
  seqNo: number;
}

/** What a write load saw: acknowledged writes, and failed ones with when they started. */
class LoadRecord {
  readonly acknowledged = new Map<string, Acknowledged>();
  /** Ids whose last write failed after an earlier acknowledged one: either content may be stored. */
  readonly uncertain = new Map<string, Record<string, unknown>>();
  readonly failures: Array<{ error: unknown; startedAt: number }> = [];
}

/** Writes new ids (single writes and batches of 3) and overwrites of earlier ones until `stop`. */
async function writeLoad(handle: ShardHandle, prefix: string, record: LoadRecord, stop: () => boolean): Promise<void> {
  const mine: string[] = [];
  for (let round = 0; round < 5_000 && !stop(); round++) {
    const overwrite = round % 5 === 4 && mine.length > 0;
    const ids = overwrite ? [mine[round % mine.length]!] : Array.from({ length: round % 4 === 3 ? 3 : 1 }, (_, k) => `${prefix}-${round}-${k}`);
    const ops: IndexOp[] = ids.map((id) => ({ kind: 'index', id, source: { title: `round ${round} of ${prefix}`, n: round } }));
    const startedAt = performance.now();
    try {
      const results = ops.length === 1 && round % 2 === 0 ? [await handle.write(ops[0]!)] : await handle.writeBatch(ops);
      for (const [k, result] of results.entries()) {
        if (result instanceof Error) throw result;
        const { version, seqNo } = result as WriteResult;
        record.acknowledged.set(ops[k]!.id, { source: ops[k]!.source, version, seqNo });
        record.uncertain.delete(ops[k]!.id);
        if (!overwrite) mine.push(ops[k]!.id);
      }
    } catch (error) {
      record.failures.push({ error, startedAt });
      for (const op of ops) if (record.acknowledged.has(op.id)) record.uncertain.set(op.id, op.source);
    }
  }
}

async function verifyLoad(handle: ShardHandle, record: LoadRecord, label: string): Promise<void> {
  const ids = [...record.acknowledged.keys()];
  for (let start = 0; start < ids.length; start += 200) {
    const chunk = ids.slice(start, start + 200);
    const stored = await handle.multiGet(chunk);
    for (const [k, id] of chunk.entries()) {
      const document = stored[k];
      const expected = record.acknowledged.get(id)!;
      assert.ok(document, `${label}: acknowledged ${id} is missing`);
      const attempted = record.uncertain.get(id);
      if (attempted && document.seqNo !== expected.seqNo) {
        assert.deepEqual(document.source, attempted, `${label}: ${id} holds neither its acknowledged nor its attempted content`);
      } else {
        assert.deepEqual({ source: document.source, version: document.version, seqNo: document.seqNo }, expected, `${label}: ${id}`);
      }
    }
  }
}

test('a worker terminated under write load fails only its in-flight writes and loses no acknowledged write', async () => {
  await withTempDir(async (root) => {
    const { logger, lines } = capturingLogger();
    const specs = [spec(root, 'crashing'), spec(root, 'steady')];
    const host = new WorkerShardHost({ workers: 2, logger });
    const records = [new LoadRecord(), new LoadRecord()];
    let terminatedAt = Number.POSITIVE_INFINITY;
    try {
      const [crashing, steady] = await Promise.all(specs.map((shardSpec) => host.open(shardSpec)));
      let stop = false;
      const load = [crashing!, steady!].flatMap((handle, index) =>
        [0, 1, 2].map((writer) => writeLoad(handle, `${index}w${writer}`, records[index]!, () => stop)),
      );
      try {
        await until(() => records.every((record) => record.acknowledged.size >= 40), 10_000, 'writes before the crash');
        const acknowledgedBefore = records[0]!.acknowledged.size;
        await host.terminateWorkerOf('crashing');
        terminatedAt = performance.now();
        await until(() => records[0]!.acknowledged.size >= acknowledgedBefore + 40, 15_000, 'writes after the reopen');
      } finally {
        stop = true;
        await Promise.all(load);
      }
      assert.deepEqual(records[1]!.failures, [], 'the other worker is unaffected');
      assert.ok(records[0]!.failures.length > 0, 'the writes in flight on the terminated worker fail');
      for (const { error, startedAt } of records[0]!.failures) {
        assert.ok(error instanceof EngineError && error.code === 'shard_worker_failed', `unexpected failure: ${String(error)}`);
        const expected = /^the worker thread running shard \[crashing\] failed \(terminated by terminateWorkerOf.*\); the shard is reopening from its write-ahead log$/;
        assert.match(error.message, expected);
        assert.ok(startedAt < terminatedAt, 'a write sent after the worker ended waits for the reopen');
      }
      await verifyLoad(crashing!, records[0]!, 'after the reopen');
      await verifyLoad(steady!, records[1]!, 'steady shard');
      assert.ok(lines.some((line) => line.msg === 'replayed WAL' && line.shard === 'crashing'), 'the reopen replayed the WAL');
    } finally {
      await host.close();
    }
    const fresh = new WorkerShardHost({ workers: 2, logger: pino({ level: 'silent' }) });
    try {
      const reopened = await Promise.all(specs.map((shardSpec) => fresh.open(shardSpec)));
      await verifyLoad(reopened[0]!, records[0]!, 'after closing and reopening');
      await verifyLoad(reopened[1]!, records[1]!, 'steady shard after closing and reopening');
    } finally {
      await fresh.close();
    }
  });
});

test('worker.exit_after_writes ends the first worker once, at its n-th write; restarts are bounded', async () => {
  await withTempDir(async (root) => {
    const previous = process.env.TROVE_FAULTS;
    process.env.TROVE_FAULTS = 'worker.exit_after_writes:3';
    const host = new WorkerShardHost({ workers: 1, logger: pino({ level: 'silent' }) });
    try {
      const shard = await host.open(spec(root, 'faulty'));
      const outcomes: string[] = [];
      for (let n = 1; n <= 6; n++) {
        try {
          outcomes.push((await shard.write({ kind: 'index', id: `d${n}`, source: { n } })).result);
        } catch (error) {
          assert.ok(error instanceof EngineError);
          assert.match(error.message, /failed \(exited with code 1\); the shard is reopening/);
          outcomes.push(error.code);
        }
      }
      assert.deepEqual(outcomes, ['created', 'created', 'shard_worker_failed', 'created', 'created', 'created']);
      assert.equal(await shard.get('d3'), null, 'the worker exited before applying the write');
      // Four more failures reach the limit of five restarts a minute; the sixth leaves the shard failed.
      for (let restart = 2; restart <= 5; restart++) {
        await host.terminateWorkerOf('faulty');
        assert.equal(await shard.exists('d1'), true);
      }
      await host.terminateWorkerOf('faulty');
      await assert.rejects(
        shard.get('d1'),
        (error: unknown) => error instanceof EngineError && error.code === 'shard_worker_failed' && /not restarted again/.test(error.message),
      );
      await assert.rejects(host.open(spec(root, 'other')), (error: unknown) => error instanceof EngineError && error.code === 'shard_worker_failed');
    } finally {
      if (previous === undefined) delete process.env.TROVE_FAULTS;
      else process.env.TROVE_FAULTS = previous;
      await host.close();
    }
  });
});

test('requests waiting for a reopen that fails fail with shard_worker_failed', async () => {
  await withTempDir(async (root) => {
    const host = new WorkerShardHost({ workers: 2, logger: pino({ level: 'silent' }) });
    try {
      const shardSpec = spec(root, 'unopenable');
      const shard = await host.open(shardSpec);
      await shard.write({ kind: 'index', id: 'a', source: { n: 1 } });
      // The running shard keeps its open files; the reopen finds a file where its directory was.
      await rename(shardSpec.dir, `${shardSpec.dir}-moved`);
      await writeFile(shardSpec.dir, 'not a directory');
      await host.terminateWorkerOf('unopenable');
      const waiting = [shard.get('a'), shard.write({ kind: 'index', id: 'b', source: { n: 2 } }), shard.count({ match_all: {} })];
      for (const request of waiting) {
        await assert.rejects(
          request,
          (error: unknown) =>
            error instanceof EngineError &&
            error.code === 'shard_worker_failed' &&
            /^shard \[unopenable\] could not be reopened after its worker thread failed: /.test(error.message),
        );
      }
      await assert.rejects(shard.close(), (error: unknown) => error instanceof EngineError && error.code === 'shard_worker_failed');
      await assert.rejects(shard.get('a'), (error: unknown) => error instanceof EngineError && error.code === 'shard_closed');
      const reopened = await host.open({ ...shardSpec, dir: `${shardSpec.dir}-moved` });
      assert.equal((await reopened.get('a'))?.source.n, 1);
    } finally {
      await host.close();
    }
  });
});

test('the worker entry starts under node --import tsx and under the tsx CLI', async () => {
  const run = promisify(execFile);
  const tsxCli = fileURLToPath(new URL('../../../node_modules/.bin/tsx', import.meta.url));
  for (const [command, args] of [
    [process.execPath, ['--import', 'tsx', FIXTURE]],
    [tsxCli, [FIXTURE]],
  ] as const) {
    const { stdout } = await run(command, [...args], { timeout: 20_000 });
    assert.equal(stdout, 'started\n', `${path.basename(command)} ${args.join(' ')}`);
  }
});
