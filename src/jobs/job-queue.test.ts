import { after, beforeEach, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { EngineError } from '../engine/errors.ts';
import type { MergeReport } from '../engine/shard/maintenance.ts';
import { JobError } from './job-error.ts';
import { JobQueue, type PassTask } from './job-queue.ts';
import { jobTotals, type Job } from './job.ts';

const logger = pino({ level: 'silent' });
const roots: string[] = [];
let dir: string;

beforeEach(async () => {
  const root = await mkdtemp(join(tmpdir(), 'trove-jobs-'));
  roots.push(root);
  dir = join(root, 'jobs');
});

after(async () => {
  for (const root of roots) await rm(root, { recursive: true, force: true });
});

function report(segmentsBefore: number, deletedPurged = 0): MergeReport {
  return { segmentsBefore, segmentsAfter: 1, bytesBefore: segmentsBefore * 100, bytesAfter: 90, deletedPurged };
}

/** A pass whose completion the test controls. */
function gatedPass(shard: number, shardUuid: string): PassTask & { started: Promise<void>; finish: (result: MergeReport | Error) => void } {
  let markStarted!: () => void;
  let settle!: (result: MergeReport | Error) => void;
  const started = new Promise<void>((resolve) => (markStarted = resolve));
  const outcome = new Promise<MergeReport | Error>((resolve) => (settle = resolve));
  return {
    shard,
    shardUuid,
    started,
    finish: settle,
    run: async () => {
      markStarted();
      const result = await outcome;
      if (result instanceof Error) throw result;
      return result;
    },
  };
}

function immediatePass(shard: number, shardUuid: string, result: MergeReport | Error): PassTask {
  return {
    shard,
    shardUuid,
    run: async () => {
      if (result instanceof Error) throw result;
      return result;
    },
  };
}

async function until(queue: JobQueue, id: string, predicate: (job: Job) => boolean): Promise<Job> {
  for (let attempt = 0; attempt < 500; attempt++) {
    const job = queue.get(id);
    if (predicate(job)) return job;
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
  throw new Error(`job ${id} never reached the expected state: ${JSON.stringify(queue.get(id))}`);
}

async function recordOnDisk(id: string): Promise<Job> {
  const sequence = id.slice(id.lastIndexOf(':') + 1);
  return (JSON.parse(await readFile(join(dir, `${sequence}.json`), 'utf8')) as { job: Job }).job;
}

function submit(queue: JobQueue, passes: PassTask[]): Promise<Job> {
  return queue.submit({ type: 'compaction', collection: 'mail', collectionUuid: 'c-uuid', maxSegments: 1, passes });
}

test('a job runs its passes, sums their figures and is recorded on disk at every step', async () => {
  const queue = await JobQueue.open({ dir, nodeId: 'node-a', logger });
  const submitted = await submit(queue, [immediatePass(0, 's0', report(5, 7)), immediatePass(1, 's1', report(3, 2))]);
  assert.equal(submitted.id, 'node-a:1');
  assert.equal(submitted.state, 'queued');
  const done = await until(queue, submitted.id, (job) => job.state === 'done');
  assert.deepEqual(jobTotals(done), {
    passesTotal: 2,
    passesDone: 2,
    passesFailed: 0,
    segmentsBefore: 8,
    segmentsAfter: 2,
    bytesBefore: 800,
    bytesAfter: 180,
    deletedPurged: 9,
  });
  assert.ok(done.startedAt !== null && done.finishedAt !== null && done.finishedAt >= done.startedAt);
  assert.deepEqual(queue.stats().jobs, { queued: 0, running: 0, done: 1, failed: 0 });
  assert.equal(queue.stats().deletedPurged, 9);
  await queue.close();
  assert.deepEqual(await recordOnDisk(done.id), done);
});

test('one pass per shard at a time: a second job on a busy shard waits queued, other shards run', async () => {
  const queue = await JobQueue.open({ dir, nodeId: 'node-a', logger });
  const first = gatedPass(0, 'shared');
  const second = gatedPass(0, 'shared');
  const other = gatedPass(0, 'other');
  const job1 = await submit(queue, [first]);
  await first.started;
  const job2 = await submit(queue, [second]);
  const job3 = await submit(queue, [other]);
  await other.started;
  assert.equal(queue.get(job1.id).state, 'running');
  assert.equal(queue.get(job2.id).state, 'queued');
  assert.equal(queue.get(job3.id).state, 'running');
  first.finish(report(4));
  await second.started;
  const finishedFirst = await until(queue, job1.id, (job) => job.state === 'done');
  const runningSecond = queue.get(job2.id);
  assert.equal(runningSecond.state, 'running');
  assert.ok(runningSecond.passes[0]!.startedAt! >= finishedFirst.passes[0]!.finishedAt!);
  second.finish(report(1));
  other.finish(report(2));
  await until(queue, job2.id, (job) => job.state === 'done');
  await until(queue, job3.id, (job) => job.state === 'done');
  await queue.close();
});

test('a failed pass fails its job with the error, and the other passes still run', async () => {
  const queue = await JobQueue.open({ dir, nodeId: 'node-a', logger });
  const failure = new EngineError('fault_injected', 'injected failure on s1');
  const job = await submit(queue, [immediatePass(0, 's0', report(3)), immediatePass(1, 's1', failure), immediatePass(2, 's2', report(2))]);
  const failed = await until(queue, job.id, (current) => current.state === 'failed');
  assert.deepEqual(failed.passes.map((pass) => pass.state), ['done', 'failed', 'done']);
  assert.deepEqual(failed.passes[1]!.error, { code: 'fault_injected', reason: 'injected failure on s1' });
  assert.equal(failed.error?.code, 'fault_injected');
  assert.match(failed.error!.reason, /1 of 3 passes failed; first: \[mail\]\[1\] injected failure on s1/);
  assert.equal(jobTotals(failed).segmentsBefore, 5);
  assert.equal(queue.stats().passesFailed, 1);
  await queue.close();
});

test('after a crash, unfinished jobs are failed with a reason and ids keep increasing', async () => {
  const crashed = await JobQueue.open({ dir, nodeId: 'node-a', logger });
  const finished = await submit(crashed, [immediatePass(0, 's0', report(2))]);
  await until(crashed, finished.id, (job) => job.state === 'done');
  const hanging = gatedPass(0, 's0');
  const interrupted = await submit(crashed, [hanging, gatedPass(1, 's1')]);
  await hanging.started;
  const waiting = await submit(crashed, [gatedPass(0, 's0')]);
  assert.equal((await recordOnDisk(interrupted.id)).state, 'running');

  // A new queue on the same directory, without closing the first: what a restart after kill -9 sees.
  const restarted = await JobQueue.open({ dir, nodeId: 'node-a', logger });
  assert.equal(restarted.get(finished.id).state, 'done');
  const failed = restarted.get(interrupted.id);
  assert.equal(failed.state, 'failed');
  assert.equal(failed.error?.code, 'job_interrupted');
  assert.deepEqual(failed.passes.map((pass) => pass.state), ['failed', 'failed']);
  assert.match(failed.passes[1]!.error!.reason, /had not started/);
  assert.doesNotMatch(failed.passes[0]!.error!.reason, /had not started/);
  assert.equal(restarted.get(waiting.id).state, 'failed');
  assert.equal((await recordOnDisk(interrupted.id)).state, 'failed');
  const next = await submit(restarted, [immediatePass(0, 's0', report(1))]);
  assert.equal(next.id, 'node-a:4');
  await until(restarted, next.id, (job) => job.state === 'done');
  await restarted.close();
  hanging.finish(report(1));
  await crashed.close();
});

test('close lets the running pass finish, fails waiting jobs and refuses new ones', async () => {
  const queue = await JobQueue.open({ dir, nodeId: 'node-a', logger });
  const running = gatedPass(0, 's0');
  const job1 = await submit(queue, [running]);
  await running.started;
  const job2 = await submit(queue, [immediatePass(0, 's0', report(2))]);
  const closing = queue.close();
  await assert.rejects(submit(queue, []), (error) => error instanceof JobError && error.code === 'job_interrupted');
  running.finish(report(3));
  await closing;
  assert.equal(queue.get(job1.id).state, 'done');
  const cancelled = queue.get(job2.id);
  assert.equal(cancelled.state, 'failed');
  assert.equal(cancelled.error?.code, 'job_interrupted');
});

test('old finished jobs are forgotten beyond the retained number; unreadable records are dropped', async () => {
  const queue = await JobQueue.open({ dir, nodeId: 'node-a', logger, retainFinished: 2 });
  const ids: string[] = [];
  for (let index = 0; index < 4; index++) {
    const job = await submit(queue, [immediatePass(0, 's0', report(2))]);
    await until(queue, job.id, (current) => current.state === 'done');
    ids.push(job.id);
  }
  await queue.close();
  assert.deepEqual(queue.list().map((job) => job.id), [ids[3], ids[2]]);
  assert.throws(() => queue.get(ids[0]!), (error) => error instanceof JobError && error.code === 'job_not_found');
  await writeFile(join(dir, '99.json'), '{"format":"trove-job","version":1,"job":{"id":"broken"}}');
  await writeFile(join(dir, '3.json.tmp'), 'partial');
  const reopened = await JobQueue.open({ dir, nodeId: 'node-a', logger, retainFinished: 2 });
  assert.deepEqual((await readdir(dir)).sort(), ['3.json', '4.json']);
  assert.equal(reopened.list().length, 2);
  await reopened.close();
});
