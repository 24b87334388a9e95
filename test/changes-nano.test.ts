/**
 * A CouchDB client consumes a Trove collection's change feed unchanged: nano's `changes` call and
 * its changes reader in all three ways (`get`: batches until caught up, `start`: longpoll
 * forever, `spool`: one streamed response parsed line by line).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { EventEmitter } from 'node:events';
import nano from 'nano';
import { call, ndjson, startServer, type TroveServer } from './harness.ts';
import { changes, type ChangeResult } from './changes-client.ts';

let server: TroveServer;
const DOCS = 30;

/**
 * Collects a reader's batches until it emits `end`; resolves with them and the final seq. (`get`
 * ends with a longpoll that finds nothing and waits for its timeout, as against CouchDB.)
 */
function collect(reader: EventEmitter): Promise<{ batches: ChangeResult[][]; seqs: string[]; end: string }> {
  return new Promise((resolve, reject) => {
    const batches: ChangeResult[][] = [];
    const seqs: string[] = [];
    reader.on('batch', (batch: ChangeResult[]) => batches.push(batch));
    reader.on('seq', (seq: string) => seqs.push(seq));
    reader.on('error', reject);
    reader.on('end', (end: string) => resolve({ batches, seqs, end }));
  });
}

before(async () => {
  server = await startServer();
  assert.equal((await call(server, 'PUT', '/couch', { json: { settings: { number_of_shards: 3 } } })).status, 200);
  const lines: unknown[] = [];
  for (let index = 0; index < DOCS; index++) lines.push({ index: { _id: `doc${index}` } }, { n: index });
  await call(server, 'POST', '/couch/_bulk', { body: ndjson(lines), headers: { 'content-type': 'application/x-ndjson' } });
  await call(server, 'DELETE', '/couch/_doc/doc3');
});

after(async () => {
  await server?.cleanup();
});

test('nano db.changes reads the feed', async () => {
  const db = nano(server.url).use('couch');
  const response = await db.changes({ since: '0', limit: 5 });
  assert.equal(response.results.length, 5);
  assert.equal(typeof response.last_seq, 'string');
  assert.equal(response.pending, DOCS + 1 - 5);
});

test('changesReader.get pages through the whole feed in batches and stops when caught up', async () => {
  const db = nano(server.url).use('couch');
  const { batches, seqs, end } = await collect(db.changesReader.get({ since: 0, batchSize: 7, includeDocs: true, timeout: 300 }));
  assert.deepEqual(batches.map((batch) => batch.length), [7, 7, 7, 7, 3]);
  const results = batches.flat();
  assert.deepEqual(new Set(results.map((result) => result.id)).size, DOCS);
  assert.equal(results.at(-1)!.id, 'doc3');
  assert.equal(results.at(-1)!.deleted, true);
  assert.equal(results[0]!.doc!._id, results[0]!.id);
  const expected = await changes(server, 'couch', {});
  assert.equal(end, expected.last_seq);
  assert.equal(seqs.at(-1), expected.last_seq);
  assert.deepEqual(results.map((result) => result.seq), expected.results.map((result) => result.seq));
});

test('changesReader.start follows live writes by longpoll and stops cleanly', async () => {
  const db = nano(server.url).use('couch');
  const reader = db.changesReader.start({ since: 'now', batchSize: 5, timeout: 2000, fastChanges: true });
  const errors: unknown[] = [];
  reader.on('error', (error: unknown) => errors.push(error));
  const seen: string[] = [];
  const arrived = new Promise<void>((resolve) => {
    reader.on('change', (change: ChangeResult) => {
      seen.push(`${change.id} ${change.op}`);
      if (seen.length === 3) resolve();
    });
  });
  const ended = new Promise<void>((resolve) => reader.on('end', () => resolve()));
  await new Promise((resolve) => setTimeout(resolve, 300));
  await call(server, 'PUT', '/couch/_doc/live1', { json: { n: 1 } });
  await call(server, 'POST', '/couch/_update/live1', { json: { doc: { n: 2 } } });
  await call(server, 'DELETE', '/couch/_doc/live1');
  await arrived;
  assert.deepEqual(seen, ['live1 index', 'live1 update', 'live1 delete']);
  db.changesReader.stop();
  await ended;
  // Stopping aborts the pending longpoll request; nano reports that as an error event.
  assert.ok(errors.every((error) => /aborted/.test((error as Error).message)), String(errors));
});

test('changesReader.spool parses the streamed body line by line and finds last_seq', async () => {
  const db = nano(server.url).use('couch');
  const { batches, end } = await collect(db.changesReader.spool({ since: 0, batchSize: 10 }));
  const expected = await changes(server, 'couch', {});
  assert.equal(batches.flat().length, expected.results.length);
  assert.deepEqual(batches.flat().map((result) => result.id), expected.results.map((result) => result.id));
  assert.equal(end, expected.last_seq);
});
