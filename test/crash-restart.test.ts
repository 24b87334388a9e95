/**
 * Crash safety: several clients bulk-load (and update a counter) while the server is killed
 * with SIGKILL at a random moment; after a restart on the same data directory every write the
 * clients saw acknowledged is present and searchable. Repeated over a few rounds.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { call, ndjson, startServer, type TroveServer } from './harness.ts';

let server: TroveServer;
const ROUNDS = 3;
const WRITERS = 3;
const BATCH = 100;

before(async () => {
  server = await startServer({ settings: { 'epoch.max_docs': '700' } });
  const created = await call(server, 'PUT', '/crash', {
    json: {
      settings: { number_of_shards: 2 },
      mappings: { properties: { round: { type: 'keyword' }, body: { type: 'text' }, seq: { type: 'long' }, hits: { type: 'long', inplace: true } } },
    },
  });
  assert.equal(created.status, 200, created.text);
  const counter = await call(server, 'PUT', '/crash/_doc/counter', { json: { round: 'counter', hits: 0 } });
  assert.equal(counter.status, 201, counter.text);
});

after(async () => {
  await server?.cleanup();
});

/** Shared by the writers of a round: set `stopped` to end them; `batches` counts acknowledged bulks. */
interface LoadState {
  stopped: boolean;
  batches: number;
}

/** Bulk-loads until the server goes away; returns the ids whose items were acknowledged. */
async function bulkWriter(round: number, writer: number, stop: LoadState): Promise<string[]> {
  const acknowledged: string[] = [];
  for (let batch = 0; !stop.stopped; batch++) {
    const lines: unknown[] = [];
    for (let index = 0; index < BATCH; index++) {
      const seq = batch * BATCH + index;
      lines.push({ index: { _id: `r${round}-w${writer}-${seq}` } }, { round: `r${round}`, body: `crash round${round} writer${writer} item${seq}`, seq });
    }
    try {
      const response = await call(server, 'POST', '/crash/_bulk', { body: ndjson(lines), headers: { 'content-type': 'application/x-ndjson' } });
      if (response.status !== 200) return acknowledged;
      for (const item of response.body.items) {
        if (item.index.status === 201 || item.index.status === 200) acknowledged.push(item.index._id);
      }
      stop.batches++;
    } catch {
      return acknowledged;
    }
  }
  return acknowledged;
}

/** Increments the counter one acknowledged update at a time; returns how many were acknowledged. */
async function counterWriter(stop: LoadState): Promise<number> {
  let acknowledged = 0;
  while (!stop.stopped) {
    try {
      const response = await call(server, 'POST', '/crash/_update/counter', { json: { ops: [{ op: 'incr', field: 'hits', value: 1 }] } });
      if (response.status !== 200) return acknowledged;
      acknowledged++;
    } catch {
      return acknowledged;
    }
  }
  return acknowledged;
}

async function missingIds(ids: string[]): Promise<string[]> {
  const missing: string[] = [];
  for (let start = 0; start < ids.length; start += 1000) {
    const chunk = ids.slice(start, start + 1000);
    const response = await call(server, 'POST', '/crash/_mget', { json: { ids: chunk } });
    assert.equal(response.status, 200, response.text.slice(0, 300));
    for (const doc of response.body.docs) if (doc.found !== true) missing.push(doc._id);
  }
  return missing;
}

test('every acknowledged write survives kill -9', async (t) => {
  const allAcknowledged: string[] = [];
  let counterAcknowledged = 0;
  for (let round = 0; round < ROUNDS; round++) {
    const stop: LoadState = { stopped: false, batches: 0 };
    const writers = Array.from({ length: WRITERS }, (_, writer) => bulkWriter(round, writer, stop));
    const counter = counterWriter(stop);
    // Kill at a random moment once the load is flowing (a loaded machine can be slow to start).
    for (const deadline = Date.now() + 60_000; stop.batches < WRITERS && Date.now() < deadline; ) await sleep(10);
    await sleep(Math.floor(Math.random() * 800));
    await server.kill('SIGKILL');
    stop.stopped = true;
    const results = await Promise.all(writers);
    const roundAcknowledged = results.flat();
    counterAcknowledged += await counter;
    assert.ok(roundAcknowledged.length > 0, `round ${round}: the load must have acknowledged some writes before the kill`);
    allAcknowledged.push(...roundAcknowledged);
    t.diagnostic(`round ${round}: ${roundAcknowledged.length} documents and ${counterAcknowledged} counter updates acknowledged before kill -9`);

    await server.restart();
    assert.deepEqual(await missingIds(allAcknowledged), [], `round ${round}: acknowledged documents lost`);

    const searched = await call(server, 'POST', '/crash/_count', { json: { query: { term: { round: `r${round}` } } } });
    assert.ok(searched.body.count >= roundAcknowledged.length, `round ${round}: ${searched.body.count} < ${roundAcknowledged.length}`);
    const sample = roundAcknowledged[Math.floor(Math.random() * roundAcknowledged.length)]!;
    const [, writer, seq] = sample.split('-');
    const phrase = await call(server, 'POST', '/crash/_search', {
      json: { query: { match_phrase: { body: `round${round} ${writer!.replace('w', 'writer')} item${seq}` } } },
    });
    assert.ok(phrase.body.hits.hits.some((hit: { _id: string }) => hit._id === sample), `round ${round}: ${sample} not searchable`);

    const counterDoc = await call(server, 'GET', '/crash/_doc/counter');
    const hits = counterDoc.body._source.hits as number;
    assert.ok(hits >= counterAcknowledged && hits <= counterAcknowledged + 1, `counter ${hits} vs acknowledged ${counterAcknowledged}`);
    counterAcknowledged = hits;
  }
  const total = await call(server, 'GET', '/crash/_count');
  assert.ok(total.body.count >= allAcknowledged.length + 1);
});
