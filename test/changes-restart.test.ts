/**
 * The change feed across a kill -9 and restart (resume from a cursor: nothing acknowledged lost,
 * nothing repeated; history kept through epochs), and retention: a cursor older than what is
 * retained gets 410 `changes_expired`.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { call, ndjson, startServer, type TroveServer } from './harness.ts';
import { changes, readToEnd, type ChangeResult } from './changes-client.ts';

/** Small log files and frequent epochs, so that the log rotates and checkpoints pass it. */
const CHURN = { 'wal.segment_bytes': '4096', 'epoch.max_docs': '50', 'epoch.interval_ms': '100' };

async function bulkIndex(server: TroveServer, collection: string, ids: string[]): Promise<string[]> {
  const lines: unknown[] = [];
  for (const id of ids) lines.push({ index: { _id: id } }, { body: `document ${id} with some words to fill the log`, id });
  const response = await call(server, 'POST', `/${collection}/_bulk`, { body: ndjson(lines), headers: { 'content-type': 'application/x-ndjson' } });
  if (response.status !== 200) return [];
  return response.body.items.filter((item: { index: { status: number } }) => item.index.status === 201).map((item: { index: { _id: string } }) => item.index._id);
}

function range(prefix: string, from: number, count: number): string[] {
  return Array.from({ length: count }, (_, index) => `${prefix}${from + index}`);
}

test('a consumer resumes after kill -9 and restart with nothing lost and nothing repeated', async () => {
  const server = await startServer({ settings: CHURN });
  try {
    assert.equal((await call(server, 'PUT', '/durable', { json: { settings: { number_of_shards: 3 } } })).status, 200);
    const origin = (await changes(server, 'durable', { since: 'now' })).last_seq;
    const acknowledged = new Set<string>();
    for (let batch = 0; batch < 6; batch++) for (const id of await bulkIndex(server, 'durable', range('a', batch * 50, 50))) acknowledged.add(id);
    const before = await changes(server, 'durable', { since: origin, limit: 120 });
    assert.equal(before.results.length, 120);

    let writing = true;
    const writer = (async () => {
      for (let batch = 0; writing; batch++) {
        try {
          for (const id of await bulkIndex(server, 'durable', range(`b${batch}-`, 0, 40))) acknowledged.add(id);
        } catch {
          return;
        }
      }
    })();
    await sleep(400);
    await server.kill('SIGKILL');
    writing = false;
    await writer;
    await server.restart();

    const after = await readToEnd(server, 'durable', before.last_seq, 70);
    const seen = [...before.results, ...after.results].map((result: ChangeResult) => result.id);
    assert.equal(new Set(seen).size, seen.length, 'a change was delivered twice');
    for (const id of acknowledged) assert.ok(seen.includes(id), `acknowledged write ${id} is missing from the feed`);
    assert.ok(seen.every((id) => id.startsWith('a') || id.startsWith('b')));

    // Same cursor, same answer; and the history from before the epochs is still retained.
    const again = await readToEnd(server, 'durable', before.last_seq, 500);
    assert.deepEqual(again.results.map((result) => result.id), after.results.map((result) => result.id));
    const whole = await readToEnd(server, 'durable', origin, 1000);
    assert.deepEqual(whole.results.map((result) => result.id), seen);
  } finally {
    await server.cleanup();
  }
});

test('a cursor older than the retained history gets 410 changes_expired; since=0 and since=now still work', async () => {
  const server = await startServer({ settings: { ...CHURN, 'changes.retention_secs': '0' } });
  try {
    assert.equal((await call(server, 'PUT', '/short', { json: { settings: { number_of_shards: 2 } } })).status, 200);
    const origin = (await changes(server, 'short', { since: 'now' })).last_seq;
    for (let batch = 0; batch < 4; batch++) await bulkIndex(server, 'short', range(`s${batch}-`, 0, 50));
    let expired = await call(server, 'GET', `/short/_changes?since=${encodeURIComponent(origin)}`);
    for (let attempt = 0; attempt < 60 && expired.status === 200; attempt++) {
      await sleep(100);
      expired = await call(server, 'GET', `/short/_changes?since=${encodeURIComponent(origin)}`);
    }
    assert.equal(expired.status, 410, expired.text);
    assert.equal(expired.body.error.type, 'changes_expired_exception');
    assert.match(expired.body.error.reason, /no longer holds the changes after this cursor/);
    assert.match(expired.body.error.reason, /Resynchronise/);

    const oldest = await changes(server, 'short', { since: '0' });
    assert.ok(oldest.results.length < 200, 'nothing was removed');
    const now = await changes(server, 'short', { since: 'now' });
    await bulkIndex(server, 'short', ['fresh']);
    assert.deepEqual((await changes(server, 'short', { since: now.last_seq })).results.map((result) => result.id), ['fresh']);
  } finally {
    await server.cleanup();
  }
});
