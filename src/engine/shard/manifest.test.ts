import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, test } from 'node:test';
import { EngineError } from '../errors.ts';
import type { Mapping } from '../mapping/mapping.ts';
import { MANIFEST_FORMAT_VERSION, type Manifest } from './manifest.ts';
import { Shard } from './shard.ts';

const MAPPING: Mapping = { properties: { title: { type: 'text' } } };
const dirs: string[] = [];

afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function openShard(dir: string): Promise<Shard> {
  return Shard.open({ dir, uuid: 'manifest', mapping: MAPPING, settings: { walSegmentBytes: 4096 } });
}

function readManifestFile(dir: string): Manifest {
  return JSON.parse(readFileSync(path.join(dir, 'manifest.json'), 'utf8')) as Manifest;
}

/** A shard of 60 documents, 40 of them in a segment and 20 only in the WAL, over several WAL files. */
async function writtenShard(): Promise<{ dir: string; changes: unknown }> {
  const dir = mkdtempSync(path.join(tmpdir(), 'trove-manifest-'));
  dirs.push(dir);
  const shard = await openShard(dir);
  for (let n = 0; n < 40; n++) await shard.write({ kind: 'index', id: `doc-${n}`, source: { title: `title ${n} ${'x'.repeat(100)}` } });
  await shard.epoch();
  for (let n = 40; n < 60; n++) await shard.write({ kind: 'index', id: `doc-${n}`, source: { title: `title ${n}` } });
  const changes = shard.readChanges(0, 1000);
  await shard.close();
  return { dir, changes };
}

async function assertAllThere(dir: string, changes: unknown): Promise<void> {
  const shard = await openShard(dir);
  try {
    assert.equal(shard.stats().docs, 60);
    assert.deepEqual(shard.get('doc-7')?.source, { title: `title 7 ${'x'.repeat(100)}` });
    assert.deepEqual(shard.get('doc-55')?.source, { title: 'title 55' });
    assert.deepEqual(shard.readChanges(0, 1000), changes, 'the whole change feed, below the checkpoint included');
    assert.deepEqual(shard.readChanges(17, 3), (changes as unknown[]).slice(17, 20));
  } finally {
    await shard.close();
  }
}

test('the manifest records where the WAL stands at the checkpoint, and reopening uses it', async () => {
  const { dir, changes } = await writtenShard();
  const manifest = readManifestFile(dir);
  assert.equal(manifest.formatVersion, MANIFEST_FORMAT_VERSION);
  assert.equal(manifest.checkpointSeq, 40);
  assert.ok(manifest.wal!.files.length > 1, 'sealed WAL files and the one holding the checkpoint');
  assert.equal(manifest.wal!.files.at(-1)!.lastSeq, 40);
  await assertAllThere(dir, changes);
});

test('a format 1 manifest (no WAL position) still opens, and the next epoch writes the current format', async () => {
  const { dir, changes } = await writtenShard();
  const { wal: _wal, ...rest } = readManifestFile(dir);
  writeFileSync(path.join(dir, 'manifest.json'), JSON.stringify({ ...rest, formatVersion: 1 }));
  await assertAllThere(dir, changes);
  const shard = await openShard(dir);
  await shard.epoch();
  await shard.close();
  const rewritten = readManifestFile(dir);
  assert.equal(rewritten.formatVersion, MANIFEST_FORMAT_VERSION);
  assert.equal(rewritten.wal!.files.at(-1)!.lastSeq, 60);
  await assertAllThere(dir, changes);
});

test('a manifest of an unknown format version is refused, naming the file', async () => {
  const { dir } = await writtenShard();
  writeFileSync(path.join(dir, 'manifest.json'), JSON.stringify({ ...readManifestFile(dir), formatVersion: MANIFEST_FORMAT_VERSION + 1 }));
  await assert.rejects(openShard(dir), (error) => error instanceof EngineError && error.code === 'corrupt_index' && error.message.includes('manifest.json'));
});
