/**
 * The change feed against a real server: every write kind, the CouchDB layout, cursors and their
 * errors, longpoll, continuous and eventsource, and a consumer paging with small limits while
 * writers index, update and delete concurrently.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { call, ndjson, startServer, type TroveServer } from './harness.ts';
import { changes, openLineStream, readToEnd, summary, type ChangeResult } from './changes-client.ts';

let server: TroveServer;

const MAPPINGS = { properties: { tag: { type: 'keyword' }, body: { type: 'text' }, n: { type: 'long', inplace: true } } };

async function createCollection(name: string, shards: number): Promise<void> {
  const created = await call(server, 'PUT', `/${name}`, { json: { settings: { number_of_shards: shards }, mappings: MAPPINGS } });
  assert.equal(created.status, 200, created.text);
}

before(async () => {
  server = await startServer();
});

after(async () => {
  await server?.cleanup();
});

test('every write kind appears, in order, in the CouchDB layout with one result per line', async () => {
  await createCollection('kinds', 2);
  const writes: Array<[string, string, unknown?]> = [
    ['PUT', '/kinds/_doc/a', { tag: 'x', n: 1 }],
    ['PUT', '/kinds/_create/b', { tag: 'y', n: 2 }],
    ['POST', '/kinds/_update/a', { doc: { tag: 'z' } }],
    ['POST', '/kinds/_update/a', { ops: [{ op: 'incr', field: 'n', value: 5 }] }],
    ['PUT', '/kinds/_doc/b', { tag: 'full', n: 9 }],
    ['DELETE', '/kinds/_doc/a'],
    ['POST', '/kinds/_update/b', { doc: { tag: 'full' } }],
  ];
  for (const [method, path, json] of writes) await call(server, method, path, json === undefined ? {} : { json });
  const bulk = await call(server, 'POST', '/kinds/_bulk', {
    body: ndjson([
      { index: { _id: 'c' } },
      { tag: 'bulk', n: 3 },
      { create: { _id: 'd' } },
      { tag: 'bulk' },
      { update: { _id: 'c' } },
      { doc: { tag: 'bulk2' } },
      { delete: { _id: 'd' } },
    ]),
    headers: { 'content-type': 'application/x-ndjson' },
  });
  assert.equal(bulk.body.errors, false, bulk.text);

  const feed = await changes(server, 'kinds', { include_docs: 'true' });
  assert.deepEqual(
    feed.results.filter((result) => result.id === 'a').map(summary),
    ['a index 1', 'a update 2', 'a update 3', 'a delete 4'],
  );
  assert.deepEqual(feed.results.filter((result) => result.id === 'b').map(summary), ['b index 1', 'b index 2']);
  assert.deepEqual(feed.results.filter((result) => result.id === 'c').map(summary), ['c index 1', 'c update 2']);
  assert.deepEqual(feed.results.filter((result) => result.id === 'd').map(summary), ['d index 1', 'd delete 2']);
  assert.equal(feed.pending, 0);
  assert.equal(feed.results.length, 10);

  const lines = feed.text.split('\n');
  assert.equal(lines[0], '{"results":[');
  assert.equal(lines.length, 1 + 10 + 3);
  for (let index = 1; index <= 10; index++) JSON.parse(lines[index]!.replace(/,$/, ''));
  assert.equal(lines[11], '],');
  assert.equal(lines[12], `"last_seq":${JSON.stringify(feed.last_seq)},"pending":0}`);

  const deleted = feed.results.find((result) => result.op === 'delete' && result.id === 'a')!;
  assert.equal(deleted.deleted, true);
  assert.deepEqual(Object.keys(deleted).slice(0, 6), ['seq', 'id', 'op', 'version', 'changes', 'deleted']);
  assert.match(deleted.changes[0]!.rev, /^4-[0-9a-f]{16}$/);
  const lastB = feed.results.filter((result) => result.id === 'b').at(-1)!;
  assert.deepEqual(lastB.doc, { _id: 'b', _rev: lastB.changes[0]!.rev, tag: 'full', n: 9 });
  assert.equal(feed.results.at(-1)!.seq, feed.last_seq);

  const posted = await call(server, 'POST', '/kinds/_changes?limit=2', { json: {} });
  assert.equal(posted.status, 200, posted.text);
  assert.deepEqual(posted.body.results.map(summary), feed.results.slice(0, 2).map(summary));
  assert.equal(posted.body.pending, 8);
});

test('since=now starts at the end; seq_interval writes seq on every n-th result only', async () => {
  await createCollection('ends', 3);
  for (let index = 0; index < 6; index++) await call(server, 'PUT', `/ends/_doc/e${index}`, { json: { n: index } });
  const now = await changes(server, 'ends', { since: 'now' });
  assert.deepEqual(now.results, []);
  assert.equal(now.pending, 0);
  await call(server, 'PUT', '/ends/_doc/late', { json: { n: 99 } });
  assert.deepEqual((await changes(server, 'ends', { since: now.last_seq })).results.map(summary), ['late index 1']);

  const sparse = await changes(server, 'ends', { seq_interval: 3 });
  assert.deepEqual(sparse.results.map((result) => result.seq !== null), [false, false, true, false, false, true, false]);
  const full = await changes(server, 'ends', {});
  assert.equal(sparse.results[2]!.seq, full.results[2]!.seq);
  assert.equal(sparse.last_seq, full.last_seq);
});

test('bad cursors and parameters are 400 naming the problem; unknown collections 404', async () => {
  await createCollection('cursors', 2);
  await createCollection('others', 2);
  await call(server, 'PUT', '/cursors/_doc/1', { json: { n: 1 } });
  const other = (await changes(server, 'others', { since: 'now' })).last_seq;
  const own = (await changes(server, 'cursors', {})).last_seq;
  const cases: Array<[string, RegExp]> = [
    ['since=banana', /not a change-feed cursor/],
    [`since=${encodeURIComponent(other)}`, /issued for another collection/],
    [`since=${encodeURIComponent(own.slice(0, -3))}`, /checksum|truncated/],
    [`since=${encodeURIComponent(own.replace(/^\d+/, '1000'))}`, /leading number/],
    ['feed=sometimes', /feed/],
    ['limit=-1', /limit/],
    ['filter=_selector', /unrecognized parameter: \[filter\]/],
  ];
  for (const [query, reason] of cases) {
    const response = await call(server, 'GET', `/cursors/_changes?${query}`);
    assert.equal(response.status, 400, `${query}: ${response.text}`);
    assert.match(response.body.error.reason, reason, query);
  }
  const cursorError = await call(server, 'GET', '/cursors/_changes?since=banana');
  assert.equal(cursorError.body.error.type, 'invalid_cursor_exception');
  const body = await call(server, 'POST', '/cursors/_changes', { json: { selector: {} } });
  assert.equal(body.status, 400);
  assert.match(body.body.error.reason, /selector/);
  assert.equal((await call(server, 'GET', '/missing/_changes')).status, 404);
});

test('longpoll returns as soon as a change arrives, or at the timeout with the same last_seq', async () => {
  await createCollection('poll', 2);
  const start = await changes(server, 'poll', { since: 'now' });
  const began = Date.now();
  const timedOut = await changes(server, 'poll', { since: start.last_seq, feed: 'longpoll', timeout: 300 });
  assert.ok(Date.now() - began >= 280);
  assert.deepEqual(timedOut.results, []);
  assert.equal(timedOut.last_seq, start.last_seq);

  const waiting = changes(server, 'poll', { since: start.last_seq, feed: 'longpoll', timeout: 20_000 });
  await sleep(200);
  const written = Date.now();
  await call(server, 'PUT', '/poll/_doc/wake', { json: { n: 1 } });
  const woken = await waiting;
  assert.ok(Date.now() - written < 5000, 'longpoll answered late (it waited for its timeout)');
  assert.deepEqual(woken.results.map(summary), ['wake index 1']);

  const immediate = await changes(server, 'poll', { since: start.last_seq, feed: 'longpoll', timeout: 20_000 });
  assert.deepEqual(immediate.results.map(summary), ['wake index 1']);
});

test('continuous streams NDJSON with heartbeats and ends at the limit with last_seq', async () => {
  await createCollection('stream', 2);
  const start = (await changes(server, 'stream', { since: 'now' })).last_seq;
  const stream = await openLineStream(server, `/stream/_changes?feed=continuous&heartbeat=50&limit=3&since=${encodeURIComponent(start)}`);
  assert.equal(stream.status, 200);
  assert.match(stream.contentType, /^application\/x-ndjson/);
  assert.equal(await stream.nextLine(2000), '');
  const seen: ChangeResult[] = [];
  for (let index = 0; index < 3; index++) {
    await call(server, 'PUT', `/stream/_doc/s${index}`, { json: { n: index } });
    let line = await stream.nextLine();
    while (line === '') line = await stream.nextLine();
    seen.push(JSON.parse(line!) as ChangeResult);
  }
  assert.deepEqual(seen.map(summary), ['s0 index 1', 's1 index 1', 's2 index 1']);
  const last = JSON.parse((await stream.nextLine())!) as { last_seq: string; pending: number };
  assert.equal(last.last_seq, seen[2]!.seq);
  assert.equal(last.pending, 0);
  assert.equal(await stream.nextLine(), null);
});

test('eventsource sends Server-Sent Events and resumes from Last-Event-ID', async () => {
  await createCollection('events', 1);
  for (let index = 0; index < 3; index++) await call(server, 'PUT', `/events/_doc/v${index}`, { json: { n: index } });
  const stream = await openLineStream(server, '/events/_changes?feed=eventsource&limit=2');
  assert.match(stream.contentType, /^text\/event-stream/);
  const lines: string[] = [];
  for (let line = await stream.nextLine(); line !== null; line = await stream.nextLine()) lines.push(line);
  const data = lines.filter((line) => line.startsWith('data: {"seq"')).map((line) => JSON.parse(line.slice(6)) as ChangeResult);
  assert.deepEqual(data.map(summary), ['v0 index 1', 'v1 index 1']);
  assert.ok(lines.includes(`id: ${data[1]!.seq}`));
  const resumed = await openLineStream(server, '/events/_changes?feed=eventsource&limit=1', { 'last-event-id': data[1]!.seq! });
  const next = (await resumed.nextLine())!;
  assert.equal(summary(JSON.parse(next.slice(6)) as ChangeResult), 'v2 index 1');
  resumed.close();
});

/** One acknowledged write: what the feed must show for it. */
interface Acknowledged {
  id: string;
  op: ChangeResult['op'];
  version: number;
}

async function writer(writerId: number, operations: number, pauseMs: number): Promise<Acknowledged[]> {
  const done: Acknowledged[] = [];
  const exists = new Map<string, boolean>();
  let random = writerId * 7919 + 1;
  const next = (bound: number): number => (random = (random * 48_271) % 2_147_483_647) % bound;
  for (let step = 0; step < operations; step++) {
    const id = `w${writerId}-${next(6)}`;
    const present = exists.get(id) === true;
    const choice = present ? next(4) : 0;
    let response;
    let op: ChangeResult['op'];
    if (choice === 0) {
      response = await call(server, 'PUT', `/busy/_doc/${id}`, { json: { tag: `t${step}`, n: step, body: `writer ${writerId}` } });
      op = 'index';
    } else if (choice === 1) {
      response = await call(server, 'POST', `/busy/_update/${id}`, { json: { doc: { tag: `u${writerId}-${step}` } } });
      op = 'update';
    } else if (choice === 2) {
      response = await call(server, 'POST', `/busy/_update/${id}`, { json: { ops: [{ op: 'incr', field: 'n', value: 1 }] } });
      op = 'update';
    } else {
      response = await call(server, 'DELETE', `/busy/_doc/${id}`);
      op = 'delete';
    }
    assert.ok(response.status === 200 || response.status === 201, response.text);
    done.push({ id, op, version: response.body._version });
    exists.set(id, op !== 'delete');
    if (pauseMs > 0) await sleep(pauseMs);
  }
  return done;
}

test('a consumer paging with small limits during concurrent writes sees exactly the acknowledged writes', async () => {
  await createCollection('busy', 3);
  const start = (await changes(server, 'busy', { since: 'now' })).last_seq;
  let writing = true;
  const writers = Promise.all([writer(0, 40, 3), writer(1, 60, 0), writer(2, 60, 0)]).finally(() => (writing = false));
  const consumed: ChangeResult[] = [];
  let cursor = start;
  for (let round = 0; ; round++) {
    const page = await changes(server, 'busy', { since: cursor, limit: 5 + (round % 4) });
    consumed.push(...page.results);
    cursor = page.last_seq;
    if (!writing && page.results.length === 0 && page.pending === 0) break;
  }
  const acknowledged = (await writers).flat();

  assert.equal(consumed.length, acknowledged.length);
  const byDocument = (items: Array<{ id: string; op: string; version: number }>): Map<string, string[]> => {
    const map = new Map<string, string[]>();
    for (const item of items) map.set(item.id, [...(map.get(item.id) ?? []), `${item.op} ${item.version}`]);
    return map;
  };
  // Per document, the feed holds exactly the acknowledged writes, in the order they happened.
  const writerDocs = (writerId: number): Acknowledged[] => acknowledged.filter((item) => item.id.startsWith(`w${writerId}-`));
  const expected = byDocument([0, 1, 2].flatMap(writerDocs));
  assert.deepEqual(byDocument(consumed), expected);

  // Writer 0 waits between writes, so its writes (spread over the shards) come in commit order.
  assert.deepEqual(
    consumed.filter((result) => result.id.startsWith('w0-')).map(summary),
    writerDocs(0).map((item) => `${item.id} ${item.op} ${item.version}`),
  );

  // Resuming from any seq of a full read gives exactly the rest of it.
  const full = await readToEnd(server, 'busy', start, 1000);
  assert.equal(full.results.length, consumed.length);
  for (const index of [0, 17, 63, full.results.length - 2]) {
    const rest = await readToEnd(server, 'busy', full.results[index]!.seq!, 9);
    assert.deepEqual(rest.results.map(summary), full.results.slice(index + 1).map(summary));
  }
});
