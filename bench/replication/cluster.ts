/**
 * The cluster of the replication suite: a real etcd and a few Trove nodes started through the
 * test harness (free loopback ports, temporary data directories, a node can be killed and started
 * again on its data), one keep-alive connection pool per node, and the waits the suite needs:
 * every node sees every node, the cluster is green and every copy of a collection is in sync.
 */
import os from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { Pool } from 'undici';
import { startEtcd, type EtcdServer } from '../../test/etcd.fixture.ts';
import { startServer, type TroveServer } from '../../test/harness.ts';

/** One node of the bench cluster. */
export interface BenchNode {
  server: TroveServer;
  /** Keep-alive connections to the node. */
  pool: Pool;
  /** The node id it reports at `GET /`. */
  id: string;
}

/** A decoded JSON answer. */
export interface JsonAnswer {
  status: number;
  body: any;
}

/** One shard's row of `GET /_cluster/state/shards`. */
export interface ShardRow {
  uuid: string;
  primary: { node: string | null; state: string };
  replicas: Array<{ node: string | null; state: string }>;
  primary_term: number;
  in_sync: string[];
}

/** How the nodes of a bench cluster start. */
export interface BenchClusterOptions {
  nodes: number;
  name: string;
  /** Extra node settings, e.g. `{'cluster.node_ttl_ms': '2000'}`. */
  settings?: Record<string, string>;
  /** Connections of each node's pool. */
  connections: number;
}

const READY_TIMEOUT_MS = 120_000;
const REQUEST_TIMEOUT_MS = 30_000;

/** Sends one JSON request through `pool`; rejects on a transport error or after `timeoutMs`. */
export async function json(pool: Pool, method: 'GET' | 'PUT' | 'POST' | 'DELETE', requestPath: string, body?: unknown, timeoutMs = REQUEST_TIMEOUT_MS): Promise<JsonAnswer> {
  const response = await pool.request({
    method,
    path: requestPath,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
    headersTimeout: timeoutMs,
    bodyTimeout: timeoutMs,
  });
  const text = await response.body.text();
  let decoded: unknown = text;
  try {
    decoded = text === '' ? null : JSON.parse(text);
  } catch {
    // Not JSON: keep the text.
  }
  return { status: response.statusCode, body: decoded };
}

/** Polls `probe` every 100 ms until it returns a value; rejects naming `what` after `timeoutMs`. */
export async function until<T>(probe: () => Promise<T | undefined>, what: string, timeoutMs = READY_TIMEOUT_MS): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe().catch(() => undefined);
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await sleep(100);
  }
}

/** A started etcd and its nodes (see the module comment). */
export class BenchCluster {
  private constructor(
    readonly etcd: EtcdServer,
    readonly nodes: BenchNode[],
    private readonly connections: number,
  ) {}

  /** Starts etcd and the nodes, and waits until every node sees all of them. */
  static async start(options: BenchClusterOptions): Promise<BenchCluster> {
    const etcd = await startEtcd();
    const cluster = new BenchCluster(etcd, [], options.connections);
    try {
      for (let index = 0; index < options.nodes; index++) {
        const server = await startServer({
          settings: {
            'cluster.etcd': etcd.endpoint,
            'cluster.name': options.name,
            'node.name': `node-${index + 1}`,
            // The server's default (one per core), not the test harness's.
            'node.shard_workers': String(os.availableParallelism()),
            ...options.settings,
          },
        });
        const pool = new Pool(server.url, { connections: options.connections });
        cluster.nodes.push({ server, pool, id: (await json(pool, 'GET', '/')).body.node_id });
      }
      await cluster.waitNodes();
      return cluster;
    } catch (error) {
      await cluster.stop();
      throw error;
    }
  }

  /** Index of the node with id `nodeId`; throws when it is not one of ours. */
  indexOf(nodeId: string | null): number {
    const index = this.nodes.findIndex((node) => node.id === nodeId);
    if (index < 0) throw new Error(`node [${nodeId}] is not one of the bench nodes`);
    return index;
  }

  /** The routing table of `collection`, by shard number, as the node `via` reports it. */
  async shards(collection: string, via = 0): Promise<Record<string, ShardRow>> {
    const answer = await json(this.nodes[via]!.pool, 'GET', '/_cluster/state/shards');
    const shards = answer.body?.shards?.[collection] as Record<string, ShardRow> | undefined;
    if (answer.status !== 200 || shards === undefined) throw new Error(`no routing table for [${collection}]: ${answer.status}`);
    return shards;
  }

  /** Waits until every node sees every node. */
  async waitNodes(): Promise<void> {
    await until(async () => {
      const seen = await Promise.all(this.nodes.map(async (node) => (await json(node.pool, 'GET', '/_cluster/health', undefined, 2_000)).body.number_of_nodes));
      return seen.every((count) => count === this.nodes.length) ? true : undefined;
    }, `every node sees ${this.nodes.length} nodes`);
  }

  /**
   * Waits until every node sees every node and reports green, and every shard of `collection`
   * has each of its `replicas` assigned and all its copies in the in-sync set.
   */
  async waitGreen(collection: string, replicas: number, timeoutMs = READY_TIMEOUT_MS): Promise<void> {
    await until(async () => {
      for (const node of this.nodes) {
        const health = await json(node.pool, 'GET', '/_cluster/health', undefined, 2_000);
        if (health.body.status !== 'green' || health.body.number_of_nodes !== this.nodes.length) return undefined;
      }
      const rows = Object.values(await this.shards(collection));
      const synced = rows.every((row) => row.replicas.length === replicas && row.replicas.every((replica) => replica.node !== null) && row.in_sync.length === 1 + replicas);
      return synced ? true : undefined;
    }, `[${collection}] is green with every copy in sync`, timeoutMs);
  }

  /** kill -9 node `index` and waits for it to exit. */
  async kill(index: number): Promise<void> {
    await this.nodes[index]!.server.kill('SIGKILL');
  }

  /** Starts node `index` again on its data directory and port. */
  async restart(index: number): Promise<void> {
    const node = this.nodes[index]!;
    await node.pool.close();
    await node.server.restart();
    node.pool = new Pool(node.server.url, { connections: this.connections });
    node.id = (await json(node.pool, 'GET', '/')).body.node_id;
  }

  /** Stops every node and etcd, and removes their data. */
  async stop(): Promise<void> {
    for (const node of this.nodes) {
      await node.pool.close().catch(() => undefined);
      await node.server.cleanup();
    }
    await this.etcd.cleanup();
  }
}
