/**
 * Several nodes on one etcd, each an `EtcdCoordinator` with its own etcd client: shared catalog
 * and watches, races decided by transactions, the node registry's leases and the master election.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ApiKeyRecord } from '../catalog.ts';
import type { EtcdCoordinator } from './etcd-coordinator.ts';
import type { TcpProxy } from '../../../test/etcd.fixture.ts';
import {
  closeAll,
  eventually,
  isCatalogError,
  kinds,
  MAPPING,
  node,
  ONE_SHARD,
  openNode,
  openNodeBehindProxy,
  record,
  skip,
  uniqueCluster,
  useEtcd,
} from './etcd-coordinator.fixture.ts';

const etcd = useEtcd();
const SHORT_TTL_MS = 1_500;

async function openCluster(count: number, options: { nodeTtlMs?: number } = {}): Promise<EtcdCoordinator[]> {
  const cluster = uniqueCluster();
  return Promise.all(Array.from({ length: count }, () => openNode(etcd().endpoint, cluster, options)));
}

/**
 * Nodes that each reach etcd through their own proxy. Cutting a node's proxy resets its
 * connections, which is what etcd sees of a killed process (closing an etcd3 client would not
 * end its open keepalive streams).
 */
async function openMortalCluster(count: number, nodeTtlMs: number): Promise<{ nodes: EtcdCoordinator[]; proxies: TcpProxy[] }> {
  const cluster = uniqueCluster();
  const opened = await Promise.all(Array.from({ length: count }, () => openNodeBehindProxy(etcd().endpoint, cluster, { nodeTtlMs, requestTimeoutMs: 1_000 })));
  return { nodes: opened.map((entry) => entry.coordinator), proxies: opened.map((entry) => entry.proxy) };
}

async function closeMortal({ nodes, proxies }: { nodes: EtcdCoordinator[]; proxies: TcpProxy[] }): Promise<void> {
  await closeAll(...nodes);
  await Promise.all(proxies.map((proxy) => proxy.close()));
}

function key(id: string): ApiKeyRecord {
  return { id, name: id, role: 'admin', namespaces: null, hash: `sha256:${'1'.repeat(64)}`, origin: 'issued', createdAt: 1, expiresAt: null, lastUsedAt: null };
}

test("changes made through one node reach every node's watch in revision order with the same changes", { skip }, async () => {
  const nodes = await openCluster(3);
  try {
    const [a, b, c] = nodes;
    const seen = nodes.map((coordinator) => record(coordinator));
    await a.createNamespace('shop');
    await b.createCollection({ name: 'orders', namespace: 'shop', settings: ONE_SHARD, mapping: MAPPING });
    await c.putMapping('orders', { properties: { ...MAPPING.properties, total: { type: 'long' } } }, { expectedVersion: 1 });
    await a.createApiKey(key('aaaaaaaaaaaaaaaa'));
    await b.deleteNamespace('shop');
    const last = b.revision;
    await eventually('every node at the last revision', () => nodes.every((coordinator) => coordinator.revision === last));

    const expected = [['namespace_created'], ['collection_created'], ['collection_updated'], ['api_key_created'], ['collection_deleted', 'namespace_deleted']];
    for (const events of seen) {
      assert.deepEqual(kinds(events), expected);
      assert.deepEqual(events.map((event) => event.revision), seen[0].map((event) => event.revision), 'same revisions everywhere');
      for (let index = 1; index < events.length; index++) assert.ok(events[index].revision > events[index - 1].revision);
    }
    assert.deepEqual(c.catalog(), a.catalog());
  } finally {
    await closeAll(...nodes);
  }
});

test('concurrent creates of one collection name: exactly one node wins', { skip }, async () => {
  const nodes = await openCluster(3);
  try {
    const results = await Promise.allSettled(
      nodes.map((coordinator) => coordinator.createCollection({ name: 'contested', settings: ONE_SHARD, mapping: MAPPING })),
    );
    const won = results.filter((result) => result.status === 'fulfilled');
    assert.equal(won.length, 1, 'one winner');
    for (const result of results) {
      if (result.status === 'rejected') assert.ok(isCatalogError('resource_already_exists')(result.reason), String(result.reason));
    }
    const uuid = (won[0] as PromiseFulfilledResult<{ uuid: string }>).value.uuid;
    await eventually('every node sees the winner', () => nodes.every((coordinator) => coordinator.getCollection('contested')?.uuid === uuid));
  } finally {
    await closeAll(...nodes);
  }
});

test('putMapping compare-and-set: a stale expected version loses, unconditioned updates both apply', { skip }, async () => {
  const [a, b] = await openCluster(2);
  try {
    await a.createCollection({ name: 'books', settings: ONE_SHARD, mapping: MAPPING });
    await eventually('b sees books', () => b.getCollection('books') !== null);
    const withYear = { properties: { ...MAPPING.properties, year: { type: 'long' as const } } };
    const withPages = { properties: { ...MAPPING.properties, pages: { type: 'long' as const } } };
    await a.putMapping('books', withYear, { expectedVersion: 1 });
    await assert.rejects(b.putMapping('books', withPages, { expectedVersion: 1 }), isCatalogError('catalog_conflict'));
    assert.equal(b.getCollection('books')?.version, 2, 'b waited for the winner before answering');

    const both = { properties: { ...withYear.properties, ...withPages.properties } };
    const both2 = { properties: { ...both.properties, isbn: { type: 'keyword' as const } } };
    await Promise.all([a.putMapping('books', both), b.putMapping('books', both2)]);
    await eventually('both updates applied', () => a.getCollection('books')?.version === 4 && b.getCollection('books')?.version === 4);
  } finally {
    await closeAll(a, b);
  }
});

test('createFirstApiKey among three racing nodes stores exactly one key', { skip }, async () => {
  const nodes = await openCluster(3);
  try {
    const results = await Promise.all(nodes.map((coordinator, index) => coordinator.createFirstApiKey(key(`${index}`.repeat(16)))));
    assert.equal(results.filter(Boolean).length, 1, JSON.stringify(results));
    const winner = `${results.indexOf(true)}`.repeat(16);
    await eventually('every node holds the one key', () =>
      nodes.every((coordinator) => coordinator.listApiKeys().map((record) => record.id).join() === winner),
    );
  } finally {
    await closeAll(...nodes);
  }
});

test('a node whose process dies leaves the registry when its lease expires, seen by every node', { skip }, async () => {
  const cluster = await openMortalCluster(3, SHORT_TTL_MS);
  const [a, b, c] = cluster.nodes;
  try {
    const seenByA = record(a);
    await a.registerNode(node('node-a'));
    await b.registerNode(node('node-b'));
    await c.registerNode(node('node-c'));
    await eventually('three nodes everywhere', () => [a, b].every((coordinator) => coordinator.listNodes().length === 3));
    cluster.proxies[2].cut();
    const diedAt = Date.now();
    await eventually('node-c gone on a and b', () => [a, b].every((coordinator) => coordinator.listNodes().every((record) => record.id !== 'node-c')), 10_000);
    const elapsed = Date.now() - diedAt;
    assert.ok(elapsed >= 1_000, `the lease outlived the process for about its TTL (left after ${elapsed} ms)`);
    const left = seenByA.flatMap((event) => event.changes).filter((change) => change.kind === 'node_left');
    assert.deepEqual(left.map((change) => (change.kind === 'node_left' ? change.node.id : '')), ['node-c']);
    assert.deepEqual(a.listNodes().map((record) => record.id), ['node-a', 'node-b']);
  } finally {
    await closeMortal(cluster);
  }
});

test('revoking a lease: the node leaves at once, everywhere, and hands the election over', { skip }, async () => {
  const [a, b] = await openCluster(2);
  try {
    const lease = await a.registerNode(node('node-a'));
    await b.registerNode(node('node-b'));
    await eventually('node-a is master everywhere', () => a.masterId() === 'node-a' && b.masterId() === 'node-a');
    await lease.revoke();
    assert.deepEqual(a.listNodes().map((record) => record.id), ['node-b'], 'the revoking node sees it when revoke resolves');
    await eventually('b sees node-a leave and takes over', () => b.listNodes().length === 1 && b.masterId() === 'node-b', 3_000);
  } finally {
    await closeAll(a, b);
  }
});

test('master election: one master observed by all; the next one takes over when it closes or dies', { skip }, async () => {
  const cluster = await openMortalCluster(3, SHORT_TTL_MS);
  const { nodes } = cluster;
  const ids = ['node-a', 'node-b', 'node-c'];
  try {
    assert.equal(nodes[0].masterId(), null, 'no master before any node registers');
    await Promise.all(nodes.map((coordinator, index) => coordinator.registerNode(node(ids[index]))));
    const agreed = (among: EtcdCoordinator[]): string | null => {
      const masters = new Set(among.map((coordinator) => coordinator.masterId()));
      const [only] = masters;
      return masters.size === 1 && only !== null ? only : null;
    };
    await eventually('one master observed by all', () => agreed(nodes) !== null);
    const first = ids.indexOf(agreed(nodes)!);
    assert.ok(first >= 0);

    await nodes[first].close();
    const survivors = nodes.filter((_, index) => index !== first);
    await eventually('a new master after a clean close (resign)', () => agreed(survivors) !== null && agreed(survivors) !== ids[first], 3_000);
    const second = ids.indexOf(agreed(survivors)!);

    const last = [0, 1, 2].find((index) => index !== first && index !== second)!;
    cluster.proxies[second].cut();
    const diedAt = Date.now();
    await eventually('the last node becomes master after the master died', () => nodes[last].masterId() === ids[last], 10_000);
    assert.ok(Date.now() - diedAt < 2_000 + 3_000, 'about the TTL (2 s, whole seconds) plus etcd expiry checks');
  } finally {
    await closeMortal(cluster);
  }
});

test('the master assigns unassigned shard copies when nodes register, and never moves a primary', { skip }, async () => {
  const [a, b, c] = await openCluster(3);
  try {
    const created = await a.createCollection({ name: 'early', settings: { number_of_shards: 2, number_of_replicas: 1 }, mapping: MAPPING });
    assert.deepEqual(created.placements, [
      { shard: 0, primary: null, replicas: [] },
      { shard: 1, primary: null, replicas: [] },
    ]);
    await b.registerNode(node('node-b'));
    await eventually('primaries on node-b', () => a.getCollection('early')?.placements.every((placement) => placement.primary === 'node-b') === true);
    assert.deepEqual(a.getCollection('early')?.placements.map((placement) => placement.replicas), [[], []], 'no second node for a replica yet');

    await c.registerNode(node('node-c'));
    await eventually('replicas on node-c', () => a.getCollection('early')?.placements.every((placement) => placement.replicas.join() === 'node-c') === true);
    const placements = a.getCollection('early')!.placements;
    assert.ok(placements.every((placement) => placement.primary === 'node-b'), 'primaries stayed');
    assert.equal(b.masterId(), 'node-b');

    const later = await c.createCollection({ name: 'later', settings: { number_of_shards: 2, number_of_replicas: 1 }, mapping: MAPPING });
    for (const placement of later.placements) {
      assert.notEqual(placement.primary, null);
      assert.equal(placement.replicas.length, 1);
      assert.ok(!placement.replicas.includes(placement.primary!), 'never two copies of a shard on one node');
    }
  } finally {
    await closeAll(a, b, c);
  }
});
