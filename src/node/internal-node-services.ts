/**
 * What a node serves to the other nodes of its cluster through the internal node API
 * (src/api/routes/internal-node.ts): its own trash, its compaction of a collection's primaries, its jobs,
 * and its own node views. Each is the local implementation of an interface whose remote
 * implementation the other nodes hold (RemoteNodeTrash, RemoteCompactionNode, RemoteNodeViews).
 */
import type { CopyRoles } from '../cluster/replication/copy-roles.ts';
import type { JobQueue } from '../jobs/job-queue.ts';
import type { LocalCopyState } from '../ops/cluster/cluster-health.ts';
import type { AuthCountersSnapshot } from '../ops/security/auth-counters.ts';
import type { NodeTrash } from '../trash/node-trash.ts';
import type { CompactionNode } from './compaction.ts';
import type { NodeViews } from './node-views.ts';

/** See the module comment. */
export interface InternalNodeServices {
  trash: NodeTrash;
  compaction: () => CompactionNode;
  /** This node's batch jobs. */
  jobs: Pick<JobQueue, 'get' | 'list'>;
  /** This node's views, with the HTTP layer's authentication counters. */
  views: (security: () => AuthCountersSnapshot | null) => NodeViews;
  /** The state of every shard copy open or opening here, by shard UUID. */
  shardStates: () => Record<string, LocalCopyState>;
  /** Replication's node methods: records and positions of replica copies, tracking by primaries, held files. */
  replication: Pick<CopyRoles, 'replicaApply' | 'replicaPosition' | 'primaryTrack' | 'heldFile' | 'recoveries'>;
  /** Resolves once this node has applied catalog revision `revision`. */
  waitForRevision: (revision: number) => Promise<void>;
}
