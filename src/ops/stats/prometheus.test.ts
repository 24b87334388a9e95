import { test } from 'node:test';
import assert from 'node:assert/strict';
import { tmpdir } from 'node:os';
import { pino } from 'pino';
import type { MaintenanceStats } from './maintenance-stats.ts';
import { HostFiles } from '../host/host-files.ts';
import { SearchLanes } from '../lanes/search-lanes.ts';
import { SlowLog } from '../lanes/slow-log.ts';
import { CpuStealSampler } from './cpu-steal.ts';
import { EventLoopProbe } from './event-loop-probe.ts';
import { NodeCounters } from './node-counters.ts';
import { collectNodeStats } from './node-stats.ts';
import { PrometheusExporter } from './prometheus.ts';

const MAINTENANCE: MaintenanceStats = {
  segments: { count: 3, docs: 10, deleted_docs: 1, size_in_bytes: 4096, epochs: { total: 2, last_at: null, writes_held: 0, writes_held_ms: 0 }, merges: { total: 1, backlog: 0 }, shards: [] },
  compaction: { jobs: { queued: 0, running: 0, done: 1, failed: 0 }, passes: { done: 1, failed: 0 }, deleted_docs_purged: 0, bytes_before: 0, bytes_after: 0 },
};

test('counters record writes by kind and updates by path', () => {
  const counters = new NodeCounters();
  const result = { id: '1', seqNo: 1, version: 1, primaryTerm: 1 };
  counters.recordWrite('index', { ...result, result: 'created' }, 2);
  counters.recordWrite('index', new Error('bad'), 1);
  counters.recordWrite('delete', { ...result, result: 'not_found' }, 1);
  counters.recordWrite('delete', { ...result, result: 'deleted' }, 1);
  counters.recordWrite('update', { ...result, result: 'updated', inplace: true }, 1);
  counters.recordWrite('update', { ...result, result: 'updated', fields: true }, 1);
  counters.recordWrite('update', { ...result, result: 'updated' }, 1);
  counters.recordWrite('update', { ...result, result: 'noop' }, 1);
  counters.recordWrite('update', { ...result, result: 'created' }, 1);
  counters.recordWrite('update', new Error('missing'), 1);
  // Inplace and field-level updates re-index nothing, so they are not in index_total.
  assert.deepEqual(counters.indexing, { index_total: 3, index_failed: 1, index_time_in_millis: 3, delete_total: 1, delete_failed: 0, delete_time_in_millis: 2 });
  assert.deepEqual(counters.updates, { total: 6, inplace: 1, fields: 1, full: 1, noop: 1, upserts: 1, failed: 1, time_in_millis: 6 });
  counters.recordHttpResponse(201, 3);
  counters.recordHttpResponse(429, 1);
  assert.deepEqual(counters.http.responses, { '2xx': 1, '4xx': 1 });
});

test('the exporter renders the node stats with types, labels and the same values', async () => {
  const counters = new NodeCounters();
  counters.recordWrite('update', { id: '1', seqNo: 1, version: 2, primaryTerm: 1, result: 'updated', inplace: true }, 4);
  counters.recordChangesRequest('longpoll');
  const lanes = new SearchLanes({ 'search.lanes.default.max_concurrent': 2, 'search.lanes.default.max_queue': 7 }, new SlowLog(() => -1, pino({ level: 'silent' })));
  await lanes.run({ lane: undefined, target: 'c', body: {} }, async () => ({ took: 1, timed_out: true }));
  const files = new HostFiles('/');
  const eventLoop = new EventLoopProbe();
  const stats = await collectNodeStats({
    nodeId: 'n1',
    nodeName: 'one',
    counters,
    lanes,
    retainedLogBytes: 0,
    maintenance: MAINTENANCE,
    security: { authentication_failures: { missing: 2, malformed: 0, unknown: 1, expired: 0, total: 3 }, authorization_failures: { role: 1, namespace: 0, total: 1 } },
    openFeeds: 0,
    steal: new CpuStealSampler(files),
    eventLoop,
    files,
    dataPath: tmpdir(),
    memoryRelease: [
      { trims: 2, trimMs: 3.4, collections: 1, collectionMs: 12.2 },
      { trims: 5, trimMs: 1.1, collections: 0, collectionMs: 0 },
    ],
  });
  eventLoop.stop();
  assert.equal(stats.search.query_total, 1);
  assert.equal(stats.search.timed_out, 1);
  assert.equal(stats.cpu.steal_percent.current, null);
  assert.deepEqual(stats.process.memory_release, { trims: 7, trim_time_in_millis: 5, collections: 1, collection_time_in_millis: 12 });

  const exporter = new PrometheusExporter();
  const text = await exporter.render(stats);
  assert.match(exporter.contentType, /^text\/plain/);
  assert.match(text, /# TYPE trove_updates_total counter/);
  assert.match(text, /^trove_updates_total\{path="inplace"\} 1$/m);
  assert.match(text, /^trove_updates_total\{path="full"\} 0$/m);
  assert.match(text, /^trove_updates_time_seconds_total 0\.004$/m);
  assert.match(text, /^trove_search_timed_out_total\{lane="default"\} 1$/m);
  assert.match(text, /# TYPE trove_search_lane_max_queue gauge/);
  assert.match(text, /^trove_search_lane_max_queue\{lane="default"\} 7$/m);
  assert.match(text, /^trove_changes_requests_total\{feed="longpoll"\} 1$/m);
  assert.match(text, /^trove_segments 3$/m);
  assert.match(text, /^trove_compaction_jobs\{state="done"\} 1$/m);
  assert.match(text, /^trove_security_refusals_total\{status="401"\} 3$/m);
  assert.match(text, /^trove_memory_release_trims_total 7$/m);
  assert.match(text, /^trove_memory_release_collection_seconds_total 0\.012$/m);
  assert.doesNotMatch(text, /^trove_cpu_steal_percent\{/m);

  // A second render reflects new values (nothing accumulates across scrapes).
  counters.recordWrite('update', { id: '1', seqNo: 2, version: 3, primaryTerm: 1, result: 'updated', inplace: true }, 1);
  const again = await exporter.render({ ...stats, updates: { ...counters.updates } });
  assert.match(again, /^trove_updates_total\{path="inplace"\} 2$/m);
});
