import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { pino } from 'pino';
import { loadConfig } from '../config/load-config.ts';
import type { BulkItem } from './bulk.ts';
import { NodeService } from './node-service.ts';

const logger = pino({ level: 'silent' });
let dataPath: string;
let node: NodeService;

function items(collection: string, from: number, count: number): BulkItem[] {
  return Array.from({ length: count }, (_, index) => ({
    action: 'index' as const,
    collection,
    id: `d${from + index}`,
    body: { title: `document ${from + index} about epochs`, rank: from + index },
  }));
}

async function until(predicate: () => Promise<boolean>, what: string): Promise<void> {
  for (let attempt = 0; attempt < 400 && !(await predicate()); attempt++) await sleep(10);
  assert.ok(await predicate(), what);
}

before(async () => {
  dataPath = await mkdtemp(join(tmpdir(), 'trove-segment-stats-'));
  // Thresholds too high to trigger: epochs start only when the test lowers them.
  const config = loadConfig({
    flags: { 'path.data': dataPath, 'node.name': 'stats-node', 'epoch.max_docs': '100000', 'epoch.interval_ms': '3600000', 'merge.enabled': 'false' },
  });
  node = await NodeService.open({ config, logger });
  await node.register('http://127.0.0.1:9200');
  await node.collections.createCollection('notes', { settings: { number_of_shards: 2 }, mappings: { properties: { title: { type: 'text' }, rank: { type: 'long' } } } });
});

after(async () => {
  await node.close();
  await rm(dataPath, { recursive: true, force: true });
});

test('epochs follow their thresholds, including a change made while the node runs, and show in the stats', async () => {
  await node.documents.bulk(items('notes', 0, 40));
  let stats = await node.compaction.maintenanceStats();
  assert.equal(stats.segments.epochs.total, 0);
  assert.equal(stats.segments.epochs.last_at, null);
  assert.equal(stats.segments.count, 0);
  assert.deepEqual(stats.segments.shards.map((shard) => [shard.collection, shard.shard, shard.mutable_docs > 0]), [['notes', 0, true], ['notes', 1, true]]);

  node.observability.applySettings({ 'epoch.max_docs': 10 });
  for (let batch = 1; batch <= 3; batch++) {
    await node.documents.bulk(items('notes', batch * 40, 40));
    await until(async () => (await node.compaction.maintenanceStats()).segments.count >= batch * 2, `epochs cut segments after batch ${batch}`);
  }
  await until(async () => (await node.compaction.maintenanceStats()).segments.merges.backlog === 0, 'the maintenance queue drains');
  stats = await node.compaction.maintenanceStats();
  assert.ok(stats.segments.epochs.total >= 6, `epochs run: ${stats.segments.epochs.total}`);
  assert.ok(stats.segments.epochs.last_at !== null && Date.parse(stats.segments.epochs.last_at) <= Date.now());
  assert.equal(stats.segments.docs, 160);
  for (const shard of stats.segments.shards) {
    assert.ok(shard.segments >= 3, `shard ${shard.shard} has ${shard.segments} segments`);
    assert.equal(shard.mutable_docs, 0);
    assert.equal(shard.pending_maintenance, 0);
    assert.ok(shard.size_in_bytes > 0);
  }
  const rows = await node.compaction.segments();
  assert.equal(rows.length, stats.segments.count);
  assert.equal(rows.reduce((sum, row) => sum + row.docs, 0), 160);
  assert.ok(rows.every((row) => row.nodeName === 'stats-node' && row.primary && row.generation > 0));
});

test('a compaction shows in the stats: fewer segments, passes done, deleted documents purged', async () => {
  await node.documents.bulk(Array.from({ length: 30 }, (_, index) => ({ action: 'delete' as const, collection: 'notes', id: `d${index * 3}` })));
  const before = await node.compaction.maintenanceStats();
  assert.equal(before.segments.deleted_docs, 30);
  const result = await node.compaction.compact('notes', { maxSegments: 1 });
  const queued = result.rows[0]?.queued;
  assert.ok(queued, 'the local row queued a job');
  assert.equal(queued.primaryPasses, 2);
  await until(async () => (await node.compaction.maintenanceStats()).compaction.jobs.done === 1, 'the job finishes');
  const after = await node.compaction.maintenanceStats();
  assert.equal(after.segments.count, 2);
  assert.equal(after.segments.deleted_docs, 0);
  assert.equal(after.segments.docs, 130);
  assert.ok(after.segments.merges.total >= 2);
  assert.deepEqual(after.compaction.passes, { done: 2, failed: 0 });
  assert.equal(after.compaction.deleted_docs_purged, 30);
  assert.ok(after.compaction.bytes_after < after.compaction.bytes_before);
  const job = await node.compaction.job(queued.jobId);
  assert.equal(job.state, 'done');
});
