/**
 * Suite `replication`: what primary-backup replication costs and how fast it repairs, on a real
 * etcd and real node processes (bench/replication/cluster.ts), in one run:
 *
 * 1. Single-client write latency (p50/p99) and `_bulk` throughput on 2 and 3 nodes with 0 and 1
 *    replica, one shard per node, every request sent to the first node; ratios against the same
 *    node count without replicas.
 * 2. Failover: 3 nodes with a 2 s node TTL, steady writes to one document; kill -9 the node of its
 *    shard's primary and time the first write acknowledged under a newer primary term; restart the
 *    node, wait for green, again.
 * 3. Recovery: a replica added to a loaded 1-shard collection, by operations (full history) and by
 *    copying files (history trimmed), MB/s from `GET /{collection}/_recovery`.
 */
import os from 'node:os';
import { BenchCluster, json } from './replication/cluster.ts';
import { bulkThroughput, createCollection, failoverRound, idOnShard, recoveryRun, writeLatency, type FailoverRound, type RecoveryRun } from './replication/measures.ts';
import type { LoadResult } from './http/bulk-load.ts';
import { formatMs, formatRate, formatRatio, percentile } from './report/stats.ts';
import { renderTable } from './report/table.ts';

/** Knobs of the replication suite. */
export interface ReplicationSuiteOptions {
  /** Timed single-client writes per configuration. */
  writes: number;
  /** Untimed writes before them, in milliseconds. */
  warmupMs: number;
  /** Documents of the `_bulk` load per configuration. */
  bulkDocs: number;
  /** Documents loaded before a replica is added, per recovery run. */
  recoveryDocs: number;
  /** Failover rounds. */
  failovers: number;
}

/** `_bulk` requests in flight. */
const BULK_CLIENTS = 2;
const NODE_TTL_MS = 2_000;
/** WAL file size of the failover and file-recovery cluster, so that a history can be trimmed. */
const SMALL_WAL_SEGMENT = '1mb';
const FAILOVER_SHARDS = 3;

/** One write and bulk configuration and what it measured. */
interface ConfigurationFigures {
  nodes: number;
  replicas: number;
  shards: number;
  writes: number[];
  bulk: LoadResult;
}

function loadLine(): string {
  return os.loadavg().map((value) => value.toFixed(2)).join(' / ');
}

/** Write latency and bulk throughput of `replicas` replicas on the cluster's nodes. */
async function measureConfiguration(cluster: BenchCluster, replicas: number, options: ReplicationSuiteOptions): Promise<ConfigurationFigures> {
  const nodes = cluster.nodes.length;
  const collection = `writes-${nodes}n-${replicas}r`;
  const entry = cluster.nodes[0]!.pool;
  await createCollection(entry, collection, nodes, replicas);
  await cluster.waitGreen(collection, replicas);
  process.stderr.write(`replication: ${nodes} nodes, ${replicas} replica(s): ${options.writes} writes\n`);
  const writes = await writeLatency(entry, collection, options.warmupMs, options.writes);
  process.stderr.write(`replication: ${nodes} nodes, ${replicas} replica(s): _bulk of ${options.bulkDocs} docs\n`);
  const bulk = await bulkThroughput(entry, collection, options.bulkDocs, BULK_CLIENTS);
  const deleted = await json(entry, 'DELETE', `/${collection}`);
  if (deleted.status !== 200) process.stderr.write(`replication: DELETE /${collection} answered ${deleted.status}\n`);
  return { nodes, replicas, shards: nodes, writes, bulk };
}

function docsPerSecond(load: LoadResult): number {
  return (load.docs / load.ms) * 1000;
}

function renderConfigurations(figures: ConfigurationFigures[]): string {
  const rows = figures.map((figure) => {
    const base = figures.find((other) => other.nodes === figure.nodes && other.replicas === 0)!;
    const p50 = percentile(figure.writes, 0.5);
    const p99 = percentile(figure.writes, 0.99);
    return [
      `${figure.nodes} nodes, ${figure.replicas} replica${figure.replicas === 1 ? '' : 's'}`,
      String(figure.shards),
      formatMs(p50),
      formatMs(p99),
      formatRatio(p50 / percentile(base.writes, 0.5)),
      formatRatio(p99 / percentile(base.writes, 0.99)),
      formatRate(docsPerSecond(figure.bulk), 'docs/s'),
      formatRate(figure.bulk.sourceBytes / 1e3 / figure.bulk.ms, 'MB/s'),
      formatRatio(docsPerSecond(figure.bulk) / docsPerSecond(base.bulk)),
    ];
  });
  return renderTable(['configuration', 'shards', 'write p50', 'write p99', 'p50 vs 0 rep', 'p99 vs 0 rep', '_bulk', '_bulk source', '_bulk vs 0 rep'], rows);
}

function renderFailovers(rounds: FailoverRound[]): string {
  const rows = rounds.map((round, index) => [
    String(index + 1),
    `${round.killed} → ${round.promoted}`,
    `${round.termBefore} → ${round.termAfter}`,
    formatMs(round.failoverMs),
    formatRatio(round.failoverMs / NODE_TTL_MS),
    Object.entries(round.refusals).map(([status, count]) => `${status}×${count}`).join(' ') || 'none',
    formatMs(round.rejoinMs),
  ]);
  const median = percentile(rounds.map((round) => round.failoverMs), 0.5);
  return [
    renderTable(['round', 'primary killed → promoted', 'term', 'kill → first write, new term', 'vs TTL', 'refused meanwhile', 'restart → green'], rows),
    `median kill → first acknowledged write under the new term: ${formatMs(median)} (node TTL ${NODE_TTL_MS} ms, ${formatRatio(median / NODE_TTL_MS)})`,
  ].join('\n');
}

function renderRecoveries(runs: RecoveryRun[]): string {
  const rows = runs.map((run) => [
    run.wanted,
    run.method === run.wanted ? run.method : `${run.method} (NOT ${run.wanted})`,
    String(run.docs),
    `${run.files} / ${(run.fileBytes / 1e6).toFixed(1)} MB`,
    `${run.records} / ${(run.recordBytes / 1e6).toFixed(1)} MB`,
    formatMs(run.tookMs),
    formatRate((run.fileBytes + run.recordBytes) / 1e3 / run.tookMs, 'MB/s'),
    formatRate((run.docs / run.tookMs) * 1000, 'docs/s'),
    formatMs(run.wallMs),
  ]);
  const notes = runs.filter((run) => run.wanted === 'files').map((run) => `file-based: history start trimmed ${run.trimmed}`);
  const sources = runs.map((run) => `${run.wanted}: ${(run.sourceBytes / 1e6).toFixed(1)} MB of JSON sources`).join('; ');
  return [renderTable(['recovery', 'method (_recovery)', 'docs', 'files / bytes', 'records / bytes', 'time', 'throughput', 'docs/s', 'settings → green'], rows), ...notes, sources].join('\n');
}

/** Runs the suite and prints its tables on stdout. */
export async function replicationSuite(options: ReplicationSuiteOptions): Promise<void> {
  const loadAtStart = loadLine();
  const configurations: ConfigurationFigures[] = [];
  const recoveries: RecoveryRun[] = [];
  for (const nodes of [2, 3]) {
    process.stderr.write(`replication: starting etcd and ${nodes} nodes\n`);
    const cluster = await BenchCluster.start({ nodes, name: `bench-${nodes}`, connections: BULK_CLIENTS });
    try {
      for (const replicas of [0, 1]) configurations.push(await measureConfiguration(cluster, replicas, options));
      if (nodes === 3) {
        process.stderr.write(`replication: operation-based recovery of ${options.recoveryDocs} docs\n`);
        recoveries.push(await recoveryRun(cluster, 'recover-operations', options.recoveryDocs, 'operations'));
      }
    } finally {
      await cluster.stop();
    }
  }

  process.stderr.write(`replication: starting etcd and 3 nodes (node TTL ${NODE_TTL_MS} ms, WAL files of ${SMALL_WAL_SEGMENT})\n`);
  const cluster = await BenchCluster.start({
    nodes: 3,
    name: 'bench-failover',
    connections: BULK_CLIENTS,
    settings: { 'cluster.node_ttl_ms': String(NODE_TTL_MS), 'wal.segment_bytes': SMALL_WAL_SEGMENT },
  });
  const rounds: FailoverRound[] = [];
  try {
    await createCollection(cluster.nodes[0]!.pool, 'failover', FAILOVER_SHARDS, 1);
    await cluster.waitGreen('failover', 1);
    const id = idOnShard(0, FAILOVER_SHARDS);
    for (let round = 0; round < options.failovers; round++) {
      process.stderr.write(`replication: failover round ${round + 1}\n`);
      rounds.push(await failoverRound(cluster, 'failover', 0, id));
    }
    process.stderr.write(`replication: file-based recovery of ${options.recoveryDocs} docs\n`);
    recoveries.push(await recoveryRun(cluster, 'recover-files', options.recoveryDocs, 'files'));
  } finally {
    await cluster.stop();
  }

  const out = [
    '',
    `## Replication: write cost (${options.writes} single-client PUTs after ${options.warmupMs / 1000} s of warm-up; _bulk of ${options.bulkDocs} small docs, 1 000 per request, ${BULK_CLIENTS} in flight; one shard per node, every request to node 1)`,
    '',
    renderConfigurations(configurations),
    '',
    `## Failover: 3 nodes, ${FAILOVER_SHARDS} shards, 1 replica, node TTL ${NODE_TTL_MS} ms; single-client writes to one document of shard 0 through a node without its primary, whose node is killed with SIGKILL`,
    '',
    renderFailovers(rounds),
    '',
    `## Recovery: replica added to a 1-shard collection of ${options.recoveryDocs} docs (~300 B each) on 3 nodes; operations: default settings; files: WAL files of ${SMALL_WAL_SEGMENT}, changes.retention_secs 0; throughput = (file + record bytes) / total_time_in_millis`,
    '',
    renderRecoveries(recoveries),
    '',
    `load average 1/5/15 min: ${loadAtStart} at start, ${loadLine()} at end`,
    '',
  ];
  process.stdout.write(out.join('\n'));
}
