/**
 * `GET /{collection}/_recovery`: how the collection's replica copies last recovered, on every
 * node (Elasticsearch's index recovery API, for finished peer recoveries): from which node, by
 * operations or by copying files, how many files, bytes and records, how long. Each node keeps
 * the recoveries of its own copies since it started; a node that does not answer is listed in
 * `_nodes.failures` instead of failing the request.
 */
import type { PeerDirectory } from '../cluster/remote/peer-nodes.ts';
import type { CopyRecovery } from '../cluster/replication/copy-roles.ts';
import type { Router } from '../cluster/router.ts';

/** How long the other nodes have to answer. */
const PEER_WAIT_MS = 5_000;

/** One shard copy's recovery, in the ES layout plus Trove's `method`. */
export interface RecoveryRow {
  id: number;
  type: 'PEER';
  stage: 'DONE';
  primary: false;
  method: CopyRecovery['method'];
  start_time_in_millis: number;
  stop_time_in_millis: number;
  total_time_in_millis: number;
  source: { id: string };
  target: { id: string };
  index: { files: { total: number; recovered: number }; size: { total_in_bytes: number; recovered_in_bytes: number } };
  translog: { recovered: number; total: number; recovered_in_bytes: number };
}

/** The answer of `GET /{collection}/_recovery`. */
export type CollectionRecoveries = Record<string, { shards: RecoveryRow[] }> & {
  _nodes?: { total: number; successful: number; failed: number; failures: Array<{ node_id: string; reason: string }> };
};

/** See the module comment. */
export class RecoveryService {
  constructor(
    private readonly router: Router,
    /** This node's recoveries. */
    private readonly local: () => CopyRecovery[],
    private readonly peers?: PeerDirectory,
  ) {}

  /** The recoveries of `name`'s copies on every node, by shard and then target node. */
  async collection(name: string): Promise<CollectionRecoveries> {
    const hosted = this.router.collection(name);
    const peers = this.peers?.peers() ?? [];
    const failures: Array<{ node_id: string; reason: string }> = [];
    const answers = await Promise.all(
      peers.map((peer) =>
        peer.call('node.recoveries', [], PEER_WAIT_MS).then(
          (rows) => rows as CopyRecovery[],
          (error: unknown) => {
            failures.push({ node_id: peer.nodeId, reason: (error as Error).message });
            return [] as CopyRecovery[];
          },
        ),
      ),
    );
    const rows = [this.local(), ...answers]
      .flat()
      .filter((recovery) => recovery.collection === name && hosted.meta.shards[recovery.shard] !== undefined)
      .sort((left, right) => left.shard - right.shard || (left.target < right.target ? -1 : 1))
      .map(toRow);
    const answer: CollectionRecoveries = { [name]: { shards: rows } } as CollectionRecoveries;
    if (failures.length > 0) answer._nodes = { total: peers.length + 1, successful: peers.length + 1 - failures.length, failed: failures.length, failures };
    return answer;
  }
}

function toRow(recovery: CopyRecovery): RecoveryRow {
  return {
    id: recovery.shard,
    type: 'PEER',
    stage: 'DONE',
    primary: false,
    method: recovery.method,
    start_time_in_millis: recovery.startedAt,
    stop_time_in_millis: recovery.startedAt + recovery.tookMs,
    total_time_in_millis: recovery.tookMs,
    source: { id: recovery.source },
    target: { id: recovery.target },
    index: { files: { total: recovery.files, recovered: recovery.files }, size: { total_in_bytes: recovery.fileBytes, recovered_in_bytes: recovery.fileBytes } },
    translog: { recovered: recovery.records, total: recovery.records, recovered_in_bytes: recovery.recordBytes },
  };
}
