import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setImmediate as tick } from 'node:timers/promises';
import type { ChangeBounds } from '../cluster/shard-handle.ts';
import type { ChangeEntry, StoredDocument } from '../engine/shard/operations.ts';
import { ChangeFeed, type ChangeFeedOptions, type FeedShardHandle } from './changes-feed.ts';
import { ChangeMerge } from './changes-merge.ts';

/** An in-memory shard handle: appended changes become durable at once; `notify` wakes its waits. */
class FakeShard implements FeedShardHandle {
  readonly entries: ChangeEntry[] = [];
  /** One per outstanding `waitForChanges`: called with the durable seq after each commit. */
  readonly listeners = new Set<(durableSeq: number) => void>();
  firstSeq = 1;
  durableSeq = 0;
  /** How long an aborted wait takes to settle (a handle in another thread answers later). */
  abortDelayMs = 0;

  append(id: string, op: ChangeEntry['op'] = 'index', notify = true): void {
    this.entries.push({ seq: this.entries.length + 1, timestamp: Date.now(), op, id, version: 1 });
    this.durableSeq = this.entries.length;
    if (notify) for (const listener of [...this.listeners]) listener(this.durableSeq);
  }

  async readChanges(afterSeq: number, limit: number): Promise<ChangeEntry[]> {
    const from = Math.max(afterSeq + 1, this.firstSeq);
    return this.entries.filter((entry) => entry.seq >= from && entry.seq <= this.durableSeq).slice(0, limit);
  }

  async changeBounds(): Promise<ChangeBounds> {
    return this.bounds();
  }

  async get(id: string): Promise<StoredDocument | null> {
    return { id, source: { name: id }, seqNo: 1, version: 1, primaryTerm: 1 };
  }

  waitForChanges(afterSeq: number, timeoutMs: number, signal?: AbortSignal): Promise<ChangeBounds> {
    if (this.durableSeq > afterSeq || timeoutMs <= 0 || signal?.aborted) return Promise.resolve(this.bounds());
    return new Promise((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        this.listeners.delete(onCommit);
        signal?.removeEventListener('abort', aborted);
        resolve(this.bounds());
      };
      const aborted = (): void => {
        if (this.abortDelayMs === 0) done();
        else setTimeout(done, this.abortDelayMs);
      };
      const onCommit = (durableSeq: number): void => {
        if (durableSeq > afterSeq) done();
      };
      const timer = setTimeout(done, timeoutMs);
      this.listeners.add(onCommit);
      signal?.addEventListener('abort', aborted, { once: true });
    });
  }

  private bounds(): ChangeBounds {
    return { firstSeq: this.firstSeq, durableSeq: this.durableSeq };
  }
}

/** Opens a feed as `ChangeFeeds.open` does: the durable seqs are read when it opens. */
async function openFeed(
  shards: FakeShard[],
  options: Partial<ChangeFeedOptions>,
  positions = shards.map(() => 0),
): Promise<{ feed: ChangeFeed; closed: () => boolean }> {
  let closed = false;
  const durable = await Promise.all(shards.map(async (shard) => (await shard.changeBounds()).durableSeq));
  const feed = new ChangeFeed(
    { shards: () => shards, fingerprint: 42 },
    new ChangeMerge(positions, 100),
    durable,
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
  const { feed, closed } = await openFeed([shard], { includeDocs: true });
  shard.append('late');
  const parsed = JSON.parse(await bodyOf(feed)) as { results: Array<{ id: string; doc: { _id: string } }>; pending: number };
  assert.deepEqual(parsed.results.map((result) => result.id), ['a', 'b']);
  assert.equal(parsed.results[0]!.doc._id, 'a');
  assert.equal(parsed.pending, 1);
  assert.ok(closed());
});

test('a longpoll wakes on a commit, and answers at once for a commit made before it waits', async () => {
  const shard = new FakeShard();
  const { feed } = await openFeed([shard], { mode: 'longpoll' });
  const body = bodyOf(feed);
  await new Promise((resolve) => setTimeout(resolve, 20));
  assert.equal(shard.listeners.size, 1);
  assert.deepEqual(feed.heldResources(), { listeners: 1, timers: 1 });
  shard.append('x');
  assert.deepEqual((JSON.parse(await body) as { results: Array<{ id: string }> }).results.map((result) => result.id), ['x']);
  assert.equal(shard.listeners.size, 0);
  assert.deepEqual(feed.heldResources(), { listeners: 0, timers: 0 });

  // A change committed after the longpoll opened, before it started to wait, is answered at once.
  const quiet = new FakeShard();
  const second = await openFeed([quiet], { mode: 'longpoll', timeoutMs: 5000 });
  quiet.append('early', 'index', false);
  const started = Date.now();
  const rest = await bodyOf(second.feed);
  assert.ok(Date.now() - started < 2000);
  assert.deepEqual((JSON.parse(rest) as { results: Array<{ id: string }> }).results.map((result) => result.id), ['early']);
});

test('a wait woken by one shard ends the waits of the others', async () => {
  const shards = [new FakeShard(), new FakeShard(), new FakeShard()];
  const { feed } = await openFeed(shards, { mode: 'longpoll' });
  const body = bodyOf(feed);
  await new Promise((resolve) => setTimeout(resolve, 20));
  assert.deepEqual(shards.map((shard) => shard.listeners.size), [1, 1, 1]);
  shards[1]!.append('y');
  assert.deepEqual((JSON.parse(await body) as { results: Array<{ id: string }> }).results.map((result) => result.id), ['y']);
  assert.deepEqual(shards.map((shard) => shard.listeners.size), [0, 0, 0]);
  assert.deepEqual(feed.heldResources(), { listeners: 0, timers: 0 });
});

test('a longpoll timeout answers no results and the cursor it was given', async () => {
  const shards = [new FakeShard(), new FakeShard()];
  shards[0]!.append('a');
  const { feed } = await openFeed(shards, { mode: 'longpoll', timeoutMs: 50 }, [1, 0]);
  const parsed = JSON.parse(await bodyOf(feed)) as { results: unknown[]; last_seq: string };
  assert.deepEqual(parsed.results, []);
  assert.equal(parsed.last_seq, feed.lastSeq);
  assert.match(parsed.last_seq, /^1-/);
  assert.equal(shards[0]!.listeners.size + shards[1]!.listeners.size, 0);
});

test('continuous streams changes and heartbeats, ends at the limit; finish() ends it cleanly', async () => {
  const shard = new FakeShard();
  const { feed } = await openFeed([shard], { mode: 'continuous', heartbeatMs: 20, limit: 2 });
  const chunks = reader(feed);
  assert.equal(await chunks.next(), '\n');
  shard.append('one');
  shard.append('two', 'delete');
  const lines = (await chunks.rest()).split('\n').filter((line) => line !== '');
  assert.deepEqual(lines.slice(0, 2).map((line) => (JSON.parse(line) as { id: string }).id), ['one', 'two']);
  assert.equal((JSON.parse(lines[1]!) as { deleted: boolean }).deleted, true);
  assert.deepEqual(JSON.parse(lines[2]!), { last_seq: feed.lastSeq, pending: 0 });

  const endless = await openFeed([shard], { mode: 'continuous', heartbeatMs: 1000 }, [2]);
  const body = bodyOf(endless.feed);
  await new Promise((resolve) => setTimeout(resolve, 20));
  endless.feed.finish();
  assert.equal((await body).trim(), JSON.stringify({ last_seq: endless.feed.lastSeq, pending: 0 }));
  assert.deepEqual(endless.feed.heldResources(), { listeners: 0, timers: 0 });
  assert.equal(shard.listeners.size, 0);
  assert.ok(endless.closed());
});

test('a destroyed feed releases its waits and timer at once', async () => {
  const shards = [new FakeShard(), new FakeShard()];
  const { feed, closed } = await openFeed(shards, { mode: 'eventsource', timeoutMs: 60_000 });
  feed.resume();
  await new Promise((resolve) => setTimeout(resolve, 20));
  assert.deepEqual(feed.heldResources(), { listeners: 2, timers: 1 });
  feed.destroy();
  // The abort reaches every shard and clears the timer in the same turn...
  assert.equal(shards[0]!.listeners.size + shards[1]!.listeners.size, 0);
  assert.equal(feed.heldResources().timers, 0);
  // ...and the shards' waits settle as soon as their promises do.
  await tick();
  assert.deepEqual(feed.heldResources(), { listeners: 0, timers: 0 });
  assert.ok(closed());
});

test('a destroyed feed counts as open until the waits of its shards have settled', async () => {
  const shards = [new FakeShard(), new FakeShard()];
  shards[1]!.abortDelayMs = 50;
  const { feed, closed } = await openFeed(shards, { mode: 'continuous', heartbeatMs: 60_000 });
  feed.resume();
  await new Promise((resolve) => setTimeout(resolve, 20));
  feed.destroy();
  await tick();
  assert.deepEqual(feed.heldResources(), { listeners: 1, timers: 0 });
  assert.equal(closed(), false);
  await new Promise((resolve) => setTimeout(resolve, 100));
  assert.deepEqual(feed.heldResources(), { listeners: 0, timers: 0 });
  assert.ok(closed());
});

test('a continuous feed whose history is removed under it ends with an error line', async () => {
  const shard = new FakeShard();
  for (let index = 0; index < 5; index++) shard.append(`d${index}`);
  const { feed } = await openFeed([shard], { mode: 'continuous', heartbeatMs: 1000 }, [2]);
  shard.firstSeq = 5;
  const lines = (await bodyOf(feed)).trim().split('\n');
  assert.equal(lines.length, 1);
  const error = JSON.parse(lines[0]!) as { error: string; reason: string };
  assert.equal(error.error, 'changes_expired');
  assert.match(error.reason, /since=now/);
});

test('a shard wait that fails ends a continuous feed with an error line and no wait left', async () => {
  const shards = [new FakeShard(), new FakeShard()];
  const { feed } = await openFeed(shards, { mode: 'continuous', heartbeatMs: 60_000 });
  shards[1]!.waitForChanges = () => Promise.reject(Object.assign(new Error('the shard closed'), { code: 'shard_closed' }));
  const lines = (await bodyOf(feed)).trim().split('\n');
  assert.deepEqual(JSON.parse(lines[0]!), { error: 'shard_closed', reason: 'the shard closed' });
  assert.equal(shards[0]!.listeners.size, 0);
  assert.deepEqual(feed.heldResources(), { listeners: 0, timers: 0 });
});

test('eventsource writes data and id lines; seq_interval leaves seq out between', async () => {
  const shard = new FakeShard();
  for (let index = 0; index < 3; index++) shard.append(`e${index}`);
  const { feed } = await openFeed([shard], { mode: 'eventsource', limit: 3, seqInterval: 2 });
  const events = (await bodyOf(feed)).split('\n\n').filter((event) => event !== '');
  assert.equal(events.length, 4);
  assert.match(events[0]!, /^data: \{"seq":null,"id":"e0"/);
  assert.ok(!events[0]!.includes('\nid: '));
  assert.match(events[1]!, /\nid: 2-/);
  assert.match(events[3]!, /^event: last_seq\n/);
});
