/**
 * `GET /_jobs` and `GET /_jobs/{job_id}`: the batch jobs (manual compactions, and the tasks of
 * `_delete_by_query` / `_update_by_query` with their `status`) of every node of the
 * cluster (`GET /_jobs/{job_id}` asks the node whose id starts the job id; `GET /_jobs` merges every
 * node's list and names the nodes that did not answer in `_nodes.failures`), with
 * their state, passes done and total, segment and byte figures before and after, deleted
 * documents purged, timestamps and, for a failed job, the error. Records survive restarts.
 *
 * A key limited to namespaces sees only the jobs of collections that still exist, as the very
 * collection the job ran on (same UUID), in its namespaces. A job of a collection in another
 * namespace is a 403 as the collection itself would be; a job whose collection was deleted or
 * re-created since (its namespace is unknown) is a 404, as if it were unknown.
 */
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { jobTotals, type Job, type JobFailure, type JobPass } from '../../jobs/job.ts';
import { JobError } from '../../jobs/job-error.ts';
import type { AuthScope } from '../auth/auth-scope.ts';
import { classifyError, ERROR_TABLE, errorCause, type ErrorCause, type ErrorCode } from '../errors.ts';
import { querySchema } from '../params.ts';
import type { CompactionService } from '../../node/compaction-service.ts';
import { renderByQueryStatus } from './by-query.ts';

const StateParam = Type.Union([Type.Literal('queued'), Type.Literal('running'), Type.Literal('done'), Type.Literal('failed')]);

const ListQuery = querySchema({
  state: Type.Optional(StateParam),
  collection: Type.Optional(Type.String({ minLength: 1 })),
});

const JobParams = Type.Object({ job_id: Type.String({ minLength: 1, maxLength: 200 }) });

function isoTime(millis: number | null): string | null {
  return millis === null ? null : new Date(millis).toISOString();
}

/** A recorded failure as an ES error object; codes unknown to the table render as `internal`. */
function renderFailure(failure: JobFailure): ErrorCause {
  const code = (Object.hasOwn(ERROR_TABLE, failure.code) ? failure.code : 'internal') as ErrorCode;
  return errorCause(code, failure.reason);
}

function renderPass(pass: JobPass) {
  const report = pass.report;
  return {
    shard: pass.shard,
    shard_uuid: pass.shardUuid,
    state: pass.state,
    segments: { before: report?.segmentsBefore ?? null, after: report?.segmentsAfter ?? null },
    bytes: { before: report?.bytesBefore ?? null, after: report?.bytesAfter ?? null },
    deleted_docs_purged: report?.deletedPurged ?? null,
    started_at: isoTime(pass.startedAt),
    finished_at: isoTime(pass.finishedAt),
    ...(pass.error ? { error: renderFailure(pass.error) } : {}),
  };
}

/** A task (`_delete_by_query`, `_update_by_query`) as the API shows it: its status is the by-query response so far, or its result. */
function renderTask(job: Job, nodeName: string) {
  return {
    ...jobIdentity(job, nodeName),
    ...jobTimes(job),
    status: job.status === undefined ? null : renderByQueryStatus(job.status),
    ...(job.error ? { error: renderFailure(job.error) } : {}),
  };
}

/** What every job shows first: its id, type, collection, node and state. */
function jobIdentity(job: Job, nodeName: string) {
  return { job_id: job.id, type: job.type, collection: job.collection, node_id: job.nodeId, node_name: nodeName, state: job.state };
}

/** When a job was created, started and finished, and how long it ran. */
function jobTimes(job: Job) {
  return {
    created_at: isoTime(job.createdAt),
    started_at: isoTime(job.startedAt),
    finished_at: isoTime(job.finishedAt),
    took_ms: job.startedAt !== null && job.finishedAt !== null ? job.finishedAt - job.startedAt : null,
  };
}

/** A job as the API shows it. */
function renderJob(job: Job, nodeName: string) {
  if (job.type !== 'compaction') return renderTask(job, nodeName);
  const totals = jobTotals(job);
  return {
    ...jobIdentity(job, nodeName),
    max_num_segments: job.maxSegments,
    passes: { done: totals.passesDone, failed: totals.passesFailed, total: totals.passesTotal },
    segments: { before: totals.segmentsBefore, after: totals.segmentsAfter },
    bytes: { before: totals.bytesBefore, after: totals.bytesAfter },
    deleted_docs_purged: totals.deletedPurged,
    ...jobTimes(job),
    shards: job.passes.map(renderPass),
    ...(job.error ? { error: renderFailure(job.error) } : {}),
  };
}

/** Refuses a job the caller may not see: 403 for another namespace's collection, 404 for an old one (see the module comment). */
function requireJobVisible(scope: AuthScope, job: Job): void {
  const access = scope.recordAccess(job.collection, job.collectionUuid);
  if (access === 'outside') scope.requireCollection(job.collection);
  if (access !== 'allowed') throw new JobError('job_not_found', `job [${job.id}] is not known to this node (it never existed or was forgotten)`);
}

/** What the job routes need: the compaction service (the jobs, and the names of their nodes). */
export interface JobRouteOptions {
  compaction: CompactionService;
}

/** Job routes. */
export async function jobRoutes(instance: FastifyInstance, options: JobRouteOptions): Promise<void> {
  const app = instance.withTypeProvider<TypeBoxTypeProvider>();
  const { compaction } = options;
  const nodeName = (nodeId: string): string => compaction.nodeNameOf(nodeId);

  app.get('/_jobs', { config: { role: 'monitor' }, schema: { querystring: ListQuery } }, async (request) => {
    const { state, collection } = request.query;
    const listed = await compaction.listJobs();
    const jobs = listed.jobs.filter(
      (job) =>
        (state === undefined || job.state === state) &&
        (collection === undefined || job.collection === collection) &&
        request.authScope.recordAccess(job.collection, job.collectionUuid) === 'allowed',
    );
    const failures = listed.failures.map((failure) => {
      const { code, reason } = classifyError(failure.error);
      return { node_id: failure.nodeId, node_name: failure.nodeName, ...errorCause(code, reason) };
    });
    return { jobs: jobs.map((job) => renderJob(job, nodeName(job.nodeId))), ...(failures.length > 0 ? { _nodes: { failed: failures.length, failures } } : {}) };
  });

  app.get('/_jobs/:job_id', { config: { role: 'monitor' }, schema: { params: JobParams, querystring: querySchema({}) } }, async (request) => {
    const job = await compaction.job(request.params.job_id);
    requireJobVisible(request.authScope, job);
    return renderJob(job, nodeName(job.nodeId));
  });
}
