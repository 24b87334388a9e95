/**
 * Runtime node settings end to end: the settings view, validation that names every bad key and
 * applies nothing, `null` resets, changes under concurrent search and write load that drop no
 * request, live `log.level` directives observed in the log stream, and transient overrides
 * lost on restart.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { call, ndjson, startServer, type TroveServer } from './harness.ts';

let server: TroveServer;

before(async () => {
  server = await startServer({ settings: { 'trash.retention_secs': '600' } });
  const created = await call(server, 'PUT', '/notes', { json: { settings: { number_of_shards: 2 }, mappings: { properties: { text: { type: 'text' }, n: { type: 'long' } } } } });
  assert.equal(created.status, 200, created.text);
  const lines = Array.from({ length: 200 }, (_, index) => [{ index: { _id: String(index) } }, { text: `note number ${index} about ${index % 2 ? 'cats' : 'dogs'}`, n: index }]).flat();
  const bulk = await call(server, 'POST', '/notes/_bulk', { body: ndjson(lines), headers: { 'content-type': 'application/x-ndjson' } });
  assert.equal(bulk.body.errors, false);
});

after(async () => {
  await server?.cleanup();
});

async function settings(): Promise<{ settings: Record<string, unknown>; sources: Record<string, string>; transient: Record<string, unknown> }> {
  const response = await call(server, 'GET', '/_node/_local/settings');
  assert.equal(response.status, 200, response.text);
  return response.body;
}

async function put(body: Record<string, unknown>): Promise<{ status: number; body: any }> {
  return call(server, 'PUT', '/_node/_local/settings', { json: body });
}

/** Parsed JSON log lines of the server so far. */
function logLines(): Array<Record<string, unknown>> {
  return server
    .output()
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

test('every key has an effective value and a source', async () => {
  const view = await settings();
  for (const key of ['log.level', 'node.search.slow_threshold_ms', 'search.default_timeout_ms', 'trash.retention_secs', 'changes.retention_secs', 'epoch.interval_ms', 'merge.segments_per_tier', 'search.lanes.default.max_concurrent', 'search.lanes.default.max_queue']) {
    assert.ok(key in view.settings, key);
    assert.ok(key in view.sources, key);
  }
  assert.equal(view.settings['trash.retention_secs'], 600);
  assert.equal(view.sources['trash.retention_secs'], 'flag');
  assert.equal(view.sources['search.default_timeout_ms'], 'default');
  assert.deepEqual(view.transient, {});
});

test('a bad change names every offending key and applies nothing', async () => {
  const before = await settings();
  const refused = await put({ 'search.default_timeout_ms': 50, 'node.search.slow_treshold_ms': 5, 'http.port': 1, 'epoch.max_docs': 'many' });
  assert.equal(refused.status, 400);
  assert.equal(refused.body.error.type, 'illegal_argument_exception');
  const reason: string = refused.body.error.reason;
  assert.match(reason, /unknown setting \[node\.search\.slow_treshold_ms\] \(did you mean \[node\.search\.slow_threshold_ms\]\?\)/);
  assert.match(reason, /setting \[http\.port\] is not dynamic/);
  assert.match(reason, /invalid value for setting \[epoch\.max_docs\]: expected an integer/);
  assert.match(reason, /no setting was changed/);
  assert.doesNotMatch(reason, /search\.default_timeout_ms/);
  assert.deepEqual(await settings(), before);
  assert.equal((await put({ 'search.lanes.bad name.max_queue': 1 })).status, 400);
  assert.equal((await call(server, 'PUT', '/_node/_local/settings', { body: '[1]', headers: { 'content-type': 'application/json' } })).status, 400);
});

test('overrides apply at once and null resets to the configuration value', async () => {
  const applied = await put({ 'trash.retention_secs': 30, 'search.lanes.reports.max_concurrent': 2 });
  assert.equal(applied.status, 200, JSON.stringify(applied.body));
  assert.equal(applied.body.acknowledged, true);
  assert.deepEqual(applied.body.changed, { 'search.lanes.reports.max_concurrent': 2, 'search.lanes.reports.max_queue': 1000, 'trash.retention_secs': 30 });
  let view = await settings();
  assert.equal(view.settings['trash.retention_secs'], 30);
  assert.equal(view.sources['trash.retention_secs'], 'transient');
  assert.equal(view.sources['search.lanes.reports.max_queue'], 'default');
  assert.equal((await call(server, 'POST', '/notes/_search?lane=reports', { json: {} })).status, 200);

  const reset = await put({ 'trash.retention_secs': null, 'search.lanes.reports.max_concurrent': null });
  assert.equal(reset.status, 200);
  view = await settings();
  assert.equal(view.settings['trash.retention_secs'], 600);
  assert.equal(view.sources['trash.retention_secs'], 'flag');
  assert.equal('search.lanes.reports.max_queue' in view.settings, false);
  const gone = await call(server, 'POST', '/notes/_search?lane=reports', { json: {} });
  assert.equal(gone.status, 400);
  assert.match(gone.body.error.reason, /unknown search lane \[reports\]; defined lanes: \[default\]/);
});

test('settings changes under concurrent searches and writes drop no request', async () => {
  let stop = false;
  const statuses: number[] = [];
  const searcher = async (): Promise<void> => {
    while (!stop) {
      const response = await call(server, 'POST', '/notes/_search', { json: { query: { match: { text: 'cats' } }, aggs: { n: { stats: { field: 'n' } } } } });
      statuses.push(response.status);
    }
  };
  let written = 0;
  const writer = async (): Promise<void> => {
    while (!stop) {
      const response = await call(server, 'PUT', `/notes/_doc/w${written++}`, { json: { text: 'written under load', n: written } });
      statuses.push(response.status);
    }
  };
  const load = [searcher(), searcher(), searcher(), writer()];
  const changes: Array<Record<string, unknown>> = [
    { 'search.lanes.default.max_concurrent': 1, 'search.lanes.default.max_queue': 100 },
    { 'epoch.interval_ms': 50, 'epoch.max_docs': 20 },
    { 'node.search.slow_threshold_ms': 100000, 'search.default_timeout_ms': 60000 },
    { 'merge.segments_per_tier': 3, 'log.level': 'error' },
    { 'search.lanes.default.max_concurrent': 8 },
    { 'epoch.interval_ms': null, 'epoch.max_docs': null, 'merge.segments_per_tier': null, 'search.lanes.default.max_concurrent': null, 'search.lanes.default.max_queue': null },
    { 'node.search.slow_threshold_ms': null, 'search.default_timeout_ms': null, 'log.level': null },
  ];
  for (const change of changes) {
    await new Promise((resolve) => setTimeout(resolve, 80));
    const response = await put(change);
    assert.equal(response.status, 200, JSON.stringify(response.body));
  }
  stop = true;
  await Promise.all(load);
  assert.ok(statuses.length > 20, `${statuses.length} requests ran`);
  assert.deepEqual([...new Set(statuses)].sort(), [200, 201].filter((status) => statuses.includes(status)));
  const count = await call(server, 'POST', '/notes/_count', { json: { query: { match: { text: 'written' } } } });
  assert.equal(count.body.count, written);
  assert.deepEqual((await settings()).transient, {});
});

test('log.level directives: a bare level keeps target directives, a target directive replaces only that target', async () => {
  const rejectedFor = (name: string): boolean =>
    logLines().some((line) => line.component === 'http' && line.msg === 'request rejected' && String(line.reason).includes(`[${name}]`));
  const missing = async (name: string): Promise<void> => {
    assert.equal((await call(server, 'GET', `/${name}/_doc/1`)).status, 404);
  };
  const waitFor = async (what: string, check: () => boolean): Promise<void> => {
    const deadline = Date.now() + 10_000;
    while (!check()) {
      assert.ok(Date.now() < deadline, `${what} appears in the log`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  };
  // A line the settings target logs after everything before it: once it is in, so is every earlier line.
  let markers = 0;
  const barrier = async (): Promise<void> => {
    const marker = 100_000 + ++markers;
    assert.equal((await put({ 'search.default_timeout_ms': marker })).status, 200);
    await waitFor(`settings change ${marker}`, () =>
      logLines().some((line) => line.component === 'settings' && (line.changed as Record<string, unknown>)?.['search.default_timeout_ms'] === marker),
    );
    assert.equal((await put({ 'search.default_timeout_ms': null })).status, 200);
  };

  assert.equal((await put({ 'log.level': 'settings=info' })).status, 200);
  assert.equal((await settings()).settings['log.level'], 'warn,settings=info');
  await missing('before-change');
  await barrier();
  assert.equal(rejectedFor('before-change'), false);

  assert.equal((await put({ 'log.level': 'http=debug' })).status, 200);
  assert.equal((await settings()).settings['log.level'], 'warn,settings=info,http=debug');
  await missing('http-debug');
  await waitFor('the rejected request at http=debug', () => rejectedFor('http-debug'));

  assert.equal((await put({ 'log.level': 'error' })).status, 200);
  assert.equal((await settings()).settings['log.level'], 'error,settings=info,http=debug');
  await missing('after-bare-level');
  await waitFor('the rejected request after a bare level', () => rejectedFor('after-bare-level'));
  await waitFor('the settings change to error', () =>
    logLines().some((line) => line.component === 'settings' && JSON.stringify(line.changed).includes('error,settings=info,http=debug')),
  );

  assert.equal((await put({ 'log.level': 'http=off' })).status, 200);
  assert.equal((await settings()).settings['log.level'], 'error,settings=info,http=off');
  await missing('http-off');
  await barrier();
  assert.equal(rejectedFor('http-off'), false);

  assert.equal((await put({ 'log.level': null })).status, 200);
  assert.equal((await settings()).settings['log.level'], 'warn');
});

test('transient overrides are gone after a restart', async () => {
  assert.equal((await put({ 'search.default_timeout_ms': 1234 })).status, 200);
  assert.equal((await settings()).settings['search.default_timeout_ms'], 1234);
  await server.restart();
  const view = await settings();
  assert.equal(view.settings['search.default_timeout_ms'], 0);
  assert.deepEqual(view.transient, {});
});
