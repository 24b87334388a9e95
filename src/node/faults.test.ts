import { test } from 'node:test';
import assert from 'node:assert/strict';
import { EngineError } from '../engine/errors.ts';
import { shardFaultHooks } from '../engine/shard/fault-points.ts';
import { parseFaults } from './faults.ts';

test('no TROVE_FAULTS means no fault anywhere', () => {
  const faults = parseFaults(undefined);
  assert.deepEqual(faults.active, []);
  assert.equal(faults.failCompaction, false);
  assert.equal(faults.replicaPositionDelayMs, 0);
  assert.equal(faults.shardFaults('any'), undefined);
});

test('a slow replica position delays by the milliseconds given', () => {
  assert.equal(parseFaults('replication.slow_position:3000').replicaPositionDelayMs, 3000);
  assert.throws(() => parseFaults('replication.slow_position'), /needs a delay in ms/);
  assert.throws(() => parseFaults('replication.slow_position:soon'), /needs a delay in ms/);
});

test('fault points target the shard they name and nothing else', () => {
  const faults = parseFaults(' compaction.fail_shard:uuid-1 , compaction.crash_shard:uuid-2,compaction.fail_node');
  assert.deepEqual(faults.active, ['compaction.fail_shard:uuid-1', 'compaction.crash_shard:uuid-2', 'compaction.fail_node']);
  assert.equal(faults.failCompaction, true);
  assert.equal(faults.shardFaults('uuid-3'), undefined);
  assert.deepEqual(faults.shardFaults('uuid-1'), { failMerge: true });
  assert.deepEqual(faults.shardFaults('uuid-2'), { crashMidMerge: true });
  const failing = shardFaultHooks('uuid-1', faults.shardFaults('uuid-1'));
  assert.throws(() => failing?.beforeMerge?.(), (error) => error instanceof EngineError && error.code === 'fault_injected');
  const crashing = shardFaultHooks('uuid-2', faults.shardFaults('uuid-2'));
  assert.equal(typeof crashing?.beforeMerge, 'function');
  // Before a merge began, writing segment files (an epoch) does not crash.
  crashing?.afterSegmentFile?.('postings');
});

test('an unknown point or a missing argument stops the start', () => {
  assert.throws(() => parseFaults('compaction.fail_shrd:x'), /unknown fault point \[compaction.fail_shrd\]/);
  assert.throws(() => parseFaults('compaction.fail_shard'), /needs a shard uuid/);
});
