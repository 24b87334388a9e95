/**
 * A primary's change feed before it knows where its in-sync replicas stand: three nodes and a real
 * etcd, one shard with two replicas, every node answering a primary's `replica.position` only
 * after POSITION_DELAY_MS (fault point `replication.slow_position`, below the primary's call
 * timeout, so the replicas stay in sync). A reader follows the feed to its end; the primary's node
 * is killed (kill -9) and started again within its registration lease, so no replica is promoted
 * and the reopened primary must ask both replicas where they stand. Asked at once, its feed waits
 * for their answers or is refused: it never ends below the reader's cursor. Then a new write
 * follows the reader's cursor exactly once.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { etcdSkipReason } from './etcd.fixture.ts';
import { until } from './harness.ts';
import { startNemesisCluster, type NemesisCluster } from './replication-cluster.ts';
import { timedCall } from './replication-workload.ts';

/** Long enough for the killed node to start again before its registration expires (no failover). */
const TTL_MS = 20_000;
const DOCS = 40;
/** Below the primary's 5 s call timeout: the slow replica answers late, but in time to stay in sync. */
const POSITION_DELAY_MS = 3_000;
const FEED_CALL_MS = 30_000;

let cluster: NemesisCluster | undefined;
const skipReason = etcdSkipReason();

interface ShardRow {
  primary: { node: string | null };
  primary_term: number;
  in_sync: string[];
}

interface Feed {
  results: Array<{ id: string }>;
  last_seq: string;
}

/** The shard's row as `node` sees it, or undefined when it does not answer in time. */
async function shardRow(node: { url: string }): Promise<ShardRow | undefined> {
  const answer = await timedCall(node, 'GET', '/_cluster/state/shards', undefined, 2_000);
  if ('failure' in answer || answer.status !== 200) return undefined;
  return (answer.body as { shards: Record<string, Record<string, ShardRow>> }).shards.feedpos?.['0'];
}

/** The seq a feed cursor of a one-shard collection stands at (its leading sum of shard seqs). */
function cursorSeq(cursor: string): number {
  const sum = /^(\d+)-/.exec(cursor);
  assert.ok(sum, `cursor ${cursor} starts with its sum of seqs`);
  return Number(sum[1]);
}

/**
 * A normal `_changes` request, repeated while the shard is unavailable (503: still opening, or its
 * feed has no safe end yet), at most FEED_CALL_MS and 200 times in all; fails the test on any other answer.
 */
async function feed(node: { url: string }, since: string): Promise<{ feed: Feed; ms: number; refused: number }> {
  const started = Date.now();
  let refused = 0;
  for (let attempt = 1; ; attempt++) {
    const answer = await timedCall(node, 'GET', `/feedpos/_changes?since=${encodeURIComponent(since)}&limit=1000`, undefined, FEED_CALL_MS);
    if (!('failure' in answer) && answer.status === 503 && attempt < 200 && Date.now() - started < FEED_CALL_MS) {
      refused++;
      await sleep(100);
      continue;
    }
    assert.ok(!('failure' in answer) && answer.status === 200, `_changes?since=${since}: ${JSON.stringify(answer)}`);
    return { feed: answer.body as Feed, ms: Date.now() - started, refused };
  }
}

before(async () => {
  if (skipReason) return;
  cluster = await startNemesisCluster({ count: 3, ttlMs: TTL_MS, name: 'feed-position', env: { TROVE_FAULTS: `replication.slow_position:${POSITION_DELAY_MS}` } });
});

after(async () => {
  await cluster?.cleanup();
});

test('a reopened primary never ends its change feed below what a reader saw before its replicas say where they stand', { skip: skipReason, timeout: 180_000 }, async (t) => {
  const { nodes, nodeIds } = cluster!;
  const created = await timedCall(nodes[0]!, 'PUT', '/feedpos', { json: { settings: { number_of_shards: 1, number_of_replicas: 2 }, mappings: { properties: { n: { type: 'long' } } } } });
  assert.ok(!('failure' in created) && created.status === 200, JSON.stringify(created));
  await until(async () => {
    const row = await shardRow(nodes[0]!);
    return row && row.in_sync.length === 3 ? row : undefined;
  }, 'all three copies are in sync', 60_000);

  const lines = Array.from({ length: DOCS }, (_, n) => `${JSON.stringify({ index: { _id: `d${n}` } })}\n${JSON.stringify({ n })}\n`).join('');
  const bulk = await timedCall(nodes[0]!, 'POST', '/feedpos/_bulk', { ndjson: lines }, 30_000);
  assert.ok(!('failure' in bulk) && bulk.status === 200, JSON.stringify(bulk));
  assert.equal((bulk.body as { errors: boolean }).errors, false, JSON.stringify(bulk.body));
  const acknowledged = Array.from({ length: DOCS }, (_, n) => `d${n}`).sort();

  // The reader follows the feed to its end under the first primary.
  const seen = (await feed(nodes[0]!, '0')).feed;
  assert.deepEqual(seen.results.map((change) => change.id).sort(), acknowledged, 'the reader saw every write');
  const readerSeq = cursorSeq(seen.last_seq);

  const before = (await shardRow(nodes[0]!))!;
  const primaryIndex = nodeIds.indexOf(before.primary.node!);
  const primary = nodes[primaryIndex]!;
  const killedAt = Date.now();
  await primary.kill('SIGKILL');
  await primary.restart();
  const restartedAfterMs = Date.now() - killedAt;

  // Asked as soon as the node listens again: its reopened primary has not heard from the replicas yet.
  const [fromZero, fromReader, fromNow] = await Promise.all([feed(primary, '0'), feed(primary, seen.last_seq), feed(primary, 'now')]);
  assert.deepEqual(fromZero.feed.results.map((change) => change.id).sort(), acknowledged, 'the reopened primary\'s feed from 0 holds every write the reader saw');
  assert.deepEqual(fromReader.feed.results, [], 'nothing new after the reader\'s cursor');
  for (const [name, answer] of [['0', fromZero], ['the reader\'s cursor', fromReader], ['now', fromNow]] as const) {
    assert.ok(cursorSeq(answer.feed.last_seq) >= readerSeq, `since=${name}: the feed ends at seq ${cursorSeq(answer.feed.last_seq)}, below the reader's ${readerSeq}`);
  }
  const after = (await shardRow(primary))!;
  assert.equal(after.primary.node, before.primary.node, 'the restarted node is still the primary: no failover');
  assert.equal(after.primary_term, before.primary_term, 'under the same term');
  assert.equal(after.in_sync.length, 3, `both replicas answered in time and stayed in sync: ${JSON.stringify(after)}`);
  t.diagnostic(
    `node killed and listening again after ${restartedAfterMs} ms; its first feed answers took ${fromZero.ms}, ${fromReader.ms} and ${fromNow.ms} ms ` +
      `(${fromZero.refused + fromReader.refused + fromNow.refused} refusals while unavailable; replica positions delayed ${POSITION_DELAY_MS} ms)`,
  );
  const written = await timedCall(primary, 'PUT', '/feedpos/_doc/after', { json: { n: -1 } }, 30_000);
  assert.ok(!('failure' in written) && (written.status === 201 || written.status === 200), JSON.stringify(written));
  const next = await feed(primary, seen.last_seq);
  assert.deepEqual(next.feed.results.map((change) => change.id), ['after'], 'the reader\'s cursor goes on with the new write, once');
});
