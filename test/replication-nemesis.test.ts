/**
 * Replication under faults: three nodes on a real etcd take a steady write load (index, `doc` and
 * inplace `incr` updates, deletes, `_bulk`) on a few documents while a change-feed reader tails the
 * collection, and round after round a nemesis kills a node with SIGKILL and restarts it, stops a
 * primary's node with SIGSTOP for longer than its lease, or kills and restarts etcd. After each
 * round the cluster must come back healthy and every document must be in a state its history
 * allows; at the end, the feed must hold each acknowledged write exactly once, and every copy of
 * every shard, read offline from the stopped nodes' data directories, must agree with the others
 * and with the acknowledged writes (test/replication-checker.ts has the model).
 *
 * `TROVE_NEMESIS_REPLICAS` sets `number_of_replicas` (default 1); with 0 a killed node's shards are
 * unavailable until it restarts, which still checks that acknowledged writes survive a crash.
 * `TROVE_NEMESIS_ROUNDS` sets the number of rounds (default 21).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { etcdSkipReason } from './etcd.fixture.ts';
import { checkAcknowledged, checkFeed, checkFeedAgainstStates, checkObservedStates, type DocState, type WriteRecord } from './replication-checker.ts';
import {
  killAndRestart,
  pauseNode,
  restartEtcd,
  routingTable,
  startNemesisCluster,
  waitHealthy,
  type NemesisCluster,
  type ShardRouting,
} from './replication-cluster.ts';
import { compareCopies, readCopy, type CopyContents } from './replication-copies.ts';
import { FeedReader, timedCall, Workload, WORKLOAD_MAPPING } from './replication-workload.ts';

/** `number_of_replicas` of the collection under test. */
const REPLICAS = Number(process.env.TROVE_NEMESIS_REPLICAS ?? 1);
const ROUNDS = Number(process.env.TROVE_NEMESIS_ROUNDS ?? 21);
const NODES = 3;
const SHARDS = 3;
const DOCUMENTS = 50;
const WRITERS = 3;
const TTL_MS = 2_000;
const COLLECTION = 'nemesis';
/** Rounds stop starting once this much of the suite has passed; the checks after them are bounded too. */
const ROUNDS_BUDGET_MS = 190_000;
const LOAD_BEFORE_FAULT_MS = 700;
const HEALTH_WAIT_MS = 30_000;
const FEED_DRAIN_MS = 20_000;

type Fault = 'kill' | 'pause' | 'etcd';
const FAULTS: Fault[] = ['kill', 'pause', 'etcd'];

const now = (): number => performance.now();

/** Reads every document through random nodes (realtime GET, retried); ids that never answered are left out. */
async function readDocuments(cluster: NemesisCluster): Promise<Map<string, DocState>> {
  const observed = new Map<string, DocState>();
  const ids = Array.from({ length: DOCUMENTS }, (_, index) => `d${String(index).padStart(2, '0')}`);
  await Promise.all(
    ids.map(async (id) => {
      for (let attempt = 0; attempt < 10; attempt++) {
        const answer = await timedCall(cluster.pickNode(), 'GET', `/${COLLECTION}/_doc/${id}?realtime=true`);
        if (!('failure' in answer) && answer.status === 200 && answer.body.found === true) {
          observed.set(id, { version: answer.body._version, source: answer.body._source });
          return;
        }
        if (!('failure' in answer) && answer.status === 404 && answer.body?.found === false) {
          observed.set(id, null);
          return;
        }
        await sleep(200);
      }
    }),
  );
  return observed;
}

/** Per shard, the longest stretch without an acknowledged write while the writers ran (holds subtracted). */
function longestUnavailability(writes: readonly WriteRecord[], holds: ReadonlyArray<[number, number]>, start: number, end: number): number {
  let longest = 0;
  for (let shard = 0; shard < SHARDS; shard++) {
    const times = [start, ...writes.filter((write) => write.shard === shard && write.outcome === 'ok').map((write) => write.completedAt).sort((left, right) => left - right), end];
    for (let index = 1; index < times.length; index++) {
      const [from, to] = [times[index - 1]!, times[index]!];
      const held = holds.reduce((sum, [holdFrom, holdTo]) => sum + Math.max(0, Math.min(to, holdTo) - Math.max(from, holdFrom)), 0);
      longest = Math.max(longest, to - from - held);
    }
  }
  return longest;
}

/** The copies the routing table says are in sync: the primary and started replicas, as node indexes. */
function inSyncCopies(cluster: NemesisCluster, routing: ShardRouting): number[] {
  const nodes = [routing.primary, ...routing.replicas].filter((copy) => copy.node !== null && copy.state === 'started').map((copy) => copy.node!);
  return nodes.map((node) => cluster.nodeIds.indexOf(node)).filter((index) => index >= 0);
}

test(`acknowledged writes survive kill -9, long pauses and etcd restarts (${REPLICAS} replica(s))`, { skip: etcdSkipReason(), timeout: 360_000 }, async (t) => {
  const started = Date.now();
  const cluster = await startNemesisCluster({ count: NODES, ttlMs: TTL_MS, name: 'nemesis' });
  try {
    const created = await timedCall(cluster.nodes[0]!, 'PUT', `/${COLLECTION}`, {
      json: { settings: { number_of_shards: SHARDS, number_of_replicas: REPLICAS }, mappings: WORKLOAD_MAPPING },
    }, 30_000);
    assert.ok(!('failure' in created) && created.status === 200, JSON.stringify(created));
    const copies = 1 + REPLICAS;
    const initial = await waitHealthy(cluster, copies, HEALTH_WAIT_MS);
    assert.ok(initial.healthy, `healthy before the first round (status/nodes/etcd per node: ${initial.last})`);

    const workload = new Workload({ collection: COLLECTION, shards: SHARDS, documents: DOCUMENTS, writers: WRITERS, pickNode: () => cluster.pickNode(), now });
    const feed = new FeedReader({ collection: COLLECTION, shards: SHARDS, pickNode: () => cluster.pickNode() });
    const violations: string[] = [];
    const holds: Array<[number, number]> = [];
    const loadStart = now();
    workload.start();
    feed.start();

    let rounds = 0;
    let primaryMoves = 0;
    let longestRecovery = 0;
    let lastPrimaries = (await routingTable(cluster, COLLECTION))?.map((shard) => shard.primary.node) ?? [];
    while (rounds < ROUNDS && Date.now() - started < ROUNDS_BUDGET_MS) {
      const fault = FAULTS[rounds % FAULTS.length]!;
      await sleep(LOAD_BEFORE_FAULT_MS);
      const faultStart = now();
      if (fault === 'kill') {
        await killAndRestart(cluster, Math.floor(Math.random() * NODES), 200);
      } else if (fault === 'pause') {
        const routing = await routingTable(cluster, COLLECTION);
        const primary = routing?.[Math.floor(Math.random() * SHARDS)]?.primary.node;
        const index = primary ? cluster.nodeIds.indexOf(primary) : -1;
        await pauseNode(cluster, index >= 0 ? index : Math.floor(Math.random() * NODES), TTL_MS + 1_000);
      } else {
        await restartEtcd(cluster, 500);
      }
      const faultEnd = now();
      const health = await waitHealthy(cluster, copies, HEALTH_WAIT_MS);
      longestRecovery = Math.max(longestRecovery, now() - faultStart);
      rounds++;
      if (!health.healthy) {
        violations.push(`round ${rounds} (${fault}): not healthy within ${HEALTH_WAIT_MS} ms: ${health.last}`);
        break;
      }
      const primaries = (await routingTable(cluster, COLLECTION))?.map((shard) => shard.primary.node) ?? lastPrimaries;
      primaryMoves += primaries.filter((node, shard) => lastPrimaries[shard] !== undefined && node !== lastPrimaries[shard]).length;
      lastPrimaries = primaries;
      const holdStart = now();
      await workload.hold();
      const observed = await readDocuments(cluster);
      violations.push(...checkObservedStates(workload.history, observed, `round ${rounds} (${fault})`));
      workload.resume();
      holds.push([holdStart, now()]);
      if (process.env.TROVE_NEMESIS_VERBOSE) t.diagnostic(`round ${rounds} ${fault}: fault ${(faultEnd - faultStart).toFixed(0)} ms, healthy after ${(holdStart - faultEnd).toFixed(0)} ms, check ${(now() - holdStart).toFixed(0)} ms, writes ${workload.history.length}`);
      if (violations.length > 0) break;
    }

    await workload.stop();
    const loadEnd = now();
    const settled = await waitHealthy(cluster, copies, HEALTH_WAIT_MS);
    if (!settled.healthy) violations.push(`not healthy after the rounds: ${settled.last}`);
    if (!(await feed.drain(Date.now() + FEED_DRAIN_MS))) violations.push(`the feed did not catch up within ${FEED_DRAIN_MS} ms${feed.refusal ? `: ${feed.refusal}` : ''}`);
    await feed.stop();
    const history = workload.history;
    const final = await readDocuments(cluster);
    violations.push(...checkAcknowledged(history));
    violations.push(...checkObservedStates(history, final, 'final'));
    violations.push(...checkFeed(history, feed.entries));
    violations.push(...checkFeedAgainstStates(feed.entries, final));

    const routing = await routingTable(cluster, COLLECTION);
    const described = await timedCall(cluster.pickNode(), 'GET', `/${COLLECTION}`);
    assert.ok(routing !== null && !('failure' in described) && described.status === 200, 'the routing table and the mapping before stopping');
    for (const node of cluster.nodes) await node.kill('SIGTERM');
    const ids = [...final.keys()];
    let copiesRead = 0;
    for (const [shard, row] of routing.entries()) {
      const shardCopies: CopyContents[] = [];
      for (const [index, node] of cluster.nodes.entries()) {
        const copy = await readCopy({ dataDir: node.dataDir, node: `node-${index + 1}`, shard, uuid: row.uuid, mapping: described.body[COLLECTION].mappings, ids });
        if (copy === null) continue;
        shardCopies.push(copy);
        if (!inSyncCopies(cluster, row).includes(index)) continue;
        const shardWrites = history.filter((write) => write.shard === shard);
        violations.push(...checkObservedStates(shardWrites, new Map([...copy.documents].filter(([id]) => shardWrites.some((write) => write.docId === id))), `offline copy of shard ${shard} on node-${index + 1}`));
      }
      for (const index of inSyncCopies(cluster, row)) {
        if (!shardCopies.some((copy) => copy.node === `node-${index + 1}`)) violations.push(`shard ${shard}: in-sync copy on node-${index + 1} has no directory`);
      }
      const inSync = shardCopies.filter((copy) => inSyncCopies(cluster, row).includes(Number(copy.node.slice('node-'.length)) - 1));
      violations.push(...compareCopies(inSync, history));
      copiesRead += inSync.length;
    }

    const acknowledged = history.filter((write) => write.outcome === 'ok').length;
    const indeterminate = history.filter((write) => write.outcome === 'indeterminate').length;
    const terms = new Map<number, number>();
    for (const write of history) if (write.ack) terms.set(write.shard, Math.max(terms.get(write.shard) ?? 1, write.ack.primaryTerm));
    t.diagnostic(`replicas ${REPLICAS}, rounds ${rounds} (${FAULTS.map((fault) => `${fault} ${Math.ceil((rounds - FAULTS.indexOf(fault)) / FAULTS.length)}`).join(', ')}) in ${((Date.now() - started) / 1000).toFixed(1)} s`);
    t.diagnostic(`writes ${history.length}: acknowledged ${acknowledged}, rejected ${history.length - acknowledged - indeterminate}, indeterminate ${indeterminate}`);
    const answers = new Map<string, number>();
    for (const write of history) if (write.outcome !== 'ok') answers.set(write.answer.slice(0, 80), (answers.get(write.answer.slice(0, 80)) ?? 0) + 1);
    t.diagnostic(`answers not acknowledged: ${[...answers].sort((left, right) => right[1] - left[1]).slice(0, 6).map(([answer, count]) => `${count}× ${answer}`).join('; ')}`);
    t.diagnostic(`feed entries ${feed.entries.length} (${feed.failures} failed reads retried elsewhere); in-sync copies read offline ${copiesRead}`);
    t.diagnostic(`failovers: primary moves ${primaryMoves}, primary term increments ${[...terms.values()].reduce((sum, term) => sum + term - 1, 0)}`);
    t.diagnostic(`longest unavailability of a shard ${(longestUnavailability(history, holds, loadStart, loadEnd) / 1000).toFixed(1)} s; longest fault-to-healthy ${(longestRecovery / 1000).toFixed(1)} s`);
    for (const violation of violations.slice(0, 40)) t.diagnostic(`VIOLATION ${violation}`);
    assert.deepEqual(violations.slice(0, 40), []);
    assert.ok(rounds >= Math.min(ROUNDS, 20), `only ${rounds} rounds fit in the time budget`);
    assert.ok(acknowledged > 0, 'some writes were acknowledged');
  } finally {
    await cluster.cleanup();
  }
});
