import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ChangeEntry } from '../engine/shard/operations.ts';
import { ChangeMerge, checkRetained, readBounds, type ChangeLogHandle } from './changes-merge.ts';
import { NodeError } from './node-error.ts';

/** An in-memory shard log: entries seq 1..n, of which `firstSeq..durableSeq` are readable. */
class FakeLog implements ChangeLogHandle {
  readonly entries: ChangeEntry[] = [];
  firstSeq = 1;
  durableSeq = 0;
  reads = 0;

  add(timestamp: number, id: string, op: ChangeEntry['op'] = 'index'): void {
    this.entries.push({ seq: this.entries.length + 1, timestamp, op, id, version: 1 });
    this.durableSeq = this.entries.length;
  }

  async readChanges(afterSeq: number, limit: number): Promise<ChangeEntry[]> {
    this.reads++;
    const from = Math.max(afterSeq + 1, this.firstSeq);
    return this.entries.filter((entry) => entry.seq >= from && entry.seq <= this.durableSeq).slice(0, limit);
  }

  async changeBounds(): Promise<{ firstSeq: number; durableSeq: number }> {
    return { firstSeq: this.firstSeq, durableSeq: this.durableSeq };
  }
}

async function drain(merge: ChangeMerge, logs: ChangeLogHandle[], max = Number.POSITIVE_INFINITY, until?: number[]): Promise<string[]> {
  const out: string[] = [];
  while (out.length < max) {
    const next = await merge.next(logs, until);
    if (next === null) break;
    out.push(`${next.shard}:${next.change.seq}`);
  }
  return out;
}

test('changes of several shards come by commit time, ties by shard number', async () => {
  const logs = [new FakeLog(), new FakeLog()];
  logs[0]!.add(10, 'a');
  logs[1]!.add(5, 'b');
  logs[1]!.add(10, 'c');
  logs[0]!.add(20, 'd');
  const merge = new ChangeMerge([0, 0], 2);
  assert.deepEqual(await drain(merge, logs), ['1:1', '0:1', '1:2', '0:2']);
  assert.deepEqual(merge.positions, [2, 2]);
  assert.equal(merge.pending(await readBounds(logs)), 0);
});

test('one shard keeps seq order even when its clock went backwards', async () => {
  const logs = [new FakeLog(), new FakeLog()];
  logs[0]!.add(100, 'x');
  logs[0]!.add(50, 'x');
  logs[1]!.add(70, 'y');
  assert.deepEqual(await drain(new ChangeMerge([0, 0], 10), logs), ['1:1', '0:1', '0:2']);
});

test('until bounds each shard, and buffered changes past it are held back', async () => {
  const log = new FakeLog();
  for (let index = 0; index < 10; index++) log.add(index, `d${index}`);
  const merge = new ChangeMerge([0], 100);
  assert.deepEqual(await drain(merge, [log], Number.POSITIVE_INFINITY, [4]), ['0:1', '0:2', '0:3', '0:4']);
  assert.deepEqual(await drain(merge, [log]), ['0:5', '0:6', '0:7', '0:8', '0:9', '0:10']);
});

test('resuming from the positions after any change yields exactly the changes after it', async () => {
  let random = 7;
  const next = (): number => (random = (random * 1_103_515_245 + 12_345) % 2 ** 31);
  const logs = [new FakeLog(), new FakeLog(), new FakeLog()];
  let clock = 0;
  for (let index = 0; index < 300; index++) {
    clock += next() % 3;
    logs[next() % 3]!.add(clock, `doc${next() % 40}`);
  }
  const all = await drain(new ChangeMerge([0, 0, 0], 7), logs);
  assert.equal(all.length, 300);
  for (let stop = 0; stop <= 300; stop += 13) {
    const first = new ChangeMerge([0, 0, 0], 5);
    const head = await drain(first, logs, stop);
    const rest = await drain(new ChangeMerge(first.positions, 11), logs);
    assert.deepEqual([...head, ...rest], all);
  }
});

test('a position whose next changes were removed is expired; reading stays batched', async () => {
  const log = new FakeLog();
  for (let index = 0; index < 50; index++) log.add(index, 'd');
  const merge = new ChangeMerge([0], 20);
  await drain(merge, [log], 5);
  assert.equal(log.reads, 1);
  log.firstSeq = 30;
  await assert.rejects(
    drain(merge, [log]),
    (error: unknown) => error instanceof NodeError && error.code === 'changes_expired' && /keeps changes from seq 30/.test(error.message),
  );
  const bounds = await readBounds([log]);
  assert.throws(() => checkRetained(bounds, [3]), /since=now/);
  checkRetained(bounds, [29]);
});

test('when several shards are expired, the lowest shard is the one reported', async () => {
  const logs = [new FakeLog(), new FakeLog()];
  for (const log of logs) for (let index = 0; index < 5; index++) log.add(index, 'd');
  // Shard 0 is found expired only by its read (its bounds still claim seq 1), shard 1 by its bounds.
  logs[0]!.readChanges = async () => logs[0]!.entries.slice(3);
  logs[1]!.firstSeq = 4;
  await assert.rejects(drain(new ChangeMerge([0, 0], 10), logs), (error: unknown) => error instanceof NodeError && /shard \[0\]/.test(error.message));
});

test('pending counts durable changes past the positions; hasAvailable sees new commits', async () => {
  const logs = [new FakeLog(), new FakeLog()];
  logs[0]!.add(1, 'a');
  logs[1]!.add(2, 'b');
  logs[1]!.add(3, 'c');
  const merge = new ChangeMerge([0, 0], 10);
  assert.equal(merge.pending(await readBounds(logs)), 3);
  await drain(merge, logs, 2);
  assert.equal(merge.pending(await readBounds(logs)), 1);
  await drain(merge, logs);
  assert.equal(merge.hasAvailable(await readBounds(logs)), false);
  logs[0]!.add(4, 'd');
  assert.equal(merge.hasAvailable(await readBounds(logs)), true);
});
