import { test } from 'node:test';
import assert from 'node:assert/strict';
import { emptyCatalog, type Catalog, type CollectionMeta, type ShardPlacement } from '../catalog.ts';
import { allocateUnassigned } from './allocation.ts';

function catalog(nodeIds: string[], placements: ShardPlacement[], replicas: number): Catalog {
  const draft = emptyCatalog('trove', 'uuid', 1);
  for (const id of nodeIds) draft.nodes[id] = { id, name: id, address: '', version: '0', roles: [], startedAt: 1 };
  const collection: CollectionMeta = {
    name: 'c',
    uuid: 'c-uuid',
    namespace: 'default',
    settings: { number_of_shards: placements.length, number_of_replicas: replicas },
    mapping: { properties: {} },
    shards: placements.map((placement) => ({ id: placement.shard, uuid: `s${placement.shard}` })),
    placements,
    createdAt: 1,
    version: 1,
  };
  draft.collections.c = collection;
  return draft;
}

test('unassigned primaries spread over the nodes, with replicas elsewhere', () => {
  const draft = catalog(['n1', 'n2'], [0, 1].map((shard) => ({ shard, primary: null, replicas: [] })), 1);
  // placement.ts would put both primaries on n1 (it balances copies); allocation balances primaries.
  assert.equal(allocateUnassigned(draft), true);
  assert.deepEqual(draft.collections.c.placements, [
    { shard: 0, primary: 'n1', replicas: ['n2'] },
    { shard: 1, primary: 'n2', replicas: ['n1'] },
  ]);
  assert.equal(draft.collections.c.version, 2);
  assert.equal(allocateUnassigned(draft), false, 'nothing left to do');
});

test('an assigned primary never moves; shards whose primary node left, or that hold only replicas, wait for failover', () => {
  const draft = catalog(['n2', 'n3'], [
    { shard: 0, primary: 'gone', replicas: [] },
    { shard: 1, primary: null, replicas: ['n2'] },
    { shard: 2, primary: 'n3', replicas: [] },
  ], 1);
  assert.equal(allocateUnassigned(draft), true);
  assert.deepEqual(draft.collections.c.placements, [
    { shard: 0, primary: 'gone', replicas: [] },
    { shard: 1, primary: null, replicas: ['n2'] },
    { shard: 2, primary: 'n3', replicas: ['n2'] },
  ]);
});

test('no registered node: nothing changes', () => {
  const draft = catalog([], [{ shard: 0, primary: null, replicas: [] }], 0);
  assert.equal(allocateUnassigned(draft), false);
  assert.equal(draft.collections.c.version, 1);
});
