/**
 * Compaction suite: one real Trove server, the e-mail collection (`--docs`, one shard, default
 * settings: epochs and background merges as they come) bulk-loaded through `_bulk`, then every
 * 20th document deleted, as after a bulk import with clean-up, and the epoch timer left to move
 * the rest into segments. Measured: the e-mail queries of the HTTP mix with one client (p50,
 * p99) before compaction; `POST /emails/_compact` to the end of its job (wall time, merge time,
 * segments and bytes before and after, deleted documents purged, throughput); the same queries
 * after.
 */
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Pool, type Dispatcher } from 'undici';
import { cityCorpus } from './corpora/cities.ts';
import { EMAIL_MAPPING, emailCorpus } from './corpora/emails.ts';
import { readNdjsonBatches } from './corpora/ndjson.ts';
import { bulkLoad, prepareBulkBodies } from './http/bulk-load.ts';
import { compactCollection } from './http/compaction.ts';
import { driveMix, type DriveResult } from './http/drive.ts';
import { buildQueryMix, collectSamples, MIX_KINDS, type MixQuery } from './http/query-mix.ts';
import { startServer } from './http/server-process.ts';
import { querySetFile, readQuerySet } from './query-set.ts';
import { formatMegabytes, formatMs, formatRate } from './report/stats.ts';
import { renderTable } from './report/table.ts';

/** Knobs of the compaction suite. */
export interface CompactionSuiteOptions {
  docs: number;
  bulkConcurrency: number;
  warmupMs: number;
  /** Timed query run before and again after compaction. */
  durationMs: number;
}

/** Segment figures read from `_cat/segments`. */
interface SegmentFigures {
  segments: number;
  docs: number;
  deleted: number;
  bytes: number;
}

/** The job fields the report uses. */
interface JobFigures {
  took_ms: number;
  segments: { before: number; after: number };
  bytes: { before: number; after: number };
  deleted_docs_purged: number;
}

/** Everything the suite measured. */
interface CompactionFigures {
  loadMs: number;
  deletedDocs: number;
  before: SegmentFigures;
  after: SegmentFigures;
  wallMs: number;
  job: JobFigures;
  queriesBefore: DriveResult;
  queriesAfter: DriveResult;
}

const COLLECTION = 'emails';
const BATCH = 1000;
const DELETE_EVERY = 20;
const EPOCH_WAIT_MS = 120_000;

async function requestJson<T>(dispatcher: Dispatcher, method: 'GET' | 'POST' | 'PUT', requestPath: string, body?: string): Promise<T> {
  const response = await dispatcher.request({ method, path: requestPath, headers: body ? { 'content-type': 'application/json' } : {}, body });
  const text = await response.body.text();
  if (response.statusCode !== 200) throw new Error(`${method} ${requestPath} answered ${response.statusCode}: ${text.slice(0, 300)}`);
  return JSON.parse(text) as T;
}

async function segmentFigures(pool: Pool): Promise<SegmentFigures> {
  const rows = await requestJson<Array<Record<string, string>>>(pool, 'GET', `/_cat/segments/${COLLECTION}?format=json&bytes=b`);
  const sum = (column: string): number => rows.reduce((total, row) => total + Number(row[column]), 0);
  return { segments: rows.length, docs: sum('docs.count'), deleted: sum('docs.deleted'), bytes: sum('size') };
}

/** Waits until epochs have moved every live document into segments (the epoch timer, 30 s by default). */
async function settledSegments(pool: Pool, liveDocs: number): Promise<SegmentFigures> {
  const deadline = performance.now() + EPOCH_WAIT_MS;
  for (;;) {
    const figures = await segmentFigures(pool);
    if (figures.docs === liveDocs || performance.now() > deadline) return figures;
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
}

/** Deletes every `DELETE_EVERY`-th document of the corpus through `_bulk`; returns how many. */
async function deleteSome(pool: Pool, corpusPath: string, docs: number): Promise<number> {
  let position = 0;
  let deleted = 0;
  for await (const batch of readNdjsonBatches(corpusPath, 10 * BATCH, docs)) {
    const lines: string[] = [];
    for (const line of batch) {
      if (position++ % DELETE_EVERY !== 0) continue;
      lines.push(JSON.stringify({ delete: { _id: (JSON.parse(line) as { id: string }).id } }));
      deleted++;
    }
    const response = await pool.request({ method: 'POST', path: `/${COLLECTION}/_bulk`, headers: { 'content-type': 'application/x-ndjson' }, body: `${lines.join('\n')}\n` });
    const text = await response.body.text();
    if (response.statusCode !== 200 || (JSON.parse(text) as { errors: boolean }).errors) throw new Error(`deleting answered ${response.statusCode}: ${text.slice(0, 300)}`);
  }
  return deleted;
}

async function runQueries(pool: Pool, mix: readonly MixQuery[], options: CompactionSuiteOptions): Promise<DriveResult> {
  const bodies = new Map(mix.map((query) => [query, JSON.stringify(query.body)]));
  return driveMix(mix, { concurrency: 1, warmupMs: options.warmupMs, durationMs: options.durationMs }, async (query) => {
    const response = await pool.request({ method: 'POST', path: `/${COLLECTION}/_search`, headers: { 'content-type': 'application/json' }, body: bodies.get(query) });
    const text = await response.body.text();
    if (response.statusCode !== 200) throw new Error(`status ${response.statusCode}: ${text.slice(0, 200)}`);
  });
}

/** Runs the suite against a fresh server and returns its figures. */
export async function runCompactionSuite(options: CompactionSuiteOptions): Promise<CompactionFigures> {
  process.stderr.write(`compaction: preparing ${options.docs} e-mails and the query mix\n`);
  const emailPath = await emailCorpus(options.docs);
  const querySet = readQuerySet(await querySetFile(emailPath, options.docs));
  const samples = await collectSamples(emailPath, options.docs, await cityCorpus(), 1);
  const mix = buildQueryMix(querySet, samples).filter((query) => query.collection === COLLECTION);
  const prepared = await prepareBulkBodies({ collection: COLLECTION, corpusPath: emailPath, docs: options.docs, batchSize: BATCH });
  const workDir = await fs.mkdtemp(path.join(os.tmpdir(), 'trove-bench-compaction-'));
  const server = await startServer(workDir);
  const pool = new Pool(server.origin, { connections: options.bulkConcurrency });
  try {
    const mapping = { settings: { number_of_shards: 1, number_of_replicas: 0 }, mappings: EMAIL_MAPPING };
    await requestJson(pool, 'PUT', `/${COLLECTION}`, JSON.stringify(mapping));
    const load = await bulkLoad(pool, COLLECTION, prepared, options.bulkConcurrency);
    if (load.failedItems > 0) throw new Error(`${load.failedItems} documents failed to load: ${load.firstFailure}`);
    prepared.bodies = [];
    process.stderr.write(`  loaded ${load.docs} e-mails in ${(load.ms / 1000).toFixed(1)} s\n`);
    const deletedDocs = await deleteSome(pool, emailPath, options.docs);
    const before = await settledSegments(pool, load.docs - deletedDocs);
    process.stderr.write(`  ${before.segments} segments, ${before.deleted} deleted documents; queries before compaction\n`);
    const queriesBefore = await runQueries(pool, mix, options);
    process.stderr.write('  compacting\n');
    const wallMs = await compactCollection(pool, COLLECTION);
    const { jobs } = await requestJson<{ jobs: JobFigures[] }>(pool, 'GET', `/_jobs?collection=${COLLECTION}&state=done`);
    const after = await segmentFigures(pool);
    process.stderr.write('  queries after compaction\n');
    const queriesAfter = await runQueries(pool, mix, options);
    return { loadMs: load.ms, deletedDocs, before, after, wallMs, job: jobs[0]!, queriesBefore, queriesAfter };
  } finally {
    await pool.close();
    await server.stop();
    await fs.rm(workDir, { recursive: true, force: true });
  }
}

/** The report tables. */
export function renderCompactionReport(options: CompactionSuiteOptions, figures: CompactionFigures): string {
  const { before, after, job, wallMs } = figures;
  const seconds = job.took_ms / 1000;
  const summary = renderTable(
    ['compaction', 'value'],
    [
      ['documents in segments before', `${before.docs.toLocaleString('en-US')} live + ${before.deleted.toLocaleString('en-US')} deleted`],
      ['documents in segments after', `${after.docs.toLocaleString('en-US')} live + ${after.deleted.toLocaleString('en-US')} deleted`],
      ['segments before → after', `${job.segments.before} → ${job.segments.after}`],
      ['size before → after', `${formatMegabytes(job.bytes.before)} → ${formatMegabytes(job.bytes.after)}`],
      ['deleted documents purged', job.deleted_docs_purged.toLocaleString('en-US')],
      ['time, request to job done', formatMs(wallMs)],
      ['time, merge passes (job took)', formatMs(job.took_ms)],
      ['throughput, segment bytes read', `${formatRate(job.bytes.before / 1e6 / seconds, 'MB/s')}`],
      ['throughput, segment bytes written', `${formatRate(job.bytes.after / 1e6 / seconds, 'MB/s')}`],
      ['throughput, documents', formatRate((before.docs + before.deleted) / seconds, 'docs/s')],
    ],
  );
  const timing = (result: DriveResult, kind: (typeof MIX_KINDS)[number] | 'overall') => (kind === 'overall' ? result.overall : result.perKind[kind]);
  const kinds = [...MIX_KINDS.filter((kind) => figures.queriesBefore.perKind[kind].queries > 0), 'overall' as const];
  const queries = renderTable(
    ['query (1 client)', 'p50 before', 'p50 after', 'p99 before', 'p99 after', 'queries before/after'],
    kinds.map((kind) => {
      const first = timing(figures.queriesBefore, kind);
      const second = timing(figures.queriesAfter, kind);
      return [kind, formatMs(first.p50Ms), formatMs(second.p50Ms), formatMs(first.p99Ms), formatMs(second.p99Ms), `${first.queries}/${second.queries}`];
    }),
  );
  const errors = figures.queriesBefore.overall.errors + figures.queriesAfter.overall.errors;
  const notes = [
    `Compaction suite: ${options.docs.toLocaleString('en-US')} e-mails in one shard, loaded through _bulk in ${formatMs(figures.loadMs)}; every ${DELETE_EVERY}th deleted (${figures.deletedDocs.toLocaleString('en-US')}).`,
    'Before compaction the suite waits for the epoch timer, so every document is in a segment. Throughput is per second of the job\'s merge passes (job took).',
    `Queries: the e-mail kinds of the HTTP mix, one client, ${options.durationMs / 1000} s each after ${options.warmupMs / 1000} s warm-up${errors > 0 ? `; ${errors} failed` : ''}.`,
  ];
  return [notes[0], '', summary, '', queries, '', ...notes.slice(1)].join('\n');
}

/** Runs the suite and prints its report on stdout. */
export async function compactionSuite(options: CompactionSuiteOptions): Promise<void> {
  const figures = await runCompactionSuite(options);
  process.stdout.write(`\n${renderCompactionReport(options, figures)}\n\n`);
}
