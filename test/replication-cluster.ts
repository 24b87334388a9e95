/**
 * The cluster of the replication fault-injection suite: a real etcd and three nodes with a short
 * node TTL (started through the harness), which nodes are down right now, and the nemesis'
 * faults on them: kill -9 and restart a node on its data, SIGSTOP a node past its lease then
 * SIGCONT it, kill -9 and restart etcd on its data. Also the bounded wait for health and the
 * routing table read from `_cluster/state`.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { startEtcd, type EtcdServer } from './etcd.fixture.ts';
import { startServer, type TroveServer } from './harness.ts';
import { timedCall } from './replication-workload.ts';

/** One shard's row of the routing table: its uuid and the node ids of its copies, by state. */
export interface ShardRouting {
  uuid: string;
  primary: { node: string | null; state: string };
  replicas: Array<{ node: string | null; state: string }>;
}

/** A started cluster and what the nemesis did to it. */
export interface NemesisCluster {
  etcd: EtcdServer;
  nodes: TroveServer[];
  /** Node id of each server, by index. */
  nodeIds: string[];
  /** Indexes of nodes killed and not yet restarted. */
  down: Set<number>;
  /** Indexes of nodes stopped by SIGSTOP and not yet continued. */
  paused: Set<number>;
  /** A random node that is not down (a paused one may be picked: its requests hang, then time out). */
  pickNode(): TroveServer;
  /** Stops everything and removes the data directories. */
  cleanup(): Promise<void>;
}

/** Starts etcd and `count` nodes with node TTL `ttlMs` (and extra environment `env`); waits until every node sees all of them. */
export async function startNemesisCluster(options: { count: number; ttlMs: number; name: string; env?: Record<string, string> }): Promise<NemesisCluster> {
  const etcd = await startEtcd();
  const starts = Array.from({ length: options.count }, (_, index) =>
    startServer({ settings: { 'cluster.etcd': etcd.endpoint, 'cluster.name': options.name, 'node.name': `node-${index + 1}`, 'cluster.node_ttl_ms': String(options.ttlMs) }, env: options.env }),
  );
  const started = await Promise.allSettled(starts);
  const failed = started.find((outcome) => outcome.status === 'rejected');
  if (failed !== undefined) {
    for (const outcome of started) if (outcome.status === 'fulfilled') await outcome.value.cleanup();
    await etcd.cleanup();
    throw (failed as PromiseRejectedResult).reason;
  }
  const nodes = started.map((outcome) => (outcome as PromiseFulfilledResult<TroveServer>).value);
  const down = new Set<number>();
  const paused = new Set<number>();
  const cluster: NemesisCluster = {
    etcd,
    nodes,
    nodeIds: [],
    down,
    paused,
    pickNode: () => {
      const live = nodes.filter((_, index) => !down.has(index));
      return live[Math.floor(Math.random() * live.length)] ?? nodes[0]!;
    },
    cleanup: async () => {
      for (const [index, node] of nodes.entries()) {
        if (paused.has(index)) process.kill(node.pid()!, 'SIGCONT');
        await node.cleanup();
      }
      await etcd.cleanup();
    },
  };
  await waitUntil(async () => ((await Promise.all(nodes.map(nodeCount))).every((seen) => seen === options.count) ? true : undefined), 60_000);
  for (const node of nodes) {
    const local = await timedCall(node, 'GET', '/_node/_local');
    if ('failure' in local) throw new Error(`node ${node.url} did not say its id: ${local.failure}`);
    cluster.nodeIds.push(local.body.node_id);
  }
  return cluster;
}

async function nodeCount(node: { url: string }): Promise<number> {
  const health = await timedCall(node, 'GET', '/_cluster/health', undefined, 2_000);
  return 'failure' in health ? -1 : health.body.number_of_nodes;
}

/** Polls `probe` every 100 ms until it returns a value; undefined once `timeoutMs` has passed. */
export async function waitUntil<T>(probe: () => Promise<T | undefined>, timeoutMs: number): Promise<T | undefined> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe().catch(() => undefined);
    if (value !== undefined) return value;
    if (Date.now() > deadline) return undefined;
    await sleep(100);
  }
}

/**
 * Waits (at most `timeoutMs`) until every node reaches etcd, sees every node, and reports the
 * cluster green, or yellow when there are fewer nodes than copies. The last health seen, when it never did.
 */
export async function waitHealthy(cluster: NemesisCluster, copies: number, timeoutMs: number): Promise<{ healthy: boolean; last: string }> {
  let last = '';
  const healthy = await waitUntil(async () => {
    const answers = await Promise.all(cluster.nodes.map((node) => timedCall(node, 'GET', '/_cluster/health', undefined, 2_000)));
    last = answers.map((answer) => ('failure' in answer ? answer.failure : `${answer.body.status}/${answer.body.number_of_nodes}/${answer.body.coordinator?.available}`)).join(' ');
    const good = answers.every((answer) => {
      if ('failure' in answer || answer.status !== 200) return false;
      const { status, number_of_nodes: seen, coordinator } = answer.body;
      const acceptable = status === 'green' || (status === 'yellow' && cluster.nodes.length < copies);
      return acceptable && seen === cluster.nodes.length && coordinator?.available !== false;
    });
    return good ? true : undefined;
  }, timeoutMs);
  return { healthy: healthy === true, last };
}

/** The routing table of `collection` as some live node reports it, by shard number; null when none answers. */
export async function routingTable(cluster: NemesisCluster, collection: string): Promise<ShardRouting[] | null> {
  for (let attempt = 0; attempt < 5; attempt++) {
    const answer = await timedCall(cluster.pickNode(), 'GET', '/_cluster/state/shards', undefined, 2_000);
    if ('failure' in answer || answer.status !== 200) continue;
    const shards = answer.body.shards?.[collection] as Record<string, ShardRouting> | undefined;
    if (shards === undefined) continue;
    return Object.keys(shards).sort((left, right) => Number(left) - Number(right)).map((shard) => shards[shard]!);
  }
  return null;
}

/** kill -9 one node, then start it again on its data directory. */
export async function killAndRestart(cluster: NemesisCluster, index: number, downMs: number): Promise<void> {
  cluster.down.add(index);
  await cluster.nodes[index]!.kill('SIGKILL');
  await sleep(downMs);
  await cluster.nodes[index]!.restart();
  cluster.down.delete(index);
}

/** SIGSTOP one node for `pauseMs` (past its lease), then SIGCONT it. */
export async function pauseNode(cluster: NemesisCluster, index: number, pauseMs: number): Promise<void> {
  const pid = cluster.nodes[index]!.pid()!;
  cluster.paused.add(index);
  process.kill(pid, 'SIGSTOP');
  try {
    await sleep(pauseMs);
  } finally {
    process.kill(pid, 'SIGCONT');
    cluster.paused.delete(index);
  }
}

/** kill -9 etcd, then start it again on its data directory. */
export async function restartEtcd(cluster: NemesisCluster, downMs: number): Promise<void> {
  await cluster.etcd.kill('SIGKILL');
  await sleep(downMs);
  await cluster.etcd.restart();
}
