/**
 * Trove over HTTP against Sphinx 2.2 over SphinxQL (MySQL protocol), both on loopback with one
 * keep-alive client each: top-10 p50 per query class of the engine query set on the e-mails'
 * `body`. Run by the HTTP suite and on its own as suite `sphinx`; skipped with a note when
 * `searchd` is not on the PATH.
 */
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client, Pool } from 'undici';
import { EMAIL_MAPPING, emailCorpus } from './corpora/emails.ts';
import { bulkLoad, prepareBulkBodies } from './http/bulk-load.ts';
import { compactCollection } from './http/compaction.ts';
import { startServer, type ServerProcess } from './http/server-process.ts';
import { loadSphinx, SPHINX_INDEX, sphinxVersion, startSphinx, type SphinxServer } from './http/sphinx-server.ts';
import { QUERY_CLASSES, querySetFile, readQuerySet, type QueryClass } from './query-set.ts';
import { formatMs, formatRatio, percentile } from './report/stats.ts';
import { renderTable } from './report/table.ts';

/** Knobs of the Sphinx comparison. */
export interface SphinxComparisonOptions {
  /** E-mail documents loaded into both servers. */
  docs: number;
  /** Warm-up per query class and peer, ms. */
  warmupMs: number;
  /** Longest timed run of one query class (both peers together), ms. */
  classBudgetMs: number;
  /** `_bulk` requests in flight while loading Trove. */
  bulkConcurrency: number;
}

/**
 * The Trove servers compared: the default node, and the same with its shards in the HTTP thread
 * (`node.shard_workers: 0`), which saves the hop to a worker thread and back on every search.
 */
const TROVE_PEERS = [
  { label: 'Trove', settings: {} },
  { label: 'Trove in-thread', settings: { 'node.shard_workers': '0' } },
] as const;

/** Timed latencies of one class on every peer (Trove servers in TROVE_PEERS order, then Sphinx), query by query. */
interface ClassSamples {
  latencies: number[][];
  /** Queries of the class in the query set. */
  available: number;
  /** Hits returned over the timed queries (at most 10 each), to show the peers match alike. */
  hits: number[];
}

const EMAIL_BATCH = 1000;

function loadLine(): string {
  return os.loadavg().map((value) => value.toFixed(2)).join(' / ');
}

/** The Trove request of one query: top 10 of `body`, ids only. */
function troveBody(queryClass: QueryClass, terms: readonly string[]): string {
  const text = terms.join(' ');
  const query =
    queryClass === 'phrase'
      ? { match_phrase: { body: text } }
      : { match: { body: { query: text, operator: queryClass === 'and' ? 'and' : 'or' } } };
  return JSON.stringify({ query, size: 10, _source: false });
}

/** The SphinxQL statement of one query: the same terms in Sphinx's extended syntax, BM25 ranking. */
function sphinxStatement(queryClass: QueryClass, terms: readonly string[]): string {
  const expression = queryClass === 'phrase' ? `"${terms.join(' ')}"` : queryClass === 'or' ? terms.join(' | ') : terms.join(' ');
  return `SELECT id FROM ${SPHINX_INDEX} WHERE MATCH('@body ${expression}') ORDER BY WEIGHT() DESC LIMIT 10 OPTION ranker=bm25`;
}

async function timeOne(run: () => Promise<void>): Promise<number> {
  const started = performance.now();
  await run();
  return performance.now() - started;
}

/** Warms every peer up on the class, then times its queries on each in turn until the budget runs out. */
async function timeClass(queryClass: QueryClass, queries: readonly string[][], troves: readonly Client[], sphinx: SphinxServer, options: SphinxComparisonOptions): Promise<ClassSamples> {
  const hits = new Array<number>(troves.length + 1).fill(0);
  const runs = troves.map((trove, peer) => async (terms: readonly string[]): Promise<void> => {
    const response = await trove.request({ method: 'POST', path: '/emails/_search', headers: { 'content-type': 'application/json' }, body: troveBody(queryClass, terms) });
    const text = await response.body.text();
    if (response.statusCode !== 200) throw new Error(`Trove answered ${response.statusCode}: ${text.slice(0, 200)}`);
    hits[peer]! += (JSON.parse(text) as { hits: { hits: unknown[] } }).hits.hits.length;
  });
  runs.push(async (terms: readonly string[]): Promise<void> => {
    const [rows] = await sphinx.connection.query(sphinxStatement(queryClass, terms));
    hits[troves.length]! += (rows as unknown[]).length;
  });
  for (const run of runs) {
    const warmupEnd = performance.now() + options.warmupMs;
    for (let n = 0; performance.now() < warmupEnd; n++) await run(queries[n % queries.length]!);
  }
  hits.fill(0);
  const latencies = runs.map((): number[] => []);
  const budgetEnd = performance.now() + options.classBudgetMs;
  for (const [index, terms] of queries.entries()) {
    if (performance.now() > budgetEnd) break;
    // Rotate which peer goes first, so that none always runs right after the same other.
    for (let turn = 0; turn < runs.length; turn++) {
      const peer = (index + turn) % runs.length;
      latencies[peer]!.push(await timeOne(() => runs[peer]!(terms)));
    }
  }
  return { latencies, available: queries.length, hits };
}

async function startTrove(dataDir: string, corpusPath: string, settings: Record<string, string>, options: SphinxComparisonOptions): Promise<ServerProcess> {
  const bodies = await prepareBulkBodies({ collection: 'emails', corpusPath, docs: options.docs, batchSize: EMAIL_BATCH });
  const server = await startServer(dataDir, settings);
  const pool = new Pool(server.origin, { connections: options.bulkConcurrency });
  try {
    const created = await pool.request({
      method: 'PUT',
      path: '/emails',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ settings: { number_of_shards: 1, number_of_replicas: 0 }, mappings: EMAIL_MAPPING }),
    });
    const text = await created.body.text();
    if (created.statusCode !== 200) throw new Error(`PUT /emails answered ${created.statusCode}: ${text.slice(0, 300)}`);
    const load = await bulkLoad(pool, 'emails', bodies, options.bulkConcurrency);
    if (load.failedItems > 0) throw new Error(`${load.failedItems} e-mails failed to load: ${load.firstFailure}`);
    process.stderr.write(`  [trove] loaded ${load.docs} e-mails in ${(load.ms / 1000).toFixed(1)} s\n`);
    await compactCollection(pool, 'emails');
    return server;
  } catch (error) {
    await server.stop();
    throw error;
  } finally {
    await pool.close();
  }
}

function render(options: SphinxComparisonOptions, version: string, samples: Map<QueryClass, ClassSamples>, loadAtStart: string): string {
  const rows: string[][] = [];
  const notes: string[] = [];
  const sphinxPeer = TROVE_PEERS.length;
  for (const [queryClass, classSamples] of samples) {
    const p50s = classSamples.latencies.map((latencies) => percentile(latencies, 0.5));
    const sphinx = p50s[sphinxPeer]!;
    rows.push([
      queryClass,
      ...TROVE_PEERS.flatMap((_, peer) => [formatMs(p50s[peer]!), formatRatio(p50s[peer]! / sphinx)]),
      formatMs(sphinx),
      classSamples.hits.join(' / '),
    ]);
    const timed = classSamples.latencies[0]!.length;
    if (timed < classSamples.available) notes.push(`${queryClass}: ${timed} of ${classSamples.available} queries timed (class budget)`);
  }
  const troveHeaders = TROVE_PEERS.flatMap(({ label }) => [`${label} p50`, `${label}/Sphinx`]);
  return [
    `HTTP vs Sphinx: ${options.docs} e-mails, top-10 p50 per class, one keep-alive client each on loopback (Trove: POST /emails/_search, _source false; in-thread: node.shard_workers 0; ${version}: SphinxQL, ranker=bm25)`,
    `load average 1/5/15 min at start: ${loadAtStart}`,
    renderTable(['class', ...troveHeaders, 'Sphinx p50', `hits ${[...TROVE_PEERS.map(({ label }) => label), 'Sphinx'].join(' / ')}`], rows),
    ...notes,
    `load average 1/5/15 min at end: ${loadLine()}`,
  ].join('\n');
}

/** Loads the e-mails into a Trove server and a `searchd`, times every query class on both and prints the table. */
export async function sphinxComparison(options: SphinxComparisonOptions): Promise<void> {
  const version = sphinxVersion();
  if (version === null) {
    process.stdout.write('\nHTTP vs Sphinx: skipped, `searchd` (Debian package sphinxsearch) is not on the PATH\n\n');
    return;
  }
  const loadAtStart = loadLine();
  process.stderr.write(`sphinx: preparing ${options.docs} e-mails and the query set\n`);
  const corpusPath = await emailCorpus(options.docs);
  const querySet = readQuerySet(await querySetFile(corpusPath, options.docs));
  const workDir = await fs.mkdtemp(path.join(os.tmpdir(), 'trove-bench-sphinx-'));
  const troves: ServerProcess[] = [];
  let sphinx: SphinxServer | null = null;
  try {
    for (const [index, { settings }] of TROVE_PEERS.entries()) {
      troves.push(await startTrove(path.join(workDir, `trove-${index}`), corpusPath, settings, options));
    }
    sphinx = await startSphinx(path.join(workDir, 'sphinx'));
    const sphinxLoadMs = await loadSphinx(sphinx, corpusPath, options.docs);
    process.stderr.write(`  [sphinx] loaded ${options.docs} e-mails in ${(sphinxLoadMs / 1000).toFixed(1)} s\n`);
    const clients = troves.map((trove) => new Client(trove.origin, { pipelining: 1 }));
    const samples = new Map<QueryClass, ClassSamples>();
    try {
      for (const queryClass of QUERY_CLASSES) {
        process.stderr.write(`sphinx: timing ${queryClass}\n`);
        samples.set(queryClass, await timeClass(queryClass, querySet[queryClass], clients, sphinx, options));
      }
    } finally {
      await Promise.all(clients.map((client) => client.close()));
    }
    process.stdout.write(`\n${render(options, version, samples, loadAtStart)}\n\n`);
  } finally {
    await sphinx?.stop();
    await Promise.all(troves.map((trove) => trove.stop()));
    await fs.rm(workDir, { recursive: true, force: true });
  }
}
