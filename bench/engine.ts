/**
 * Suite 1: the Trove shard engine against SQLite FTS5 and MiniSearch, in process, on the same
 * e-mail corpus and query set. Each peer runs in its own worker process (memory is then
 * attributable), once at the full size with every query class and once at a tenth of it with
 * common terms only (for latency growth). Workers run one after another, never side by side.
 */
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { emailCorpus } from './corpora/emails.ts';
import type { PeerReport, WorkerRequest } from './peers/harness.ts';
import { QUERY_CLASSES, querySetFile, readQuerySet, type QueryClass } from './query-set.ts';
import { ENGINE_PEERS, NOT_SELECTED, renderEngineReport, type EnginePeer, type EngineSuiteResult, type PeerRuns } from './report/engine-report.ts';
import { runWorkerProcess } from './worker-process.ts';

/** Knobs of the engine suite. */
export interface EngineSuiteOptions {
  /** E-mail documents at full size (the growth run uses a tenth). */
  docs: number;
  /** Longest warm-up per query class, ms. */
  warmupMs: number;
  /** Longest measured run per query class, ms. */
  classBudgetMs: number;
  /** Peers to run (default: all). */
  peers?: readonly EnginePeer[];
}

async function runPeer(peer: EnginePeer, request: WorkerRequest): Promise<PeerReport | Error> {
  const script = path.join(import.meta.dirname, 'peers', `${peer}.ts`);
  process.stderr.write(`engine: ${peer}, ${request.docs} docs, classes ${request.classes.join(',')}\n`);
  try {
    return await runWorkerProcess<PeerReport>(script, request);
  } catch (error) {
    process.stderr.write(`engine: ${peer} failed: ${(error as Error).message}\n`);
    return error as Error;
  } finally {
    await fs.rm(request.dataDir, { recursive: true, force: true });
  }
}

/** Runs the engine suite and returns its figures. */
export async function runEngineSuite(options: EngineSuiteOptions): Promise<EngineSuiteResult> {
  const smallDocs = Math.max(1, Math.round(options.docs / 10));
  process.stderr.write(`engine: preparing ${options.docs} e-mails and the query set (cached under .bench-data/)\n`);
  const corpusPath = await emailCorpus(options.docs);
  const querySetPath = await querySetFile(corpusPath, options.docs);
  const querySet = readQuerySet(querySetPath);
  const queriesPerClass = Object.fromEntries(
    QUERY_CLASSES.map((queryClass) => [queryClass, querySet[queryClass].length]),
  ) as Record<QueryClass, number>;
  const request = async (docs: number, classes: QueryClass[]): Promise<WorkerRequest> => ({
    corpusPath,
    docs,
    querySetPath,
    classes,
    dataDir: await fs.mkdtemp(path.join(os.tmpdir(), 'trove-bench-')),
    batchSize: 1000,
    warmupMs: options.warmupMs,
    classBudgetMs: options.classBudgetMs,
  });
  const runs = {} as Record<EnginePeer, PeerRuns>;
  for (const peer of ENGINE_PEERS) {
    if (options.peers && !options.peers.includes(peer)) {
      runs[peer] = { full: NOT_SELECTED, small: NOT_SELECTED };
      continue;
    }
    const fullRun = await runPeer(peer, await request(options.docs, [...QUERY_CLASSES]));
    const smallRun = await runPeer(peer, await request(smallDocs, ['common']));
    runs[peer] = { full: fullRun, small: smallRun };
  }
  return { docs: options.docs, smallDocs, queriesPerClass, runs };
}

/** Runs the suite and prints its report on stdout. */
export async function engineSuite(options: EngineSuiteOptions): Promise<void> {
  const result = await runEngineSuite(options);
  process.stdout.write(`\n${renderEngineReport(result)}\n\n`);
}
