import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ChangeEntry, StoredDocument } from '../engine/shard/operations.ts';
import { ChangeFeed, type ChangeFeedOptions, type FeedShard } from './changes-feed.ts';
import { ChangeMerge } from './changes-merge.ts';

/** An in-memory shard: appended changes become durable when `commit` runs its listeners. */
class FakeShard implements FeedShard {
  readonly entries: ChangeEntry[] = [];
  readonly listeners = new Set<(durableSeq: number) => void>();
  firstSeq = 1;
  durableSeq = 0;

  append(id: string, op: ChangeEntry['op'] = 'index', notify = true): void {
    this.entries.push({ seq: this.entries.length + 1, timestamp: Date.now(), op, id, version: 1 });
    this.durableSeq = this.entries.length;
    if (notify) for (const listener of [...this.listeners]) listener(this.durableSeq);
  }

  readChanges(afterSeq: number, limit: number): ChangeEntry[] {
    const from = Math.max(afterSeq + 1, this.firstSeq);
    return this.entries.filter((entry) => entry.seq >= from && entry.seq <= this.durableSeq).slice(0, limit);
  }

  changeBounds(): { firstSeq: number; durableSeq: number } {
    return { firstSeq: this.firstSeq, durableSeq: this.durableSeq };
  }

  get(id: string): StoredDocument | null {
    return { id, source: { name: id }, seqNo: 1, version: 1, primaryTerm: 1 };
  }

  onDurable(listener: (durableSeq: number) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}

function openFeed(shards: FakeShard[], options: Partial<ChangeFeedOptions>, positions = shards.map(() => 0)): { feed: ChangeFeed; closed: () => boolean } {
  let closed = false;
  const feed = new ChangeFeed(
    { shards: () => shards, fingerprint: 42 },
    new ChangeMerge(positions, 100),
    { mode: 'normal', limit: Number.POSITIVE_INFINITY, timeoutMs: 60_000, heartbeatMs: null, includeDocs: false, seqInterval: 1, ...options },
    () => (closed = true),
  );
  return { feed, closed: () => closed };
}

/** Reads a feed chunk by chunk (breaking out of `for await` would destroy the stream). */
function reader(feed: ChangeFeed): { next(): Promise<string>; rest(): Promise<string> } {
  const chunks = feed[Symbol.asyncIterator]();
  return {
    next: async () => {
      const chunk = await chunks.next();
      return chunk.done ? '' : String(chunk.value);
    },
    rest: async () => {
      let text = '';
      for (let chunk = await chunks.next(); !chunk.done; chunk = await chunks.next()) text += String(chunk.value);
      return text;
    },
  };
}

async function bodyOf(feed: ChangeFeed): Promise<string> {
  return reader(feed).rest();
}

test('a normal feed ends at what was durable when it opened', async () => {
  const shard = new FakeShard();
  shard.append('a');
  shard.append('b');
  const { feed, closed } = openFeed([shard], { includeDocs: true });
  shard.append('late');
  const parsed = JSON.parse(await bodyOf(feed)) as { results: Array<{ id: string; doc: { _id: string } }>; pending: number };
  assert.deepEqual(parsed.results.map((result) => result.id), ['a', 'b']);
  assert.equal(parsed.results[0]!.doc._id, 'a');
  assert.equal(parsed.pending, 1);
  assert.ok(closed());
});

test('a longpoll wakes on a commit, and answers at once for a commit made before it waits', async () => {
  const shard = new FakeShard();
  const { feed } = openFeed([shard], { mode: 'longpoll' });
  const body = bodyOf(feed);
  await new Promise((resolve) => setTimeout(resolve, 20));
  assert.equal(shard.listeners.size, 1);
  shard.append('x');
  assert.deepEqual((JSON.parse(await body) as { results: Array<{ id: string }> }).results.map((result) => result.id), ['x']);
  assert.equal(shard.listeners.size, 0);

  // A change committed after the longpoll opened, before it started to wait, is answered at once.
  const quiet = new FakeShard();
  const second = openFeed([quiet], { mode: 'longpoll', timeoutMs: 5000 });
  quiet.append('early', 'index', false);
  const started = Date.now();
  const rest = await bodyOf(second.feed);
  assert.ok(Date.now() - started < 2000);
  assert.deepEqual((JSON.parse(rest) as { results: Array<{ id: string }> }).results.map((result) => result.id), ['early']);
});

test('a longpoll timeout answers no results and the cursor it was given', async () => {
  const shards = [new FakeShard(), new FakeShard()];
  shards[0]!.append('a');
  const { feed } = openFeed(shards, { mode: 'longpoll', timeoutMs: 50 }, [1, 0]);
  const parsed = JSON.parse(await bodyOf(feed)) as { results: unknown[]; last_seq: string };
  assert.deepEqual(parsed.results, []);
  assert.equal(parsed.last_seq, feed.lastSeq);
  assert.match(parsed.last_seq, /^1-/);
});

test('continuous streams changes and heartbeats, ends at the limit; finish() ends it cleanly', async () => {
  const shard = new FakeShard();
  const { feed } = openFeed([shard], { mode: 'continuous', heartbeatMs: 20, limit: 2 });
  const chunks = reader(feed);
  assert.equal(await chunks.next(), '\n');
  shard.append('one');
  shard.append('two', 'delete');
  const lines = (await chunks.rest()).split('\n').filter((line) => line !== '');
  assert.deepEqual(lines.slice(0, 2).map((line) => (JSON.parse(line) as { id: string }).id), ['one', 'two']);
  assert.equal((JSON.parse(lines[1]!) as { deleted: boolean }).deleted, true);
  assert.deepEqual(JSON.parse(lines[2]!), { last_seq: feed.lastSeq, pending: 0 });

  const endless = openFeed([shard], { mode: 'continuous', heartbeatMs: 1000 }, [2]);
  const body = bodyOf(endless.feed);
  await new Promise((resolve) => setTimeout(resolve, 20));
  endless.feed.finish();
  assert.equal((await body).trim(), JSON.stringify({ last_seq: endless.feed.lastSeq, pending: 0 }));
  assert.deepEqual(endless.feed.heldResources(), { listeners: 0, timers: 0 });
});

test('a destroyed feed releases its listeners and timer at once', async () => {
  const shards = [new FakeShard(), new FakeShard()];
  const { feed, closed } = openFeed(shards, { mode: 'eventsource', timeoutMs: 60_000 });
  feed.resume();
  await new Promise((resolve) => setTimeout(resolve, 20));
  assert.deepEqual(feed.heldResources(), { listeners: 2, timers: 1 });
  feed.destroy();
  assert.deepEqual(feed.heldResources(), { listeners: 0, timers: 0 });
  assert.equal(shards[0]!.listeners.size + shards[1]!.listeners.size, 0);
  assert.ok(closed());
});

test('a continuous feed whose history is removed under it ends with an error line', async () => {
  const shard = new FakeShard();
  for (let index = 0; index < 5; index++) shard.append(`d${index}`);
  const { feed } = openFeed([shard], { mode: 'continuous', heartbeatMs: 1000 }, [2]);
  shard.firstSeq = 5;
  const lines = (await bodyOf(feed)).trim().split('\n');
  assert.equal(lines.length, 1);
  const error = JSON.parse(lines[0]!) as { error: string; reason: string };
  assert.equal(error.error, 'changes_expired');
  assert.match(error.reason, /since=now/);
});

test('eventsource writes data and id lines; seq_interval leaves seq out between', async () => {
  const shard = new FakeShard();
  for (let index = 0; index < 3; index++) shard.append(`e${index}`);
  const { feed } = openFeed([shard], { mode: 'eventsource', limit: 3, seqInterval: 2 });
  const events = (await bodyOf(feed)).split('\n\n').filter((event) => event !== '');
  assert.equal(events.length, 4);
  assert.match(events[0]!, /^data: \{"seq":null,"id":"e0"/);
  assert.ok(!events[0]!.includes('\nid: '));
  assert.match(events[1]!, /\nid: 2-/);
  assert.match(events[3]!, /^event: last_seq\n/);
});
