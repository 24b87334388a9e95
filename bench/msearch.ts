/**
 * `_msearch` suite: ten searches sent as one `_msearch` against the same ten sent as ten `_search`
 * requests, on one real Trove server in the same run. The cities corpus is bulk-loaded; each round
 * is ten queries of the mix below (match, term, range, a terms aggregation). `clients` clients
 * run rounds for the same duration in each mode, alternating the modes in slices so that a change
 * in machine load touches both; the single-search mode sends its ten requests of a round at
 * once over the clients' connections, as an application fanning out would.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Pool } from 'undici';
import { CITY_MAPPING, cityCorpus } from './corpora/cities.ts';
import { bulkLoad, prepareBulkBodies } from './http/bulk-load.ts';
import { startServer } from './http/server-process.ts';
import { formatRate, formatRatio } from './report/stats.ts';
import { renderTable } from './report/table.ts';

/** Knobs of the `_msearch` suite. */
export interface MultiSearchSuiteOptions {
  /** City documents to load. */
  cities: number;
  /** Concurrent clients in each mode. */
  clients: number;
  /** Warm-up of each mode, ms. */
  warmupMs: number;
  /** Timed run of each mode, ms (split into alternating slices). */
  durationMs: number;
}

const COLLECTION = 'places';
const SHARDS = 2;
const SLICES = 4;

/** The ten searches of a round. */
const ROUND: readonly unknown[] = [
  { query: { match: { name: 'san' } } },
  { query: { match: { name: 'port' } }, size: 5 },
  { query: { term: { country: 'FR' } } },
  { query: { term: { featureCode: 'PPLA' } }, sort: [{ population: 'desc' }] },
  { query: { range: { population: { gte: 1_000_000 } } } },
  { query: { bool: { must: { match: { name: 'new' } }, filter: { term: { country: 'US' } } } } },
  { size: 0, aggs: { countries: { terms: { field: 'country', size: 10 } } } },
  { query: { match: { name: 'saint' } }, _source: ['name', 'country'] },
  { query: { range: { population: { gte: 10_000, lt: 20_000 } } }, size: 3 },
  { query: { match: { name: 'lake' } }, sort: ['_score', '_doc'] },
];

const MSEARCH_BODY = ROUND.map((body) => `{}\n${JSON.stringify(body)}\n`).join('');

async function send(pool: Pool, method: 'PUT' | 'POST', requestPath: string, body: string, contentType = 'application/json'): Promise<string> {
  const response = await pool.request({ method, path: requestPath, headers: { 'content-type': contentType }, body });
  const text = await response.body.text();
  if (response.statusCode >= 300) throw new Error(`${method} ${requestPath} answered ${response.statusCode}: ${text.slice(0, 300)}`);
  return text;
}

/** One round of ten searches in the given mode. */
async function round(pool: Pool, mode: 'msearch' | 'single'): Promise<void> {
  if (mode === 'msearch') {
    const answer = JSON.parse(await send(pool, 'POST', `/${COLLECTION}/_msearch`, MSEARCH_BODY, 'application/x-ndjson')) as { responses: Array<{ status: number }> };
    if (answer.responses.some((entry) => entry.status !== 200)) throw new Error('an _msearch item failed');
    return;
  }
  await Promise.all(ROUND.map((body) => send(pool, 'POST', `/${COLLECTION}/_search`, JSON.stringify(body))));
}

/** Rounds completed by `clients` clients in `ms` milliseconds. */
async function runFor(pool: Pool, mode: 'msearch' | 'single', clients: number, ms: number): Promise<number> {
  const deadline = performance.now() + ms;
  let rounds = 0;
  await Promise.all(
    Array.from({ length: clients }, async () => {
      while (performance.now() < deadline) {
        await round(pool, mode);
        rounds++;
      }
    }),
  );
  return rounds;
}

/** Runs the suite and prints its table on stdout. */
export async function multiSearchSuite(options: MultiSearchSuiteOptions): Promise<void> {
  process.stderr.write('msearch: preparing the cities corpus\n');
  const prepared = await prepareBulkBodies({ collection: COLLECTION, corpusPath: await cityCorpus(), docs: options.cities, batchSize: 5000 });
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'trove-bench-msearch-'));
  const server = await startServer(dataDir);
  const pool = new Pool(server.origin, { connections: options.clients * ROUND.length });
  try {
    await send(pool, 'PUT', `/${COLLECTION}`, JSON.stringify({ settings: { number_of_shards: SHARDS, number_of_replicas: 0 }, mappings: CITY_MAPPING }));
    const load = await bulkLoad(pool, COLLECTION, prepared, 2);
    process.stderr.write(`msearch: loaded ${load.docs} cities in ${(load.ms / 1000).toFixed(1)} s\n`);
    await runFor(pool, 'msearch', options.clients, options.warmupMs);
    await runFor(pool, 'single', options.clients, options.warmupMs);
    const rounds = { msearch: 0, single: 0 };
    const slice = options.durationMs / SLICES;
    for (let index = 0; index < SLICES; index++) {
      rounds.msearch += await runFor(pool, 'msearch', options.clients, slice);
      rounds.single += await runFor(pool, 'single', options.clients, slice);
    }
    const seconds = options.durationMs / 1000;
    const searchesPerSecond = { msearch: (rounds.msearch * ROUND.length) / seconds, single: (rounds.single * ROUND.length) / seconds };
    const load1 = os.loadavg().map((value) => value.toFixed(2)).join(' / ');
    process.stdout.write(`\n_msearch of 10 vs 10 single searches (${load.docs} cities, ${SHARDS} shards, ${options.clients} clients, ${seconds} s each; load ${load1})\n\n`);
    process.stdout.write(
      `${renderTable(
        ['mode', 'searches/s', 'rounds'],
        [
          ['_msearch, 10 per request', formatRate(searchesPerSecond.msearch, 'searches/s'), `${rounds.msearch}`],
          ['10 × _search', formatRate(searchesPerSecond.single, 'searches/s'), `${rounds.single}`],
          ['ratio _msearch / _search', formatRatio(searchesPerSecond.msearch / searchesPerSecond.single), ''],
        ],
      )}\n`,
    );
  } finally {
    await pool.close();
    await server.stop();
    await rm(dataDir, { recursive: true, force: true });
  }
}
