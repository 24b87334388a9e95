/**
 * `GET|PUT /_cluster/settings` end to end: persistent and transient settings take effect on the
 * node (a write no longer creates its collection, a scroll past the context limit is a 429),
 * `flat_settings` and `include_defaults` shape the answer, `null` resets, unknown, static and
 * malformed settings are OpenSearch's 400s that change nothing, and after a restart the
 * persistent settings are still there while the transient ones are gone.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { call, startServer, type HttpResponse, type TroveServer } from './harness.ts';

let server: TroveServer;

before(async () => {
  server = await startServer();
  const created = await call(server, 'PUT', '/one', { json: { settings: { number_of_shards: 1 } } });
  assert.equal(created.status, 200, created.text);
});

after(async () => {
  await server?.cleanup();
});

async function openScroll(): Promise<HttpResponse> {
  return call(server, 'POST', '/one/_search?scroll=1m', { json: { size: 1 } });
}

test('persistent and transient settings apply, show, survive a restart or not, and reset', async () => {
  const put = await call(server, 'PUT', '/_cluster/settings', {
    json: { persistent: { action: { auto_create_index: false } }, transient: { 'search.max_open_scroll_context': 1 } },
  });
  assert.equal(put.status, 200, put.text);
  assert.deepEqual(put.body, { acknowledged: true, persistent: { action: { auto_create_index: 'false' } }, transient: { search: { max_open_scroll_context: '1' } } });

  const refused = await call(server, 'PUT', '/not-yet/_doc/1', { json: { a: 1 } });
  assert.equal(refused.status, 404, refused.text);
  assert.equal(refused.body.error.type, 'index_not_found_exception');
  const first = await openScroll();
  assert.equal(first.status, 200, first.text);
  const second = await openScroll();
  assert.equal(second.status, 429, second.text);
  await call(server, 'DELETE', '/_search/scroll/_all');

  const nested = await call(server, 'GET', '/_cluster/settings');
  assert.deepEqual(nested.body, { persistent: { action: { auto_create_index: 'false' } }, transient: { search: { max_open_scroll_context: '1' } } });
  const flat = await call(server, 'GET', '/_cluster/settings?flat_settings=true');
  assert.deepEqual(flat.body, { persistent: { 'action.auto_create_index': 'false' }, transient: { 'search.max_open_scroll_context': '1' } });
  const defaults = await call(server, 'GET', '/_cluster/settings?flat_settings=true&include_defaults=true');
  assert.equal(defaults.body.defaults['search.max_keep_alive_secs'], '86400');
  assert.equal(defaults.body.defaults['action.auto_create_index'], undefined, 'a key that is set is not a default');

  await server.restart();
  const restarted = await call(server, 'GET', '/_cluster/settings?flat_settings=true');
  assert.deepEqual(restarted.body, { persistent: { 'action.auto_create_index': 'false' }, transient: {} });
  assert.equal((await call(server, 'PUT', '/still-not/_doc/1', { json: { a: 1 } })).status, 404);
  const scrolls = [await openScroll(), await openScroll()];
  assert.deepEqual(scrolls.map((scroll) => scroll.status), [200, 200], 'the transient limit is gone');
  await call(server, 'DELETE', '/_search/scroll/_all');

  const reset = await call(server, 'PUT', '/_cluster/settings', { json: { persistent: { 'action.auto_create_index': null } } });
  assert.deepEqual(reset.body, { acknowledged: true, persistent: {}, transient: {} });
  assert.deepEqual((await call(server, 'GET', '/_cluster/settings')).body, { persistent: {}, transient: {} });
  const createdNow = await call(server, 'PUT', '/now-created/_doc/1', { json: { a: 1 } });
  assert.equal(createdNow.status, 201, createdNow.text);
});

test('unknown, static and malformed settings are 400s that change nothing', async () => {
  const cases: Array<[unknown, RegExp]> = [
    [{ persistent: { 'foo.bar': 1 } }, /^persistent setting \[foo\.bar\], not recognized$/],
    [{ transient: { search: { no_such: 1 } } }, /^transient setting \[search\.no_such\], not recognized$/],
    [{ persistent: { 'http.port': 9300 } }, /^persistent setting \[http\.port\], not dynamically updateable$/],
    [{ persistent: { 'search.max_open_scroll_context': 'many' } }, /Failed to parse value \[many\] for setting \[search\.max_open_scroll_context\]/],
    [{ persistent: { 'search.max_keep_alive_secs': 60 }, transient: { 'nope.nope': 1 } }, /^transient setting \[nope\.nope\], not recognized$/],
  ];
  for (const [json, reason] of cases) {
    const response = await call(server, 'PUT', '/_cluster/settings', { json });
    assert.equal(response.status, 400, `${JSON.stringify(json)}: ${response.text}`);
    assert.equal(response.body.error.type, 'illegal_argument_exception');
    assert.match(response.body.error.reason, reason);
  }
  assert.deepEqual((await call(server, 'GET', '/_cluster/settings')).body, { persistent: {}, transient: {} });
  const unknownKey = await call(server, 'PUT', '/_cluster/settings', { json: { permanent: {} } });
  assert.equal(unknownKey.status, 400);
});
