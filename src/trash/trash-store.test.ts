import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, readdir, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { emptyCatalog, type Catalog, type CollectionMeta } from '../cluster/catalog.ts';
import { LocalShardHandle } from '../cluster/local-shard-handle.ts';
import { DEFAULT_ENGINE_SETTINGS } from '../engine/shard/shard.ts';
import { NO_TRASH_FAULTS } from './trash-faults.ts';
import { TrashStore, type TrashIntent } from './trash-store.ts';

const logger = pino({ level: 'silent' });
const NODE = 'node-1';
const MAPPING = { properties: { title: { type: 'text' as const }, hits: { type: 'long' as const, inplace: true } } };
const roots: string[] = [];

after(async () => {
  for (const root of roots) await rm(root, { recursive: true, force: true });
});

async function dataPath(): Promise<string> {
  const root = await mkdtemp(join(tmpdir(), 'trove-trash-store-'));
  roots.push(root);
  return root;
}

function collection(name: string, shards: number): CollectionMeta {
  return {
    name,
    uuid: crypto.randomUUID(),
    namespace: 'default',
    settings: { number_of_shards: shards, number_of_replicas: 0 },
    mapping: MAPPING,
    shards: Array.from({ length: shards }, (_, id) => ({ id, uuid: crypto.randomUUID() })),
    placements: Array.from({ length: shards }, (_, shard) => ({ shard, primary: NODE, replicas: [] })),
    createdAt: 1,
    version: 1,
  };
}

function catalog(collections: CollectionMeta[]): Catalog {
  return { ...emptyCatalog('trove', 'cluster', 1), collections: Object.fromEntries(collections.map((meta) => [meta.name, meta])) };
}

function intent(meta: CollectionMeta, deletedAt = Date.now()): TrashIntent {
  return { itemId: `item-${meta.name}`, kind: 'collection', name: meta.name, namespace: { name: 'default', uuid: 'default-uuid', createdAt: 1 }, deletedAt, collections: [meta] };
}

function openStore(path: string): Promise<TrashStore> {
  return TrashStore.open({ dataPath: path, nodeId: NODE, engineSettings: DEFAULT_ENGINE_SETTINGS, logger, faults: NO_TRASH_FAULTS });
}

function openShard(path: string, meta: CollectionMeta, shardId: number): Promise<LocalShardHandle> {
  const uuid = meta.shards[shardId].uuid;
  return LocalShardHandle.open({ dir: join(path, 'shards', uuid), uuid, mapping: meta.mapping, settings: { ...DEFAULT_ENGINE_SETTINGS, mergeEnabled: false }, bindings: {} }, logger);
}

/** Writes documents, leaving some only in the WAL and the mutable layer; returns the live count per shard. */
async function fill(shards: LocalShardHandle[]): Promise<number[]> {
  for (const [index, shard] of shards.entries()) {
    for (let doc = 0; doc < 6; doc++) await shard.write({ kind: 'index', id: `d${doc}`, source: { title: `shard ${index} doc ${doc}`, hits: doc } });
    await shard.epoch();
    await shard.write({ kind: 'delete', id: 'd0' });
    await shard.write({ kind: 'update', id: 'd1', ops: [{ op: 'incr', field: 'hits', value: 100 }] });
    await shard.write({ kind: 'index', id: 'late', source: { title: 'only in the mutable layer', hits: 7 } });
  }
  return Promise.all(shards.map(async (shard) => (await shard.stats()).docs));
}

test('delete closes and moves shards into the item; restore brings them back intact', async () => {
  const path = await dataPath();
  const meta = collection('books', 2);
  const shards = [await openShard(path, meta, 0), await openShard(path, meta, 1)];
  const counts = await fill(shards);
  const store = await openStore(path);
  await store.prepareDelete(intent(meta));
  assert.equal(store.items()[0].state, 'pending');

  await store.retire([{ meta, openShards: shards }]);
  const [manifest] = store.items();
  assert.equal(manifest.state, 'trashed');
  assert.deepEqual(manifest.shards.map((shard) => shard.documents), counts);
  for (const shard of meta.shards) {
    assert.equal(existsSync(join(path, 'shards', shard.uuid)), false);
    assert.ok(existsSync(join(path, 'trash', manifest.itemId, 'shards', shard.uuid, 'manifest.json')));
  }
  await assert.rejects(shards[0].write({ kind: 'index', id: 'x', source: {} }), /closed/);
  const onDisk = JSON.parse(await readFile(join(path, 'trash', manifest.itemId, 'manifest.json'), 'utf8'));
  assert.equal(onDisk.format, 'trove-trash');
  assert.equal(onDisk.version, 1);
  assert.equal(onDisk.state, 'trashed');

  const verified = await store.verify(manifest.itemId);
  assert.deepEqual(verified?.shards.map((shard) => [shard.status, shard.foundDocuments]), counts.map((count) => ['ok', count]));

  await store.prepareRestore(manifest.itemId);
  await store.reclaim(meta.shards[0].uuid);
  assert.ok(existsSync(join(path, 'shards', meta.shards[0].uuid)));
  await store.finishRestore(manifest.itemId);
  assert.deepEqual(store.items(), []);
  assert.deepEqual(await readdir(join(path, 'trash')), []);
  const reopened = [await openShard(path, meta, 0), await openShard(path, meta, 1)];
  assert.deepEqual(await Promise.all(reopened.map(async (shard) => (await shard.stats()).docs)), counts);
  assert.equal((await reopened[1].get('d1'))?.source.hits, 101);
  assert.equal(await reopened[0].get('d0'), null);
  assert.equal((await reopened[0].stats()).seqNo, 9, 'the WAL (change-feed history) came back too');
  for (const shard of reopened) await shard.close();
});

test('verification is read-only, even for access times, and finds damaged, missing and miscounted shards', async () => {
  const path = await dataPath();
  const meta = collection('logs', 1);
  const shard = await openShard(path, meta, 0);
  await fill([shard]);
  const store = await openStore(path);
  await store.prepareDelete(intent(meta));
  await store.retire([{ meta, openShards: [shard] }]);
  const itemId = store.items()[0].itemId;
  const shardDir = join(path, 'trash', itemId, 'shards', meta.shards[0].uuid);
  const files = store.items()[0].shards[0].files.map((file) => join(shardDir, file.path));
  // Access times older than modification times: any ordinary read would move them (relatime).
  const past = new Date(Date.now() - 3 * 24 * 3600 * 1000);
  for (const file of files) await utimes(file, past, new Date());
  const times = async () => Promise.all(files.map(async (file) => {
    const info = await stat(file);
    return [info.atimeMs, info.mtimeMs, info.ctimeMs, info.size];
  }));
  const before = await times();
  assert.equal((await store.verify(itemId))?.shards[0].status, 'ok');
  assert.deepEqual(await times(), before, 'verification changed no file time');

  const segmentFile = files.find((file) => file.endsWith('/terms'))!;
  const bytes = await readFile(segmentFile);
  bytes[bytes.length - 10] ^= 0xff;
  await writeFile(segmentFile, bytes);
  const damaged = (await store.verify(itemId))!.shards[0];
  assert.equal(damaged.status, 'damaged');
  assert.match(damaged.problems.join('\n'), /terms: checksum mismatch/);
  bytes[bytes.length - 10] ^= 0xff;
  await writeFile(segmentFile, bytes);

  const walFile = files.find((file) => file.endsWith('.wal'))!;
  const wal = await readFile(walFile);
  const intact = Buffer.from(wal);
  wal[wal.length - 3] ^= 0x01;
  await writeFile(walFile, wal);
  assert.match((await store.verify(itemId))!.shards[0].problems.join('\n'), /corrupt frame/);
  await rm(walFile);
  const withoutWal = (await store.verify(itemId))!.shards[0].problems.join('\n');
  assert.match(withoutWal, /\.wal: missing/);
  assert.match(withoutWal, /lacks records past the checkpoint/);
  await writeFile(walFile, intact);
  assert.equal((await store.verify(itemId))!.shards[0].status, 'ok');

  const manifestPath = join(path, 'trash', itemId, 'manifest.json');
  const manifest = JSON.parse(await readFile(manifestPath, 'utf8'));
  manifest.shards[0].documents += 1;
  await writeFile(manifestPath, JSON.stringify(manifest));
  const miscounted = (await (await openStore(path)).verify(itemId))!.shards[0];
  assert.equal(miscounted.status, 'document_count_mismatch');

  await rm(shardDir, { recursive: true });
  assert.equal((await (await openStore(path)).verify(itemId))!.shards[0].status, 'missing');
});

test('recovery resolves every interrupted state against the catalog', async () => {
  const path = await dataPath();
  const live = collection('live', 1);
  const gone = collection('gone', 2);
  const restored = collection('restored', 1);
  const abandoned = collection('abandoned', 1);
  const shards = [await openShard(path, live, 0), await openShard(path, gone, 0), await openShard(path, gone, 1), await openShard(path, restored, 0), await openShard(path, abandoned, 0)];
  const counts = await fill(shards);
  // A crash: the shards are not closed cleanly, their last writes exist only in the WAL.
  const store = await openStore(path);
  for (const meta of [live, gone]) await store.prepareDelete(intent(meta));
  for (const meta of [restored, abandoned]) {
    await store.prepareDelete(intent(meta));
    await store.retire([{ meta, openShards: [shards.find((shard) => shard.uuid === meta.shards[0].uuid)!] }]);
    await store.prepareRestore(`item-${meta.name}`);
  }
  await store.reclaim(restored.shards[0].uuid);
  for (const shard of shards.slice(0, 3)) await shard.close();

  const recovered = await openStore(path);
  await recovered.recover(catalog([live, restored]));
  assert.deepEqual(recovered.items().map((item) => [item.name, item.state]).sort(), [['abandoned', 'trashed'], ['gone', 'trashed']]);
  assert.ok(existsSync(join(path, 'shards', live.shards[0].uuid)), 'a delete that never committed leaves the collection live');
  assert.ok(existsSync(join(path, 'shards', restored.shards[0].uuid)), 'a committed restore completes');
  const goneItem = recovered.items().find((item) => item.name === 'gone')!;
  assert.deepEqual(goneItem.shards.map((shard) => shard.documents), [counts[1], counts[2]], 'the WAL tail was recovered and counted');
  const verified = await recovered.verify(goneItem.itemId);
  assert.deepEqual(verified?.shards.map((shard) => shard.status), ['ok', 'ok']);
  assert.ok(existsSync(join(path, 'trash', 'item-abandoned', 'shards', abandoned.shards[0].uuid)), 'an uncommitted restore goes back to the trash');
});

test('purges are atomic per node, expire by deletedAt, and refuse items mid-operation', async () => {
  const path = await dataPath();
  const old = collection('old', 1);
  const fresh = collection('fresh', 1);
  const pending = collection('pending', 1);
  const store = await openStore(path);
  const now = Date.now();
  for (const [meta, deletedAt] of [[old, now - 10_000], [fresh, now]] as const) {
    const shard = await openShard(path, meta, 0);
    await store.prepareDelete(intent(meta, deletedAt));
    await store.retire([{ meta, openShards: [shard] }]);
  }
  await store.prepareDelete(intent(pending));
  await assert.rejects(store.purge('item-pending'), /is pending/);
  const emptyNamespace = { name: 'empty', uuid: 'empty-uuid', createdAt: 1 };
  await store.prepareDelete({ itemId: 'item-empty', kind: 'namespace', name: 'empty', namespace: emptyNamespace, deletedAt: now, collections: [] });
  await store.finishDelete('item-empty');
  assert.equal(store.items().find((item) => item.itemId === 'item-empty')?.state, 'trashed', 'an empty namespace has nothing to move');
  assert.ok(await store.purge('item-empty'));
  assert.equal(await store.purge('nope'), null);

  assert.deepEqual(await store.purgeExpired(60, now), []);
  assert.deepEqual(await store.purgeExpired(5, now), ['item-old']);
  assert.equal(existsSync(join(path, 'trash', 'item-old')), false);
  assert.deepEqual(await store.purgeExpired(0, now), ['item-fresh'], 'a pending item is never expired');

  await mkdir(join(path, 'trash', '.purging-interrupted', 'shards', 'x'), { recursive: true });
  await mkdir(join(path, 'trash', 'empty-leftover'));
  const reopened = await openStore(path);
  assert.deepEqual((await readdir(join(path, 'trash'))).sort(), ['item-pending']);
  assert.deepEqual(reopened.items().map((item) => item.itemId), ['item-pending']);
});

test('a collection that leaves the catalog without an intent here is kept as a new item, never lost', async () => {
  const path = await dataPath();
  const meta = collection('unannounced', 1);
  const shard = await openShard(path, meta, 0);
  const [count] = await fill([shard]);
  const store = await openStore(path);
  await store.retire([{ meta, openShards: [shard] }, { meta: collection('elsewhere', 1), openShards: [null] }]);
  const items = (await openStore(path)).items();
  assert.deepEqual(items.map((item) => [item.kind, item.name, item.state, item.shards[0]?.documents]), [['collection', 'unannounced', 'trashed', count]]);
  assert.deepEqual(items[0].collections[0].shards, meta.shards);
});

test('a delete whose intent cannot be recorded leaves no item directory behind (issue 12 item 6)', async () => {
  const path = await dataPath();
  const failing = { crashAt: () => undefined, failAt: () => {
    throw Object.assign(new Error('EMFILE: too many open files'), { code: 'EMFILE' });
  } };
  const store = await TrashStore.open({ dataPath: path, nodeId: NODE, engineSettings: DEFAULT_ENGINE_SETTINGS, logger, faults: failing });
  const meta = collection('doomed', 1);
  await assert.rejects(store.prepareDelete(intent(meta)), /EMFILE/);
  assert.deepEqual(await readdir(join(path, 'trash')), [], 'no empty item directory');
  assert.deepEqual(store.items(), []);
  await store.abortDelete(intent(meta).itemId);
  const healthy = await openStore(path);
  await healthy.prepareDelete(intent(meta));
  assert.deepEqual(await readdir(join(path, 'trash')), [intent(meta).itemId], 'the same item can be recorded afterwards');
});
