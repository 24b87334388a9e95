/**
 * Suite `cluster`: three nodes on a real etcd against one node, same data (e-mails in a 3-shard
 * collection), one after the other on the same machine. In the cluster the collection is created
 * while two nodes run, so its shards sit on those two; the third node joins afterwards and holds no
 * shard of it: every request goes through that node, so each search fans out over the network and
 * each bulk request is split and forwarded. Figures: `_bulk` indexing throughput, and single-client
 * p50 per query class of the HTTP mix.
 */
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Pool } from 'undici';
import { startEtcd } from '../test/etcd.fixture.ts';
import { EMAIL_MAPPING, emailCorpus } from './corpora/emails.ts';
import { cityCorpus } from './corpora/cities.ts';
import { bulkLoad, prepareBulkBodies, type LoadResult } from './http/bulk-load.ts';
import { compactCollection } from './http/compaction.ts';
import { driveMix, type DriveResult } from './http/drive.ts';
import { buildQueryMix, collectSamples, MIX_KINDS, type MixQuery } from './http/query-mix.ts';
import { startServer, type ServerProcess } from './http/server-process.ts';
import { querySetFile, readQuerySet } from './query-set.ts';
import { renderTable, verdict } from './report/table.ts';

/** Knobs of the cluster suite. */
export interface ClusterSuiteOptions {
  docs: number;
  bulkConcurrency: number;
  warmupMs: number;
  durationMs: number;
}

/** What one configuration measured. */
interface RunFigures {
  load: LoadResult;
  singleClient: DriveResult;
}

const BATCH = 1000;
const SHARDS = 3;
const READY_TIMEOUT_MS = 60_000;

async function json(pool: Pool, method: 'GET' | 'PUT', requestPath: string, body?: unknown): Promise<{ status: number; body: any }> {
  const response = await pool.request({ method, path: requestPath, headers: { 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await response.body.text();
  return { status: response.statusCode, body: text === '' ? null : JSON.parse(text) };
}

/** Waits until the node behind `pool` sees `count` nodes. */
async function waitForNodes(pool: Pool, count: number): Promise<void> {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  while ((await json(pool, 'GET', '/_cluster/health')).body.number_of_nodes !== count) {
    if (Date.now() > deadline) throw new Error(`the cluster did not reach ${count} nodes`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/** Creates the 3-shard e-mail collection through `pool`. */
async function createEmails(pool: Pool): Promise<void> {
  const created = await json(pool, 'PUT', '/emails', { settings: { number_of_shards: SHARDS, number_of_replicas: 0 }, mappings: EMAIL_MAPPING });
  if (created.status !== 200) throw new Error(`PUT /emails answered ${created.status}: ${JSON.stringify(created.body).slice(0, 300)}`);
}

/** Loads, compacts and queries the e-mails through `entry`. */
async function measure(entry: Pool, mix: MixQuery[], corpusPath: string, options: ClusterSuiteOptions, label: string): Promise<RunFigures> {
  const bodies = await prepareBulkBodies({ collection: 'emails', corpusPath, docs: options.docs, batchSize: BATCH });
  const load = await bulkLoad(entry, 'emails', bodies, options.bulkConcurrency);
  bodies.bodies = [];
  process.stderr.write(`  [${label}] loaded ${load.docs} e-mails in ${(load.ms / 1000).toFixed(1)} s\n`);
  await compactCollection(entry, 'emails');
  const requests = new Map(mix.map((query) => [query, JSON.stringify(query.body)]));
  const execute = async (query: MixQuery): Promise<void> => {
    const response = await entry.request({ method: 'POST', path: '/emails/_search', headers: { 'content-type': 'application/json' }, body: requests.get(query) });
    const body = await response.body.text();
    if (response.statusCode !== 200) throw new Error(`status ${response.statusCode}: ${body.slice(0, 200)}`);
  };
  const singleClient = await driveMix(mix, { concurrency: 1, warmupMs: options.warmupMs, durationMs: options.durationMs }, execute);
  return { load, singleClient };
}

async function singleNode(mix: MixQuery[], corpusPath: string, options: ClusterSuiteOptions, dataDir: string): Promise<RunFigures> {
  const server = await startServer(dataDir);
  const pool = new Pool(server.origin, { connections: options.bulkConcurrency });
  try {
    await createEmails(pool);
    return await measure(pool, mix, corpusPath, options, 'one node');
  } finally {
    await pool.close();
    await server.stop();
  }
}

async function threeNodes(mix: MixQuery[], corpusPath: string, options: ClusterSuiteOptions, dataDir: string): Promise<RunFigures> {
  const etcd = await startEtcd();
  const servers: ServerProcess[] = [];
  const pools: Pool[] = [];
  try {
    const start = async (index: number): Promise<Pool> => {
      const settings = { 'cluster.etcd': etcd.endpoint, 'cluster.name': 'bench', 'node.name': `node-${index + 1}` };
      servers.push(await startServer(path.join(dataDir, `node-${index + 1}`), settings));
      const pool = new Pool(servers[index]!.origin, { connections: options.bulkConcurrency });
      pools.push(pool);
      return pool;
    };
    const first = await start(0);
    await start(1);
    await waitForNodes(first, 2);
    // Created while two nodes run: its shards sit on them, and the third node holds none.
    await createEmails(first);
    const entry = await start(2);
    await waitForNodes(entry, 3);
    const placed = await json(entry, 'GET', '/_cluster/state/shards');
    const holders = new Set(Object.values(placed.body.shards.emails as Record<string, { primary: { node: string } }>).map((shard) => shard.primary.node));
    const entryId = (await json(entry, 'GET', '/_node/_local')).body.node_id;
    if (holders.has(entryId)) throw new Error('the entry node holds a shard of the collection');
    return await measure(entry, mix, corpusPath, options, 'three nodes, through a node with no shard');
  } finally {
    for (const pool of pools) await pool.close();
    for (const server of servers) await server.stop();
    await etcd.cleanup();
  }
}

function ratio(value: number, base: number): string {
  return base > 0 ? `${(value / base).toFixed(2)}×` : 'n/a';
}

function render(options: ClusterSuiteOptions, cluster: RunFigures, single: RunFigures): string {
  const docsPerSecond = (load: LoadResult): number => (load.docs / load.ms) * 1000;
  const rows: string[][] = [
    [
      `_bulk docs/s (${options.bulkConcurrency} in flight)`,
      docsPerSecond(cluster.load).toFixed(0),
      docsPerSecond(single.load).toFixed(0),
      ratio(docsPerSecond(cluster.load), docsPerSecond(single.load)),
      'report',
      '',
    ],
  ];
  for (const kind of MIX_KINDS) {
    const clustered = cluster.singleClient.perKind[kind];
    const alone = single.singleClient.perKind[kind];
    if (clustered.queries === 0 || alone.queries === 0) continue;
    rows.push([`1 client p50 ms, ${kind}`, clustered.p50Ms.toFixed(2), alone.p50Ms.toFixed(2), ratio(clustered.p50Ms, alone.p50Ms), '≤ 1.5×', verdict(clustered.p50Ms <= 1.5 * alone.p50Ms)]);
  }
  const errors = [cluster, single].map((run) => run.singleClient.firstError).filter((error) => error !== null);
  const header = `Cluster: ${options.docs} e-mails in ${SHARDS} shards; three nodes on etcd (through a node that holds no shard) vs one node`;
  return [header, renderTable(['figure', '3 nodes', '1 node', 'ratio', 'target', 'status'], rows), ...errors.map((error) => `error: ${error}`)].join('\n');
}

/** Runs the suite and prints its table on stdout. */
export async function clusterSuite(options: ClusterSuiteOptions): Promise<void> {
  process.stderr.write(`cluster: preparing ${options.docs} e-mails and the query mix\n`);
  const emailPath = await emailCorpus(options.docs);
  const cityPath = await cityCorpus();
  const querySet = readQuerySet(await querySetFile(emailPath, options.docs));
  const mix = buildQueryMix(querySet, await collectSamples(emailPath, options.docs, cityPath, 1000)).filter((query) => query.collection === 'emails');
  const workDir = await fs.mkdtemp(path.join(os.tmpdir(), 'trove-bench-cluster-'));
  try {
    process.stderr.write('cluster: three nodes\n');
    const cluster = await threeNodes(mix, emailPath, options, path.join(workDir, 'cluster'));
    process.stderr.write('cluster: one node\n');
    const single = await singleNode(mix, emailPath, options, path.join(workDir, 'single'));
    process.stdout.write(`\n${render(options, cluster, single)}\n\n`);
  } finally {
    await fs.rm(workDir, { recursive: true, force: true });
  }
}
