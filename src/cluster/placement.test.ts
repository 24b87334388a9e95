import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { CollectionMeta } from './catalog.ts';
import { assignShards, nodeLoad, reassignOrphanedShards, shardLimitExcess } from './placement.ts';

function collectionWith(placements: CollectionMeta['placements']): CollectionMeta {
  return {
    name: 'c',
    uuid: 'u',
    namespace: 'default',
    settings: { number_of_shards: placements.length, number_of_replicas: 0 },
    mapping: { properties: {} },
    shards: placements.map((placement) => ({ id: placement.shard, uuid: `s${placement.shard}` })),
    placements,
    createdAt: 0,
    version: 1,
  };
}

test('single node: every primary on it, replicas unassigned', () => {
  const placements = assignShards(4, 1, new Map([['n1', 0]]));
  assert.deepEqual(
    placements.map((placement) => [placement.primary, placement.replicas.length]),
    [['n1', 0], ['n1', 0], ['n1', 0], ['n1', 0]],
  );
});

test('several nodes: primaries balanced, replicas never beside their primary', () => {
  const load = new Map([['a', 0], ['b', 0], ['c', 0]]);
  const placements = assignShards(6, 1, load);
  for (const placement of placements) {
    assert.equal(placement.replicas.length, 1);
    assert.notEqual(placement.replicas[0], placement.primary);
  }
  assert.deepEqual([...load.values()], [4, 4, 4]);
});

test('no nodes: shards stay unassigned', () => {
  assert.deepEqual(assignShards(2, 0, new Map()), [
    { shard: 0, primary: null, replicas: [] },
    { shard: 1, primary: null, replicas: [] },
  ]);
});

test('orphaned primaries move to live nodes; load counts existing copies', () => {
  const collection = collectionWith([
    { shard: 0, primary: 'gone', replicas: ['gone-too'] },
    { shard: 1, primary: 'n1', replicas: [] },
    { shard: 2, primary: null, replicas: [] },
  ]);
  const load = nodeLoad([collection], ['n1', 'n2']);
  assert.deepEqual([...load], [['n1', 1], ['n2', 0]]);
  assert.deepEqual(reassignOrphanedShards(collection, load), [
    { shard: 0, primary: 'n2', replicas: [] },
    { shard: 1, primary: 'n1', replicas: [] },
    { shard: 2, primary: 'n1', replicas: [] },
  ]);
  const settled = collectionWith([{ shard: 0, primary: 'n1', replicas: [] }]);
  assert.equal(reassignOrphanedShards(settled, nodeLoad([settled], ['n1'])), null);
});

test('shardLimitExcess counts primaries and replicas per node against the limit', () => {
  const before = new Map([['a', 8], ['b', 3]]);
  const added = [
    { shard: 0, primary: 'a', replicas: ['b'] },
    { shard: 1, primary: 'b', replicas: ['a'] },
  ];
  assert.equal(shardLimitExcess(before, added, 10), null, 'a reaches 10 exactly');
  assert.deepEqual(shardLimitExcess(before, added, 9), { nodeId: 'a', hosted: 8, added: 2 });
  assert.equal(shardLimitExcess(before, [{ shard: 0, primary: null, replicas: [] }], 1), null, 'unassigned copies land on no node');
});
