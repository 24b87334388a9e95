/**
 * What the replication suite measures on a running bench cluster: single-client write latency,
 * `_bulk` throughput, the time a killed primary's shard takes to acknowledge a write under a new
 * primary term, and the throughput of a replica's recovery (by operations or by copying files) as
 * `GET /{collection}/_recovery` reports it.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Pool } from 'undici';
import { shardFor } from '../../src/cluster/routing.ts';
import { bulkLoad, type BulkBodies, type LoadResult } from '../http/bulk-load.ts';
import { json, until, type BenchCluster } from './cluster.ts';

/** Mapping of every collection of the suite (explicit, so no write changes it). */
export const MAPPING = { properties: { title: { type: 'text' }, body: { type: 'text' }, tag: { type: 'keyword' }, n: { type: 'long' } } };

/** Documents per `_bulk` request. */
export const BULK_BATCH = 1000;

const WORDS = 'replica primary shard segment epoch history record checkpoint term lease quorum node cluster write ahead log merge recover copy sync'.split(' ');

/** A small document (about 90 bytes of JSON). */
function smallDocument(n: number): Record<string, unknown> {
  return { title: `replicated write ${n}`, tag: `t${n % 10}`, n, body: `${WORDS[n % WORDS.length]} ${WORDS[(n * 7) % WORDS.length]}` };
}

/** A document of about 300 bytes of JSON, for the recovery runs. */
function recoveryDocument(n: number): Record<string, unknown> {
  const words: string[] = [];
  for (let index = 0; index < 32; index++) words.push(WORDS[(n * 31 + index * 17 + (n >> 3)) % WORDS.length]!);
  return { title: `recovered document ${n}`, tag: `t${n % 100}`, n, body: words.join(' ') };
}

/** `_bulk` bodies of `docs` documents made by `make`, ids `<prefix><n>`. */
export function bulkBodies(docs: number, prefix: string, make: (n: number) => Record<string, unknown> = smallDocument): BulkBodies {
  const prepared: BulkBodies = { bodies: [], docs: 0, sourceBytes: 0 };
  for (let start = 0; start < docs; start += BULK_BATCH) {
    const parts: string[] = [];
    for (let n = start; n < Math.min(docs, start + BULK_BATCH); n++) {
      const source = JSON.stringify(make(n));
      parts.push(JSON.stringify({ index: { _id: `${prefix}${n}` } }), source);
      prepared.sourceBytes += Buffer.byteLength(source);
      prepared.docs++;
    }
    prepared.bodies.push(`${parts.join('\n')}\n`);
  }
  return prepared;
}

/** Creates `collection` through `pool`. */
export async function createCollection(pool: Pool, collection: string, shards: number, replicas: number): Promise<void> {
  const created = await json(pool, 'PUT', `/${collection}`, { settings: { number_of_shards: shards, number_of_replicas: replicas }, mappings: MAPPING });
  if (created.status !== 200) throw new Error(`PUT /${collection} answered ${created.status}: ${JSON.stringify(created.body).slice(0, 300)}`);
}

/**
 * Single-client write latency: `PUT /{collection}/_doc/{id}` of a small document, one at a time
 * over one keep-alive connection, for `warmupMs`, then `writes` timed ones. Milliseconds each.
 */
export async function writeLatency(pool: Pool, collection: string, warmupMs: number, writes: number): Promise<number[]> {
  const write = async (id: string, n: number): Promise<void> => {
    const answer = await json(pool, 'PUT', `/${collection}/_doc/${id}`, smallDocument(n));
    if (answer.status !== 200 && answer.status !== 201) throw new Error(`PUT /${collection}/_doc/${id} answered ${answer.status}: ${JSON.stringify(answer.body).slice(0, 300)}`);
  };
  const warmEnd = performance.now() + warmupMs;
  for (let n = 0; performance.now() < warmEnd; n++) await write(`warm-${n}`, n);
  const samples: number[] = [];
  for (let n = 0; n < writes; n++) {
    const started = performance.now();
    await write(`w-${n}`, n);
    samples.push(performance.now() - started);
  }
  return samples;
}

/** `_bulk` of `docs` small documents, `BULK_BATCH` per request, `concurrency` requests in flight. */
export async function bulkThroughput(pool: Pool, collection: string, docs: number, concurrency: number): Promise<LoadResult> {
  const load = await bulkLoad(pool, collection, bulkBodies(docs, 'b-'), concurrency);
  if (load.failedItems > 0) throw new Error(`${load.failedItems} bulk items failed, first: ${load.firstFailure}`);
  return load;
}

/** An id of a document that `shardFor` routes to `shard` of `shards`. */
export function idOnShard(shard: number, shards: number): string {
  for (let n = 0; ; n++) if (shardFor(`failover-${n}`, shards) === shard) return `failover-${n}`;
}

/** What one failover round saw. */
export interface FailoverRound {
  /** Name (`node-N`) of the killed primary's node and of the promoted copy's. */
  killed: string;
  promoted: string;
  termBefore: number;
  termAfter: number;
  /** Kill → first acknowledged write under a newer primary term; NaN when none came in time. */
  failoverMs: number;
  /** Answers other than 200/201 (and transport errors) between the kill and that write, by status. */
  refusals: Record<string, number>;
  /** Restart of the killed node → green with every copy in sync again (includes its start). */
  rejoinMs: number;
}

const FAILOVER_TIMEOUT_MS = 60_000;
const STEADY_MS = 1_000;

/**
 * One failover round on `collection` (`shards` shards, 1 replica): steady single-client writes
 * to document `id` of shard `shard` through a node that does not hold its primary; after
 * `STEADY_MS`, kill -9 the primary's node and time the first acknowledged write whose
 * `_primary_term` is greater than before; then restart the node and wait for green.
 */
export async function failoverRound(cluster: BenchCluster, collection: string, shard: number, id: string): Promise<FailoverRound> {
  const before = (await cluster.shards(collection))[String(shard)]!;
  const victim = cluster.indexOf(before.primary.node);
  const entry = cluster.nodes[(victim + 1) % cluster.nodes.length]!;
  const refusals: Record<string, number> = {};
  let killedAt: number | null = null;
  let acknowledgedAt = Number.NaN;
  let termAfter = before.primary_term;
  let stopped = false;
  const writer = (async () => {
    for (let n = 0; !stopped; n++) {
      let outcome: string;
      try {
        const answer = await json(entry.pool, 'PUT', `/${collection}/_doc/${id}`, { title: `failover write ${n}`, tag: 'f', n }, 10_000);
        if ((answer.status === 200 || answer.status === 201) && answer.body._primary_term > before.primary_term) {
          if (killedAt !== null) {
            acknowledgedAt = performance.now();
            termAfter = answer.body._primary_term;
            return;
          }
        }
        outcome = answer.status === 200 || answer.status === 201 ? 'ok' : String(answer.status);
      } catch (error) {
        outcome = (error as { code?: string }).code ?? (error as Error).name;
      }
      if (outcome === 'ok') continue;
      if (killedAt === null) throw new Error(`a write failed before the kill: ${outcome}`);
      refusals[outcome] = (refusals[outcome] ?? 0) + 1;
      await sleep(10);
    }
  })();
  // Awaited below; a failure before the kill must not be an unhandled rejection meanwhile.
  writer.catch(() => undefined);
  await sleep(STEADY_MS);
  killedAt = performance.now();
  const killing = cluster.kill(victim);
  const timer = setTimeout(() => {
    stopped = true;
  }, FAILOVER_TIMEOUT_MS);
  await writer;
  clearTimeout(timer);
  await killing;
  const after = await until(async () => {
    const row = (await cluster.shards(collection, cluster.nodes.indexOf(entry)))[String(shard)]!;
    return row.primary_term > before.primary_term ? row : undefined;
  }, `shard ${shard} of [${collection}] has a new primary`);
  const restarted = performance.now();
  await cluster.restart(victim);
  await cluster.waitGreen(collection, 1);
  return {
    killed: `node-${victim + 1}`,
    promoted: after.primary.node === null ? 'none' : `node-${cluster.indexOf(after.primary.node) + 1}`,
    termBefore: before.primary_term,
    termAfter,
    failoverMs: acknowledgedAt - killedAt,
    refusals,
    rejoinMs: performance.now() - restarted,
  };
}

/** How a replica added to a loaded collection recovered. */
export interface RecoveryRun {
  wanted: 'operations' | 'files';
  /** The `method` `_recovery` reports. */
  method: string;
  docs: number;
  sourceBytes: number;
  files: number;
  fileBytes: number;
  records: number;
  recordBytes: number;
  /** `total_time_in_millis` of the recovery. */
  tookMs: number;
  /** `PUT _settings` → green with both copies in sync, as the client saw it. */
  wallMs: number;
  /** How the start of the history got trimmed (file-based runs only). */
  trimmed: string;
}

/** Node setting changed on every node (through the first); `null` restores the default. */
async function setOnEveryNode(cluster: BenchCluster, settings: Record<string, number | null>): Promise<void> {
  for (const node of cluster.nodes) {
    const answer = await json(cluster.nodes[0]!.pool, 'PUT', `/_node/${node.id}/settings`, settings);
    if (answer.status !== 200) throw new Error(`PUT /_node/${node.id}/settings answered ${answer.status}: ${JSON.stringify(answer.body).slice(0, 300)}`);
  }
}

/** Whether the first change of `collection`'s feed is no longer the write of `firstId`. */
async function historyTrimmed(pool: Pool, collection: string, firstId: string): Promise<true | undefined> {
  const oldest = await json(pool, 'GET', `/${collection}/_changes?since=0&limit=1`);
  const first = oldest.body?.results?.[0]?.id;
  return typeof first === 'string' && first !== firstId ? true : undefined;
}

/** Id of the document written alone before the load: the first record of the history. */
const FIRST_ID = 'first';

const TRIM_WAIT_MS = 30_000;

/**
 * Writes one document alone (the first record of the history, so that its trimming can be seen),
 * then loads `docs` documents of about 300 bytes into a new 1-shard collection without replicas,
 * then sets `number_of_replicas` to 1 and reads how the new replica recovered. For `files`, the node
 * history retention is set to 0 first and the history start is trimmed (forced merge, then
 * waiting for it; if it does not happen in `TRIM_WAIT_MS`, epochs every 200 ms as well).
 */
export async function recoveryRun(cluster: BenchCluster, collection: string, docs: number, wanted: 'operations' | 'files'): Promise<RecoveryRun> {
  const pool = cluster.nodes[0]!.pool;
  let trimmed = 'n/a';
  if (wanted === 'files') await setOnEveryNode(cluster, { 'changes.retention_secs': 0 });
  try {
    await createCollection(pool, collection, 1, 0);
    await cluster.waitGreen(collection, 0);
    const first = await json(pool, 'PUT', `/${collection}/_doc/${FIRST_ID}`, recoveryDocument(docs));
    if (first.status !== 201) throw new Error(`PUT /${collection}/_doc/${FIRST_ID} answered ${first.status}: ${JSON.stringify(first.body).slice(0, 300)}`);
    const bodies = bulkBodies(docs, 'r-', recoveryDocument);
    const load = await bulkLoad(pool, collection, bodies, 2);
    if (load.failedItems > 0) throw new Error(`${load.failedItems} bulk items failed, first: ${load.firstFailure}`);
    if (wanted === 'files') {
      const merged = await json(pool, 'POST', `/${collection}/_forcemerge?max_num_segments=1`, undefined, 600_000);
      if (merged.status !== 200) throw new Error(`_forcemerge answered ${merged.status}: ${JSON.stringify(merged.body).slice(0, 300)}`);
      const trimStarted = performance.now();
      const soon = await until(() => historyTrimmed(pool, collection, FIRST_ID), 'the history start is trimmed', TRIM_WAIT_MS).then(() => true, () => false);
      if (!soon) {
        await setOnEveryNode(cluster, { 'epoch.interval_ms': 200 });
        await until(() => historyTrimmed(pool, collection, FIRST_ID), 'the history start is trimmed (epochs every 200 ms)');
      }
      trimmed = `${soon ? 'after the forced merge' : 'only with epochs every 200 ms'}, ${((performance.now() - trimStarted) / 1000).toFixed(1)} s`;
    }
    const added = performance.now();
    const grown = await json(pool, 'PUT', `/${collection}/_settings`, { index: { number_of_replicas: 1 } });
    if (grown.status !== 200) throw new Error(`PUT /${collection}/_settings answered ${grown.status}: ${JSON.stringify(grown.body).slice(0, 300)}`);
    await cluster.waitGreen(collection, 1, 600_000);
    const wallMs = performance.now() - added;
    const rows = await until(async () => {
      const answer = await json(pool, 'GET', `/${collection}/_recovery`);
      const shards = answer.body?.[collection]?.shards as any[] | undefined;
      return shards !== undefined && shards.length > 0 ? shards : undefined;
    }, `_recovery of [${collection}] lists the replica`, 10_000);
    const row = rows[rows.length - 1];
    return {
      wanted,
      method: rows.map((entry) => entry.method).join(', '),
      docs: load.docs + 1,
      sourceBytes: load.sourceBytes,
      files: row.index.files.recovered,
      fileBytes: row.index.size.recovered_in_bytes,
      records: row.translog.recovered,
      recordBytes: row.translog.recovered_in_bytes,
      tookMs: row.total_time_in_millis,
      wallMs,
      trimmed,
    };
  } finally {
    if (wanted === 'files') await setOnEveryNode(cluster, { 'changes.retention_secs': null, 'epoch.interval_ms': null });
  }
}
