/**
 * `/{collection}/_forcemerge`: Elasticsearch's name and response for the job `_compact` queues.
 * Every node hosting primaries of the collection runs one compaction job (src/node/compaction.ts);
 * by default the request waits for them (ES `wait_for_completion=true`) and answers
 * `{_shards: {total, successful, failed}}`, one shard per primary pass; with
 * `wait_for_completion=false` it answers at once with the jobs' ids (`task`, as ES names it).
 */
import { isFinished, type Job } from '../jobs/job.ts';
import type { CompactionService } from './compaction-service.ts';

/** Options of a force merge. */
export interface ForceMergeOptions {
  /** Segments each shard is merged down to (ES `max_num_segments`, default 1). */
  maxSegments: number;
  /** Wait for the jobs to finish (default true, as ES). */
  waitForCompletion: boolean;
}

/** A shard that failed to merge, as ES lists it under `_shards.failures`. */
export interface ForceMergeFailure {
  shard: number | null;
  index: string;
  /** The error, for the API to render with its error table. */
  error: unknown;
}

/** The outcome of a force merge: shard counts once finished, or the job ids when not waited for. */
export type ForceMergeResult =
  | { kind: 'finished'; total: number; successful: number; failures: ForceMergeFailure[] }
  | { kind: 'started'; jobIds: string[]; failures: ForceMergeFailure[] };

/** How often a waiting force merge reads its jobs' states. */
const POLL_MS = 50;

/** Reads a job until it is finished. */
async function finishedJob(compaction: CompactionService, id: string): Promise<Job> {
  for (;;) {
    const job = await compaction.job(id);
    if (isFinished(job.state)) return job;
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}

/** Runs a force merge of one collection (see the module comment). */
export async function forceMerge(compaction: CompactionService, collection: string, options: ForceMergeOptions): Promise<ForceMergeResult> {
  const result = await compaction.compact(collection, { maxSegments: options.maxSegments });
  const failures: ForceMergeFailure[] = result.rows.flatMap((row) => (row.error === undefined ? [] : [{ shard: null, index: result.collection, error: row.error }]));
  const queued = result.rows.flatMap((row) => (row.queued ? [row.queued] : []));
  if (!options.waitForCompletion) return { kind: 'started', jobIds: queued.map((job) => job.jobId), failures };
  const jobs = await Promise.all(queued.map((job) => finishedJob(compaction, job.jobId)));
  let total = failures.length;
  let successful = 0;
  for (const job of jobs) {
    for (const pass of job.passes) {
      total++;
      if (pass.state === 'done') successful++;
      else failures.push({ shard: pass.shard, index: result.collection, error: new Error(pass.error?.reason ?? 'the merge pass failed') });
    }
  }
  return { kind: 'finished', total, successful, failures };
}
