/**
 * Search lanes, the default search timeout and the slow log end to end: a lane with a budget of
 * one refuses parallel searches with 429 and its counters add up; a search without a timeout gets
 * the default one and returns partial results marked `timed_out`; slow searches are logged under
 * the `slowlog` target with query, took and collection, and counted.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { cities } from './corpora.ts';
import { call, ndjson, startServer, type TroveServer } from './harness.ts';

let server: TroveServer;
const CITY_COUNT = 20_000;

/** A search heavy enough to take a few milliseconds per shard: every document is aggregated. */
const HEAVY = { size: 5, track_total_hits: true, query: { match_all: {} }, aggs: { countries: { terms: { field: 'country', size: 50 } }, population: { stats: { field: 'population' } } } };

before(async () => {
  server = await startServer();
  const created = await call(server, 'PUT', '/cities', {
    json: {
      settings: { number_of_shards: 4 },
      mappings: { properties: { name: { type: 'text' }, country: { type: 'keyword' }, population: { type: 'long' } } },
    },
  });
  assert.equal(created.status, 200, created.text);
  const docs = cities(CITY_COUNT);
  const lines = docs.flatMap((city) => [{ index: { _id: city.id } }, { name: city.name, country: city.country, population: city.population }]);
  const loaded = await call(server, 'POST', '/cities/_bulk', { body: ndjson(lines), headers: { 'content-type': 'application/x-ndjson' } });
  assert.equal(loaded.body.errors, false);
  const single = await call(server, 'PUT', '/single', { json: { settings: { number_of_shards: 1 }, mappings: { properties: { country: { type: 'keyword' }, population: { type: 'long' } } } } });
  assert.equal(single.status, 200, single.text);
  const singleLines = docs.flatMap((city) => [{ index: { _id: city.id } }, { country: city.country, population: city.population }]);
  const singleLoaded = await call(server, 'POST', '/single/_bulk', { body: ndjson(singleLines), headers: { 'content-type': 'application/x-ndjson' } });
  assert.equal(singleLoaded.body.errors, false);
});

after(async () => {
  await server?.cleanup();
});

async function put(body: Record<string, unknown>): Promise<void> {
  const response = await call(server, 'PUT', '/_node/_local/settings', { json: body });
  assert.equal(response.status, 200, response.text);
}

test('a lane with budget 1 and no queue refuses parallel searches with 429; its counters add up', async () => {
  await put({ 'search.lanes.tiny.max_concurrent': 1, 'search.lanes.tiny.max_queue': 0 });
  const parallel = 48;
  const responses = await Promise.all(Array.from({ length: parallel }, () => call(server, 'POST', '/cities/_search?lane=tiny', { json: HEAVY })));
  const ok = responses.filter((response) => response.status === 200).length;
  const rejected = responses.filter((response) => response.status === 429);
  assert.equal(ok + rejected.length, parallel, `only 200 and 429: ${responses.map((response) => response.status).join(',')}`);
  assert.ok(ok >= 1, 'some searches ran');
  assert.ok(rejected.length >= 1, 'some searches were refused');
  assert.equal(rejected[0].body.status, 429);
  assert.equal(rejected[0].body.error.type, 'es_rejected_execution_exception');
  assert.match(rejected[0].body.error.reason, /search lane \[tiny\] is full: 1 searches running \(max_concurrent 1\) and 0 waiting \(max_queue 0\)/);

  const lane = (await call(server, 'GET', '/_node/_local/stats')).body.search.lanes.tiny;
  assert.deepEqual(
    { submitted: lane.submitted, completed: lane.completed, rejected: lane.rejected, failed: lane.failed, active: lane.active, queued: lane.queued },
    { submitted: parallel, completed: ok, rejected: rejected.length, failed: 0, active: 0, queued: 0 },
  );
  assert.deepEqual([lane.max_concurrent, lane.max_queue], [1, 0]);

  // With a queue, the same burst waits instead: nothing is refused.
  await put({ 'search.lanes.tiny.max_queue': parallel });
  const queued = await Promise.all(Array.from({ length: parallel }, () => call(server, 'POST', '/cities/_search?lane=tiny', { json: HEAVY })));
  assert.deepEqual([...new Set(queued.map((response) => response.status))], [200]);
  const after = (await call(server, 'GET', '/_node/_local/stats')).body.search.lanes.tiny;
  assert.equal(after.submitted, 2 * parallel);
  assert.equal(after.completed, ok + parallel);
  assert.equal(after.rejected, rejected.length);
  assert.ok(after.queue_time_in_millis > 0);
  await put({ 'search.lanes.tiny.max_concurrent': null, 'search.lanes.tiny.max_queue': null });
});

test('on a one-shard collection a lane bounds concurrency too: parallel searches queue or get 429', async () => {
  await put({ 'search.lanes.solo.max_concurrent': 1, 'search.lanes.solo.max_queue': 0 });
  const parallel = 24;
  const responses = await Promise.all(Array.from({ length: parallel }, () => call(server, 'POST', '/single/_search?lane=solo', { json: HEAVY })));
  const statuses = responses.map((response) => response.status);
  assert.ok(statuses.every((status) => status === 200 || status === 429), `only 200 and 429: ${statuses.join(',')}`);
  assert.ok(statuses.includes(200), 'some searches ran');
  assert.ok(statuses.includes(429), `searches overlapped: ${statuses.join(',')}`);

  await put({ 'search.lanes.solo.max_queue': parallel });
  const queued = await Promise.all(Array.from({ length: parallel }, () => call(server, 'POST', '/single/_search?lane=solo', { json: HEAVY })));
  assert.deepEqual([...new Set(queued.map((response) => response.status))], [200]);
  const lane = (await call(server, 'GET', '/_node/_local/stats')).body.search.lanes.solo;
  assert.ok(lane.queue_time_in_millis > 0, 'searches waited in the queue');
  await put({ 'search.lanes.solo.max_concurrent': null, 'search.lanes.solo.max_queue': null });
});

// The timeout bounds each shard's query phase, as in Elasticsearch, and shards run at once: the
// one-shard collection gives one shard enough work to pass a 1 ms budget.
test('the default timeout applies to searches without one: partial results, timed_out true', async () => {
  const full = await call(server, 'POST', '/single/_search', { json: HEAVY });
  assert.equal(full.body.timed_out, false);
  assert.equal(full.body.hits.total.value, CITY_COUNT);

  await put({ 'search.default_timeout_ms': 1 });
  const partial = await call(server, 'POST', '/single/_search', { json: HEAVY });
  assert.equal(partial.status, 200);
  assert.equal(partial.body.timed_out, true);
  assert.ok(partial.body.hits.total.value < CITY_COUNT, `${partial.body.hits.total.value} of ${CITY_COUNT} collected`);

  // A request's own timeout wins over the default.
  const own = await call(server, 'POST', '/single/_search', { json: { ...HEAVY, timeout: '1m' } });
  assert.equal(own.body.timed_out, false);
  assert.equal(own.body.hits.total.value, CITY_COUNT);
  await put({ 'search.default_timeout_ms': null });

  const stats = (await call(server, 'GET', '/_node/_local/stats')).body.search;
  assert.ok(stats.lanes.default.timed_out >= 1);
  assert.equal(stats.timed_out, stats.lanes.default.timed_out + (stats.lanes.tiny?.timed_out ?? 0));
});

test('searches over the slow-log threshold are logged under slowlog and counted', async () => {
  const slowLines = (word: string): Array<Record<string, unknown>> =>
    server
      .output()
      .split('\n')
      .filter((line) => line.startsWith('{') && line.includes('"slowlog"') && line.includes(word))
      .map((line) => JSON.parse(line) as Record<string, unknown>);
  const waitForSlowLine = async (word: string): Promise<void> => {
    const deadline = Date.now() + 10_000;
    while (slowLines(word).length === 0) {
      assert.ok(Date.now() < deadline, `a slowlog line for ${word} appears`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  };
  const slowBefore = (await call(server, 'GET', '/_node/_local/stats')).body.search.slow;
  const logged = { query: { match: { name: 'springfield' } }, size: 1 };

  await put({ 'node.search.slow_threshold_ms': 0 });
  assert.equal((await call(server, 'POST', '/cities/_search', { json: logged })).status, 200);
  await put({ 'node.search.slow_threshold_ms': -1 });
  assert.equal((await call(server, 'POST', '/cities/_search', { json: { query: { match: { name: 'london' } } } })).status, 200);
  await put({ 'node.search.slow_threshold_ms': 0 });
  // Logged after the search above: once it is in the log, the search above would be too.
  assert.equal((await call(server, 'POST', '/cities/_search', { json: { query: { match: { name: 'paris' } } } })).status, 200);
  await put({ 'node.search.slow_threshold_ms': null });
  await waitForSlowLine('paris');

  assert.equal(slowLines('london').length, 0);
  const lines = slowLines('springfield');
  assert.equal(lines.length, 1, JSON.stringify(lines));
  const [line] = lines;
  assert.equal(line.component, 'slowlog');
  assert.equal(line.level, 40);
  assert.equal(line.collection, 'cities');
  assert.equal(line.lane, 'default');
  assert.equal(typeof line.took, 'number');
  assert.equal(line.source, JSON.stringify(logged));
  const slowAfter = (await call(server, 'GET', '/_node/_local/stats')).body.search.slow;
  assert.equal(slowAfter, slowBefore + 2);
});
