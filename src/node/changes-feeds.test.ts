import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { pino } from 'pino';
import { LocalShardHandle } from '../cluster/local-shard-handle.ts';
import { DEFAULT_ENGINE_SETTINGS } from '../engine/shard/settings.ts';
import { encodeCursor } from './changes-cursor.ts';
import { ChangeFeeds, shardSetFingerprint, type ChangeFeed, type ChangesRequest, type FeedSource } from './changes.ts';
import { NodeError } from './node-error.ts';

interface ChangesBody {
  results: Array<{ id: string; seq: string | null; doc?: { _id: string; title?: string } }>;
  last_seq: string;
  pending: number;
}

const logger = pino({ level: 'silent' });
let dataPath: string;
let shards: LocalShardHandle[];
let source: FeedSource;

before(async () => {
  dataPath = await mkdtemp(join(tmpdir(), 'trove-changes-feeds-'));
  shards = await Promise.all(
    ['feeds-a', 'feeds-b'].map((uuid, shard) =>
      LocalShardHandle.open(
        {
          dir: join(dataPath, uuid),
          uuid,
          mapping: { properties: { title: { type: 'text' } } },
          settings: { ...DEFAULT_ENGINE_SETTINGS, walSegmentBytes: 4096 },
          bindings: { collection: 'feeds', shard },
        },
        logger,
      ),
    ),
  );
  source = { fingerprint: shardSetFingerprint(shards.map((shard) => shard.uuid)), shards: () => shards };
  // Apart in time, so that commit order is the order written (equal commit times go by shard number).
  for (let index = 0; index < 10; index++) {
    await index_(index % 2, `d${index}`);
    await sleep(2);
  }
});

after(async () => {
  await Promise.all(shards.map((shard) => shard.close()));
  await rm(dataPath, { recursive: true, force: true });
});

async function index_(shard: number, id: string): Promise<void> {
  await shards[shard]!.write({ kind: 'index', id, source: { title: `title of ${id}` } });
}

async function bodyOf(feed: ChangeFeed): Promise<string> {
  let text = '';
  for await (const chunk of feed) text += String(chunk);
  return text;
}

async function feedBody(feeds: ChangeFeeds, request: ChangesRequest): Promise<ChangesBody> {
  return JSON.parse(await bodyOf(await feeds.open(source, request))) as ChangesBody;
}

async function until(condition: () => boolean, what: string): Promise<void> {
  for (let attempt = 0; attempt < 500 && !condition(); attempt++) await sleep(10);
  assert.ok(condition(), what);
}

function isNodeError(code: string): (error: unknown) => boolean {
  return (error: unknown) => error instanceof NodeError && error.code === code;
}

test('a feed over shard handles reads every change in commit order and resumes from its cursor', async () => {
  const feeds = new ChangeFeeds();
  const all = await feedBody(feeds, { since: '0', includeDocs: true });
  assert.deepEqual(all.results.map((result) => result.id), Array.from({ length: 10 }, (_, index) => `d${index}`));
  assert.equal(all.results[3]!.doc!.title, 'title of d3');
  assert.equal(all.pending, 0);

  const head = await feedBody(feeds, { limit: 4 });
  assert.deepEqual(head.results.map((result) => result.id), ['d0', 'd1', 'd2', 'd3']);
  assert.equal(head.pending, 6);
  const rest = await feedBody(feeds, { since: head.last_seq });
  assert.deepEqual(rest.results.map((result) => result.id), ['d4', 'd5', 'd6', 'd7', 'd8', 'd9']);
  assert.equal(rest.last_seq, all.last_seq);
  assert.deepEqual(feeds.heldResources(), { feeds: 0, listeners: 0, timers: 0 });
});

test('a longpoll waits on every shard with one timer, and wakes on a write to any shard', async () => {
  const feeds = new ChangeFeeds();
  const body = feedBody(feeds, { since: 'now', feed: 'longpoll', timeoutMs: 10_000 });
  await until(() => feeds.heldResources().timers === 1, 'the feed waits');
  assert.deepEqual(feeds.heldResources(), { feeds: 1, listeners: 2, timers: 1 });
  await index_(1, 'woke');
  assert.deepEqual((await body).results.map((result) => result.id), ['woke']);
  assert.deepEqual(feeds.heldResources(), { feeds: 0, listeners: 0, timers: 0 });
});

test('a feed whose client goes releases its shard waits and timer', async () => {
  const feeds = new ChangeFeeds();
  const opened = await Promise.all(
    (['longpoll', 'continuous', 'eventsource'] as const).map((feed) => feeds.open(source, { since: 'now', feed, heartbeatMs: feed === 'continuous' ? 60_000 : null })),
  );
  for (const feed of opened) feed.resume();
  await until(() => feeds.heldResources().timers === 3, 'every feed waits');
  assert.deepEqual(feeds.heldResources(), { feeds: 3, listeners: 6, timers: 3 });
  for (const feed of opened) feed.destroy();
  await until(() => feeds.heldResources().feeds === 0, 'feeds end when their clients go');
  assert.deepEqual(feeds.heldResources(), { feeds: 0, listeners: 0, timers: 0 });
});

test('a bad cursor is refused before the feed opens', async () => {
  const feeds = new ChangeFeeds();
  await assert.rejects(feeds.open(source, { since: 'banana' }), isNodeError('invalid_cursor'));
  const otherCollection = encodeCursor(shardSetFingerprint(['x', 'y']), [0, 0]);
  await assert.rejects(feeds.open(source, { since: otherCollection }), isNodeError('invalid_cursor'));
  const { durableSeq } = await shards[0]!.changeBounds();
  const ahead = encodeCursor(source.fingerprint, [durableSeq + 1, 0]);
  await assert.rejects(feeds.open(source, { since: ahead }), (error: unknown) => isNodeError('invalid_cursor')(error) && /ahead of shard \[0\]/.test((error as Error).message));
  assert.equal(feeds.heldResources().feeds, 0);
});

test('an unavailable shard fails the open as the source reports it', async () => {
  const unavailable: FeedSource = {
    fingerprint: source.fingerprint,
    shards: () => {
      throw new NodeError('shard_unavailable', '[feeds][1] primary shard is unassigned');
    },
  };
  await assert.rejects(new ChangeFeeds().open(unavailable, {}), isNodeError('shard_unavailable'));
});

test('finishAll ends an endless feed with a complete body and refuses new feeds, even one opening', async () => {
  const feeds = new ChangeFeeds();
  const endless = await feeds.open(source, { since: 'now', feed: 'continuous', heartbeatMs: 60_000 });
  const body = bodyOf(endless);
  await until(() => feeds.heldResources().timers === 1, 'the feed waits');
  const opening = feeds.open(source, { since: 'now', feed: 'continuous', heartbeatMs: 60_000 });
  feeds.finishAll();
  assert.deepEqual(JSON.parse((await body).trim()), { last_seq: endless.lastSeq, pending: 0 });
  await assert.rejects(opening, isNodeError('node_closed'));
  await assert.rejects(feeds.open(source, {}), isNodeError('node_closed'));
  assert.deepEqual(feeds.heldResources(), { feeds: 0, listeners: 0, timers: 0 });
});

// Last: it drops the history of shard 0.
test('a cursor whose history was dropped is refused as expired before the feed opens', async () => {
  const feeds = new ChangeFeeds();
  const origin = (await feedBody(feeds, { limit: 0 })).last_seq;
  for (let index = 0; index < 120; index++) await index_(0, `r${index}`);
  await shards[0]!.updateSettings({ changesRetentionMs: 0 });
  await shards[0]!.epoch();
  assert.ok((await shards[0]!.changeBounds()).firstSeq > 1);
  await assert.rejects(feeds.open(source, { since: origin }), (error: unknown) => isNodeError('changes_expired')(error) && /shard \[0\]/.test((error as Error).message));
  assert.equal(feeds.heldResources().feeds, 0);
  const rest = await feedBody(feeds, { since: '0' });
  assert.ok(rest.results.length > 0 && rest.results.length < 130);
});
