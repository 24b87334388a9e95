/**
 * The compaction service: manual compaction, the jobs it queues, and the segment figures it acts
 * on (the routes of src/api/routes/{compact,jobs,cat-segments}.ts), and flushes (src/node/flush.ts).
 * `compact`, `flush`, `job` and `listJobs` run as tracked requests.
 */
import type { PeerDirectory } from '../cluster/remote/peer-nodes.ts';
import { aliasIndexOf } from '../cluster/aliases.ts';
import type { CollectionMeta } from '../cluster/catalog.ts';
import type { JobQueue } from '../jobs/job-queue.ts';
import type { Job } from '../jobs/job.ts';
import { maintenanceStats, type MaintenanceStats } from '../ops/stats/maintenance-stats.ts';
import { compactAcrossNodes, LocalCompactionNode, RemoteCompactionNode, type CompactionNode, type CompactionResult, type CompactOptions } from './compaction.ts';
import type { NodeFaults } from './faults.ts';
import { resolveCollections, type ResolveOptions } from './collections.ts';
import { flushCollections, type FlushShards } from './flush.ts';
import type { NodeContext } from './node-context.ts';
import { collectionNotFound, NodeError } from './node-error.ts';
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
  /** The other nodes of the cluster (absent on a single node). */
  peers?: PeerDirectory;
}

/** Compaction, jobs and segments of the node; see the module comment. */
export class CompactionService {
  private readonly context: NodeContext;
  private readonly requests: RequestTracker;
  private readonly jobs: JobQueue;
  private readonly faults: NodeFaults;
  private readonly localNodeName: string;
  private readonly peers: PeerDirectory | undefined;

  constructor(options: CompactionServiceOptions) {
    this.context = options.context;
    this.requests = options.requests;
    this.jobs = options.jobs;
    this.faults = options.faults;
    this.localNodeName = options.nodeName;
    this.peers = options.peers;
  }

  /**
   * `POST /{collection}/_compact`: one queued job per node hosting primaries (here or elsewhere in
   * the cluster), or that node's error. `{collection}` may be an alias of one collection; an alias
   * of several is a 400 (compact each).
   */
  compact(name: string, options: CompactOptions): Promise<CompactionResult> {
    return this.requests.track(async () => {
      const { coordinator, nodeId } = this.context;
      const collection = coordinator.getCollection(name) ?? this.aliasedCollection(name);
      const local = this.localNode();
      const peers = new Map((this.peers?.peers() ?? []).map((peer) => [peer.nodeId, peer]));
      const lookup = (id: string): CompactionNode | null => {
        if (id === nodeId) return local;
        const peer = peers.get(id);
        return peer ? new RemoteCompactionNode(peer) : null;
      };
      return compactAcrossNodes(collection, coordinator.listNodes(), lookup, options);
    });
  }

  /** `POST [/{target}]/_flush`: every copy of the selected collections freezes its in-memory layer into a segment. */
  flush(target: string, options: ResolveOptions = {}): Promise<{ _shards: FlushShards }> {
    return this.requests.track(async () => ({ _shards: await flushCollections(this.context, resolveCollections(this.context, target, options)) }));
  }

  /** The one collection alias `name` points to; index_not_found when no alias has the name. */
  private aliasedCollection(name: string): CollectionMeta {
    const members = aliasIndexOf(this.context.coordinator.catalog().collections).get(name);
    if (!members) throw collectionNotFound(name);
    if (members.length > 1) {
      throw new NodeError('illegal_argument', `alias [${name}] points to several collections [${members.map((member) => member.collection).join(', ')}]: compact each of them`);
    }
    const collection = this.context.coordinator.getCollection(members[0]!.collection);
    if (!collection) throw collectionNotFound(name);
    return collection;
  }

  /**
   * `GET /_jobs/{id}`, on whichever node ran it (a job id starts with its node's id);
   * `job_not_found` when that node has no such job.
   */
  job(id: string): Promise<Job> {
    return this.requests.track(async () => {
      const owner = id.includes(':') ? id.slice(0, id.lastIndexOf(':')) : this.context.nodeId;
      if (owner === this.context.nodeId || this.peers === undefined) return this.jobs.get(id);
      const record = this.peers.record(owner);
      if (record === undefined) throw new NodeError('node_not_found', `job [${id}] belongs to node [${owner}], which is not in the cluster's registry`);
      return (await this.peers.peer(owner).call('jobs.get', [id])) as Job;
    });
  }

  /** `GET /_jobs`: every retained job of every node that answers, newest first; the nodes that did not answer. */
  listJobs(): Promise<{ jobs: Job[]; failures: Array<{ nodeId: string; nodeName: string; error: unknown }> }> {
    return this.requests.track(async () => {
      const peers = this.peers?.peers() ?? [];
      const answers = await Promise.allSettled(peers.map(async (peer) => (await peer.call('jobs.list')) as Job[]));
      const jobs = [...this.jobs.list()];
      const failures: Array<{ nodeId: string; nodeName: string; error: unknown }> = [];
      answers.forEach((answer, index) => {
        if (answer.status === 'fulfilled') jobs.push(...answer.value);
        else failures.push({ nodeId: peers[index].nodeId, nodeName: peers[index].nodeName, error: answer.reason });
      });
      jobs.sort((left, right) => right.createdAt - left.createdAt);
      return { jobs, failures };
    });
  }

  /** The name of node `nodeId` as the registry records it (this node's own name for itself). */
  nodeNameOf(nodeId: string): string {
    if (nodeId === this.context.nodeId) return this.localNodeName;
    return this.peers?.record(nodeId)?.name ?? nodeId;
  }

  /** This node as a compaction node (what the internal node API's `compact` answers with). */
  localNode(): LocalCompactionNode {
    return new LocalCompactionNode(this.context, this.jobs, this.faults);
  }

  /** Every segment of the started local shard copies (`_cat/segments`). */
  segments(): Promise<SegmentRow[]> {
    return segmentRows(this.context, this.localNodeName);
  }

  /** The `segments` and `compaction` sections of the node stats (epochs, merges, backlog, jobs). */
  async maintenanceStats(): Promise<MaintenanceStats> {
    return maintenanceStats(await this.context.router.startedStats(), this.jobs.stats());
  }
}
