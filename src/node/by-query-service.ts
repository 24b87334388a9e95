/**
 * The by-query service: `POST /{collection}/_delete_by_query` and `_update_by_query` (the routes
 * of src/api/routes/by-query.ts). The request is checked and its first page read while the caller
 * waits (a bad body, query or collection fails at once); the work then runs as a task in the
 * node's job queue (type `delete_by_query` / `update_by_query`), readable at `GET /_jobs/{id}`
 * like a compaction. With `wait_for_completion` (the default) the request waits for the task and
 * answers its result; without, it answers the job id at once (ES `{task}`).
 */
import type { JobQueue } from '../jobs/job-queue.ts';
import { ByQueryRun, parseByQueryBody, type ByQueryKind, type ByQueryOptions, type ByQueryServices, type ByQueryStatus } from './by-query.ts';
import type { DocumentService } from './document-service.ts';
import type { NodeContext } from './node-context.ts';
import { collectionNotFound } from './node-error.ts';
import { resolveCollections } from './collections.ts';
import type { RequestTracker } from './request-tracker.ts';
import type { SearchService } from './search-service.ts';

/** Options of one request: those of the run, plus whether to wait for it. */
export interface ByQueryRequestOptions extends Omit<ByQueryOptions, 'conflicts'> {
  /** `conflicts` of the query string; the body's `conflicts` applies when absent. */
  conflicts?: 'abort' | 'proceed';
  waitForCompletion: boolean;
}

/** What a by-query request answers: the finished run's response, or the task's id. */
export type ByQueryResult = { kind: 'finished'; status: ByQueryStatus } | { kind: 'started'; task: string };

/** By-query operations of the node; see the module comment. */
export class ByQueryService {
  constructor(
    private readonly context: NodeContext,
    private readonly requests: RequestTracker,
    private readonly search: SearchService,
    private readonly documents: DocumentService,
    private readonly jobs: JobQueue,
  ) {}

  /** Runs `_delete_by_query` (`kind: 'delete'`) or `_update_by_query` on one collection. */
  run(kind: ByQueryKind, collection: string, body: unknown, options: ByQueryRequestOptions): Promise<ByQueryResult> {
    return this.requests.track(async () => {
      const request = parseByQueryBody(kind, body);
      // An alias or pattern reads all its collections (the alias's filter applies); the job is listed under the first.
      const meta = resolveCollections(this.context, collection)[0]?.meta;
      if (!meta) throw collectionNotFound(collection);
      const services: ByQueryServices = {
        search: (target, searchBody, params) => this.search.search(target, searchBody, params),
        bulk: (items) => this.documents.bulk(items),
      };
      const runOptions: ByQueryOptions = { ...options, conflicts: options.conflicts ?? request.conflicts ?? 'abort' };
      const run = await ByQueryRun.open(services, collection, request, runOptions);
      let settle!: { resolve: (status: ByQueryStatus) => void; reject: (error: unknown) => void };
      const finished = new Promise<ByQueryStatus>((resolve, reject) => (settle = { resolve, reject }));
      // Not waited for: the job records the failure, nobody else listens.
      if (!options.waitForCompletion) finished.catch(() => undefined);
      const job = await this.jobs.submit({
        type: kind === 'delete' ? 'delete_by_query' : 'update_by_query',
        collection: meta.name,
        collectionUuid: meta.uuid,
        maxSegments: 0,
        passes: [],
        work: async (report, stopping) => {
          try {
            const status = await run.run(report, stopping);
            settle.resolve(status);
            return status;
          } catch (error) {
            settle.reject(error);
            throw error;
          }
        },
      });
      if (!options.waitForCompletion) return { kind: 'started', task: job.id };
      return { kind: 'finished', status: await finished };
    });
  }
}
