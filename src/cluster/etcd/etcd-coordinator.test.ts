/**
 * The coordinator contract on etcd, one node at a time: the scenarios of
 * src/cluster/local/local-coordinator*.test.ts where they apply, against a real etcd.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ApiKeyRecord } from '../catalog.ts';
import { closeAll, isCatalogError, kinds, MAPPING, node, ONE_SHARD, openNode, record, skip, uniqueCluster, useEtcd } from './etcd-coordinator.fixture.ts';

const etcd = useEtcd();

function key(id: string, overrides: Partial<ApiKeyRecord> = {}): ApiKeyRecord {
  return { id, name: `key-${id}`, role: 'read', namespaces: null, hash: `sha256:${'0'.repeat(64)}`, origin: 'issued', createdAt: 1, expiresAt: null, lastUsedAt: null, ...overrides };
}

test('collections get shard UUIDs and placements on registered nodes, and outlive the process', { skip }, async () => {
  const cluster = uniqueCluster();
  const first = await openNode(etcd().endpoint, cluster);
  await first.registerNode(node('node-1'));
  const created = await first.createCollection({ name: 'books', settings: { number_of_shards: 4, number_of_replicas: 0 }, mapping: MAPPING });
  assert.equal(created.namespace, 'default');
  assert.equal(new Set(created.shards.map((shard) => shard.uuid)).size, 4);
  assert.ok(created.placements.every((placement) => placement.primary === 'node-1'));
  assert.ok(Object.isFrozen(first.getCollection('books')));
  assert.deepEqual(first.getCollection('books'), created);
  const { revision, clusterUuid } = first.catalog();
  await first.close();

  const second = await openNode(etcd().endpoint, cluster);
  assert.ok(second.revision > revision, 'revision keeps increasing');
  assert.equal(second.catalog().clusterUuid, clusterUuid, 'the cluster identity is created once');
  assert.deepEqual(second.getCollection('books'), created);
  assert.deepEqual(second.listNodes(), [], 'a closed node revoked its lease');
  await second.close();
});

test('watchers see each change once the view includes it, in revision order', { skip }, async () => {
  const coordinator = await openNode(etcd().endpoint, uniqueCluster());
  const events = record(coordinator);
  const revisionsAtEvent: number[] = [];
  coordinator.watch(() => void revisionsAtEvent.push(coordinator.revision));
  await coordinator.registerNode(node('node-1'));
  await coordinator.createNamespace('shop');
  await coordinator.createCollection({ name: 'orders', namespace: 'shop', settings: ONE_SHARD, mapping: MAPPING });
  const mapped = await coordinator.putMapping('orders', { properties: { ...MAPPING.properties, total: { type: 'long' } } });
  assert.equal(mapped.version, 2);
  await coordinator.putMapping('orders', mapped.mapping);
  assert.equal(coordinator.getCollection('orders')?.version, 2, 'an unchanged mapping is not a change');
  await coordinator.deleteNamespace('shop');
  const stopped = events.length;
  await coordinator.createNamespace('after-stop');

  assert.deepEqual(kinds(events.slice(0, stopped)), [
    ['node_joined'],
    ['namespace_created'],
    ['collection_created'],
    ['collection_updated'],
    ['collection_deleted', 'namespace_deleted'],
  ]);
  for (let index = 1; index < events.length; index++) assert.ok(events[index].revision > events[index - 1].revision);
  assert.deepEqual(revisionsAtEvent, events.map((event) => event.revision), 'the view holds the change before watchers run');
  assert.equal(events.at(-1)?.catalog, coordinator.catalog());
  await coordinator.close();
});

test('invalid requests are refused with typed errors and change nothing', { skip }, async () => {
  const coordinator = await openNode(etcd().endpoint, uniqueCluster());
  await coordinator.createCollection({ name: 'books', settings: ONE_SHARD, mapping: MAPPING });
  const revision = coordinator.revision;
  await assert.rejects(coordinator.createCollection({ name: 'books', settings: ONE_SHARD, mapping: MAPPING }), isCatalogError('resource_already_exists'));
  await assert.rejects(coordinator.createCollection({ name: 'Books', settings: ONE_SHARD, mapping: MAPPING }), isCatalogError('invalid_index_name'));
  await assert.rejects(coordinator.createCollection({ name: 'x', namespace: 'missing', settings: ONE_SHARD, mapping: MAPPING }), isCatalogError('namespace_not_found'));
  await assert.rejects(
    coordinator.createCollection({ name: 'x', settings: { number_of_shards: 0, number_of_replicas: 0 }, mapping: MAPPING }),
    isCatalogError('illegal_argument'),
  );
  await assert.rejects(coordinator.deleteCollection('nope'), isCatalogError('index_not_found'));
  await assert.rejects(coordinator.putMapping('books', MAPPING, { expectedVersion: 7 }), isCatalogError('catalog_conflict'));
  await assert.rejects(coordinator.deleteNamespace('default'), isCatalogError('illegal_argument'));
  await assert.rejects(coordinator.createNamespace('default'), isCatalogError('resource_already_exists'));
  assert.equal(coordinator.revision, revision);
  await coordinator.close();
  await assert.rejects(coordinator.createNamespace('late'), isCatalogError('catalog_unavailable'));
  assert.equal(coordinator.getCollection('books')?.name, 'books', 'reads still serve the last view');
});

test('restoreCollections puts collections back with their recorded metadata, all or nothing', { skip }, async () => {
  const coordinator = await openNode(etcd().endpoint, uniqueCluster());
  await coordinator.registerNode(node('node-1'));
  const shop = await coordinator.createNamespace('shop');
  const orders = await coordinator.createCollection({ name: 'orders', namespace: 'shop', settings: { number_of_shards: 2, number_of_replicas: 0 }, mapping: MAPPING });
  await coordinator.deleteNamespace('shop');
  await coordinator.createCollection({ name: 'orders', settings: ONE_SHARD, mapping: MAPPING });
  await assert.rejects(coordinator.restoreCollections({ namespace: shop, collections: [orders] }), isCatalogError('resource_already_exists'));
  assert.equal(coordinator.getNamespace('shop'), null, 'a refused restore changes nothing');
  await assert.rejects(coordinator.restoreCollections({ collections: [{ ...orders, name: 'elsewhere' }] }), isCatalogError('namespace_not_found'));
  await assert.rejects(
    coordinator.restoreCollections({ namespace: shop, collections: [{ ...orders, name: 'copy' }, { ...orders, name: 'again' }] }),
    isCatalogError('resource_already_exists'),
  );
  await coordinator.restoreCollections({ namespace: shop, collections: [{ ...orders, name: 'orders-restored' }] });
  const back = coordinator.getCollection('orders-restored');
  assert.deepEqual(back?.shards, orders.shards);
  assert.deepEqual(back?.placements, orders.placements);
  assert.equal(back?.uuid, orders.uuid);
  assert.deepEqual(coordinator.getNamespace('shop'), shop);
  await coordinator.close();
});

test('API key records: created, announced, deleted, and kept in etcd', { skip }, async () => {
  const cluster = uniqueCluster();
  const coordinator = await openNode(etcd().endpoint, cluster);
  const events = record(coordinator);
  await coordinator.createApiKey(key('aaaaaaaaaaaaaaaa'));
  await coordinator.createApiKey(key('bbbbbbbbbbbbbbbb', { namespaces: ['shop'] }));
  await assert.rejects(coordinator.createApiKey(key('aaaaaaaaaaaaaaaa')), isCatalogError('resource_already_exists'));
  assert.deepEqual(coordinator.listApiKeys().map((record) => record.id), ['aaaaaaaaaaaaaaaa', 'bbbbbbbbbbbbbbbb']);
  assert.equal((await coordinator.deleteApiKey('aaaaaaaaaaaaaaaa'))?.id, 'aaaaaaaaaaaaaaaa');
  assert.equal(await coordinator.deleteApiKey('aaaaaaaaaaaaaaaa'), null);
  assert.equal(coordinator.getApiKey('aaaaaaaaaaaaaaaa'), null);
  assert.deepEqual(kinds(events).flat(), ['api_key_created', 'api_key_created', 'api_key_deleted']);
  await coordinator.close();

  const reopened = await openNode(etcd().endpoint, cluster);
  assert.deepEqual(reopened.getApiKey('bbbbbbbbbbbbbbbb')?.namespaces, ['shop']);
  await reopened.close();
});

test('createFirstApiKey stores a key only while there is none', { skip }, async () => {
  const coordinator = await openNode(etcd().endpoint, uniqueCluster());
  const results = await Promise.all([coordinator.createFirstApiKey(key('1111111111111111')), coordinator.createFirstApiKey(key('2222222222222222'))]);
  assert.deepEqual(results, [true, false]);
  assert.deepEqual(coordinator.listApiKeys().map((record) => record.id), ['1111111111111111']);
  await coordinator.deleteApiKey('1111111111111111');
  assert.equal(await coordinator.createFirstApiKey(key('3333333333333333')), true, 'none left: a first key again');
  await coordinator.close();
});

test('recordApiKeyUse writes many keys in one change, skips unknown ids and never goes back in time', { skip }, async () => {
  const coordinator = await openNode(etcd().endpoint, uniqueCluster());
  await coordinator.createApiKey(key('aaaaaaaaaaaaaaaa'));
  await coordinator.createApiKey(key('bbbbbbbbbbbbbbbb'));
  const events = record(coordinator);
  await coordinator.recordApiKeyUse(new Map([['aaaaaaaaaaaaaaaa', 500], ['bbbbbbbbbbbbbbbb', 700], ['cccccccccccccccc', 900]]));
  assert.deepEqual(kinds(events), [['api_key_updated', 'api_key_updated']], 'one revision for the batch');
  const revision = coordinator.revision;
  await coordinator.recordApiKeyUse(new Map([['aaaaaaaaaaaaaaaa', 400]]));
  assert.equal(coordinator.revision, revision, 'an older time changes nothing');
  assert.equal(coordinator.getApiKey('aaaaaaaaaaaaaaaa')?.lastUsedAt, 500);
  assert.equal(coordinator.getApiKey('bbbbbbbbbbbbbbbb')?.lastUsedAt, 700);
  await coordinator.close();
});

test('the internal secret and the cluster UUID are created once per cluster', { skip }, async () => {
  const cluster = uniqueCluster();
  const [one, two] = await Promise.all([openNode(etcd().endpoint, cluster), openNode(etcd().endpoint, cluster)]);
  const other = await openNode(etcd().endpoint, uniqueCluster());
  try {
    assert.match(one.internalSecret(), /^[A-Za-z0-9_-]{43}$/, '32 random bytes, base64url');
    assert.equal(two.internalSecret(), one.internalSecret());
    assert.equal(two.catalog().clusterUuid, one.catalog().clusterUuid);
    assert.notEqual(other.internalSecret(), one.internalSecret());
    assert.notEqual(other.catalog().clusterUuid, one.catalog().clusterUuid);
    assert.equal(one.kind, 'etcd');
  } finally {
    await closeAll(one, two, other);
  }
});

test('a node that cannot reach etcd fails to open with catalog_unavailable', { skip }, async () => {
  const started = Date.now();
  await assert.rejects(openNode('http://127.0.0.1:9', uniqueCluster(), { requestTimeoutMs: 1_000 }), isCatalogError('catalog_unavailable'));
  assert.ok(Date.now() - started < 10_000, 'bounded');
});

test('cluster.max_shards_per_node is counted per registered node, primaries and replicas alike', { skip }, async () => {
  const first = await openNode(etcd().endpoint, uniqueCluster(), { limits: { maxShardsPerNode: 4 } });
  try {
    await first.registerNode(node('node-1'));
    await first.registerNode(node('node-2'));
    await first.createCollection({ name: 'spread', settings: { number_of_shards: 4, number_of_replicas: 1 }, mapping: MAPPING });
    const revision = first.revision;
    await assert.rejects(first.createCollection({ name: 'one-more', settings: ONE_SHARD, mapping: MAPPING }), isCatalogError('too_many_shards'));
    assert.equal(first.revision, revision, 'nothing changed');
    await first.deleteCollection('spread');
    await first.createCollection({ name: 'one-more', settings: ONE_SHARD, mapping: MAPPING });
  } finally {
    await first.close();
  }
});
