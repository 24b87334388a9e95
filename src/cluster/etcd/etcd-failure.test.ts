/**
 * The etcd coordinator when etcd goes away: etcd killed with SIGKILL and restarted on its data,
 * and one node cut off from etcd while the others compact the history it would resume from.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Etcd3 } from 'etcd3';
import type { CatalogEvent } from '../catalog.ts';
import type { EtcdCoordinator } from './etcd-coordinator.ts';
import { closeAll, eventually, isCatalogError, kinds, node, openNode, openNodeBehindProxy, record, skip, uniqueCluster, useEtcd } from './etcd-coordinator.fixture.ts';

const etcd = useEtcd();
const TIMEOUT_MS = 2_000;

/** Retries `attempt` while it fails with catalog_unavailable, for at most `timeoutMs`. */
async function once<T>(what: string, attempt: () => Promise<T>, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await attempt();
    } catch (error) {
      if (!isCatalogError('catalog_unavailable')(error) || Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }
}

function assertInOrderOnce(events: CatalogEvent[]): void {
  for (let index = 1; index < events.length; index++) {
    assert.ok(events[index].revision > events[index - 1].revision, `revisions increase: ${events.map((event) => event.revision).join(',')}`);
  }
}

async function assertUnavailableWithin(what: string, attempt: Promise<unknown>, boundMs: number): Promise<void> {
  const started = Date.now();
  await assert.rejects(attempt, isCatalogError('catalog_unavailable'), what);
  const elapsed = Date.now() - started;
  assert.ok(elapsed < boundMs, `${what} failed after ${elapsed} ms, bound ${boundMs} ms`);
}

test('etcd killed and restarted: writes fail within the bound meanwhile, then work; watches lose and repeat nothing', { skip }, async () => {
  const server = etcd();
  const cluster = uniqueCluster();
  let a: EtcdCoordinator | undefined;
  let b: EtcdCoordinator | undefined;
  try {
    [a, b] = await Promise.all([openNode(server.endpoint, cluster, { requestTimeoutMs: TIMEOUT_MS }), openNode(server.endpoint, cluster, { requestTimeoutMs: TIMEOUT_MS })]);
    await a.registerNode(node('node-a'));
    await b.registerNode(node('node-b'));
    const seen = record(b);
    await a.createNamespace('before');
    await eventually('b sees before', () => b!.getNamespace('before') !== null);

    await server.kill('SIGKILL');
    await assertUnavailableWithin('a write while etcd is down', a.createNamespace('during'), TIMEOUT_MS + 1_000);
    await assertUnavailableWithin('an API key write while etcd is down', a.createApiKey({ id: 'k'.repeat(16), name: 'k', role: 'read', namespaces: null, hash: 'sha256:0', origin: 'issued', createdAt: 1, expiresAt: null, lastUsedAt: null }), TIMEOUT_MS + 1_000);
    await assertUnavailableWithin('a registration while etcd is down', a.registerNode(node('node-late')), TIMEOUT_MS + 1_000);
    assert.equal(a.getNamespace('before')?.name, 'before', 'reads serve the last view');
    assert.deepEqual(b.listNodes().map((record) => record.id), ['node-a', 'node-b']);

    await server.restart();
    await once('a write after the restart', () => a!.createNamespace('after'));
    await once('a write through b', () => b!.createNamespace('after-b'));
    await eventually('a sees after-b', () => a!.getNamespace('after-b') !== null, 20_000);
    await eventually('b sees after', () => b!.getNamespace('after') !== null, 20_000);

    assertInOrderOnce(seen);
    const created = seen.flatMap((event) => event.changes).flatMap((change) => (change.kind === 'namespace_created' ? [change.namespace.name] : []));
    assert.deepEqual(created, ['before', 'after', 'after-b'], 'each change once, in order, nothing from the failed write');
    assert.ok(!kinds(seen).flat().includes('node_left'), 'the leases outlived the outage');
    assert.equal(a.getNamespace('during'), null);
    assert.equal(b.revision, a.revision);
  } finally {
    if (!server.running()) await server.restart();
    await closeAll(a, b);
  }
});

test('a node cut off from etcd keeps its reads, fails writes fast, and after a compaction reloads with one event', { skip }, async () => {
  const server = etcd();
  const cluster = uniqueCluster();
  const { coordinator: a, proxy } = await openNodeBehindProxy(server.endpoint, cluster, { requestTimeoutMs: TIMEOUT_MS });
  const b = await openNode(server.endpoint, cluster);
  const admin = new Etcd3({ hosts: server.endpoint });
  try {
    const seen = record(a);
    await b.createNamespace('one');
    await eventually('a sees one', () => a.getNamespace('one') !== null);
    const before = seen.length;

    proxy.cut();
    await assertUnavailableWithin('a write from the cut-off node', a.createNamespace('lost'), TIMEOUT_MS + 1_000);
    await b.createNamespace('two');
    await b.createNamespace('three');
    await b.deleteNamespace('one');
    const { header } = await admin.kv.range({ key: Buffer.from('/trove/') });
    await admin.kv.compact({ revision: header.revision, physical: true });
    assert.ok(a.getNamespace('one') !== null, 'the cut-off node still serves its last view');

    proxy.heal();
    await eventually('a catches up', () => a.getNamespace('three') !== null && a.getNamespace('one') === null, 30_000);
    const reload = seen.slice(before);
    assert.equal(reload.length, 1, `one event for the reload, got ${JSON.stringify(kinds(reload))}`);
    assert.deepEqual(kinds(reload)[0], ['namespace_deleted', 'namespace_created', 'namespace_created']);
    assert.deepEqual(a.catalog().namespaces, b.catalog().namespaces);
    assert.equal(a.getNamespace('lost'), null);

    await once('a write after the reload', () => a.createNamespace('four'));
    await eventually('b sees four', () => b.getNamespace('four') !== null);
    assertInOrderOnce(seen);
  } finally {
    admin.close();
    await closeAll(a, b);
    await proxy.close();
  }
});

test('a node cut off for longer than its TTL leaves, then registers again and campaigns when it is back', { skip }, async () => {
  const server = etcd();
  const cluster = uniqueCluster();
  const { coordinator: a, proxy } = await openNodeBehindProxy(server.endpoint, cluster, { requestTimeoutMs: TIMEOUT_MS, nodeTtlMs: 1_500 });
  const b = await openNode(server.endpoint, cluster, { nodeTtlMs: 1_500 });
  try {
    const seen = record(b);
    await a.registerNode(node('node-a'));
    await eventually('a is master', () => b.masterId() === 'node-a');
    await b.registerNode(node('node-b'));
    const startedAt = b.listNodes()[0].startedAt;

    proxy.cut();
    await eventually('node-a left and node-b took over', () => b.listNodes().length === 1 && b.masterId() === 'node-b', 10_000);
    proxy.heal();
    await eventually('node-a registered again', () => b.listNodes().length === 2, 30_000);
    assert.ok(b.listNodes()[0].startedAt > startedAt, 'a new registration');
    assert.equal(b.masterId(), 'node-b', 'the returning node campaigns behind the master');
    const nodeChanges = seen.flatMap((event) => event.changes).filter((change) => change.kind === 'node_joined' || change.kind === 'node_left');
    assert.deepEqual(nodeChanges.map((change) => `${change.kind}:${change.node.id}`), ['node_joined:node-a', 'node_joined:node-b', 'node_left:node-a', 'node_joined:node-a']);
    await b.close();
    await eventually('node-a is master again', () => a.masterId() === 'node-a', 10_000);
  } finally {
    await closeAll(a, b);
    await proxy.close();
  }
});
