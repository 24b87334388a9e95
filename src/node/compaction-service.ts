/**
 * The compaction service: manual compaction, the jobs it queues, and the segment figures it acts
 * on (the routes of src/api/routes/{compact,jobs,cat-segments}.ts). `compact`, `job` and
 * `listJobs` run as tracked requests.
 */
import type { JobQueue } from '../jobs/job-queue.ts';
import type { Job } from '../jobs/job.ts';
import { maintenanceStats, type MaintenanceStats } from '../ops/stats/maintenance-stats.ts';
import { compactAcrossNodes, LocalCompactionNode, type CompactionResult, type CompactOptions } from './compaction.ts';
import type { NodeFaults } from './faults.ts';
import type { NodeContext } from './node-context.ts';
import { collectionNotFound } from './node-error.ts';
import type { RequestTracker } from './request-tracker.ts';
import { segmentRows, type SegmentRow } from './segment-stats.ts';

/** What the compaction service works with. */
export interface CompactionServiceOptions {
  context: NodeContext;
  requests: RequestTracker;
  jobs: JobQueue;
  faults: NodeFaults;
  /** `node.name`, shown in segment rows. */
  nodeName: string;
}

/** Compaction, jobs and segments of the node; see the module comment. */
export class CompactionService {
  private readonly context: NodeContext;
  private readonly requests: RequestTracker;
  private readonly jobs: JobQueue;
  private readonly faults: NodeFaults;
  private readonly nodeName: string;

  constructor(options: CompactionServiceOptions) {
    this.context = options.context;
    this.requests = options.requests;
    this.jobs = options.jobs;
    this.faults = options.faults;
    this.nodeName = options.nodeName;
  }

  /** `POST /{collection}/_compact`: one queued job per node hosting primaries, or that node's error. */
  compact(name: string, options: CompactOptions): Promise<CompactionResult> {
    return this.requests.track(async () => {
      const { coordinator, nodeId } = this.context;
      const collection = coordinator.getCollection(name);
      if (!collection) throw collectionNotFound(name);
      const local = new LocalCompactionNode(this.context, this.jobs, this.faults);
      return compactAcrossNodes(collection, coordinator.listNodes(), (id) => (id === nodeId ? local : null), options);
    });
  }

  /** `GET /_jobs/{id}`; `job_not_found` when this node has no such job. */
  job(id: string): Promise<Job> {
    return this.requests.track(async () => this.jobs.get(id));
  }

  /** `GET /_jobs`: every retained job of this node, newest first. */
  listJobs(): Promise<Job[]> {
    return this.requests.track(async () => this.jobs.list());
  }

  /** Every segment of the started local shard copies (`_cat/segments`). */
  segments(): Promise<SegmentRow[]> {
    return segmentRows(this.context, this.nodeName);
  }

  /** The `segments` and `compaction` sections of the node stats (epochs, merges, backlog, jobs). */
  async maintenanceStats(): Promise<MaintenanceStats> {
    return maintenanceStats(await this.context.router.startedStats(), this.jobs.stats());
  }
}
