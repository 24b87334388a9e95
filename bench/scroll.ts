/**
 * Scroll suite: reading every document of a 100k-document, 3-shard collection through one real
 * Trove server, in pages of the same size, four ways: a scroll in the default order (`_score`,
 * then `_shard_doc`), a scroll sorted by `_doc`, `search_after` on a point in time sorted by a
 * numeric field, and plain `search_after` on the live collection with the same sort. Each way
 * runs `rounds` times, alternating, and reports its best and median runs (on a busy machine the
 * best is the steadier figure); documents per second count hits returned (with `_source`).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Pool } from 'undici';
import { startServer } from './http/server-process.ts';
import { formatMs, formatRate, formatRatio } from './report/stats.ts';
import { renderTable } from './report/table.ts';

/** Knobs of the scroll suite. */
export interface ScrollSuiteOptions {
  /** Documents to load and read. */
  docs: number;
  /** Hits per page. */
  pageSize: number;
  /** Runs of each way (the best and the median are reported). */
  rounds: number;
}

const COLLECTION = 'pages';
const SHARDS = 3;
const WORDS = ['alpha', 'bravo', 'charlie', 'delta', 'echo', 'foxtrot', 'golf', 'hotel', 'india', 'juliet', 'kilo', 'lima'];

type Way = 'scroll' | 'scroll _doc' | 'point in time + search_after' | 'search_after';
const WAYS: readonly Way[] = ['scroll', 'scroll _doc', 'point in time + search_after', 'search_after'];

interface Page {
  _scroll_id?: string;
  hits: { hits: Array<{ sort?: unknown[] }> };
}

async function send(pool: Pool, method: 'PUT' | 'POST' | 'DELETE', requestPath: string, body?: string, contentType = 'application/json'): Promise<string> {
  const response = await pool.request({ method, path: requestPath, headers: { 'content-type': contentType }, body });
  const text = await response.body.text();
  if (response.statusCode >= 300) throw new Error(`${method} ${requestPath} answered ${response.statusCode}: ${text.slice(0, 300)}`);
  return text;
}

async function load(pool: Pool, docs: number): Promise<void> {
  const mapping = { properties: { n: { type: 'long' }, tag: { type: 'keyword' }, title: { type: 'text' } } };
  await send(pool, 'PUT', `/${COLLECTION}`, JSON.stringify({ settings: { number_of_shards: SHARDS, number_of_replicas: 0 }, mappings: mapping }));
  const batch = 20_000;
  for (let start = 0; start < docs; start += batch) {
    let body = '';
    for (let n = start; n < Math.min(docs, start + batch); n++) {
      const title = `${WORDS[n % 12]} ${WORDS[(n * 7) % 12]} ${WORDS[(n * 5) % 11]} number ${n}`;
      body += `{"index":{"_id":"d${n}"}}\n${JSON.stringify({ n, tag: WORDS[n % 5], title })}\n`;
    }
    const answer = JSON.parse(await send(pool, 'POST', `/${COLLECTION}/_bulk`, body, 'application/x-ndjson')) as { errors: boolean };
    if (answer.errors) throw new Error('a bulk item failed');
  }
}

/** Reads every document one way; answers the documents read. */
async function readAll(pool: Pool, way: Way, pageSize: number): Promise<number> {
  let read = 0;
  if (way === 'scroll' || way === 'scroll _doc') {
    const sort = way === 'scroll _doc' ? ',"sort":["_doc"]' : '';
    let page = JSON.parse(await send(pool, 'POST', `/${COLLECTION}/_search?scroll=1m`, `{"size":${pageSize}${sort}}`)) as Page;
    while (page.hits.hits.length > 0) {
      read += page.hits.hits.length;
      page = JSON.parse(await send(pool, 'POST', '/_search/scroll', JSON.stringify({ scroll: '1m', scroll_id: page._scroll_id }))) as Page;
    }
    await send(pool, 'DELETE', '/_search/scroll', JSON.stringify({ scroll_id: page._scroll_id }));
    return read;
  }
  const pit = way === 'search_after' ? null : (JSON.parse(await send(pool, 'POST', `/${COLLECTION}/_pit?keep_alive=1m`)) as { id: string }).id;
  let after: unknown[] | undefined;
  for (;;) {
    const body = { size: pageSize, sort: [{ n: 'asc' }], ...(pit ? { pit: { id: pit } } : {}), ...(after ? { search_after: after } : {}) };
    const page = JSON.parse(await send(pool, 'POST', pit ? '/_search' : `/${COLLECTION}/_search`, JSON.stringify(body))) as Page;
    if (page.hits.hits.length === 0) break;
    read += page.hits.hits.length;
    after = page.hits.hits.at(-1)!.sort;
  }
  if (pit) await send(pool, 'DELETE', '/_pit', JSON.stringify({ id: pit }));
  return read;
}

function median(values: number[]): number {
  const sorted = [...values].sort((left, right) => left - right);
  return sorted[Math.floor(sorted.length / 2)]!;
}

/** Runs the suite and prints its table on stdout. */
export async function scrollSuite(options: ScrollSuiteOptions): Promise<void> {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'trove-bench-scroll-'));
  const server = await startServer(dataDir);
  const pool = new Pool(server.origin, { connections: 2 });
  try {
    process.stderr.write(`scroll: loading ${options.docs} documents\n`);
    await load(pool, options.docs);
    await send(pool, 'POST', `/${COLLECTION}/_forcemerge?max_num_segments=1`);
    const times = new Map<Way, number[]>(WAYS.map((way) => [way, []]));
    for (let round = 0; round < options.rounds; round++) {
      for (const way of WAYS) {
        const started = performance.now();
        const read = await readAll(pool, way, options.pageSize);
        if (read !== options.docs) throw new Error(`${way} read ${read} of ${options.docs} documents`);
        times.get(way)!.push(performance.now() - started);
        process.stderr.write(`scroll: ${way} round ${round + 1}: ${((performance.now() - started) / 1000).toFixed(2)} s\n`);
      }
    }
    const loadAverage = os.loadavg().map((value) => value.toFixed(2)).join(' / ');
    const baseline = median(times.get('search_after')!);
    const bestBaseline = Math.min(...times.get('search_after')!);
    process.stdout.write(`\nReading ${options.docs} documents in pages of ${options.pageSize} (${SHARDS} shards, one segment each, best and median of ${options.rounds}; load ${loadAverage})\n\n`);
    process.stdout.write(
      `${renderTable(
        ['way', 'best', 'documents/s', 'vs search_after', 'median', 'vs search_after'],
        WAYS.map((way) => {
          const best = Math.min(...times.get(way)!);
          const ms = median(times.get(way)!);
          return [way, formatMs(best), formatRate(options.docs / (best / 1000), 'docs/s'), formatRatio(bestBaseline / best), formatMs(ms), formatRatio(baseline / ms)];
        }),
      )}\n`,
    );
  } finally {
    await pool.close();
    await server.stop();
    await rm(dataDir, { recursive: true, force: true });
  }
}
