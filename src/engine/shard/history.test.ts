import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, test } from 'node:test';
import { EngineError } from '../errors.ts';
import type { Mapping } from '../mapping/mapping.ts';
import { Shard, type EngineSettings } from './shard.ts';

const MAPPING: Mapping = { properties: { title: { type: 'text' }, views: { type: 'long', inplace: true } } };
const IDS = ['a', 'b', 'c', 'd', 'e'];
const open: Shard[] = [];
const dirs: string[] = [];

afterEach(async () => {
  for (const shard of open.splice(0)) await shard.close();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

async function openShard(settings: Partial<EngineSettings> = {}, primaryTerm?: number, dir?: string): Promise<Shard> {
  const shardDir = dir ?? mkdtempSync(path.join(tmpdir(), 'trove-history-'));
  if (!dir) dirs.push(shardDir);
  const shard = await Shard.open({ dir: shardDir, uuid: 'history', mapping: MAPPING, settings, primaryTerm });
  open.push(shard);
  return shard;
}

/** Indexes, overwrites, inplace updates and deletes, with an epoch in the middle. */
async function writeHistory(shard: Shard): Promise<void> {
  await shard.writeBatch(IDS.map((id, n) => ({ kind: 'index', id, source: { title: `first ${id}`, views: n } })));
  await shard.write({ kind: 'update', id: 'a', ops: [{ op: 'incr', field: 'views', value: 5 }] });
  await shard.epoch();
  await shard.write({ kind: 'delete', id: 'b' });
  await shard.write({ kind: 'index', id: 'c', source: { title: 'second c', views: 30 } });
  await shard.write({ kind: 'update', id: 'd', doc: { title: 'updated d' } });
}

async function assertSameCopy(replica: Shard, primary: Shard): Promise<void> {
  for (const id of IDS) assert.deepEqual(replica.get(id), primary.get(id), `document ${id}`);
  assert.deepEqual(replica.readChanges(0, 1000), primary.readChanges(0, 1000), 'change feed, timestamps included');
  assert.deepEqual(replica.historyPosition(), primary.historyPosition());
}

test('records read from a primary and applied on an empty copy give the same documents, changes and position', async () => {
  const primary = await openShard();
  await writeHistory(primary);
  const replica = await openShard({ epochMaxDocs: 2 });
  assert.deepEqual(replica.historyPosition(), { firstSeq: 1, lastSeq: 0, lastTerm: null });
  let after = 0;
  for (;;) {
    const records = primary.readRecords(after, 3, 100);
    if (records.length === 0) break;
    assert.ok(records.length === 1 || records.slice(0, -1).reduce((sum, record) => sum + record.payload.length, 0) <= 100, 'about maxBytes');
    const position = await replica.applyRecords(records);
    after = position.lastSeq;
    assert.equal(after, records.at(-1)!.seq);
  }
  await replica.waitForMaintenance();
  assert.ok(replica.stats().epochs > 0, 'applied records trigger epochs as writes do');
  await assertSameCopy(replica, primary);
  assert.equal(primary.readRecords(0, 100, 1).length, 1, 'at least one record whatever the byte budget');
});

test('a hole is refused and writes nothing; a resend is skipped', async () => {
  const primary = await openShard();
  await writeHistory(primary);
  const records = primary.readRecords(0, 100, Number.MAX_SAFE_INTEGER);
  const replica = await openShard();
  await assert.rejects(replica.applyRecords(records.slice(1)), (error: unknown) => error instanceof EngineError && error.code === 'replication_gap');
  assert.equal(replica.historyPosition().lastSeq, 0);
  assert.deepEqual(replica.readChanges(0, 100), []);
  assert.equal(replica.get('a'), null);
  await replica.applyRecords(records.slice(0, 3));
  await assert.rejects(replica.applyRecords([records[2]!, records[4]!]), (error: unknown) => error instanceof EngineError && error.code === 'replication_gap');
  const position = await replica.applyRecords(records);
  assert.equal(position.lastSeq, records.at(-1)!.seq, 'the records already present are skipped');
  await assert.doesNotReject(replica.applyRecords(records.slice(0, 2)), 'a resend of old records only');
  await assertSameCopy(replica, primary);
});

test('primary terms: writes carry the set term, termAt reads it back, and terms never go down', async () => {
  const primary = await openShard({}, 2);
  assert.equal((await primary.write({ kind: 'index', id: 'a', source: { title: 'term two' } })).primaryTerm, 2);
  primary.setPrimaryTerm(4);
  assert.throws(() => primary.setPrimaryTerm(3), (error: unknown) => error instanceof EngineError && error.code === 'illegal_argument');
  const written = await primary.write({ kind: 'index', id: 'b', source: { title: 'term four' } });
  assert.equal(written.primaryTerm, 4);
  assert.equal(primary.get('b')!.primaryTerm, 4);
  assert.deepEqual([primary.termAt(0), primary.termAt(1), primary.termAt(2), primary.termAt(3)], [null, 2, 4, null]);
  assert.deepEqual(primary.historyPosition(), { firstSeq: 1, lastSeq: 2, lastTerm: 4 });
  const replica = await openShard();
  await replica.applyRecords(primary.readRecords(0, 10, 1 << 20));
  assert.deepEqual(replica.historyPosition(), { firstSeq: 1, lastSeq: 2, lastTerm: 4 }, 'a replica keeps the primary\'s terms');
  assert.equal(replica.get('a')!.primaryTerm, 2);
  const dir = replica.dir;
  await replica.close();
  const reopened = await openShard({}, 5, dir);
  assert.deepEqual(reopened.historyPosition(), { firstSeq: 1, lastSeq: 2, lastTerm: 4 }, 'the last term is read back at open');
  assert.equal((await reopened.write({ kind: 'delete', id: 'a' })).primaryTerm, 5, 'the term given at open');
});

test('readRecords starts at the first retained seq once older records are trimmed', async () => {
  const primary = await openShard({ walSegmentBytes: 200, changesRetentionMs: 0 });
  for (const id of IDS) await primary.write({ kind: 'index', id, source: { title: `long title of ${id} `.repeat(10) } });
  await primary.epoch();
  const { firstSeq } = primary.historyPosition();
  assert.ok(firstSeq > 1, 'files below the checkpoint were trimmed');
  assert.equal(primary.readRecords(0, 10, 1 << 20)[0]!.seq, firstSeq);
  assert.equal(primary.termAt(1), null);
  const replica = await openShard();
  await assert.rejects(replica.applyRecords(primary.readRecords(0, 10, 1 << 20)), (error: unknown) => error instanceof EngineError && error.code === 'replication_gap');
});
