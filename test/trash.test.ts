/**
 * The trash through HTTP, row by row of the seed's lifecycle table: a collection and a namespace
 * go to the trash (names free at once, data moved, one item per namespace), verification is
 * read-only (not even access times change), a restore gives back exactly what was there (search
 * results, counts, shard UUIDs, mappings, inplace values, change-feed history), conflicts and
 * incomplete items change nothing, purges remove items everywhere, and retention expires items
 * from their recorded delete time, across a restart, with the current `trash.retention_secs`.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile, rm, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { call, startServer, type TroveServer } from './harness.ts';
import {
  collectionState,
  fileTimes,
  settledState,
  itemOnDisk,
  liveShardDirs,
  seedBooks,
  trashedShardDirs,
  trashItem,
  trashItems,
} from './trash.fixture.ts';

let server: TroveServer;

before(async () => {
  // Small epochs: shards hold segments and a WAL tail at once, so both must survive the trash.
  server = await startServer({ settings: { 'epoch.max_docs': '8', 'epoch.interval_ms': '3600000' } });
});

after(async () => {
  await server?.cleanup();
});

test('row 1: deleting a collection moves its shards into the trash; the name is free at once; row 3: a restore gives everything back', async () => {
  const before = await liveShardDirs(server);
  await seedBooks(server, 'books', { shards: 2 });
  const shardUuids = (await liveShardDirs(server)).filter((uuid) => !before.includes(uuid));
  assert.equal(shardUuids.length, 2);
  const original = await settledState(server, 'books');
  assert.equal(original.count, 29);

  const deleted = await call(server, 'DELETE', '/books');
  assert.equal(deleted.status, 200, deleted.text);
  assert.equal(deleted.body.acknowledged, true);
  const itemId: string = deleted.body.trash_items[0].item_id;
  assert.equal((await call(server, 'GET', '/books')).status, 404);
  assert.deepEqual(await trashedShardDirs(server, itemId), [...shardUuids].sort(), 'the shard directories moved into the item');
  for (const uuid of shardUuids) assert.ok(!(await liveShardDirs(server)).includes(uuid));

  const listed = await trashItem(server, itemId);
  assert.ok(listed);
  assert.deepEqual([listed.kind, listed.name, listed.namespace, listed.state], ['collection', 'books', 'default', 'trashed']);
  assert.deepEqual([listed.summary.collections, listed.summary.shards, listed.summary.documents], [1, 2, 29]);
  assert.ok(listed.summary.bytes > 0 && listed.summary.segments >= 2, "both shards hold segments (and a WAL tail)");
  assert.equal(listed.expires_at_millis - listed.deleted_at_millis, 7 * 24 * 3600 * 1000, 'the default retention is a week');
  const manifest = JSON.parse(await readFile(join(server.dataDir, 'trash', itemId, 'manifest.json'), 'utf8'));
  assert.deepEqual([manifest.format, manifest.version, manifest.kind, manifest.deletedAt], ['trove-trash', 1, 'collection', listed.deleted_at_millis]);
  assert.deepEqual(manifest.collections[0].shards.map((shard: { uuid: string }) => shard.uuid).sort(), [...shardUuids].sort());
  assert.deepEqual(manifest.collections[0].mapping, original.mapping);

  // The name is free: a new collection takes it; restoring the old one now conflicts and changes nothing.
  assert.equal((await call(server, 'PUT', '/books', { json: {} })).status, 200);
  assert.equal((await call(server, 'PUT', '/books/_doc/newcomer', { json: { title: 'new' } })).status, 201);
  const conflict = await call(server, 'POST', `/_cluster/trash/${itemId}/_restore`);
  assert.equal(conflict.status, 409, conflict.text);
  assert.equal(conflict.body.error.type, 'resource_already_exists_exception');
  assert.match(conflict.body.error.reason, /rename_to/);
  assert.deepEqual(await trashItem(server, itemId), listed);
  assert.equal((await call(server, 'GET', '/books/_count')).body.count, 1);
  const newcomer = await call(server, 'DELETE', '/books');
  assert.equal(newcomer.status, 200);

  const restored = await call(server, 'POST', `/_cluster/trash/${itemId}/_restore`);
  assert.equal(restored.status, 200, restored.text);
  assert.deepEqual(restored.body, { acknowledged: true, item_id: itemId, kind: 'collection', namespace: 'default', collections: ['books'] });
  assert.deepEqual(await collectionState(server, 'books'), original, 'searches, counts, mapping, inplace values and the change feed are as before');
  for (const uuid of shardUuids) assert.ok((await liveShardDirs(server)).includes(uuid), `shard ${uuid} is live again under its UUID`);
  assert.equal(itemOnDisk(server, itemId), false);
  assert.equal(await trashItem(server, itemId), undefined);
  const described = await call(server, 'GET', '/books');
  assert.equal(described.body.books.settings.index.uuid, manifest.collections[0].uuid);

  // The change feed continues after the restored history.
  const write = await call(server, 'PUT', '/books/_doc/after', { json: { title: 'written after the restore', pop: 1 } });
  assert.equal(write.status, 201);
  const tail = await call(server, 'GET', `/books/_changes?since=${encodeURIComponent(original.changes.lastSeq)}`);
  assert.deepEqual(JSON.parse(tail.text).results.map((result: { id: string }) => result.id), ['after']);

  await call(server, 'DELETE', '/books');
  const purgeNewcomer = await call(server, 'DELETE', `/_cluster/trash/${newcomer.body.trash_items[0].item_id}`);
  assert.equal(purgeNewcomer.status, 200, purgeNewcomer.text);
});

test('row 2: deleting a namespace moves it with all its collections as one item; it comes back whole', async () => {
  assert.equal((await call(server, 'PUT', '/_namespace/shop')).status, 200);
  assert.equal((await call(server, 'PUT', '/_namespace/shop')).status, 400, 'namespace names are unique');
  await seedBooks(server, 'orders', { namespace: 'shop', shards: 2, count: 12 });
  await seedBooks(server, 'invoices', { namespace: 'shop', shards: 1, count: 8 });
  const namespace = await call(server, 'GET', '/_namespace/shop');
  assert.deepEqual(namespace.body.collections, ['invoices', 'orders']);
  assert.ok((await call(server, 'GET', '/_namespace')).body.namespaces.some((entry: { name: string }) => entry.name === 'shop'));
  const orders = await settledState(server, 'orders');
  const invoices = await settledState(server, 'invoices');

  const deleted = await call(server, 'DELETE', '/_namespace/shop');
  assert.equal(deleted.status, 200, deleted.text);
  assert.deepEqual(deleted.body.collections, ['invoices', 'orders']);
  const itemId: string = deleted.body.trash_item_id;
  assert.equal((await call(server, 'GET', '/_namespace/shop')).status, 404);
  assert.equal((await call(server, 'GET', '/orders')).status, 404);
  const items = (await trashItems(server)).filter((item) => item.namespace === 'shop');
  assert.equal(items.length, 1, 'one item for the whole namespace');
  assert.deepEqual([items[0].kind, items[0].summary.collections, items[0].summary.shards, items[0].summary.documents], ['namespace', 2, 3, 18]);
  assert.equal((await trashedShardDirs(server, itemId)).length, 3);

  // A namespace of the same name blocks the restore until it is gone.
  assert.equal((await call(server, 'PUT', '/_namespace/shop')).status, 200);
  const conflict = await call(server, 'POST', `/_cluster/trash/${itemId}/_restore`);
  assert.equal(conflict.status, 409, conflict.text);
  assert.equal((await call(server, 'POST', `/_cluster/trash/${itemId}/_restore`, { json: { rename_to: 'elsewhere' } })).status, 400);
  const emptyNamespace = await call(server, 'DELETE', '/_namespace/shop');
  assert.equal(emptyNamespace.status, 200);

  const restored = await call(server, 'POST', `/_cluster/trash/${itemId}/_restore`);
  assert.equal(restored.status, 200, restored.text);
  assert.deepEqual(restored.body.collections, ['invoices', 'orders']);
  assert.deepEqual((await call(server, 'GET', '/_namespace/shop')).body.collections, ['invoices', 'orders']);
  assert.deepEqual(await collectionState(server, 'orders'), orders);
  assert.deepEqual(await collectionState(server, 'invoices'), invoices);
  assert.equal((await call(server, 'DELETE', `/_cluster/trash/${emptyNamespace.body.trash_item_id}`)).status, 200);
});

test('rule 1: verification is read-only; a damaged item fails verify and restore with findings, and nothing changes', async () => {
  await seedBooks(server, 'audit', { shards: 2, count: 10 });
  const deleted = await call(server, 'DELETE', '/audit');
  const itemId: string = deleted.body.trash_items[0].item_id;
  const itemDir = join(server.dataDir, 'trash', itemId);
  const files = Object.keys(await fileTimes(itemDir)).filter((entry) => /\.wal$|\/terms$|\/source$|manifest\.json$/.test(entry));
  const past = new Date(Date.now() - 3 * 24 * 3600 * 1000);
  for (const file of files) await utimes(join(itemDir, file), past, new Date());
  await fileTimes(itemDir);
  const before = await fileTimes(itemDir);
  const listed = await trashItem(server, itemId);

  const verified = await call(server, 'POST', `/_cluster/trash/${itemId}/_verify`);
  assert.equal(verified.status, 200, verified.text);
  assert.equal(verified.body.complete, true);
  assert.deepEqual(verified.body.summary, { shards: 2, ok: 2, unassigned: 0, missing: 0, damaged: 0, document_count_mismatch: 0, node_unavailable: 0 });
  assert.equal(verified.body.shards.reduce((sum: number, shard: { found_documents: number }) => sum + shard.found_documents, 0), 9);
  assert.ok(verified.body.shards.every((shard: { expected_documents: number; found_documents: number; files_checked: number }) => shard.expected_documents === shard.found_documents && shard.files_checked > 0));
  assert.deepEqual(await fileTimes(itemDir), before, 'no size or time of any file or directory changed');
  assert.deepEqual(await trashItem(server, itemId), listed);

  const victim = verified.body.shards[1];
  const walFile = files.find((file) => file.startsWith(`shards/${victim.uuid}/wal/`))!;
  const bytes = await readFile(join(itemDir, walFile));
  bytes[bytes.length - 5] ^= 0x55;
  await writeFile(join(itemDir, walFile), bytes);
  const damaged = await call(server, 'POST', `/_cluster/trash/${itemId}/_verify`);
  assert.equal(damaged.body.complete, false);
  assert.deepEqual(damaged.body.shards.map((shard: { status: string }) => shard.status), ['ok', 'damaged']);
  assert.match(damaged.body.shards[1].problems.join(' '), /corrupt frame/);

  const refused = await call(server, 'POST', `/_cluster/trash/${itemId}/_restore`);
  assert.equal(refused.status, 409, refused.text);
  assert.equal(refused.body.error.type, 'trash_item_incomplete_exception');
  assert.deepEqual(refused.body.error.findings.map((finding: { status: string }) => finding.status), ['ok', 'damaged']);
  assert.equal((await call(server, 'GET', '/audit')).status, 404, 'nothing came back');
  assert.deepEqual((await trashItem(server, itemId))?.state, 'trashed');

  await rm(join(itemDir, 'shards', victim.uuid), { recursive: true });
  const missing = await call(server, 'POST', `/_cluster/trash/${itemId}/_restore`, { json: { rename_to: 'audit-copy' } });
  assert.equal(missing.status, 409);
  assert.deepEqual(missing.body.error.findings.map((finding: { status: string }) => finding.status), ['ok', 'missing']);
  assert.equal((await call(server, 'GET', '/audit-copy')).status, 404);
});

test('rows 5 and 6: an item is purged everywhere, then the whole trash is emptied', async () => {
  for (const name of ['temp-a', 'temp-b']) {
    await seedBooks(server, name, { shards: 1, count: 4 });
    assert.equal((await call(server, 'DELETE', `/${name}`)).status, 200);
  }
  const [first, ...others] = await trashItems(server);
  const purged = await call(server, 'DELETE', `/_cluster/trash/${first.item_id}`);
  assert.equal(purged.status, 200, purged.text);
  assert.equal(purged.body.acknowledged, true);
  assert.deepEqual(purged.body._nodes, { total: 1, successful: 1, failed: 0, failures: [] });
  assert.equal(purged.body.nodes[0].shards, first.summary.shards);
  assert.equal(itemOnDisk(server, first.item_id), false);
  assert.equal((await call(server, 'DELETE', `/_cluster/trash/${first.item_id}`)).status, 404);
  assert.equal((await call(server, 'POST', `/_cluster/trash/${first.item_id}/_verify`)).status, 404);

  const emptied = await call(server, 'DELETE', '/_cluster/trash');
  assert.equal(emptied.status, 200, emptied.text);
  assert.deepEqual([...emptied.body.purged].sort(), others.map((item) => item.item_id).sort());
  assert.deepEqual(await trashItems(server), []);
  for (const item of others) assert.equal(itemOnDisk(server, item.item_id), false);
  assert.deepEqual((await call(server, 'DELETE', '/_cluster/trash')).body.purged, []);
});

test('bad input on the namespace and trash routes is a clear 4xx and changes nothing', async () => {
  await seedBooks(server, 'guarded', { shards: 1, count: 5 });
  const itemId: string = (await call(server, 'DELETE', '/guarded')).body.trash_items[0].item_id;
  const before = await trashItems(server);
  const attempts: Array<[string, string, { json?: unknown; body?: string; headers?: Record<string, string> }, number]> = [
    ['POST', '/_cluster/trash/..%2F..%2Fshards/_restore', {}, 404],
    ['DELETE', '/_cluster/trash/..', {}, 404],
    ['DELETE', `/_cluster/trash/${'x'.repeat(300)}`, {}, 400],
    ['POST', `/_cluster/trash/${itemId}/_restore`, { json: { rename_to: { name: 'x' } } }, 400],
    ['POST', `/_cluster/trash/${itemId}/_restore`, { json: { rename_to: 'ok', extra: true } }, 400],
    ['POST', `/_cluster/trash/${itemId}/_restore`, { json: { rename_to: '_hidden' } }, 400],
    ['POST', `/_cluster/trash/${itemId}/_restore`, { body: '{"rename_to": ', headers: { 'content-type': 'application/json' } }, 400],
    ['POST', `/_cluster/trash/${itemId}/_restore`, { json: ['rename_to'] }, 400],
    ['GET', '/_cluster/trash?verbose=true', {}, 400],
    ['PUT', '/_namespace/Bad*Name', {}, 400],
    ['PUT', '/_namespace/_system', {}, 400],
    ['DELETE', '/_namespace/default', {}, 400],
    ['DELETE', '/_namespace/missing', {}, 404],
    ['GET', '/_namespace/missing', {}, 404],
    ['DELETE', '/guarded*', {}, 400],
  ];
  for (const [method, path, options, status] of attempts) {
    const response = await call(server, method, path, options);
    assert.equal(response.status, status, `${method} ${path}: ${response.text}`);
    assert.equal(typeof response.body.error?.type, 'string', `${method} ${path} has an ES error body`);
  }
  assert.deepEqual(await trashItems(server), before);
  assert.equal((await call(server, 'POST', `/_cluster/trash/${itemId}/_restore`)).status, 200);
  assert.equal((await call(server, 'GET', '/guarded/_count')).body.count, 4);
});

test('row 4: retention counts from the recorded delete time, across a restart, and a new value applies to every item at once', async () => {
  const node = await startServer();
  try {
    await seedBooks(node, 'early', { shards: 1, count: 5 });
    const early: string = (await call(node, 'DELETE', '/early')).body.trash_items[0].item_id;
    const listed = await trashItem(node, early);
    await node.restart();
    const relisted = await trashItem(node, early);
    assert.equal(relisted?.deleted_at_millis, listed!.deleted_at_millis, 'a restart keeps the recorded delete time');
    assert.equal(relisted?.expires_at_millis, listed!.deleted_at_millis + 7 * 24 * 3600 * 1000);

    // Two seconds of retention: the early item is long past it and goes at once.
    const changed = await call(node, 'PUT', '/_node/_local/settings', { json: { 'trash.retention_secs': 2 } });
    assert.equal(changed.status, 200, changed.text);
    const changedAt = Date.now();
    while ((await trashItem(node, early)) !== undefined) {
      assert.ok(Date.now() < changedAt + 3000, 'the new retention did not apply to the earlier item');
      await sleep(50);
    }
    assert.equal(itemOnDisk(node, early), false);

    // A later item lives exactly its two seconds.
    await seedBooks(node, 'late', { shards: 1, count: 5 });
    const late: string = (await call(node, 'DELETE', '/late')).body.trash_items[0].item_id;
    const lateItem = await trashItem(node, late);
    assert.equal(lateItem?.expires_at_millis, lateItem!.deleted_at_millis + 2000);
    while ((await trashItem(node, late)) !== undefined) {
      assert.ok(Date.now() < lateItem!.expires_at_millis + 4000, 'the item outlived its retention');
      await sleep(100);
    }
    assert.ok(Date.now() >= lateItem!.expires_at_millis, 'the item was not purged before its deadline');
    assert.deepEqual(await trashedShardDirs(node, late), []);
  } finally {
    await node.cleanup();
  }
});
