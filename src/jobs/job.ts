/**
 * A batch job as it is kept in memory and on disk: a compaction of one collection's primary copies
 * on one node, made of one pass per shard, or a task without passes (a `_delete_by_query` or
 * `_update_by_query` or a `_reindex` run by the node that received it, whose progress is its `status`). Plain
 * data; `JobQueue` owns the transitions:
 *
 *   job:  queued → running → done | failed      (failed when any pass failed or the node stopped)
 *   pass: queued → running → done | failed
 */
import type { MergeReport } from '../engine/shard/maintenance.ts';

/** Lifecycle state of a job and of each of its passes. */
export type JobState = 'queued' | 'running' | 'done' | 'failed';

/** The kinds of batch job a node runs. */
export type JobType = 'compaction' | 'delete_by_query' | 'update_by_query' | 'reindex';

/** Why a job or pass failed: an error-table code (`internal` when unknown) and a reason for users. */
export interface JobFailure {
  code: string;
  reason: string;
}

/** One shard's merge pass within a job. */
export interface JobPass {
  /** Shard number within the collection. */
  shard: number;
  shardUuid: string;
  state: JobState;
  /** Epoch millis, null until the pass starts / ends. */
  startedAt: number | null;
  finishedAt: number | null;
  /** The merge figures once the pass is done. */
  report: MergeReport | null;
  error: JobFailure | null;
}

/** One batch job. */
export interface Job {
  /** `<node id>:<sequence>`: unique in the cluster and names the node that runs it. */
  id: string;
  type: JobType;
  collection: string;
  collectionUuid: string;
  /** The node running the job. */
  nodeId: string;
  state: JobState;
  /** Segments each shard is merged down to. */
  maxSegments: number;
  /** Epoch millis. */
  createdAt: number;
  startedAt: number | null;
  finishedAt: number | null;
  passes: JobPass[];
  /** Set when the job failed: the first failed pass, or why the job never ran to its end. */
  error: JobFailure | null;
  /** A task's progress, then its result (the by-query response body); absent for compactions. */
  status?: Record<string, unknown>;
}

/** What a job achieved so far, summed over its finished passes. */
export interface JobTotals {
  passesTotal: number;
  passesDone: number;
  passesFailed: number;
  /** Sums over the passes that are done; null while none is. */
  segmentsBefore: number | null;
  segmentsAfter: number | null;
  bytesBefore: number | null;
  bytesAfter: number | null;
  deletedPurged: number | null;
}

/** True for the states a job or pass never leaves. */
export function isFinished(state: JobState): boolean {
  return state === 'done' || state === 'failed';
}

/** Sums the figures of a job's passes. */
export function jobTotals(job: Job): JobTotals {
  const reports = job.passes.flatMap((pass) => (pass.state === 'done' && pass.report ? [pass.report] : []));
  const sum = (pick: (report: MergeReport) => number): number | null =>
    reports.length === 0 ? null : reports.reduce((total, report) => total + pick(report), 0);
  return {
    passesTotal: job.passes.length,
    passesDone: job.passes.filter((pass) => pass.state === 'done').length,
    passesFailed: job.passes.filter((pass) => pass.state === 'failed').length,
    segmentsBefore: sum((report) => report.segmentsBefore),
    segmentsAfter: sum((report) => report.segmentsAfter),
    bytesBefore: sum((report) => report.bytesBefore),
    bytesAfter: sum((report) => report.bytesAfter),
    deletedPurged: sum((report) => report.deletedPurged),
  };
}

/** The sequence number of a job id (`<node id>:<sequence>`), or null when the id has another form. */
export function jobSequence(id: string): number | null {
  const separator = id.lastIndexOf(':');
  if (separator < 0) return null;
  const digits = id.slice(separator + 1);
  return /^[0-9]{1,15}$/.test(digits) ? Number(digits) : null;
}
