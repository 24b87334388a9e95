/**
 * Suite 2: one real Trove server over HTTP. The e-mail and city corpora are bulk-loaded with a
 * few `_bulk` requests in flight, compacted, then a fixed query mix runs for a fixed time with
 * concurrent clients, and again with one client. The same documents and mix then run against shards in process (a worker
 * process), so the cost of HTTP and the node layer shows beside the engine's own figures.
 */
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Pool } from 'undici';
import { CITY_MAPPING, cityCorpus } from './corpora/cities.ts';
import { EMAIL_MAPPING, emailCorpus } from './corpora/emails.ts';
import { bulkLoad, prepareBulkBodies, type LoadResult, type LoadSpec } from './http/bulk-load.ts';
import { compactCollection } from './http/compaction.ts';
import { driveMix, type DriveResult } from './http/drive.ts';
import type { InProcessReport, InProcessRequest } from './http/inprocess.ts';
import { buildQueryMix, collectSamples, type BenchCollection, type MixQuery } from './http/query-mix.ts';
import { startServer } from './http/server-process.ts';
import { querySetFile, readQuerySet } from './query-set.ts';
import { renderHttpReport } from './report/http-report.ts';
import { runWorkerProcess } from './worker-process.ts';

/** Knobs of the HTTP suite. */
export interface HttpSuiteOptions {
  /** E-mail documents to load. */
  docs: number;
  /** City documents to load (all of them by default). */
  cities: number;
  /** Concurrent query clients. */
  clients: number;
  /** `_bulk` requests in flight. */
  bulkConcurrency: number;
  warmupMs: number;
  durationMs: number;
}

/** What the server half measured. */
export interface ServerFigures {
  loads: Record<string, LoadResult>;
  /** Compaction time, or why it could not run. */
  compaction: number | string;
  /** The mix with `clients` concurrent clients. */
  mix: DriveResult;
  /** The mix with one client, the like-for-like partner of the in-process run. */
  singleClientMix: DriveResult;
}

/** Everything the HTTP suite measured. */
export interface HttpSuiteResult {
  options: HttpSuiteOptions;
  server: ServerFigures | Error;
  inProcess: InProcessReport | Error;
}

const EMAIL_BATCH = 1000;
const CITY_BATCH = 5000;
const MAPPINGS: Record<BenchCollection, object> = { emails: EMAIL_MAPPING, cities: CITY_MAPPING };

async function createCollection(pool: Pool, collection: BenchCollection): Promise<void> {
  const response = await pool.request({
    method: 'PUT',
    path: `/${collection}`,
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ settings: { number_of_shards: 1, number_of_replicas: 0 }, mappings: MAPPINGS[collection] }),
  });
  const text = await response.body.text();
  if (response.statusCode !== 200) throw new Error(`PUT /${collection} answered ${response.statusCode}: ${text.slice(0, 300)}`);
}

async function runServer(loads: LoadSpec[], mix: MixQuery[], options: HttpSuiteOptions, dataDir: string): Promise<ServerFigures> {
  const prepared = [];
  for (const spec of loads) prepared.push(await prepareBulkBodies(spec));
  const server = await startServer(dataDir);
  const pool = new Pool(server.origin, { connections: Math.max(options.clients, options.bulkConcurrency) });
  try {
    const loaded: Record<string, LoadResult> = {};
    for (const [index, spec] of loads.entries()) {
      await createCollection(pool, spec.collection as BenchCollection);
      const result = await bulkLoad(pool, spec.collection, prepared[index]!, options.bulkConcurrency);
      prepared[index]!.bodies = [];
      loaded[spec.collection] = result;
      process.stderr.write(`  [server] loaded ${result.docs} ${spec.collection} in ${(result.ms / 1000).toFixed(1)} s\n`);
    }
    let compaction: number | string = 0;
    try {
      for (const spec of loads) compaction += await compactCollection(pool, spec.collection);
    } catch (error) {
      compaction = (error as Error).message;
    }
    const bodies = new Map(mix.map((query) => [query, JSON.stringify(query.body)]));
    const execute = async (query: MixQuery): Promise<void> => {
      const response = await pool.request({
        method: 'POST',
        path: `/${query.collection}/_search`,
        headers: { 'content-type': 'application/json' },
        body: bodies.get(query),
      });
      const text = await response.body.text();
      if (response.statusCode !== 200) throw new Error(`status ${response.statusCode}: ${text.slice(0, 200)}`);
    };
    const timing = { warmupMs: options.warmupMs, durationMs: options.durationMs };
    const concurrent = await driveMix(mix, { concurrency: options.clients, ...timing }, execute);
    const single = await driveMix(mix, { concurrency: 1, ...timing }, execute);
    return { loads: loaded, compaction, mix: concurrent, singleClientMix: single };
  } finally {
    await pool.close();
    await server.stop();
  }
}

/** Runs the HTTP suite and returns its figures. */
export async function runHttpSuite(options: HttpSuiteOptions): Promise<HttpSuiteResult> {
  process.stderr.write(`http: preparing ${options.docs} e-mails, the cities and the query mix\n`);
  const emailPath = await emailCorpus(options.docs);
  const cityPath = await cityCorpus();
  const querySet = readQuerySet(await querySetFile(emailPath, options.docs));
  const mix = buildQueryMix(querySet, await collectSamples(emailPath, options.docs, cityPath, options.cities));
  const workDir = await fs.mkdtemp(path.join(os.tmpdir(), 'trove-bench-http-'));
  const loads: Array<LoadSpec & { collection: BenchCollection }> = [
    { collection: 'emails', corpusPath: emailPath, docs: options.docs, batchSize: EMAIL_BATCH },
    { collection: 'cities', corpusPath: cityPath, docs: options.cities, batchSize: CITY_BATCH },
  ];
  try {
    const mixPath = path.join(workDir, 'mix.json');
    await fs.writeFile(mixPath, JSON.stringify(mix));
    let server: ServerFigures | Error;
    try {
      process.stderr.write('http: server process\n');
      server = await runServer(loads, mix, options, path.join(workDir, 'server'));
    } catch (error) {
      process.stderr.write(`http: server run failed: ${(error as Error).message}\n`);
      server = error as Error;
    }
    let inProcess: InProcessReport | Error;
    try {
      process.stderr.write('http: the same load and mix in process\n');
      const request: InProcessRequest = {
        dataDir: path.join(workDir, 'in-process'),
        loads,
        concurrency: options.bulkConcurrency,
        mixPath,
        drive: { concurrency: 1, warmupMs: options.warmupMs, durationMs: options.durationMs },
        compact: !(server instanceof Error) && typeof server.compaction === 'number',
      };
      inProcess = await runWorkerProcess<InProcessReport>(path.join(import.meta.dirname, 'http', 'inprocess.ts'), request);
    } catch (error) {
      process.stderr.write(`http: in-process run failed: ${(error as Error).message}\n`);
      inProcess = error as Error;
    }
    return { options, server, inProcess };
  } finally {
    await fs.rm(workDir, { recursive: true, force: true });
  }
}

/** Runs the suite and prints its report on stdout. */
export async function httpSuite(options: HttpSuiteOptions): Promise<void> {
  const result = await runHttpSuite(options);
  process.stdout.write(`\n${renderHttpReport(result)}\n\n`);
}
