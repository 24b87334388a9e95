import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CatalogEvent } from '../catalog.ts';
import { CatalogError } from '../catalog-error.ts';
import { LocalCoordinator } from './local-coordinator.ts';

const NODE = { id: 'node-1', name: 'one', address: 'http://127.0.0.1:9200', version: '0.1.0', roles: ['data'] };
const MAPPING = { properties: { title: { type: 'text' as const } } };

async function withDataPath(run: (dataPath: string) => Promise<void>): Promise<void> {
  const dataPath = await mkdtemp(join(tmpdir(), 'trove-catalog-'));
  try {
    await run(dataPath);
  } finally {
    await rm(dataPath, { recursive: true, force: true });
  }
}

function isCatalogError(code: string): (error: unknown) => boolean {
  return (error) => error instanceof CatalogError && error.code === code;
}

test('collections get shard UUIDs and local placements, and survive a restart', async () => {
  await withDataPath(async (dataPath) => {
    const first = await LocalCoordinator.open({ dataPath, clusterName: 'trove' });
    await first.registerNode(NODE);
    const created = await first.createCollection({
      name: 'books',
      settings: { number_of_shards: 4, number_of_replicas: 0 },
      mapping: MAPPING,
    });
    assert.equal(created.namespace, 'default');
    assert.equal(created.shards.length, 4);
    assert.equal(new Set(created.shards.map((shard) => shard.uuid)).size, 4);
    assert.ok(created.placements.every((placement) => placement.primary === 'node-1'));
    assert.ok(Object.isFrozen(first.getCollection('books')));
    const revision = first.revision;
    await first.close();

    const second = await LocalCoordinator.open({ dataPath, clusterName: 'trove' });
    assert.ok(second.revision > revision, 'revision keeps increasing across restarts');
    assert.deepEqual(second.getCollection('books'), created);
    assert.deepEqual(second.listNodes(), [], 'registrations of the previous run are gone');
    await second.registerNode(NODE);
    assert.equal(second.getCollection('books')?.version, created.version, 'placements on the same node id stay');
    await second.close();

    await assert.rejects(LocalCoordinator.open({ dataPath, clusterName: 'other' }), /cluster \[trove\]/);
  });
});

test('watchers see each change after it is persisted, in revision order', async () => {
  await withDataPath(async (dataPath) => {
    const coordinator = await LocalCoordinator.open({ dataPath, clusterName: 'trove' });
    const events: CatalogEvent[] = [];
    const revisionOnDiskAtEvent: number[] = [];
    const stop = coordinator.watch((event) => {
      events.push(event);
      const file = JSON.parse(readFileSync(join(dataPath, 'catalog', 'catalog.json'), 'utf8'));
      revisionOnDiskAtEvent.push(file.catalog.revision);
    });
    await coordinator.registerNode(NODE);
    await coordinator.createNamespace('shop');
    await coordinator.createCollection({
      name: 'orders',
      namespace: 'shop',
      settings: { number_of_shards: 1, number_of_replicas: 0 },
      mapping: MAPPING,
    });
    const mapped = await coordinator.putMapping('orders', { properties: { ...MAPPING.properties, total: { type: 'long' } } });
    assert.equal(mapped.version, 2);
    await coordinator.putMapping('orders', mapped.mapping);
    assert.equal(coordinator.getCollection('orders')?.version, 2, 'an unchanged mapping is not a change');
    await coordinator.deleteNamespace('shop');
    stop();
    await coordinator.createNamespace('after-stop');

    assert.deepEqual(
      events.map((event) => event.changes.map((change) => change.kind)),
      [['node_joined'], ['namespace_created'], ['collection_created'], ['collection_updated'], ['collection_deleted', 'namespace_deleted']],
    );
    for (let index = 1; index < events.length; index++) assert.equal(events[index].revision, events[index - 1].revision + 1);

    const onDisk = JSON.parse(await readFile(join(dataPath, 'catalog', 'catalog.json'), 'utf8'));
    assert.equal(onDisk.format, 'trove-catalog');
    assert.equal(onDisk.version, 1);
    assert.equal(onDisk.catalog.revision, coordinator.revision);
    assert.deepEqual(revisionOnDiskAtEvent, events.map((event) => event.revision), 'persisted before watchers ran');
    await coordinator.close();
  });
});

test('a crash between the temporary file and the rename leaves the old catalog', async () => {
  await withDataPath(async (dataPath) => {
    let crash = false;
    const coordinator = await LocalCoordinator.open({
      dataPath,
      clusterName: 'trove',
      beforeCatalogRename: () => {
        if (crash) throw new Error('simulated crash before rename');
      },
    });
    await coordinator.createCollection({ name: 'kept', settings: { number_of_shards: 1, number_of_replicas: 0 }, mapping: MAPPING });
    const revision = coordinator.revision;
    let notified = 0;
    coordinator.watch(() => {
      notified++;
    });
    crash = true;
    await assert.rejects(
      coordinator.createCollection({ name: 'lost', settings: { number_of_shards: 1, number_of_replicas: 0 }, mapping: MAPPING }),
      isCatalogError('catalog_unavailable'),
    );
    assert.equal(coordinator.revision, revision, 'the in-memory view did not move');
    assert.equal(coordinator.getCollection('lost'), null);
    assert.equal(notified, 0, 'watchers hear nothing about a change that was not persisted');
    assert.ok((await readdir(join(dataPath, 'catalog'))).includes('catalog.json.tmp'));

    const reopened = await LocalCoordinator.open({ dataPath, clusterName: 'trove' });
    assert.deepEqual(reopened.listCollections().map((collection) => collection.name), ['kept']);
    assert.deepEqual(await readdir(join(dataPath, 'catalog')), ['catalog.json'], 'the leftover temp file is removed');
    await reopened.close();
  });
});

test('invalid requests are refused with typed errors and change nothing', async () => {
  await withDataPath(async (dataPath) => {
    const coordinator = await LocalCoordinator.open({ dataPath, clusterName: 'trove' });
    const settings = { number_of_shards: 1, number_of_replicas: 0 };
    await coordinator.createCollection({ name: 'books', settings, mapping: MAPPING });
    const revision = coordinator.revision;
    await assert.rejects(coordinator.createCollection({ name: 'books', settings, mapping: MAPPING }), isCatalogError('resource_already_exists'));
    await assert.rejects(coordinator.createCollection({ name: 'Books', settings, mapping: MAPPING }), isCatalogError('invalid_index_name'));
    await assert.rejects(
      coordinator.createCollection({ name: 'x', namespace: 'missing', settings, mapping: MAPPING }),
      isCatalogError('namespace_not_found'),
    );
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
  });
});

test('a damaged catalog file stops the start instead of starting empty', async () => {
  await withDataPath(async (dataPath) => {
    const coordinator = await LocalCoordinator.open({ dataPath, clusterName: 'trove' });
    await coordinator.close();
    await writeFile(join(dataPath, 'catalog', 'catalog.json'), '{"format": "trove-catalog", "vers');
    await assert.rejects(LocalCoordinator.open({ dataPath, clusterName: 'trove' }), /damaged/);
  });
});

test('restoreCollections puts collections back with their recorded metadata, all or nothing', async () => {
  await withDataPath(async (dataPath) => {
    const coordinator = await LocalCoordinator.open({ dataPath, clusterName: 'trove' });
    await coordinator.registerNode(NODE);
    const shop = await coordinator.createNamespace('shop');
    const orders = await coordinator.createCollection({ name: 'orders', namespace: 'shop', settings: { number_of_shards: 2, number_of_replicas: 0 }, mapping: MAPPING });
    await coordinator.deleteNamespace('shop');
    const revision = coordinator.revision;

    await coordinator.createCollection({ name: 'orders', settings: { number_of_shards: 1, number_of_replicas: 0 }, mapping: MAPPING });
    await assert.rejects(coordinator.restoreCollections({ namespace: shop, collections: [orders] }), isCatalogError('resource_already_exists'));
    assert.equal(coordinator.getNamespace('shop'), null, 'a refused restore changes nothing');
    await assert.rejects(coordinator.restoreCollections({ collections: [{ ...orders, name: 'elsewhere' }] }), isCatalogError('namespace_not_found'));
    await assert.rejects(
      coordinator.restoreCollections({ namespace: shop, collections: [{ ...orders, name: 'copy' }, { ...orders, name: 'again' }] }),
      isCatalogError('resource_already_exists'),
      'a shard UUID cannot be live twice',
    );

    await coordinator.restoreCollections({ namespace: shop, collections: [{ ...orders, name: 'orders-restored' }] });
    assert.ok(coordinator.revision > revision);
    const back = coordinator.getCollection('orders-restored');
    assert.deepEqual(back?.shards, orders.shards);
    assert.deepEqual(back?.placements, orders.placements);
    assert.equal(back?.uuid, orders.uuid);
    assert.deepEqual(coordinator.getNamespace('shop'), shop);
    await coordinator.close();
  });
});

test('cluster.max_shards_per_node: a create or restore that would pass it is refused before anything changes', async () => {
  await withDataPath(async (dataPath) => {
    const coordinator = await LocalCoordinator.open({ dataPath, clusterName: 'trove', limits: { maxShardsPerNode: 5 } });
    await coordinator.registerNode(NODE);
    const three = await coordinator.createCollection({ name: 'three', settings: { number_of_shards: 3, number_of_replicas: 0 }, mapping: MAPPING });
    const revision = coordinator.revision;
    await assert.rejects(
      coordinator.createCollection({ name: 'too-many', settings: { number_of_shards: 3, number_of_replicas: 0 }, mapping: MAPPING }),
      (error) => isCatalogError('too_many_shards')(error) && /would add \[3\] shards, but node \[node-1\] currently has \[3\]\/\[5\]/.test((error as Error).message),
    );
    assert.equal(coordinator.revision, revision, 'nothing changed');
    assert.equal(coordinator.getCollection('too-many'), null);
    await coordinator.createCollection({ name: 'two', settings: { number_of_shards: 2, number_of_replicas: 1 }, mapping: MAPPING });
    await coordinator.deleteCollection('three');
    await coordinator.createCollection({ name: 'filler', settings: { number_of_shards: 2, number_of_replicas: 0 }, mapping: MAPPING });
    await assert.rejects(coordinator.restoreCollections({ collections: [three] }), isCatalogError('too_many_shards'));
    assert.equal(coordinator.getCollection('three'), null, 'a refused restore changes nothing');
    await coordinator.close();
  });
});
