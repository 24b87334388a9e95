import assert from 'node:assert/strict';
import { closeSync, mkdirSync, mkdtempSync, openSync, readSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, test } from 'node:test';
import type { Mapping } from '../mapping/mapping.ts';
import { Shard } from './shard.ts';

const MAPPING: Mapping = { properties: { title: { type: 'text' }, views: { type: 'long', inplace: true } } };
const open: Shard[] = [];
const dirs: string[] = [];

afterEach(async () => {
  for (const shard of open.splice(0)) await shard.close();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function tempDir(): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'trove-hold-'));
  dirs.push(dir);
  return dir;
}

async function openShard(dir: string): Promise<Shard> {
  const shard = await Shard.open({ dir, uuid: 'held', mapping: MAPPING, settings: { walSegmentBytes: 2_000, mergeEnabled: false } });
  open.push(shard);
  return shard;
}

/** Copies the first `bytes` bytes of a file (what file-based recovery transfers). */
function copyPrefix(from: string, to: string, bytes: number): void {
  mkdirSync(path.dirname(to), { recursive: true });
  const buffer = Buffer.alloc(bytes);
  const fd = openSync(from, 'r');
  try {
    assert.equal(readSync(fd, buffer, 0, bytes, 0), bytes, `${from} holds the listed bytes`);
  } finally {
    closeSync(fd);
  }
  writeFileSync(to, buffer);
}

function settles(promise: Promise<unknown>): Promise<boolean> {
  return Promise.race([promise.then(() => true), new Promise<boolean>((resolve) => setTimeout(() => resolve(false), 100))]);
}

test('a directory of exactly the held files opens with the documents and history of the source up to the hold seq', async () => {
  const source = await openShard(tempDir());
  const ids = Array.from({ length: 30 }, (_, n) => `d${n}`);
  await source.writeBatch(ids.slice(0, 20).map((id, n) => ({ kind: 'index', id, source: { title: `first ${id}`, views: n } })));
  await source.epoch();
  await source.write({ kind: 'delete', id: 'd3' });
  await source.write({ kind: 'update', id: 'd4', ops: [{ op: 'incr', field: 'views', value: 100 }] });
  await source.epoch();
  for (const id of ids.slice(15)) await source.write({ kind: 'index', id, source: { title: `second ${id}`, views: 1 } });
  await source.write({ kind: 'update', id: 'd5', ops: [{ op: 'incr', field: 'views', value: 7 }] });

  const held = await source.holdFiles();
  const documents = ids.map((id) => source.get(id));
  const changes = source.readChanges(0, 1000);
  assert.equal(held.seq, source.historyPosition().lastSeq);
  assert.ok(held.files.some((file) => file.path === 'manifest.json'));
  assert.ok(held.files.some((file) => /^segments\/seg_\d+\/./.test(file.path)));
  assert.ok(held.files.filter((file) => /^wal\/\d+\.wal$/.test(file.path)).length > 1, 'several WAL files');
  assert.ok(held.files.every((file) => /^(manifest\.json|segments\/[^/]+\/.+|wal\/\d+\.wal)$/.test(file.path)), held.files.map((file) => file.path).join());

  const epochs = source.stats().epochs;
  const epoch = source.epoch();
  assert.equal(await settles(epoch), false, 'no epoch while the files are held');
  const write = await source.write({ kind: 'index', id: 'd0', source: { title: 'after the hold', views: 0 } });
  assert.equal(write.seqNo, held.seq + 1, 'writes go on');
  assert.equal(source.exists('d2'), true, 'reads go on');
  await source.write({ kind: 'delete', id: 'd1' });

  const target = tempDir();
  for (const file of held.files) copyPrefix(path.join(source.dir, file.path), path.join(target, file.path), file.bytes);
  const copy = await openShard(target);
  assert.deepEqual(copy.historyPosition(), { firstSeq: changes[0]!.seq, lastSeq: held.seq, lastTerm: 1 });
  assert.deepEqual(copy.readChanges(0, 1000), changes);
  assert.deepEqual(ids.map((id) => copy.get(id)), documents);

  source.releaseFiles(held.hold);
  source.releaseFiles(held.hold);
  await epoch;
  assert.equal(source.stats().epochs, epochs + 1, 'the epoch ran once the hold ended');
});

test('closing a shard ends its holds, and a hold asked for while closing is refused', async () => {
  const shard = await openShard(tempDir());
  await shard.write({ kind: 'index', id: 'a', source: { title: 'one' } });
  const held = await shard.holdFiles();
  assert.deepEqual(held.files.map((file) => file.path), ['wal/00000000000000000001.wal'], 'no manifest before the first epoch');
  const closing = shard.close();
  await assert.rejects(shard.holdFiles(), { code: 'shard_closed' });
  assert.equal(await settles(closing), true);
  shard.releaseFiles(held.hold);
});

test('a copy of the files before the first epoch opens from its WAL alone', async () => {
  const source = await openShard(tempDir());
  await source.write({ kind: 'index', id: 'a', source: { title: 'one', views: 1 } });
  const held = await source.holdFiles();
  const target = tempDir();
  for (const file of held.files) copyPrefix(path.join(source.dir, file.path), path.join(target, file.path), file.bytes);
  const copy = await openShard(target);
  assert.deepEqual(copy.get('a'), source.get('a'));
  assert.deepEqual(copy.historyPosition(), source.historyPosition());
  source.releaseFiles(held.hold);
});
