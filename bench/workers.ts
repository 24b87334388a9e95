/**
 * Suite `workers`: one node with its shards in a pool of worker threads against the same node
 * with its shards in the HTTP thread (`node.shard_workers: 0`), one after the other on the same
 * machine. Each loads the e-mails into a 2-shard collection with `_bulk` requests in flight,
 * compacts, then runs the e-mail queries of the HTTP mix with several clients and with one.
 */
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Pool } from 'undici';
import { EMAIL_MAPPING, emailCorpus } from './corpora/emails.ts';
import { cityCorpus } from './corpora/cities.ts';
import { bulkLoad, prepareBulkBodies, type LoadResult } from './http/bulk-load.ts';
import { compactCollection } from './http/compaction.ts';
import { driveMix, type DriveResult } from './http/drive.ts';
import { buildQueryMix, collectSamples, MIX_KINDS, type MixQuery } from './http/query-mix.ts';
import { startServer } from './http/server-process.ts';
import { querySetFile, readQuerySet } from './query-set.ts';
import { renderTable, verdict } from './report/table.ts';

/** Knobs of the workers suite. */
export interface WorkersSuiteOptions {
  docs: number;
  /** Worker threads of the pooled run. */
  workers: number;
  clients: number;
  bulkConcurrency: number;
  warmupMs: number;
  durationMs: number;
}

/** What one server configuration measured. */
interface RunFigures {
  load: LoadResult;
  mix: DriveResult;
  singleClient: DriveResult;
}

const BATCH = 1000;
const SHARDS = 2;

async function runOnce(settings: Record<string, string>, mix: MixQuery[], corpusPath: string, options: WorkersSuiteOptions, dataDir: string): Promise<RunFigures> {
  const bodies = await prepareBulkBodies({ collection: 'emails', corpusPath, docs: options.docs, batchSize: BATCH });
  const server = await startServer(dataDir, settings);
  const pool = new Pool(server.origin, { connections: Math.max(options.clients, options.bulkConcurrency) });
  try {
    const created = await pool.request({
      method: 'PUT',
      path: '/emails',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ settings: { number_of_shards: SHARDS, number_of_replicas: 0 }, mappings: EMAIL_MAPPING }),
    });
    const text = await created.body.text();
    if (created.statusCode !== 200) throw new Error(`PUT /emails answered ${created.statusCode}: ${text.slice(0, 300)}`);
    const load = await bulkLoad(pool, 'emails', bodies, options.bulkConcurrency);
    bodies.bodies = [];
    process.stderr.write(`  [${JSON.stringify(settings)}] loaded ${load.docs} e-mails in ${(load.ms / 1000).toFixed(1)} s\n`);
    await compactCollection(pool, 'emails');
    const requests = new Map(mix.map((query) => [query, JSON.stringify(query.body)]));
    const execute = async (query: MixQuery): Promise<void> => {
      const response = await pool.request({ method: 'POST', path: '/emails/_search', headers: { 'content-type': 'application/json' }, body: requests.get(query) });
      const body = await response.body.text();
      if (response.statusCode !== 200) throw new Error(`status ${response.statusCode}: ${body.slice(0, 200)}`);
    };
    const timing = { warmupMs: options.warmupMs, durationMs: options.durationMs };
    const concurrent = await driveMix(mix, { concurrency: options.clients, ...timing }, execute);
    const singleClient = await driveMix(mix, { concurrency: 1, ...timing }, execute);
    return { load, mix: concurrent, singleClient };
  } finally {
    await pool.close();
    await server.stop();
  }
}

function ratio(value: number, base: number): string {
  return base > 0 ? `${(value / base).toFixed(2)}×` : 'n/a';
}

function render(options: WorkersSuiteOptions, pooled: RunFigures, inThread: RunFigures): string {
  const docsPerSecond = (load: LoadResult): number => (load.docs / load.ms) * 1000;
  const rows: string[][] = [
    [
      `_bulk docs/s (${options.bulkConcurrency} in flight)`,
      docsPerSecond(pooled.load).toFixed(0),
      docsPerSecond(inThread.load).toFixed(0),
      ratio(docsPerSecond(pooled.load), docsPerSecond(inThread.load)),
      '≥ 1.5×',
      verdict(docsPerSecond(pooled.load) >= 1.5 * docsPerSecond(inThread.load)),
    ],
    [
      `query mix q/s (${options.clients} clients)`,
      pooled.mix.queriesPerSecond.toFixed(1),
      inThread.mix.queriesPerSecond.toFixed(1),
      ratio(pooled.mix.queriesPerSecond, inThread.mix.queriesPerSecond),
      '≥ 1.6×',
      verdict(pooled.mix.queriesPerSecond >= 1.6 * inThread.mix.queriesPerSecond),
    ],
  ];
  for (const kind of MIX_KINDS) {
    const pooledKind = pooled.singleClient.perKind[kind];
    const inThreadKind = inThread.singleClient.perKind[kind];
    if (pooledKind.queries === 0 || inThreadKind.queries === 0) continue;
    rows.push([
      `1 client p50 ms, ${kind}`,
      pooledKind.p50Ms.toFixed(2),
      inThreadKind.p50Ms.toFixed(2),
      ratio(pooledKind.p50Ms, inThreadKind.p50Ms),
      '≤ 1.1×',
      verdict(pooledKind.p50Ms <= 1.1 * inThreadKind.p50Ms),
    ]);
  }
  const errors = [pooled, inThread].flatMap((run) => [run.mix.firstError, run.singleClient.firstError]).filter((error) => error !== null);
  const header = `Workers: ${options.docs} e-mails in ${SHARDS} shards; shards in ${options.workers} worker threads vs in the HTTP thread`;
  return [header, renderTable(['figure', `workers:${options.workers}`, 'in thread', 'ratio', 'target', 'status'], rows), ...errors.map((error) => `error: ${error}`)].join('\n');
}

/** Runs the suite and prints its table on stdout. */
export async function workersSuite(options: WorkersSuiteOptions): Promise<void> {
  process.stderr.write(`workers: preparing ${options.docs} e-mails and the query mix\n`);
  const emailPath = await emailCorpus(options.docs);
  const cityPath = await cityCorpus();
  const querySet = readQuerySet(await querySetFile(emailPath, options.docs));
  const mix = buildQueryMix(querySet, await collectSamples(emailPath, options.docs, cityPath, 1000)).filter((query) => query.collection === 'emails');
  const workDir = await fs.mkdtemp(path.join(os.tmpdir(), 'trove-bench-workers-'));
  try {
    process.stderr.write(`workers: shards in ${options.workers} worker threads\n`);
    const pooled = await runOnce({ 'node.shard_workers': String(options.workers) }, mix, emailPath, options, path.join(workDir, 'pooled'));
    process.stderr.write('workers: shards in the HTTP thread\n');
    const inThread = await runOnce({ 'node.shard_workers': '0' }, mix, emailPath, options, path.join(workDir, 'in-thread'));
    process.stdout.write(`\n${render(options, pooled, inThread)}\n\n`);
  } finally {
    await fs.rm(workDir, { recursive: true, force: true });
  }
}
