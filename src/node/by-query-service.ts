/**
 * The by-query service: `POST /{collection}/_delete_by_query`, `_update_by_query` and
 * `POST /_reindex` (the routes of src/api/routes/by-query.ts). The request is checked and its first page read while the caller
 * waits (a bad body, query or collection fails at once); the work then runs as a task in the
 * node's job queue (type `delete_by_query` / `update_by_query` / `reindex`), readable at `GET /_jobs/{id}`
 * like a compaction. With `wait_for_completion` (the default) the request waits for the task and
 * answers its result; without, it answers the job id at once (ES `{task}`).
 */
import type { JobQueue } from '../jobs/job-queue.ts';
import { EngineError } from '../engine/errors.ts';
import type { NamespaceCheck } from './auto-create.ts';
import { ByQueryRun, parseByQueryBody, type ByQueryKind, type ByQueryOptions, type ByQueryRequest, type ByQueryServices, type ByQueryStatus } from './by-query.ts';
import { parseReindexBody } from './reindex.ts';
import type { DocumentService } from './document-service.ts';
import type { NodeContext } from './node-context.ts';
import { collectionNotFound, NodeError } from './node-error.ts';
import { resolveCollections } from './collections.ts';
import { refreshAfterWrites, type WrittenDocument } from './refresh.ts';
import type { RequestTracker } from './request-tracker.ts';
import type { SearchService } from './search-service.ts';

/** Options of one request: those of the run, plus whether to wait for it. */
export interface ByQueryRequestOptions extends Omit<ByQueryOptions, 'conflicts'> {
  /** `conflicts` of the query string; the body's `conflicts` applies when absent. */
  conflicts?: 'abort' | 'proceed';
  waitForCompletion: boolean;
  /** The `refresh` parameter: `true` (or `wait_for`) refreshes the written collections once the run is done (src/node/refresh.ts). */
  refresh?: string;
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

  /** Runs `_delete_by_query` (`kind: 'delete'`) or `_update_by_query` on a collection (an alias or pattern: all its collections). */
  run(kind: Exclude<ByQueryKind, 'reindex'>, collection: string, body: unknown, options: ByQueryRequestOptions): Promise<ByQueryResult> {
    return this.requests.track(async () => {
      const request = parseByQueryBody(kind, body);
      return this.start(collection, request, { ...options, conflicts: options.conflicts ?? request.conflicts ?? 'abort' }, options.waitForCompletion, undefined, options.refresh);
    });
  }

  /**
   * `POST /_reindex`: the same run over the source target, writing into the destination (created
   * on the first write when missing, as `action.auto_create_index` allows; `requireNamespace`
   * checks its namespace for the caller). The job is listed under the first source collection.
   */
  reindex(body: unknown, options: ByQueryRequestOptions & { requireAlias?: boolean }, requireNamespace?: NamespaceCheck): Promise<ByQueryResult> {
    return this.requests.track(async () => {
      const plan = parseReindexBody(body);
      const target = plan.request.destination!.index;
      if (options.requireAlias === true && !this.context.router.aliases().has(target)) {
        throw new NodeError('index_not_found', `no such index [${target}] and [require_alias] request flag is [true] and [${target}] is not an alias`);
      }
      const sources = new Set(resolveCollections(this.context, plan.source).map((hosted) => hosted.meta.name));
      const destination = this.context.router.findCollection(target);
      if (destination && sources.has(destination.meta.name)) {
        throw new EngineError('action_request_validation', `Validation Failed: 1: reindex cannot write into an index its reading from [${destination.meta.name}];`);
      }
      const runOptions: ByQueryOptions = { ...options, batchSize: plan.batchSize ?? options.batchSize, conflicts: options.conflicts ?? plan.conflicts ?? 'abort' };
      return this.start(plan.source, plan.request, runOptions, options.waitForCompletion, requireNamespace, options.refresh);
    });
  }

  /** Reads the first page (a bad query or target fails here), then runs the rest as a job-queue task. */
  private async start(target: string, request: ByQueryRequest, runOptions: ByQueryOptions, waitForCompletion: boolean, requireNamespace?: NamespaceCheck, refresh?: string): Promise<ByQueryResult> {
    // An alias or pattern reads all its collections (the alias's filter applies); the job is listed under the first.
    const selected = resolveCollections(this.context, target);
    const meta = selected[0]?.meta;
    if (!meta) throw collectionNotFound(target);
    const written: WrittenDocument[] = request.destination ? [{ collection: request.destination.index }] : selected.map((hosted) => ({ collection: hosted.meta.name }));
    const services: ByQueryServices = {
      openScroll: (searchTarget, searchBody, params) => this.search.openScroll(searchTarget, searchBody, params),
      // The run's own scroll: the caller was checked on the target when it was opened.
      continueScroll: (scrollId, scroll) => this.search.continueScroll(scrollId, scroll, {}, () => undefined),
      clearScroll: async (scrollId) => {
        await this.search.clearScrolls([scrollId], () => undefined);
      },
      bulk: (items) => this.documents.bulk(items, {}, requireNamespace),
    };
    const run = await ByQueryRun.open(services, target, request, runOptions);
    let settle!: { resolve: (status: ByQueryStatus) => void; reject: (error: unknown) => void };
    const finished = new Promise<ByQueryStatus>((resolve, reject) => (settle = { resolve, reject }));
    // Not waited for: the job records the failure, nobody else listens.
    if (!waitForCompletion) finished.catch(() => undefined);
    const job = await this.jobs.submit({
      type: request.kind === 'reindex' ? 'reindex' : request.kind === 'delete' ? 'delete_by_query' : 'update_by_query',
      collection: meta.name,
      collectionUuid: meta.uuid,
      maxSegments: 0,
      passes: [],
      work: async (report, stopping) => {
        try {
          const status = await run.run(report, stopping);
          await refreshAfterWrites(this.context, refresh, written);
          settle.resolve(status);
          return status;
        } catch (error) {
          settle.reject(error);
          throw error;
        }
      },
    });
    if (!waitForCompletion) return { kind: 'started', task: job.id };
    return { kind: 'finished', status: await finished };
  }
}
