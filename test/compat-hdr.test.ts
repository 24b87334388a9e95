/**
 * HDR percentiles end to end, answering as OpenSearch's DoubleHistogram does: for 1, 51, 101,
 * 151 at three significant digits the median is 51.0302734375 (the highest value of 51's bucket to
 * the unit of the smallest value), on one shard or three; fractional values are counted; a
 * negative value is OpenSearch's 400.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { call, ndjson, startServer, type TroveServer } from './harness.ts';

let server: TroveServer;

before(async () => {
  server = await startServer();
  for (const [name, shards] of [['hdr1', 1], ['hdr3', 3]] as const) {
    const created = await call(server, 'PUT', `/${name}`, { json: { settings: { number_of_shards: shards }, mappings: { properties: { i: { type: 'long' }, d: { type: 'double' } } } } });
    assert.equal(created.status, 200, created.text);
    const lines: unknown[] = [];
    [1, 51, 101, 151].forEach((value, n) => lines.push({ index: { _id: `v${n}` } }, { i: value, d: value / 100 }));
    const loaded = await call(server, 'POST', `/${name}/_bulk?refresh=true`, { body: ndjson(lines), headers: { 'content-type': 'application/x-ndjson' } });
    assert.equal(loaded.body.errors, false, loaded.text);
  }
});

after(async () => {
  await server?.cleanup();
});

test('percentiles and percentile_ranks with hdr answer OpenSearch\'s values on one shard and three', async () => {
  const aggs = {
    p: { percentiles: { field: 'i', hdr: { number_of_significant_value_digits: 3 } } },
    f: { percentiles: { field: 'd', percents: [50, 100], hdr: {} } },
    r: { percentile_ranks: { field: 'i', values: [50, 51, 151.1], hdr: {} } },
  };
  for (const name of ['hdr1', 'hdr3']) {
    const response = await call(server, 'POST', `/${name}/_search`, { json: { size: 0, aggs } });
    assert.equal(response.status, 200, response.text);
    const { p, f, r } = response.body.aggregations;
    assert.deepEqual(p.values, { '1.0': 1, '5.0': 1, '25.0': 1, '50.0': 51.0302734375, '75.0': 101.0615234375, '95.0': 151.1240234375, '99.0': 151.1240234375 }, name);
    // 0.51 is in the bucket [1044 / 2048, 1045 / 2048) and 1.51 in [1546 / 1024, 1547 / 1024); the unit is that of 0.01 (2^-7 / 1024).
    assert.deepEqual(f.values, { '50.0': 1045 / 2048 - 2 ** -17, '100.0': 1547 / 1024 - 2 ** -17 }, name);
    assert.deepEqual(r.values, { '50.0': 25, '51.0': 50, '151.1': 100 }, name);
  }
  const typed = await call(server, 'POST', '/hdr3/_search?typed_keys=true', { json: { size: 0, aggs: { r: aggs.r } } });
  assert.ok(typed.body.aggregations['hdr_percentile_ranks#r'], typed.text);
});

test('a negative value is OpenSearch\'s 400', async () => {
  await call(server, 'PUT', '/hdr3/_doc/negative?refresh=true', { json: { i: -5, d: -0.5 } });
  const response = await call(server, 'POST', '/hdr3/_search', { json: { size: 0, aggs: { p: { percentiles: { field: 'd', hdr: {} } } } } });
  assert.equal(response.status, 400, response.text);
  assert.equal(response.body.error.type, 'illegal_argument_exception');
  assert.match(response.text, /Negative values are not supported by HDR aggregation/);
  await call(server, 'DELETE', '/hdr3/_doc/negative?refresh=true');
});
