/**
 * Change-feed resources and lifecycle, with the node in this process so that what a feed holds
 * can be inspected: clients that disconnect leave no listener or timer behind, a graceful stop
 * ends endless feeds with a complete body, the retention setting applies at runtime, and cursors
 * survive epochs, merges and a restart of the node.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { FastifyInstance } from 'fastify';
import { pino } from 'pino';
import { request } from 'undici';
import { buildServer } from '../src/api/server.ts';
import { loadConfig } from '../src/config/load-config.ts';
import type { ShardHandle } from '../src/cluster/shard-handle.ts';
import { NodeError } from '../src/node/node-error.ts';
import { NodeService, type ChangesRequest } from '../src/node/node-service.ts';
import { openLineStream, type ChangesBody } from './changes-client.ts';

const logger = pino({ level: 'silent' });
let dataPath: string;
let node: NodeService;
let app: FastifyInstance;
let url: string;

async function openNode(): Promise<NodeService> {
  const config = loadConfig({ flags: { 'path.data': dataPath, 'security.enabled': 'false', 'wal.segment_bytes': '4096', 'epoch.interval_ms': '3600000', 'node.shard_workers': process.env.TROVE_TEST_SHARD_WORKERS ?? '2' }, env: {} });
  const opened = await NodeService.open({ config, logger });
  await opened.register('http://127.0.0.1:0');
  return opened;
}

function shardsOf(collection: string): ShardHandle[] {
  return node.observability.hostedCollection(collection).shards.map((local) => local!.handle!);
}

async function indexMany(collection: string, prefix: string, count: number): Promise<void> {
  for (let index = 0; index < count; index++) await node.documents.index(collection, `${prefix}${index}`, { body: `text of ${prefix}${index}`, n: index });
}

/** Runs a feed in process and parses its body. */
async function feedBody(collection: string, params: ChangesRequest): Promise<ChangesBody> {
  let text = '';
  for await (const chunk of await node.changes.open(collection, params)) text += String(chunk);
  return JSON.parse(text) as ChangesBody;
}

function pendingTimeouts(): number {
  return process.getActiveResourcesInfo().filter((resource) => resource === 'Timeout').length;
}

async function until(condition: () => boolean, what: string): Promise<void> {
  for (let attempt = 0; attempt < 500 && !condition(); attempt++) await sleep(10);
  assert.ok(condition(), what);
}

before(async () => {
  dataPath = await mkdtemp(join(tmpdir(), 'trove-changes-'));
  node = await openNode();
  const config = node.config;
  app = await buildServer({ node, config, logger });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const address = app.server.address();
  url = `http://127.0.0.1:${typeof address === 'object' && address !== null ? address.port : 0}`;
  await node.collections.createCollection('life', { settings: { number_of_shards: 2 } });
  await indexMany('life', 'l', 10);
});

after(async () => {
  await app?.close();
  await node?.close();
  await rm(dataPath, { recursive: true, force: true });
});

/** Counts the change waits outstanding on the shards of a collection. */
function countSubscriptions(collection: string): () => number {
  let active = 0;
  for (const shard of shardsOf(collection)) {
    const wait = shard.waitForChanges.bind(shard);
    shard.waitForChanges = (afterSeq, timeoutMs, signal) => {
      active++;
      return wait(afterSeq, timeoutMs, signal).finally(() => active--);
    };
  }
  return () => active;
}

test('clients that disconnect leave no feed, listener or timer behind', async () => {
  const baseline = pendingTimeouts();
  const subscriptions = countSubscriptions('life');
  const controllers: AbortController[] = [];
  const open = async (query: string): Promise<void> => {
    const controller = new AbortController();
    controllers.push(controller);
    const response = await request(`${url}/life/_changes?since=now&${query}`, { signal: controller.signal, method: 'POST', body: '{}', headers: { 'content-type': 'application/json' } });
    assert.equal(response.statusCode, 200);
    response.body.on('error', () => undefined);
  };
  await open('feed=longpoll&timeout=60000');
  await open('feed=longpoll&timeout=60000&heartbeat=200');
  await open('feed=continuous&heartbeat=100');
  await open('feed=eventsource&timeout=60000');
  await until(() => node.changes.changeFeeds.heldResources().timers === 4, 'every feed waits');
  assert.deepEqual(node.changes.changeFeeds.heldResources(), { feeds: 4, listeners: 8, timers: 4 });
  assert.equal(subscriptions(), 8);
  assert.ok(pendingTimeouts() >= baseline + 4);

  for (const controller of controllers) controller.abort();
  await until(() => node.changes.changeFeeds.heldResources().feeds === 0, 'feeds end when their clients go');
  assert.deepEqual(node.changes.changeFeeds.heldResources(), { feeds: 0, listeners: 0, timers: 0 });
  await until(() => subscriptions() === 0, 'every shard wait ended');
  await until(() => pendingTimeouts() <= baseline, 'feed timers are cleared');
});

test('a feed whose client reads slowly is held back, not buffered without bound', async () => {
  const filler = 'x'.repeat(4000);
  const items = Array.from({ length: 400 }, (_, index) => ({ action: 'index' as const, collection: 'life', id: `big${index}`, body: { body: filler, n: index } }));
  await node.documents.bulk(items);
  const feed = await node.changes.open('life', { since: '0', includeDocs: true });
  feed.once('readable', () => undefined);
  await sleep(100);
  // The whole body is over 1.6 MB; only about one chunk is produced ahead of the reader.
  assert.ok(feed.readableLength > 0 && feed.readableLength < 256 * 1024, `buffered ${feed.readableLength} bytes`);
  feed.destroy();
  await until(() => node.changes.changeFeeds.heldResources().feeds === 0, 'a destroyed feed is released');
});

test('changes.retention_secs applies at runtime: history kept through epochs, then expired', async () => {
  await node.collections.createCollection('retained', { settings: { number_of_shards: 1 } });
  const origin = (await feedBody('retained', { since: 'now' })).last_seq;
  await indexMany('retained', 'r', 120);
  const [shard] = shardsOf('retained');
  await shard!.epoch();
  assert.ok((await shard!.stats()).checkpointSeq >= 120);
  assert.equal((await feedBody('retained', { since: origin })).results.length, 120);

  node.observability.applySettings({ 'changes.retention_secs': 0 });
  await shard!.epoch();
  await assert.rejects(
    node.changes.open('retained', { since: origin }),
    (error: unknown) => error instanceof NodeError && error.code === 'changes_expired',
  );
  const rest = await feedBody('retained', { since: '0' });
  assert.ok(rest.results.length < 120 && rest.results.length > 0);
  node.observability.applySettings({ 'changes.retention_secs': 3600 });
});

test('cursors survive epochs, merges and a restart of the node', async () => {
  await node.collections.createCollection('merged', { settings: { number_of_shards: 3 } });
  await indexMany('merged', 'm', 60);
  const first = await feedBody('merged', { limit: 25 });
  for (const shard of shardsOf('merged')) await shard.epoch();
  await indexMany('merged', 'n', 30);
  for (const shard of shardsOf('merged')) await shard.forceMerge({});
  const rest = await feedBody('merged', { since: first.last_seq });
  assert.equal(first.results.length + rest.results.length, 90);

  await app.close();
  await node.close();
  node = await openNode();
  app = await buildServer({ node, config: node.config, logger });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const address = app.server.address();
  url = `http://127.0.0.1:${typeof address === 'object' && address !== null ? address.port : 0}`;
  const resumed = await feedBody('merged', { since: first.last_seq });
  assert.deepEqual(resumed.results.map((result) => result.id), rest.results.map((result) => result.id));
  assert.equal(resumed.last_seq, rest.last_seq);
});

test('a graceful stop ends an endless feed with a complete body', async () => {
  const stream = await openLineStream({ url }, '/life/_changes?feed=continuous&heartbeat=50&since=now');
  assert.equal(await stream.nextLine(), '');
  await until(() => node.changes.changeFeeds.heldResources().feeds === 1, 'the feed is open');
  const began = Date.now();
  await app.close();
  assert.ok(Date.now() - began < 5000, 'the stop waited for the feed');
  let line = await stream.nextLine();
  while (line === '') line = await stream.nextLine();
  assert.match(line!, /^\{"last_seq":"[^"]+","pending":0\}$/);
  assert.equal(await stream.nextLine(), null);
  await assert.rejects(node.changes.open('life', {}), (error: unknown) => error instanceof NodeError && error.code === 'node_closed');
});
