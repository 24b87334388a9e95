/**
 * Dual write (OpenSearch's `index.dual_write.*`), through real HTTP: bulk items and single writes
 * of a collection with a target are repeated there (index, create, merged update, delete as a
 * tombstone or a delete), listed after their source item in a bulk answer; failed, conflicting and
 * noop writes send nothing; the setting is dynamic and validated.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { call, startServer, type TroveServer } from './harness.ts';

let server: TroveServer;
const NDJSON = { 'content-type': 'application/x-ndjson' };

before(async () => {
  server = await startServer();
});

after(async () => {
  await server?.cleanup();
});

async function pair(source: string, target: string, settings: Record<string, unknown> = {}): Promise<void> {
  const created = await call(server, 'PUT', `/${source}`, { json: { settings: { 'index.dual_write.index_name': target, ...settings } } });
  assert.equal(created.status, 200, created.text);
  assert.equal((await call(server, 'PUT', `/${target}`)).status, 200);
}

/** Lines given as strings are sent as they are (numbers beyond 2^53). */
async function bulkOf(lines: unknown[]): Promise<{ errors: boolean; items: Array<Record<string, Record<string, unknown>>> }> {
  const body = lines.map((line) => (typeof line === 'string' ? line : JSON.stringify(line))).join('\n') + '\n';
  const answer = await call(server, 'POST', '/_bulk?refresh=true', { body, headers: NDJSON });
  assert.equal(answer.status, 200, answer.text);
  return answer.body;
}

async function source(collection: string, id: string): Promise<unknown> {
  const got = await call(server, 'GET', `/${collection}/_doc/${encodeURIComponent(id)}`);
  return got.status === 404 ? null : got.body._source;
}

test('bulk index, create and auto-id items are mirrored and listed after their source item', async () => {
  await pair('dw-src', 'dw-dst');
  const answer = await bulkOf([
    { index: { _index: 'dw-src', _id: '1' } },
    '{"field1":"hello","big":9223372036854775807}',
    { create: { _index: 'dw-src', _id: '2' } },
    { field1: 'new' },
    { index: { _index: 'dw-src' } },
    { field1: 'auto' },
  ]);
  assert.equal(answer.errors, false, JSON.stringify(answer));
  assert.equal(answer.items.length, 6);
  assert.deepEqual(answer.items.map((item) => Object.keys(item)[0]), ['index', 'index', 'create', 'index', 'index', 'index']);
  assert.equal(answer.items[1].index._index, 'dw-dst');
  assert.equal(answer.items[1].index.result, 'created');
  assert.deepEqual(await source('dw-dst', '2'), { field1: 'new' });
  const raw = await call(server, 'GET', '/dw-dst/_doc/1');
  assert.match(raw.text, /"big":9223372036854775807/);
  const autoSource = answer.items[4].index._id as string;
  const autoTarget = answer.items[5].index._id as string;
  assert.notEqual(autoSource, autoTarget, 'a generated id is generated again on the target');
  assert.deepEqual(await source('dw-dst', autoTarget), { field1: 'auto' });
  assert.equal(await source('dw-dst', autoSource), null);
});

test('a failed create or a compare-and-set conflict sends nothing', async () => {
  await pair('dw-cas', 'dw-cas-dst');
  await bulkOf([{ index: { _index: 'dw-cas', _id: '1' } }, { v: 1 }]);
  assert.equal((await call(server, 'DELETE', '/dw-cas-dst/_doc/1?refresh=true')).status, 200);
  const answer = await bulkOf([
    { create: { _index: 'dw-cas', _id: '1' } },
    { v: 2 },
    { index: { _index: 'dw-cas', _id: '1', if_seq_no: 99, if_primary_term: 1 } },
    { v: 3 },
  ]);
  assert.equal(answer.errors, true);
  assert.equal(answer.items.length, 2);
  assert.equal(answer.items[0].create.status, 409);
  assert.equal(answer.items[1].index.status, 409);
  assert.equal(await source('dw-cas-dst', '1'), null);
});

test('an update sends the merged document; a noop update sends nothing', async () => {
  assert.equal((await call(server, 'PUT', '/dw-upd/_doc/1', { json: { field1: 'original', field2: 'keep' } })).status, 201);
  assert.equal((await call(server, 'PUT', '/dw-upd-dst')).status, 200);
  const set = await call(server, 'PUT', '/dw-upd/_settings', { json: { index: { dual_write: { index_name: 'dw-upd-dst' } } } });
  assert.equal(set.status, 200, set.text);
  const noop = await bulkOf([{ update: { _index: 'dw-upd', _id: '1' } }, { doc: { field1: 'original' }, detect_noop: true }]);
  assert.equal(noop.items.length, 1);
  assert.equal(noop.items[0].update.result, 'noop');
  assert.equal(await source('dw-upd-dst', '1'), null);
  const answer = await bulkOf([{ update: { _index: 'dw-upd', _id: '1' } }, { doc: { field1: 'updated' } }]);
  assert.equal(answer.items[0].index?.result, 'updated', JSON.stringify(answer));
  assert.equal(answer.items[1].index.result, 'created');
  assert.deepEqual(await source('dw-upd-dst', '1'), { field1: 'updated', field2: 'keep' });
  const upsert = await bulkOf([{ update: { _index: 'dw-upd', _id: '3' } }, { doc: { field1: 'new' }, doc_as_upsert: true }]);
  assert.equal(upsert.items[0].create.result, 'created', JSON.stringify(upsert));
  assert.deepEqual(await source('dw-upd-dst', '3'), { field1: 'new' });
  const single = await call(server, 'POST', '/dw-upd/_update/2', { json: { doc: { field1: 'upserted' }, doc_as_upsert: true } });
  assert.equal(single.status, 201, single.text);
  assert.deepEqual(await source('dw-upd-dst', '2'), { field1: 'upserted' });
});

test('deletes leave a tombstone by default, or delete on the target; a missing delete sends nothing', async () => {
  await pair('dw-soft', 'dw-soft-dst');
  await pair('dw-hard', 'dw-hard-dst', { 'index.dual_write.soft_deletes_enabled': false });
  await bulkOf([{ index: { _index: 'dw-soft', _id: '1' } }, { f: 1 }, { index: { _index: 'dw-hard', _id: '1' } }, { f: 1 }]);
  assert.equal((await call(server, 'DELETE', '/dw-soft/_doc/1?refresh=true')).status, 200);
  assert.deepEqual(await source('dw-soft-dst', '1'), { _tombstone: true });
  const answer = await bulkOf([{ delete: { _index: 'dw-hard', _id: '1' } }]);
  assert.equal(answer.items.length, 2, JSON.stringify(answer));
  assert.equal(answer.items[1].delete.result, 'deleted');
  assert.equal(await source('dw-hard-dst', '1'), null);
  assert.equal((await call(server, 'DELETE', '/dw-soft/_doc/missing')).status, 404);
  assert.equal(await source('dw-soft-dst', 'missing'), null);
});

test('single index writes are mirrored; the setting is dynamic, reset by null, shown and validated', async () => {
  await pair('dw-dyn', 'dw-dyn-dst');
  assert.equal((await call(server, 'PUT', '/dw-dyn/_doc/a', { json: { n: 1 } })).status, 201);
  assert.deepEqual(await source('dw-dyn-dst', 'a'), { n: 1 });
  const settings = await call(server, 'GET', '/dw-dyn/_settings?flat_settings=true&include_defaults=true');
  assert.equal(settings.body['dw-dyn'].settings['index.dual_write.index_name'], 'dw-dyn-dst');
  assert.equal(settings.body['dw-dyn'].defaults['index.dual_write.soft_deletes_enabled'], 'true');
  assert.equal((await call(server, 'PUT', '/dw-dyn/_settings', { json: { 'index.dual_write.index_name': null } })).status, 200);
  assert.equal((await call(server, 'PUT', '/dw-dyn/_doc/b', { json: { n: 2 } })).status, 201);
  assert.equal(await source('dw-dyn-dst', 'b'), null);
  const bad = await call(server, 'PUT', '/dw-dyn/_settings', { json: { 'index.dual_write.index_name': 'Upper' } });
  assert.equal(bad.status, 400);
  assert.equal(bad.body.error.type, 'illegal_argument_exception');
  const badFlag = await call(server, 'PUT', '/dw-dyn/_settings', { json: { 'index.dual_write.soft_deletes_enabled': 'maybe' } });
  assert.equal(badFlag.status, 400);
  const plain = await bulkOf([{ index: { _index: 'dw-dyn', _id: 'c' } }, { n: 3 }]);
  assert.equal(plain.items.length, 1);
});
