import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { Shard } from '../shard/shard.ts';

const MAPPING = { properties: { title: { type: 'text' as const }, n: { type: 'long' as const } } };

async function openShard(dir: string, walSegmentBytes = 64 * 1024 * 1024): Promise<Shard> {
  return Shard.open({ dir, uuid: 'live-verify', mapping: MAPPING, settings: { epochIntervalMs: 3_600_000, walSegmentBytes } });
}

async function index(shard: Shard, from: number, to: number): Promise<void> {
  await shard.writeBatch(Array.from({ length: to - from }, (_, offset) => ({ kind: 'index' as const, id: `d${from + offset}`, source: { title: `doc ${from + offset}`, n: from + offset } })));
}

test('a live shard verifies intact: segments, WAL past the checkpoint and the document count, file by file', async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'trove-live-verify-'));
  const shard = await openShard(dir);
  try {
    const empty = await shard.verify();
    assert.equal(empty.status, 'ok');
    assert.equal(empty.foundDocuments, 0);
    await index(shard, 0, 50);
    await shard.epoch();
    await index(shard, 50, 80);
    await shard.write({ kind: 'delete', id: 'd3' });
    const check = await shard.verify();
    assert.equal(check.status, 'ok', check.problems.join('; '));
    assert.equal(check.expectedDocuments, 79);
    assert.equal(check.foundDocuments, 79);
    assert.equal(check.seqNo, 81);
    assert.ok(check.checkpointSeq === 50);
    assert.ok(check.files.some((file) => file.path === 'manifest.json' && file.checked));
    assert.ok(check.files.some((file) => file.path.startsWith('segments/') && file.checked));
    assert.ok(check.files.some((file) => file.path.startsWith('wal/') && file.checked));
    assert.ok(check.files.every((file) => file.status === 'ok' && file.problems.length === 0));
    assert.equal(check.filesChecked, check.files.filter((file) => file.checked).length);
  } finally {
    await shard.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('verification runs beside writes and a forced merge, and names a damaged segment file', async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'trove-live-verify-'));
  const shard = await openShard(dir, 4096);
  try {
    for (let round = 0; round < 3; round++) {
      await index(shard, round * 40, round * 40 + 40);
      await shard.epoch();
    }
    const writes = index(shard, 1000, 1400);
    const merge = shard.forceMerge({ maxSegments: 1 });
    const during = await shard.verify();
    await Promise.all([writes, merge]);
    assert.equal(during.status, 'ok', during.problems.join('; '));
    assert.ok(during.files.filter((file) => file.path.startsWith('wal/')).length > 1, 'the WAL rotated');
    const after = await shard.verify();
    assert.equal(after.status, 'ok', after.problems.join('; '));
    assert.equal(after.foundDocuments, 520);

    const [segment] = readdirSync(path.join(dir, 'segments'));
    const postings = readdirSync(path.join(dir, 'segments', segment!)).find((name) => name.startsWith('postings'))!;
    const file = path.join(dir, 'segments', segment!, postings);
    const bytes = readFileSync(file);
    bytes[40] = bytes[40]! ^ 0xff;
    writeFileSync(file, bytes);
    const damaged = await shard.verify();
    assert.equal(damaged.status, 'damaged');
    const finding = damaged.files.find((entry) => entry.path === `segments/${segment}/${postings}`);
    assert.equal(finding?.status, 'damaged');
    assert.deepEqual(finding?.problems, ['checksum mismatch']);
    assert.ok(damaged.files.filter((entry) => entry !== finding).every((entry) => entry.status === 'ok'));
  } finally {
    await shard.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a closed shard refuses verification', async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'trove-live-verify-'));
  const shard = await openShard(dir);
  await shard.close();
  await assert.rejects(shard.verify(), { code: 'shard_closed' });
  rmSync(dir, { recursive: true, force: true });
});
