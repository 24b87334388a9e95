/**
 * Errors of the job queue. Their codes are in the API's error table (src/api/errors.ts), and a
 * failed job or pass records the code of the error that failed it (see `failureOf`).
 */
import { EngineError, TroveError } from '../engine/errors.ts';
import { NodeError } from '../node/node-error.ts';
import type { JobFailure } from './job.ts';

/** Stable codes of job failures. */
export type JobErrorCode =
  /** No job with this id is known to this node. */
  | 'job_not_found'
  /** The node stopped (crash or shutdown) before the job finished. */
  | 'job_interrupted';

/** A job-layer failure with a stable code and a message meant for the API user. */
export class JobError extends TroveError<JobErrorCode> {}

/** How a thrown value is recorded in a job: typed errors keep their code, anything else is `internal`. */
export function failureOf(error: unknown): JobFailure {
  if (error instanceof EngineError || error instanceof NodeError || error instanceof JobError) {
    return { code: error.code, reason: error.message };
  }
  return { code: 'internal', reason: error instanceof Error ? error.message : String(error) };
}
