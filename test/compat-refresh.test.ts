/**
 * OpenSearch's refresh model as an opt-in per collection (issue 17): with `index.visibility:
 * refresh`, searches, counts, `_msearch`, aggregations, scrolls and by-query selections read each
 * copy's last refreshed view; `_refresh`, `refresh=true`, `refresh=wait_for` and the periodic
 * `refresh_interval` move it; realtime gets read the latest, `realtime=false` the view. In the
 * default mode (`immediate`) every acknowledged write is searchable at once. Through real HTTP.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { call, ndjson, startServer, until, type TroveServer } from './harness.ts';

let server: TroveServer;
const NDJSON = { 'content-type': 'application/x-ndjson' };
const MAPPINGS = { properties: { title: { type: 'text' }, tag: { type: 'keyword' }, n: { type: 'long' } } };

before(async () => {
  server = await startServer();
});

after(async () => {
  await server?.cleanup();
});

async function create(name: string, settings: Record<string, unknown>): Promise<void> {
  const created = await call(server, 'PUT', `/${name}`, { json: { settings, mappings: MAPPINGS } });
  assert.equal(created.status, 200, created.text);
}

async function hits(name: string, query: unknown = { match_all: {} }): Promise<string[]> {
  const response = await call(server, 'POST', `/${name}/_search`, { json: { query, size: 100, sort: ['_doc'] } });
  assert.equal(response.status, 200, response.text);
  return (response.body.hits.hits as Array<{ _id: string }>).map((hit) => hit._id).sort();
}

async function count(name: string): Promise<number> {
  const response = await call(server, 'POST', `/${name}/_count`, { json: { query: { match_all: {} } } });
  assert.equal(response.status, 200, response.text);
  return response.body.count;
}

async function put(name: string, id: string, source: unknown, query = ''): Promise<any> {
  const response = await call(server, 'PUT', `/${name}/_doc/${id}${query}`, { json: source });
  assert.ok(response.status === 200 || response.status === 201, response.text);
  return response.body;
}

test('by default (visibility immediate) every acknowledged write is searchable at once', async () => {
  await create('imm', {});
  await put('imm', 'a', { title: 'alpha', n: 1 });
  assert.deepEqual(await hits('imm'), ['a']);
  await call(server, 'DELETE', '/imm/_doc/a');
  assert.equal(await count('imm'), 0);
  const settings = await call(server, 'GET', '/imm/_settings?include_defaults=true&flat_settings=true');
  assert.equal(settings.body.imm.defaults['index.visibility'], 'immediate');
  assert.equal(settings.body.imm.defaults['index.refresh_interval'], '1s');
  assert.equal(settings.body.imm.settings['index.visibility'], undefined);
  const refreshed = await call(server, 'POST', '/imm/_refresh');
  assert.deepEqual(refreshed.body, { _shards: { total: 1, successful: 1, failed: 0 } });
  const waited = await put('imm', 'b', { n: 2 }, '?refresh=wait_for');
  assert.equal(waited.forced_refresh, undefined, 'wait_for answers at once: the write is already visible');
  assert.equal(await count('imm'), 1);
  // A replica that one node cannot place counts in total, not in successful (as Elasticsearch).
  await create('imm-rep', { number_of_replicas: 1 });
  assert.deepEqual((await call(server, 'POST', '/imm-rep/_refresh')).body, { _shards: { total: 2, successful: 1, failed: 0 } });
  assert.equal((await call(server, 'POST', '/nowhere/_refresh')).status, 404);
  assert.equal((await call(server, 'POST', '/nowhere/_refresh?ignore_unavailable=true')).status, 200);
});

test('index.visibility is checked, shown, dynamic, and reset by null', async () => {
  const bad = await call(server, 'PUT', '/vis-bad', { json: { settings: { index: { visibility: 'sometimes' } } } });
  assert.equal(bad.status, 400);
  assert.equal(bad.body.error.type, 'illegal_argument_exception');
  assert.match(bad.body.error.reason, /\[index\.visibility\].*must be one of \[immediate, refresh\]/);
  await create('vis', { 'index.visibility': 'refresh', 'index.refresh_interval': '-1' });
  assert.equal((await call(server, 'GET', '/vis/_settings')).body.vis.settings.index.visibility, 'refresh');
  await put('vis', 'a', { n: 1 });
  assert.equal(await count('vis'), 0);
  assert.equal((await call(server, 'PUT', '/vis/_settings', { json: { index: { visibility: 'immediate' } } })).status, 200);
  assert.equal(await count('vis'), 1, 'immediate again: every write is visible');
  assert.equal((await call(server, 'PUT', '/vis/_settings', { json: { 'index.visibility': 'refresh' } })).status, 200);
  await put('vis', 'b', { n: 2 });
  assert.equal(await count('vis'), 1, 'refresh mode again: the view of the switch');
  const badUpdate = await call(server, 'PUT', '/vis/_settings', { json: { 'index.visibility': 'later' } });
  assert.equal(badUpdate.status, 400);
  assert.equal((await call(server, 'PUT', '/vis/_settings', { json: { 'index.visibility': null } })).status, 200);
  assert.equal(await count('vis'), 2);
  assert.equal((await call(server, 'GET', '/vis/_settings')).body.vis.settings.index.visibility, undefined);
});

test('visibility refresh: writes, updates and deletes stay hidden from search, count, msearch and aggregations until _refresh', async () => {
  await create('rf', { number_of_shards: 2, visibility: 'refresh', refresh_interval: '-1' });
  await put('rf', 'a', { title: 'alpha', tag: 'x', n: 1 });
  await put('rf', 'b', { title: 'beta', tag: 'y', n: 2 });
  assert.deepEqual(await hits('rf'), []);
  assert.equal(await count('rf'), 0);
  const refreshed = await call(server, 'POST', '/rf/_refresh');
  assert.deepEqual(refreshed.body, { _shards: { total: 2, successful: 2, failed: 0 } });
  assert.deepEqual(await hits('rf'), ['a', 'b']);

  await put('rf', 'a', { title: 'gamma', tag: 'z', n: 10 });
  assert.equal((await call(server, 'DELETE', '/rf/_doc/b')).status, 200);
  const updated = await call(server, 'POST', '/rf/_update/c', { json: { doc: { title: 'delta', tag: 'x', n: 3 }, doc_as_upsert: true } });
  assert.equal(updated.status, 201, updated.text);
  assert.deepEqual(await hits('rf'), ['a', 'b']);
  assert.deepEqual(await hits('rf', { match: { title: 'alpha' } }), ['a'], 'the old content of a is what searches see');
  assert.deepEqual(await hits('rf', { match: { title: 'gamma' } }), []);
  const aggregated = await call(server, 'POST', '/rf/_search', { json: { size: 0, aggs: { tags: { terms: { field: 'tag' } }, top: { max: { field: 'n' } } } } });
  assert.deepEqual(aggregated.body.aggregations.tags.buckets.map((bucket: { key: string }) => bucket.key), ['x', 'y']);
  assert.equal(aggregated.body.aggregations.top.value, 2);
  const many = await call(server, 'POST', '/_msearch', { body: ndjson([{ index: 'rf' }, { query: { match_all: {} } }]), headers: NDJSON });
  assert.equal(many.body.responses[0].hits.total.value, 2);

  await call(server, 'POST', '/_refresh');
  assert.deepEqual(await hits('rf'), ['a', 'c']);
  assert.deepEqual(await hits('rf', { match: { title: 'gamma' } }), ['a']);
  assert.equal(await count('rf'), 2);
});

test('realtime gets read the latest write; realtime=false reads what searches see', async () => {
  await create('rt', { visibility: 'refresh', refresh_interval: '-1' });
  await put('rt', 'a', { title: 'one', n: 1 });
  const realtime = await call(server, 'GET', '/rt/_doc/a');
  assert.equal(realtime.status, 200);
  assert.equal(realtime.body._source.n, 1);
  const notYet = await call(server, 'GET', '/rt/_doc/a?realtime=false');
  assert.equal(notYet.status, 404);
  assert.equal(notYet.body.found, false);
  assert.equal((await call(server, 'HEAD', '/rt/_doc/a?realtime=false')).status, 404);
  assert.equal((await call(server, 'HEAD', '/rt/_doc/a')).status, 200);
  const mget = await call(server, 'POST', '/rt/_mget?realtime=false', { json: { ids: ['a'] } });
  assert.equal(mget.body.docs[0].found, false);
  await call(server, 'POST', '/rt/_refresh');
  await put('rt', 'a', { title: 'two', n: 2 });
  assert.equal((await call(server, 'GET', '/rt/_doc/a?realtime=false')).body._source.n, 1);
  assert.equal((await call(server, 'GET', '/rt/_source/a?realtime=false')).body.n, 1);
  assert.equal((await call(server, 'GET', '/rt/_doc/a')).body._source.n, 2);
  assert.equal((await call(server, 'POST', '/rt/_mget?realtime=false', { json: { ids: ['a'] } })).body.docs[0]._source.n, 1);
  // refresh=true on a get refreshes the document's shard first.
  assert.equal((await call(server, 'GET', '/rt/_doc/a?realtime=false&refresh=true')).body._source.n, 2);
  assert.deepEqual(await hits('rt', { match: { title: 'two' } }), ['a']);
});

test('refresh=true on index, create, update, delete and bulk refreshes before answering', async () => {
  await create('rtrue', { number_of_shards: 3, visibility: 'refresh', refresh_interval: '-1' });
  const indexed = await put('rtrue', 'a', { title: 'one', n: 1 }, '?refresh=true');
  assert.equal(indexed.forced_refresh, true);
  assert.deepEqual(await hits('rtrue'), ['a']);
  assert.equal((await call(server, 'PUT', '/rtrue/_create/b?refresh', { json: { n: 2 } })).status, 201);
  assert.deepEqual(await hits('rtrue'), ['a', 'b']);
  assert.equal((await call(server, 'POST', '/rtrue/_update/a?refresh=true', { json: { doc: { title: 'uno' } } })).status, 200);
  assert.deepEqual(await hits('rtrue', { match: { title: 'uno' } }), ['a']);
  assert.equal((await call(server, 'DELETE', '/rtrue/_doc/b?refresh=true')).status, 200);
  assert.deepEqual(await hits('rtrue'), ['a']);
  const lines = [];
  for (let i = 0; i < 20; i++) lines.push({ index: { _id: `k${i}` } }, { n: 100 + i });
  lines.push({ delete: { _id: 'a' } });
  const bulk = await call(server, 'POST', '/rtrue/_bulk?refresh=true', { body: ndjson(lines), headers: NDJSON });
  assert.equal(bulk.body.errors, false, bulk.text);
  assert.equal(await count('rtrue'), 20);
  // Without refresh, a write stays hidden.
  await put('rtrue', 'hidden', { n: 0 });
  assert.equal(await count('rtrue'), 20);
});

test('refresh=wait_for answers after the next refresh that includes the write', async () => {
  await create('wf', { visibility: 'refresh', refresh_interval: '-1' });
  let answered = false;
  const pending = call(server, 'PUT', '/wf/_doc/a?refresh=wait_for', { json: { n: 1 } }).then((response) => {
    answered = true;
    return response;
  });
  await until(async () => ((await call(server, 'GET', '/wf/_doc/a')).body.found === true ? true : undefined), 'the write is applied', 10_000);
  await new Promise((resolve) => setTimeout(resolve, 300));
  assert.equal(answered, false, 'no refresh yet: the write waits');
  assert.equal((await call(server, 'POST', '/wf/_refresh')).status, 200);
  const response = await pending;
  assert.equal(response.status, 201, response.text);
  assert.equal(response.body.forced_refresh, undefined);
  assert.equal(await count('wf'), 1);
  // With a periodic refresh, wait_for answers within about one interval.
  assert.equal((await call(server, 'PUT', '/wf/_settings', { json: { 'index.refresh_interval': '200ms' } })).status, 200);
  const started = Date.now();
  const bulk = await call(server, 'POST', '/wf/_bulk?refresh=wait_for', { body: ndjson([{ index: { _id: 'b' } }, { n: 2 }, { index: { _id: 'c' } }, { n: 3 }]), headers: NDJSON });
  assert.equal(bulk.body.errors, false);
  assert.ok(Date.now() - started < 10_000);
  assert.equal(await count('wf'), 3);
});

test('the periodic refresh (index.refresh_interval) makes writes searchable without a request', async () => {
  await create('per', { visibility: 'refresh', refresh_interval: '100ms' });
  await put('per', 'a', { n: 1 });
  await until(async () => ((await count('per')) === 1 ? true : undefined), 'the periodic refresh shows the write', 10_000);
  await call(server, 'DELETE', '/per/_doc/a');
  await until(async () => ((await count('per')) === 0 ? true : undefined), 'the periodic refresh shows the delete', 10_000);
  // -1 stops it.
  assert.equal((await call(server, 'PUT', '/per/_settings', { json: { 'index.refresh_interval': '-1' } })).status, 200);
  await put('per', 'b', { n: 2 });
  await new Promise((resolve) => setTimeout(resolve, 500));
  assert.equal(await count('per'), 0);
  await call(server, 'POST', '/per/_refresh');
  assert.equal(await count('per'), 1);
});

test('scrolls, points in time and _delete_by_query select from the refreshed view', async () => {
  await create('bq', { visibility: 'refresh', refresh_interval: '-1' });
  const lines = [];
  for (let i = 0; i < 10; i++) lines.push({ index: { _id: `d${i}` } }, { tag: 'old', n: i });
  await call(server, 'POST', '/bq/_bulk?refresh=true', { body: ndjson(lines), headers: NDJSON });
  await put('bq', 'late', { tag: 'old', n: 99 });
  const scroll = await call(server, 'POST', '/bq/_search?scroll=1m', { json: { size: 100, query: { match_all: {} } } });
  assert.equal(scroll.status, 200, scroll.text);
  assert.equal(scroll.body.hits.hits.length, 10, 'the scroll opens on the view');
  const pit = await call(server, 'POST', '/bq/_search/point_in_time?keep_alive=1m');
  const pitSearch = await call(server, 'POST', '/_search', { json: { pit: { id: pit.body.pit_id }, size: 100 } });
  assert.equal(pitSearch.status, 200, pit.text + pitSearch.text);
  assert.equal(pitSearch.body.hits.hits.length, 10);
  const deleted = await call(server, 'POST', '/bq/_delete_by_query?refresh=true', { json: { query: { term: { tag: 'old' } } } });
  assert.equal(deleted.status, 200, deleted.text);
  assert.equal(deleted.body.deleted, 10, 'the unrefreshed write was not selected');
  assert.deepEqual(await hits('bq'), ['late'], 'refresh=true made the deletes (and the earlier write) visible');
  const updated = await call(server, 'POST', '/bq/_update_by_query?refresh=true', { json: { query: { match_all: {} }, doc: { tag: 'new' } } });
  assert.equal(updated.body.updated, 1, updated.text);
  assert.deepEqual(await hits('bq', { term: { tag: 'new' } }), ['late']);
  await call(server, 'DELETE', '/_search/scroll', { json: { scroll_id: scroll.body._scroll_id } });
  await call(server, 'DELETE', '/_search/point_in_time', { json: { pit_id: [pit.body.pit_id] } });
});

test('the OpenSearch JS client: indices.refresh, refresh on index, wait_for, get with realtime false', async () => {
  const { Client } = await import('@opensearch-project/opensearch');
  const client = new Client({ node: server.url });
  try {
    await client.indices.create({ index: 'cli', body: { settings: { index: { visibility: 'refresh', refresh_interval: '-1' } } } });
    await client.index({ index: 'cli', id: '1', body: { n: 1 } });
    assert.equal((await client.count({ index: 'cli' })).body.count, 0);
    assert.equal((await client.get({ index: 'cli', id: '1' })).body.found, true);
    const notYet = await client.get({ index: 'cli', id: '1', realtime: false }, { ignore: [404] });
    assert.equal(notYet.body.found, false);
    const refreshed = await client.indices.refresh({ index: 'cli' });
    assert.equal(refreshed.body._shards.successful, 1);
    assert.equal((await client.count({ index: 'cli' })).body.count, 1);
    const forced = await client.index({ index: 'cli', id: '2', body: { n: 2 }, refresh: true });
    assert.equal(forced.body.forced_refresh, true);
    assert.equal((await client.count({ index: 'cli' })).body.count, 2);
    await client.indices.putSettings({ index: 'cli', body: { index: { refresh_interval: '100ms' } } });
    await client.index({ index: 'cli', id: '3', body: { n: 3 }, refresh: 'wait_for' });
    assert.equal((await client.count({ index: 'cli' })).body.count, 3);
    const settings = await client.indices.getSettings({ index: 'cli', include_defaults: true, flat_settings: true });
    assert.equal(settings.body.cli?.settings?.['index.visibility'], 'refresh');
  } finally {
    await client.close();
  }
});
