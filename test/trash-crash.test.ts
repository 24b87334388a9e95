/**
 * Crash atomicity of the trash: the node is killed (SIGKILL, through the test-only `TROVE_FAULTS`
 * crash points) in the middle of a delete, a restore and a purge, then restarted. Every time the
 * item is either fully live (same documents, searches, inplace values and change feed as before)
 * or fully in the trash (complete by verify), never half; a purge is either not done or done.
 * Each restart arms the next crash point, so the whole chain costs one start per point.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { call, startServer, type TroveServer } from './harness.ts';
import { settledState, seedBooks, trashItems, type CollectionState, type ListedItem } from './trash.fixture.ts';

let server: TroveServer;
let original: CollectionState;
let deletedAt: number | null = null;

before(async () => {
  server = await startServer({ settings: { 'epoch.max_docs': '8', 'epoch.interval_ms': '3600000' } });
  await seedBooks(server, 'vault', { shards: 2, count: 24 });
  original = await settledState(server, 'vault');
});

after(async () => {
  delete process.env.TROVE_FAULTS;
  await server?.cleanup();
});

/** Restarts the node (after its crash) with these crash points armed. */
async function restartWith(points: string[]): Promise<void> {
  if (points.length > 0) process.env.TROVE_FAULTS = points.join(',');
  else delete process.env.TROVE_FAULTS;
  try {
    await server.restart();
  } finally {
    delete process.env.TROVE_FAULTS;
  }
}

/** Sends a request that must kill the node at its armed crash point. */
async function expectCrash(method: string, path: string): Promise<void> {
  let answered: number | null = null;
  try {
    answered = (await call(server, method, path)).status;
  } catch {
    return;
  }
  assert.fail(`${method} ${path} answered ${answered}: the crash point was not reached`);
}

/** The trash items of the collection `vault`. */
async function vaultItems(): Promise<ListedItem[]> {
  return (await trashItems(server)).filter((item) => item.name === 'vault');
}

async function expectLive(): Promise<void> {
  assert.equal((await call(server, 'GET', '/vault')).status, 200, 'the collection is live');
  assert.deepEqual(await vaultItems(), [], 'and not in the trash');
  assert.deepEqual(await settledState(server, 'vault'), original, 'with every document, inplace value and change as before');
}

async function expectTrashed(): Promise<string> {
  assert.equal((await call(server, 'GET', '/vault')).status, 404, 'the collection is not live');
  const items = await vaultItems();
  assert.equal(items.length, 1, 'it is one trash item');
  const [item] = items;
  assert.equal(item.state, 'trashed');
  assert.deepEqual([item.summary.shards, item.summary.documents], [2, original.count]);
  if (item.kind === 'collection') {
    if (deletedAt !== null) assert.equal(item.deleted_at_millis, deletedAt, 'restarts keep the recorded delete time');
    deletedAt = item.deleted_at_millis;
  }
  const verified = await call(server, 'POST', `/_cluster/trash/${item.item_id}/_verify`);
  assert.equal(verified.body.complete, true, verified.text);
  return item.item_id;
}

test('a delete that crashed before its catalog change leaves the collection live', async () => {
  await restartWith(['trash.delete.after_prepare']);
  await expectCrash('DELETE', '/vault');
  await restartWith(['trash.delete.after_commit']);
  await expectLive();
});

test('a delete that crashed after its catalog change, before any shard moved, completes into the trash', async () => {
  await expectCrash('DELETE', '/vault');
  await restartWith(['trash.restore.after_prepare']);
  await expectTrashed();
});

test('a restore that crashed before its catalog change leaves the item in the trash', async () => {
  const itemId = await expectTrashed();
  await expectCrash('POST', `/_cluster/trash/${itemId}/_restore`);
  await restartWith(['trash.restore.after_commit']);
  assert.equal(await expectTrashed(), itemId);
});

test('a restore that crashed after its catalog change, before any shard moved back, completes', async () => {
  const itemId = await expectTrashed();
  await expectCrash('POST', `/_cluster/trash/${itemId}/_restore`);
  await restartWith(['trash.delete.mid_move']);
  await expectLive();
});

test('a delete that crashed with one shard moved and one not completes into the trash', async () => {
  deletedAt = null;
  await expectCrash('DELETE', '/vault');
  await restartWith(['trash.restore.mid_move']);
  await expectTrashed();
});

test('a restore that crashed with one shard moved back and one not completes', async () => {
  const itemId = await expectTrashed();
  await expectCrash('POST', `/_cluster/trash/${itemId}/_restore`);
  await restartWith(['trash.purge.after_commit']);
  await expectLive();
});

test('a purge that crashed after its commit point is complete after the restart', async () => {
  deletedAt = null;
  assert.equal((await call(server, 'DELETE', '/vault')).status, 200);
  const itemId = await expectTrashed();
  await expectCrash('DELETE', `/_cluster/trash/${itemId}`);
  await restartWith(['trash.purge.mid_remove']);
  assert.deepEqual(await vaultItems(), []);
  assert.equal((await call(server, 'GET', '/vault')).status, 404);
  assert.deepEqual(await readdir(join(server.dataDir, 'trash')), [], 'nothing of the item is left on disk');
});

test('a purge that crashed with one shard directory removed and one not is complete after the restart', async () => {
  await seedBooks(server, 'vault', { shards: 2, count: 24 });
  assert.equal((await call(server, 'DELETE', '/vault')).status, 200);
  const [item] = await vaultItems();
  await expectCrash('DELETE', `/_cluster/trash/${item.item_id}`);
  await restartWith([]);
  assert.deepEqual(await vaultItems(), []);
  assert.deepEqual(await readdir(join(server.dataDir, 'trash')), []);
  assert.equal((await call(server, 'POST', `/_cluster/trash/${item.item_id}/_verify`)).status, 404);
});
