/**
 * The measuring loop every engine-suite worker runs: load the corpus in batches, optimize, weigh
 * memory and disk, reopen, then time the query set. A worker is one child process per peer and
 * size, so its resident memory belongs to that peer alone; it prints one `RESULT {json}` line.
 */
import { promises as fs, readFileSync } from 'node:fs';
import path from 'node:path';
import { readNdjsonBatches } from '../corpora/ndjson.ts';
import { QUERY_CLASSES, readQuerySet, type QueryClass } from '../query-set.ts';
import { percentile } from '../report/stats.ts';

/** What the suite asks a worker to do (passed as JSON in argv[2]). */
export interface WorkerRequest {
  corpusPath: string;
  docs: number;
  querySetPath: string;
  classes: QueryClass[];
  /** Empty directory the peer may use for its files. */
  dataDir: string;
  /** Documents per write batch (and per SQLite transaction). */
  batchSize: number;
  /** Longest warm-up per class, ms. */
  warmupMs: number;
  /** Longest measured run per class, ms (the class stops early if it runs out of time). */
  classBudgetMs: number;
}

/** A corpus line: document id and source. */
export interface CorpusDocument {
  id: string;
  source: Record<string, unknown>;
}

/** Latency figures of one query class. */
export interface ClassTiming {
  queries: number;
  p50Ms: number;
  p99Ms: number;
  /** Queries that returned no hit (a sanity check: should be rare). */
  zeroHits: number;
}

/** Everything a worker measured. */
export interface PeerReport {
  peer: string;
  docs: number;
  /** UTF-8 bytes of the documents' JSON sources. */
  sourceBytes: number;
  /** Loading all batches plus the final flush to durable, searchable state. */
  indexMs: number;
  /** Merge to one segment (or FTS5 `optimize`); null when the peer has no such step. */
  optimizeMs: number | null;
  diskBytes: number;
  rssBytes: number;
  /** Highest RSS of the worker while loading and merging (Linux `VmHWM`; NaN where it is not available). */
  peakRssBytes: number;
  /** RSS of the same worker before loading anything (runtime and modules). */
  baselineRssBytes: number;
  /** Close, open again and answer one query. */
  reopenMs: number;
  /** The state the index is in while queries run. */
  layer: string;
  /** Per class; null when the peer cannot express the class. */
  classes: Partial<Record<QueryClass, ClassTiming | null>>;
}

/** One engine under test, as seen by the measuring loop. */
export interface PeerEngine {
  /** Describes the index state during queries (for the fairness note). */
  readonly layer: string;
  /** Indexes one batch durably. */
  index(documents: CorpusDocument[]): Promise<void> | void;
  /** Flushes whatever indexing deferred so that everything is durable and searchable. */
  finishIndexing(): Promise<void> | void;
  /** Merges to a single segment; absent when the peer has no such step. */
  optimize?(): Promise<void> | void;
  /** Bytes the index occupies on disk (serialised size for in-memory peers). */
  diskBytes(): Promise<number>;
  /** Closes and opens the index again. */
  reopen(): Promise<void>;
  /** Whether the peer can run this class at all. */
  supports(queryClass: QueryClass): boolean;
  /** Runs one top-10 query and returns the number of hits. */
  search(queryClass: QueryClass, terms: readonly string[]): number;
  close(): Promise<void>;
}

/** Total size of the files under a directory. */
export async function directoryBytes(dir: string): Promise<number> {
  let total = 0;
  for (const entry of await fs.readdir(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) total += await directoryBytes(full);
    else if (entry.isFile()) total += (await fs.stat(full)).size;
  }
  return total;
}

function peakRss(): number {
  try {
    const match = /^VmHWM:\s+(\d+) kB$/m.exec(readFileSync('/proc/self/status', 'utf8'));
    return match ? Number(match[1]) * 1024 : Number.NaN;
  } catch {
    return Number.NaN;
  }
}

async function settledRss(): Promise<number> {
  const collect = (globalThis as { gc?: () => void }).gc;
  for (let round = 0; round < 3; round++) {
    collect?.();
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return process.memoryUsage().rss;
}

function log(peer: string, message: string): void {
  process.stderr.write(`  [${peer}] ${message}\n`);
}

function timeClass(
  engine: PeerEngine,
  queryClass: QueryClass,
  queries: readonly string[][],
  budgetMs: number,
): ClassTiming {
  const latencies: number[] = [];
  let zeroHits = 0;
  const deadline = performance.now() + budgetMs;
  for (const terms of queries) {
    const start = performance.now();
    const hits = engine.search(queryClass, terms);
    const end = performance.now();
    latencies.push(end - start);
    if (hits === 0) zeroHits++;
    if (end > deadline) break;
  }
  return { queries: latencies.length, p50Ms: percentile(latencies, 0.5), p99Ms: percentile(latencies, 0.99), zeroHits };
}

/** Runs the whole measurement for one peer and prints the report line. */
export async function runWorker(peer: string, createEngine: (request: WorkerRequest) => Promise<PeerEngine>): Promise<void> {
  const request = JSON.parse(process.argv[2] ?? '') as WorkerRequest;
  const baselineRssBytes = await settledRss();
  const engine = await createEngine(request);
  let indexMs = 0;
  let sourceBytes = 0;
  for await (const batch of readNdjsonBatches(request.corpusPath, request.batchSize, request.docs)) {
    const documents = batch.map((line) => JSON.parse(line) as CorpusDocument);
    for (const { source } of documents) sourceBytes += Buffer.byteLength(JSON.stringify(source));
    const start = performance.now();
    await engine.index(documents);
    indexMs += performance.now() - start;
  }
  const flushStart = performance.now();
  await engine.finishIndexing();
  indexMs += performance.now() - flushStart;
  log(peer, `indexed ${request.docs} docs in ${(indexMs / 1000).toFixed(1)} s`);
  let optimizeMs: number | null = null;
  if (engine.optimize) {
    const start = performance.now();
    await engine.optimize();
    optimizeMs = performance.now() - start;
  }
  const rssBytes = await settledRss();
  const peakRssBytes = peakRss();
  const diskBytes = await engine.diskBytes();
  const reopenStart = performance.now();
  await engine.reopen();
  const querySet = readQuerySet(request.querySetPath);
  const firstCommon = querySet.common[0] ?? ['the'];
  engine.search('common', firstCommon);
  const reopenMs = performance.now() - reopenStart;
  const classes: PeerReport['classes'] = {};
  for (const queryClass of QUERY_CLASSES) {
    if (!request.classes.includes(queryClass)) continue;
    if (!engine.supports(queryClass)) {
      classes[queryClass] = null;
      continue;
    }
    timeClass(engine, queryClass, querySet[queryClass], request.warmupMs);
    classes[queryClass] = timeClass(engine, queryClass, querySet[queryClass], request.classBudgetMs);
  }
  await engine.close();
  const report: PeerReport = {
    peer,
    docs: request.docs,
    sourceBytes,
    indexMs,
    optimizeMs,
    diskBytes,
    rssBytes,
    peakRssBytes,
    baselineRssBytes,
    reopenMs,
    layer: engine.layer,
    classes,
  };
  process.stdout.write(`RESULT ${JSON.stringify(report)}\n`);
}
