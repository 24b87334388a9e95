/**
 * `npm run bench -- [engine|http|all] [--docs N] ...`: runs the benchmark suites and prints
 * their tables on stdout (progress goes to stderr). See bench/README.md.
 */
import os from 'node:os';
import { Argument, Command, InvalidArgumentError, Option } from 'commander';
import { changesSuite } from './changes.ts';
import { clusterSuite } from './cluster.ts';
import { compactionSuite } from './compaction.ts';
import { engineSuite } from './engine.ts';
import { fetchSuite } from './fetch.ts';
import { fieldUpdatesSuite } from './field-updates.ts';
import { httpSuite } from './http.ts';
import { multiSearchSuite } from './msearch.ts';
import { rangeSuite } from './ranges.ts';
import { replicationSuite } from './replication.ts';
import { scrollSuite } from './scroll.ts';
import { sphinxComparison } from './sphinx.ts';
import { updatesSuite } from './updates.ts';
import { workersSuite } from './workers.ts';
import { ENGINE_PEERS, type EnginePeer } from './report/engine-report.ts';

/** Every city of the corpus. */
const ALL_CITIES = Number.MAX_SAFE_INTEGER;

function positiveInteger(value: string): number {
  const parsed = Number(value);
  if (!Number.isInteger(parsed) || parsed <= 0) throw new InvalidArgumentError('expected a positive integer');
  return parsed;
}

function positiveSeconds(value: string): number {
  const parsed = Number(value);
  if (!Number.isFinite(parsed) || parsed <= 0) throw new InvalidArgumentError('expected a positive number of seconds');
  return parsed;
}

function peerList(value: string): EnginePeer[] {
  const peers = value.split(',').map((peer) => peer.trim());
  for (const peer of peers) {
    if (!(ENGINE_PEERS as readonly string[]).includes(peer)) throw new InvalidArgumentError(`unknown peer [${peer}], expected ${ENGINE_PEERS.join(', ')}`);
  }
  return peers as EnginePeer[];
}

/** One line describing the machine and how busy it is (the figures mean little on a loaded host). */
function machineLine(moment: string): string {
  const cpus = os.cpus();
  const load = os.loadavg().map((value) => value.toFixed(2)).join(' / ');
  return `${moment}: Node ${process.version}, ${cpus.length} CPUs (${cpus[0]?.model.trim() ?? 'unknown'}), load average 1/5/15 min ${load}`;
}

/** Parsed command-line options. */
interface BenchOptions {
  docs: number;
  cities: number;
  peers: EnginePeer[];
  warmup: number;
  classBudget: number;
  duration: number;
  clients: number;
  bulkConcurrency: number;
  updateSizes: number[];
  maxLargeDocs: number;
  rangeDocs: number;
  workers: number;
  writes: number;
  replicationDocs: number;
  recoveryDocs: number;
  failovers: number;
  scrollDocs: number;
}

const program = new Command('bench')
  .description('Trove benchmarks: engine vs SQLite FTS5 vs MiniSearch, and one node over HTTP')
  .addArgument(new Argument('[suite]', 'suite to run').choices(['engine', 'http', 'updates', 'field-updates', 'compaction', 'changes', 'workers', 'cluster', 'ranges', 'fetch', 'msearch', 'replication', 'scroll', 'sphinx', 'all']).default('all'))
  .addOption(new Option('--docs <n>', 'e-mail documents (engine growth run uses a tenth)').argParser(positiveInteger).default(100_000))
  .addOption(new Option('--cities <n>', 'city documents for the HTTP suite').argParser(positiveInteger).default(ALL_CITIES, 'all'))
  .addOption(new Option('--peers <list>', 'engine suite peers, comma-separated').argParser(peerList).default([...ENGINE_PEERS], ENGINE_PEERS.join(',')))
  .addOption(new Option('--warmup <seconds>', 'warm-up per query class / before the mix').argParser(positiveSeconds).default(2))
  .addOption(new Option('--class-budget <seconds>', 'longest timed run per engine query class').argParser(positiveSeconds).default(15))
  .addOption(new Option('--duration <seconds>', 'timed query mix of the HTTP suite').argParser(positiveSeconds).default(20))
  .addOption(new Option('--clients <n>', 'concurrent HTTP query clients').argParser(positiveInteger).default(8))
  .addOption(new Option('--bulk-concurrency <n>', '_bulk requests in flight').argParser(positiveInteger).default(4))
  .addOption(new Option('--update-sizes <list>', 'collection sizes of the updates suite').argParser((value) => value.split(',').map(positiveInteger)).default([10_000, 100_000, 1_000_000], '10000,100000,1000000'))
  .addOption(new Option('--workers <n>', 'shard worker threads of the workers suite').argParser(positiveInteger).default(2))
  .addOption(new Option('--range-docs <n>', 'documents of the ranges suite').argParser(positiveInteger).default(1_000_000))
  .addOption(new Option('--max-large-docs <n>', 'largest collection of 20 KB documents in the updates suite').argParser(positiveInteger).default(100_000))
  .addOption(new Option('--writes <n>', 'timed single-client writes per configuration of the replication suite').argParser(positiveInteger).default(2000))
  .addOption(new Option('--replication-docs <n>', '_bulk documents per configuration of the replication suite').argParser(positiveInteger).default(50_000))
  .addOption(new Option('--recovery-docs <n>', 'documents loaded before a replica is added (replication suite)').argParser(positiveInteger).default(100_000))
  .addOption(new Option('--failovers <n>', 'failover rounds of the replication suite').argParser(positiveInteger).default(3))
  .addOption(new Option('--scroll-docs <n>', 'documents the scroll suite reads').argParser(positiveInteger).default(100_000))
  .action(async (suite: 'engine' | 'http' | 'updates' | 'field-updates' | 'compaction' | 'changes' | 'workers' | 'cluster' | 'ranges' | 'fetch' | 'msearch' | 'replication' | 'scroll' | 'sphinx' | 'all', options: BenchOptions) => {
    const started = performance.now();
    process.stdout.write(`${machineLine('start')}\n`);
    if (suite === 'engine' || suite === 'all') {
      await engineSuite({ docs: options.docs, warmupMs: options.warmup * 1000, classBudgetMs: options.classBudget * 1000, peers: options.peers });
    }
    if (suite === 'http' || suite === 'all') {
      await httpSuite({
        docs: options.docs,
        cities: options.cities,
        clients: options.clients,
        bulkConcurrency: options.bulkConcurrency,
        warmupMs: options.warmup * 1000,
        durationMs: options.duration * 1000,
      });
    }
    if (suite === 'http' || suite === 'sphinx' || suite === 'all') {
      await sphinxComparison({ docs: options.docs, warmupMs: options.warmup * 1000, classBudgetMs: options.classBudget * 1000, bulkConcurrency: options.bulkConcurrency });
    }
    if (suite === 'updates' || suite === 'all') {
      await updatesSuite({ sizes: options.updateSizes, maxLargeDocs: options.maxLargeDocs, updates: 3000 });
    }
    if (suite === 'field-updates' || suite === 'all') {
      await fieldUpdatesSuite({ updates: 1000, queryDocs: 20_000, queries: 200 });
    }
    if (suite === 'compaction' || suite === 'all') {
      await compactionSuite({ docs: options.docs, bulkConcurrency: options.bulkConcurrency, warmupMs: options.warmup * 1000, durationMs: options.duration * 1000 });
    }
    if (suite === 'changes' || suite === 'all') {
      await changesSuite({ cities: options.cities, latencyRounds: 300 });
    }
    if (suite === 'workers' || suite === 'all') {
      await workersSuite({
        docs: options.docs,
        workers: options.workers,
        clients: options.clients,
        bulkConcurrency: options.bulkConcurrency,
        warmupMs: options.warmup * 1000,
        durationMs: options.duration * 1000,
      });
    }
    if (suite === 'cluster' || suite === 'all') {
      await clusterSuite({ docs: options.docs, bulkConcurrency: options.bulkConcurrency, warmupMs: options.warmup * 1000, durationMs: options.duration * 1000 });
    }
    if (suite === 'ranges' || suite === 'all') {
      await rangeSuite({ docs: options.rangeDocs, warmupMs: options.warmup * 1000, queries: 200 });
    }
    if (suite === 'fetch' || suite === 'all') {
      await fetchSuite({ docs: options.docs, warmupMs: options.warmup * 1000 });
    }
    if (suite === 'msearch' || suite === 'all') {
      await multiSearchSuite({ cities: options.cities, clients: options.clients, warmupMs: options.warmup * 1000, durationMs: options.duration * 1000 });
    }
    if (suite === 'replication' || suite === 'all') {
      await replicationSuite({
        writes: options.writes,
        warmupMs: options.warmup * 1000,
        bulkDocs: options.replicationDocs,
        recoveryDocs: options.recoveryDocs,
        failovers: options.failovers,
      });
    }
    if (suite === 'scroll' || suite === 'all') {
      await scrollSuite({ docs: options.scrollDocs, pageSize: 1000, rounds: 5 });
    }
    process.stdout.write(`${machineLine('end')}; run took ${((performance.now() - started) / 60_000).toFixed(1)} min\n`);
  });

await program.parseAsync(process.argv);
