/**
 * The node's queue of batch jobs. A job runs its passes one after another; each pass holds the
 * lock of its shard while it runs, so a shard is compacted by one job at a time and a later
 * request for the same shard waits (state `queued`) instead of being lost. Passes of different
 * shards may run at the same time.
 *
 * Every transition is written to the job's record (`JobStore`) before the queue moves on, so
 * records survive a restart. At open, a job that was queued or running when the node stopped is
 * marked `failed` with a `job_interrupted` reason: the engine commits a merge atomically, so its
 * shard holds either the state before the interrupted pass or the one after it, never a mix. On a
 * graceful `close()` running passes finish and jobs still waiting fail the same way.
 */
import type { Logger } from 'pino';
import type { MergeReport } from '../engine/shard/maintenance.ts';
import { failureOf, JobError } from './job-error.ts';
import { JobStore } from './job-store.ts';
import { isFinished, jobSequence, type Job, type JobFailure, type JobPass, type JobState, type JobType } from './job.ts';
import { KeyedLock } from './keyed-lock.ts';

/** Finished jobs kept (in memory and on disk) before the oldest are forgotten. */
export const RETAINED_FINISHED_JOBS = 1000;

/** One pass to run: the shard it covers and how to merge it. */
export interface PassTask {
  shard: number;
  shardUuid: string;
  /** Runs the pass; its failure fails the pass, not the other passes of the job. */
  run(): Promise<MergeReport>;
}

/**
 * The body of a task (a job without passes): runs once, calls `report` with its progress as it
 * goes (recorded as the job's `status`), and resolves with its final status; a rejection fails the job.
 * `stopping` is aborted when the node shuts down: the task should stop at its next step.
 */
export type TaskWork = (report: (status: Record<string, unknown>) => Promise<void>, stopping: AbortSignal) => Promise<Record<string, unknown>>;

/** What `submit` queues: merge passes, or a task's `work`. */
export interface JobSubmission {
  type: JobType;
  collection: string;
  collectionUuid: string;
  maxSegments: number;
  passes: PassTask[];
  /** Set for a task: it runs instead of passes (which are then empty), without shard locks. */
  work?: TaskWork;
}

/** Options of `JobQueue.open`. */
export interface JobQueueOptions {
  /** Directory of the job records, usually `<path.data>/jobs`. */
  dir: string;
  /** This node's id; job ids start with it. */
  nodeId: string;
  logger: Logger;
  /** Finished jobs to retain; default `RETAINED_FINISHED_JOBS`. */
  retainFinished?: number;
}

/** Counters of the queue for node stats. */
export interface JobQueueStats {
  /** Retained jobs per state. */
  jobs: Record<JobState, number>;
  /** Since the node started. */
  passesDone: number;
  passesFailed: number;
  deletedPurged: number;
  bytesBefore: number;
  bytesAfter: number;
}

const INTERRUPTED_JOB = 'the node stopped before the job finished; passes that had not finished left their shards unchanged';

/** See the module comment. */
export class JobQueue {
  private readonly jobs = new Map<string, Job>();
  private readonly locks = new KeyedLock();
  private readonly active = new Set<Promise<void>>();
  private nextSequence: number;
  private closing = false;
  private readonly stopping = new AbortController();
  private readonly totals = { passesDone: 0, passesFailed: 0, deletedPurged: 0, bytesBefore: 0, bytesAfter: 0 };

  private constructor(
    private readonly store: JobStore,
    private readonly nodeId: string,
    private readonly logger: Logger,
    private readonly retainFinished: number,
    loaded: Job[],
  ) {
    for (const job of loaded) this.jobs.set(job.id, job);
    this.nextSequence = Math.max(0, ...loaded.map((job) => jobSequence(job.id) ?? 0)) + 1;
  }

  /** Loads the records, fails the jobs a stop interrupted and forgets the oldest finished ones. */
  static async open(options: JobQueueOptions): Promise<JobQueue> {
    const { store, jobs } = await JobStore.open(options.dir, options.logger);
    const queue = new JobQueue(store, options.nodeId, options.logger, options.retainFinished ?? RETAINED_FINISHED_JOBS, jobs);
    const now = Date.now();
    for (const job of jobs) {
      if (isFinished(job.state)) continue;
      failUnfinished(job, { code: 'job_interrupted', reason: INTERRUPTED_JOB }, now);
      options.logger.warn({ job: job.id, collection: job.collection }, 'job was interrupted by a node stop');
      await store.save(job);
    }
    await queue.prune();
    return queue;
  }

  /** Records a new job (durably, before returning it) and starts it in the background. */
  async submit(submission: JobSubmission): Promise<Job> {
    if (this.closing) throw new JobError('job_interrupted', 'the node is shutting down and accepts no new jobs');
    const job: Job = {
      id: `${this.nodeId}:${this.nextSequence++}`,
      type: submission.type,
      collection: submission.collection,
      collectionUuid: submission.collectionUuid,
      nodeId: this.nodeId,
      state: 'queued',
      maxSegments: submission.maxSegments,
      createdAt: Date.now(),
      startedAt: null,
      finishedAt: null,
      passes: submission.passes.map((task) => ({
        shard: task.shard,
        shardUuid: task.shardUuid,
        state: 'queued',
        startedAt: null,
        finishedAt: null,
        report: null,
        error: null,
      })),
      error: null,
    };
    await this.store.save(job);
    this.jobs.set(job.id, job);
    const running = (submission.work ? this.runTask(job, submission.work) : this.run(job, submission.passes)).catch((error: unknown) =>
      this.logger.error({ err: error, job: job.id }, 'job runner failed'),
    );
    this.active.add(running);
    void running.finally(() => this.active.delete(running));
    return structuredClone(job);
  }

  /** A copy of the job with this id; `job_not_found` when this node has no such job. */
  get(id: string): Job {
    const job = this.jobs.get(id);
    if (!job) throw new JobError('job_not_found', `job [${id}] is not known to this node (it never existed or was forgotten)`);
    return structuredClone(job);
  }

  /** Copies of every retained job, newest first. */
  list(): Job[] {
    return [...this.jobs.values()].reverse().map((job) => structuredClone(job));
  }

  /** Job counts per state and pass figures since start. */
  stats(): JobQueueStats {
    const jobs: Record<JobState, number> = { queued: 0, running: 0, done: 0, failed: 0 };
    for (const job of this.jobs.values()) jobs[job.state]++;
    return { jobs, ...this.totals };
  }

  /** Refuses new jobs, lets running passes finish and fails the passes still waiting. */
  async close(): Promise<void> {
    this.closing = true;
    this.stopping.abort();
    while (this.active.size > 0) await Promise.all([...this.active]);
  }

  private async run(job: Job, tasks: readonly PassTask[]): Promise<void> {
    for (const [index, pass] of job.passes.entries()) {
      const release = await this.locks.acquire(pass.shardUuid);
      try {
        if (this.closing) break;
        if (job.state === 'queued') {
          job.state = 'running';
          job.startedAt = Date.now();
        }
        pass.state = 'running';
        pass.startedAt = Date.now();
        await this.persist(job);
        await this.runPass(job, pass, tasks[index]!);
        await this.persist(job);
      } finally {
        release();
      }
    }
    const now = Date.now();
    if (job.passes.some((pass) => !isFinished(pass.state))) {
      failUnfinished(job, { code: 'job_interrupted', reason: 'the node shut down before the job finished' }, now);
    }
    const failed = job.passes.filter((pass) => pass.state === 'failed');
    if (job.state !== 'failed') {
      job.state = failed.length > 0 ? 'failed' : 'done';
      job.finishedAt = now;
      if (failed.length > 0) {
        const first = failed[0]!;
        job.error = {
          code: first.error?.code ?? 'internal',
          reason: `${failed.length} of ${job.passes.length} passes failed; first: [${job.collection}][${first.shard}] ${first.error?.reason ?? ''}`.trim(),
        };
      }
    }
    await this.persist(job);
    this.logger.info({ job: job.id, collection: job.collection, state: job.state, ms: now - job.createdAt }, 'job finished');
    await this.prune();
  }

  /** Runs a task: its progress and result are recorded as the job's status; its failure fails the job. */
  private async runTask(job: Job, work: TaskWork): Promise<void> {
    job.state = 'running';
    job.startedAt = Date.now();
    await this.persist(job);
    try {
      job.status = await work(async (status) => {
        job.status = status;
        await this.persist(job);
      }, this.stopping.signal);
      job.state = 'done';
    } catch (error) {
      job.state = 'failed';
      job.error = failureOf(error);
      this.logger.warn({ err: error, job: job.id, collection: job.collection }, `${job.type} task failed`);
    }
    job.finishedAt = Date.now();
    await this.persist(job);
    this.logger.info({ job: job.id, collection: job.collection, state: job.state, ms: job.finishedAt - job.createdAt }, 'job finished');
    await this.prune();
  }

  private async runPass(job: Job, pass: JobPass, task: PassTask): Promise<void> {
    try {
      const report = await task.run();
      pass.report = report;
      pass.state = 'done';
      this.totals.passesDone++;
      this.totals.deletedPurged += report.deletedPurged;
      this.totals.bytesBefore += report.bytesBefore;
      this.totals.bytesAfter += report.bytesAfter;
    } catch (error) {
      pass.state = 'failed';
      pass.error = failureOf(error);
      this.totals.passesFailed++;
      this.logger.warn({ err: error, job: job.id, collection: job.collection, shard: pass.shard }, 'compaction pass failed');
    }
    pass.finishedAt = Date.now();
  }

  /** Writes the record; a failed write is logged and the job goes on (its state is still in memory). */
  private async persist(job: Job): Promise<void> {
    try {
      await this.store.save(job);
    } catch (error) {
      this.logger.error({ err: error, job: job.id }, 'writing the job record failed');
    }
  }

  private async prune(): Promise<void> {
    const finished = [...this.jobs.values()].filter((job) => isFinished(job.state));
    for (const job of finished.slice(0, Math.max(0, finished.length - this.retainFinished))) {
      this.jobs.delete(job.id);
      await this.store.remove(job).catch((error: unknown) => this.logger.warn({ err: error, job: job.id }, 'removing an old job record failed'));
    }
  }
}

/** Marks a job and its unfinished passes failed with `failure`. */
function failUnfinished(job: Job, failure: JobFailure, now: number): void {
  for (const pass of job.passes) {
    if (isFinished(pass.state)) continue;
    pass.error = pass.state === 'running' ? failure : { ...failure, reason: `${failure.reason} (the pass had not started)` };
    pass.state = 'failed';
    pass.finishedAt = now;
  }
  job.state = 'failed';
  job.error = failure;
  job.finishedAt = now;
}
