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

/** Timed latencies of one class on both peers, query by query. */
interface ClassSamples {
  trove: number[];
  sphinx: number[];
  /** Queries of the class in the query set. */
  available: number;
  /** Hits returned over the timed queries (at most 10 each), to show both peers match alike. */
  troveHits: number;
  sphinxHits: number;
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

/** Warms both peers up on the class, then times its queries alternately on each until the budget runs out. */
async function timeClass(queryClass: QueryClass, queries: readonly string[][], trove: Client, sphinx: SphinxServer, options: SphinxComparisonOptions): Promise<ClassSamples> {
  let troveHits = 0;
  let sphinxHits = 0;
  const troveQuery = async (terms: readonly string[]): Promise<void> => {
    const response = await trove.request({ method: 'POST', path: '/emails/_search', headers: { 'content-type': 'application/json' }, body: troveBody(queryClass, terms) });
    const text = await response.body.text();
    if (response.statusCode !== 200) throw new Error(`Trove answered ${response.statusCode}: ${text.slice(0, 200)}`);
    troveHits += (JSON.parse(text) as { hits: { hits: unknown[] } }).hits.hits.length;
  };
  const sphinxQuery = async (terms: readonly string[]): Promise<void> => {
    const [rows] = await sphinx.connection.query(sphinxStatement(queryClass, terms));
    sphinxHits += (rows as unknown[]).length;
  };
  for (const run of [troveQuery, sphinxQuery]) {
    const warmupEnd = performance.now() + options.warmupMs;
    for (let n = 0; performance.now() < warmupEnd; n++) await run(queries[n % queries.length]!);
  }
  const samples: ClassSamples = { trove: [], sphinx: [], available: queries.length, troveHits: 0, sphinxHits: 0 };
  troveHits = 0;
  sphinxHits = 0;
  const budgetEnd = performance.now() + options.classBudgetMs;
  for (const [index, terms] of queries.entries()) {
    if (performance.now() > budgetEnd) break;
    // Alternate which peer goes first, so neither always runs right after the other.
    if (index % 2 === 0) {
      samples.trove.push(await timeOne(() => troveQuery(terms)));
      samples.sphinx.push(await timeOne(() => sphinxQuery(terms)));
    } else {
      samples.sphinx.push(await timeOne(() => sphinxQuery(terms)));
      samples.trove.push(await timeOne(() => troveQuery(terms)));
    }
  }
  samples.troveHits = troveHits;
  samples.sphinxHits = sphinxHits;
  return samples;
}

async function startTrove(dataDir: string, corpusPath: string, options: SphinxComparisonOptions): Promise<ServerProcess> {
  const bodies = await prepareBulkBodies({ collection: 'emails', corpusPath, docs: options.docs, batchSize: EMAIL_BATCH });
  const server = await startServer(dataDir);
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
  for (const [queryClass, classSamples] of samples) {
    const trove = percentile(classSamples.trove, 0.5);
    const sphinx = percentile(classSamples.sphinx, 0.5);
    rows.push([queryClass, formatMs(trove), formatMs(sphinx), formatRatio(trove / sphinx), `${classSamples.troveHits} / ${classSamples.sphinxHits}`]);
    if (classSamples.trove.length < classSamples.available) notes.push(`${queryClass}: ${classSamples.trove.length} of ${classSamples.available} queries timed (class budget)`);
  }
  return [
    `HTTP vs Sphinx: ${options.docs} e-mails, top-10 p50 per class, one keep-alive client each on loopback (Trove: POST /emails/_search, _source false; ${version}: SphinxQL, ranker=bm25)`,
    `load average 1/5/15 min at start: ${loadAtStart}`,
    renderTable(['class', 'Trove p50', 'Sphinx p50', 'Trove/Sphinx', 'hits Trove / Sphinx'], rows),
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
  let trove: ServerProcess | null = null;
  let sphinx: SphinxServer | null = null;
  try {
    trove = await startTrove(path.join(workDir, 'trove'), corpusPath, options);
    sphinx = await startSphinx(path.join(workDir, 'sphinx'));
    const sphinxLoadMs = await loadSphinx(sphinx, corpusPath, options.docs);
    process.stderr.write(`  [sphinx] loaded ${options.docs} e-mails in ${(sphinxLoadMs / 1000).toFixed(1)} s\n`);
    const client = new Client(trove.origin, { pipelining: 1 });
    const samples = new Map<QueryClass, ClassSamples>();
    try {
      for (const queryClass of QUERY_CLASSES) {
        process.stderr.write(`sphinx: timing ${queryClass}\n`);
        samples.set(queryClass, await timeClass(queryClass, querySet[queryClass], client, sphinx, options));
      }
    } finally {
      await client.close();
    }
    process.stdout.write(`\n${render(options, version, samples, loadAtStart)}\n\n`);
  } finally {
    await sphinx?.stop();
    await trove?.stop();
    await fs.rm(workDir, { recursive: true, force: true });
  }
}
