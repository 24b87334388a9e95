/**
 * Suite 3: the change feed of one real Trove server. The cities corpus is bulk-loaded into a
 * collection of two shards; then the whole feed is read with `limit=1000` pages, once without and
 * once with `include_docs` (changes/s as a client sees them, JSON parsing included); then a
 * longpoll consumer waits while a writer indexes one document at a time, and the delay from the
 * write's acknowledgement (and from the moment it was sent) to the change's arrival is measured.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Pool } from 'undici';
import { CITY_MAPPING, cityCorpus } from './corpora/cities.ts';
import { bulkLoad, prepareBulkBodies } from './http/bulk-load.ts';
import { startServer } from './http/server-process.ts';
import { formatMs, formatRate, percentile } from './report/stats.ts';
import { renderTable } from './report/table.ts';

/** Knobs of the change-feed suite. */
export interface ChangesSuiteOptions {
  /** City documents to load. */
  cities: number;
  /** Writes timed by the longpoll latency run. */
  latencyRounds: number;
}

const COLLECTION = 'feed';
const SHARDS = 2;
const PAGE = 1000;
/** Time given to a longpoll request to reach the server and start waiting before the write. */
const SETTLE_MS = 15;

interface FeedPage {
  results: unknown[];
  last_seq: string;
  pending: number;
}

async function fetchJson<T>(pool: Pool, method: 'GET' | 'PUT' | 'POST', requestPath: string, body?: unknown): Promise<T> {
  const response = await pool.request({
    method,
    path: requestPath,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.body.text();
  if (response.statusCode >= 300) throw new Error(`${method} ${requestPath} answered ${response.statusCode}: ${text.slice(0, 300)}`);
  return JSON.parse(text) as T;
}

/** Reads the feed from the start in pages; returns changes read and milliseconds taken. */
async function readWholeFeed(pool: Pool, includeDocs: boolean): Promise<{ changes: number; ms: number }> {
  let since = '0';
  let changes = 0;
  const started = performance.now();
  for (;;) {
    const page = await fetchJson<FeedPage>(pool, 'GET', `/${COLLECTION}/_changes?limit=${PAGE}&include_docs=${includeDocs}&since=${encodeURIComponent(since)}`);
    changes += page.results.length;
    since = page.last_seq;
    if (page.results.length === 0) break;
  }
  return { changes, ms: performance.now() - started };
}

/** One write seen by a waiting longpoll consumer: delays from the write's send and its acknowledgement. */
async function timeOneWrite(pool: Pool, since: string, round: number): Promise<{ fromSend: number; fromAck: number; lastSeq: string }> {
  let arrivedAt = 0;
  const poll = fetchJson<FeedPage>(pool, 'GET', `/${COLLECTION}/_changes?feed=longpoll&timeout=10000&since=${encodeURIComponent(since)}`).then((page) => {
    arrivedAt = performance.now();
    return page;
  });
  await sleep(SETTLE_MS);
  const sentAt = performance.now();
  await fetchJson(pool, 'PUT', `/${COLLECTION}/_doc/latency-${round}`, { name: `latency probe ${round}`, population: round });
  const ackedAt = performance.now();
  const page = await poll;
  if (page.results.length === 0) throw new Error('the longpoll consumer timed out without the write');
  return { fromSend: arrivedAt - sentAt, fromAck: Math.max(0, arrivedAt - ackedAt), lastSeq: page.last_seq };
}

/** Runs the suite and prints its table on stdout. */
export async function changesSuite(options: ChangesSuiteOptions): Promise<void> {
  process.stderr.write('changes: preparing the cities corpus\n');
  const prepared = await prepareBulkBodies({ collection: COLLECTION, corpusPath: await cityCorpus(), docs: options.cities, batchSize: 5000 });
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'trove-bench-changes-'));
  const server = await startServer(dataDir);
  const pool = new Pool(server.origin, { connections: 4 });
  try {
    await fetchJson(pool, 'PUT', `/${COLLECTION}`, { settings: { number_of_shards: SHARDS, number_of_replicas: 0 }, mappings: CITY_MAPPING });
    const load = await bulkLoad(pool, COLLECTION, prepared, 2);
    process.stderr.write(`changes: loaded ${load.docs} cities in ${(load.ms / 1000).toFixed(1)} s\n`);

    await readWholeFeed(pool, false);
    const plain = await readWholeFeed(pool, false);
    const withDocs = await readWholeFeed(pool, true);
    process.stderr.write(`changes: read ${plain.changes} changes twice\n`);

    let since = (await fetchJson<FeedPage>(pool, 'GET', `/${COLLECTION}/_changes?since=now`)).last_seq;
    const fromSend: number[] = [];
    const fromAck: number[] = [];
    for (let round = 0; round < options.latencyRounds; round++) {
      const timed = await timeOneWrite(pool, since, round);
      fromSend.push(timed.fromSend);
      fromAck.push(timed.fromAck);
      since = timed.lastSeq;
    }

    const rows = [
      ['feed read, limit=1000', `${plain.changes}`, formatRate((plain.changes / plain.ms) * 1000, 'changes/s'), formatMs(plain.ms)],
      ['feed read, limit=1000, include_docs', `${withDocs.changes}`, formatRate((withDocs.changes / withDocs.ms) * 1000, 'changes/s'), formatMs(withDocs.ms)],
    ];
    const latency = [
      ['acknowledged write → longpoll arrival', formatMs(percentile(fromAck, 0.5)), formatMs(percentile(fromAck, 0.99))],
      ['write sent → longpoll arrival', formatMs(percentile(fromSend, 0.5)), formatMs(percentile(fromSend, 0.99))],
    ];
    process.stdout.write(`\nChange feed (${SHARDS} shards, ${load.docs} cities)\n\n`);
    process.stdout.write(`${renderTable(['read', 'changes', 'throughput', 'time'], rows)}\n\n`);
    process.stdout.write(`${renderTable([`delay (${options.latencyRounds} writes)`, 'p50', 'p99'], latency)}\n`);
  } finally {
    await pool.close();
    await server.stop();
    await rm(dataDir, { recursive: true, force: true });
  }
}
