import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Catalog, CollectionMeta } from '../../cluster/catalog.ts';
import { clusterHealth, type HealthInputs } from './cluster-health.ts';
import { clusterState, parseStateSections } from './cluster-state.ts';

function collection(name: string, namespace: string, placements: CollectionMeta['placements'], replicas = 0): CollectionMeta {
  return {
    name,
    uuid: `${name}-uuid`,
    namespace,
    settings: { number_of_shards: placements.length, number_of_replicas: replicas },
    mapping: { properties: {} },
    shards: placements.map((placement) => ({ id: placement.shard, uuid: `${name}-${placement.shard}` })),
    placements,
    createdAt: 0,
    version: 1,
  };
}

const catalog = {
  clusterName: 'test',
  clusterUuid: 'cluster-uuid',
  revision: 9,
  namespaces: {
    default: { name: 'default', uuid: 'ns-default', createdAt: 0 },
    ops: { name: 'ops', uuid: 'ns-ops', createdAt: 0 },
    empty: { name: 'empty', uuid: 'ns-empty', createdAt: 0 },
  },
  collections: {
    // Shard 0 here and started, shard 1 still opening here: red.
    books: collection('books', 'default', [
      { shard: 0, primary: 'n1', replicas: [] },
      { shard: 1, primary: 'n1', replicas: [] },
    ]),
    // On the other registered node, one replica wanted and placed on a node that left: yellow.
    logs: collection('logs', 'ops', [{ shard: 0, primary: 'n2', replicas: ['gone'] }], 1),
    // Unassigned primary: red.
    lost: collection('lost', 'ops', [{ shard: 0, primary: null, replicas: [] }]),
  },
  nodes: {
    n1: { id: 'n1', name: 'one', address: 'http://a', version: '0', roles: ['data'], startedAt: 0 },
    n2: { id: 'n2', name: 'two', address: 'http://b', version: '0', roles: ['data'], startedAt: 0 },
  },
} as unknown as Catalog;

const inputs: HealthInputs = {
  catalog,
  nodeId: 'n1',
  localShardState: (name, shard) => (name === 'books' ? (shard === 0 ? 'started' : 'opening') : undefined),
};

test('statuses aggregate worst-of upward and copies are counted by state', () => {
  const health = clusterHealth(inputs, 'shards');
  assert.equal(health.status, 'red');
  assert.deepEqual(
    [health.active_primary_shards, health.active_shards, health.initializing_shards, health.unassigned_shards],
    [2, 2, 1, 2],
  );
  assert.equal(health.active_shards_percent_as_number, 40);
  const { default: fallback, ops, empty } = health.namespaces!;
  assert.equal(fallback.status, 'red');
  assert.equal(empty.status, 'green');
  assert.equal(empty.number_of_collections, 0);
  assert.equal(ops.collections!.logs.status, 'yellow');
  assert.equal(ops.collections!.lost.status, 'red');
  assert.equal(ops.status, 'red');
  assert.deepEqual(fallback.collections!.books.shards!['1'], {
    status: 'red',
    primary_active: false,
    active_shards: 0,
    relocating_shards: 0,
    initializing_shards: 1,
    unassigned_shards: 0,
  });
  assert.equal(ops.collections!.logs.shards!['0'].unassigned_shards, 1);
});

test('levels stop at the requested depth; namespace limits hide other namespaces', () => {
  assert.equal(clusterHealth(inputs, 'cluster').namespaces, undefined);
  assert.equal(clusterHealth(inputs, 'namespaces').namespaces!.ops.collections, undefined);
  assert.equal(clusterHealth(inputs, 'collections').namespaces!.ops.collections!.logs.shards, undefined);
  const limited = clusterHealth({ ...inputs, allowsNamespace: (namespace) => namespace === 'ops' }, 'namespaces');
  assert.deepEqual(Object.keys(limited.namespaces!), ['ops']);
  assert.equal(limited.number_of_collections, 2);
  assert.equal(limited.status, 'red');
});

test('state sections and filters', () => {
  assert.deepEqual(parseStateSections('shards, collections'), { sections: ['collections', 'shards'] });
  assert.ok('sections' in parseStateSections('_all'));
  assert.deepEqual(parseStateSections('nodes,indices,blocks'), { unknown: ['indices', 'blocks'] });
  const state = clusterState({ ...inputs, coordinator: 'local', masterId: 'n1' }, ['shards', 'master']);
  assert.deepEqual(Object.keys(state), ['cluster_name', 'cluster_uuid', 'revision', 'shards', 'master']);
  assert.deepEqual(state.master, { node_id: 'n1', coordinator: 'local' });
  const shards = state.shards as Record<string, Record<string, unknown>>;
  assert.deepEqual(shards.logs['0'], {
    uuid: 'logs-0',
    primary: { node: 'n2', state: 'started' },
    replicas: [{ node: 'gone', state: 'unassigned' }],
    primary_term: 1,
    in_sync: ['n2'],
  });
  assert.deepEqual(shards.books['1'], { uuid: 'books-1', primary: { node: 'n1', state: 'initializing' }, replicas: [], primary_term: 1, in_sync: ['n1'] });
});

test('a copy on another node takes the state that node reports; one it does not report is unassigned', () => {
  const reported = (state: 'opening' | 'started' | 'failed' | undefined): HealthInputs => ({ ...inputs, remoteShardState: (nodeId, uuid) => (nodeId === 'n2' && uuid === 'logs-0' ? state : undefined) });
  const logs = (health: ReturnType<typeof clusterHealth>) => health.namespaces!.ops.collections!.logs;
  assert.equal(logs(clusterHealth(reported('started'), 'collections')).status, 'yellow');
  assert.equal(logs(clusterHealth(reported('started'), 'collections')).active_primary_shards, 1);
  assert.equal(logs(clusterHealth(reported('opening'), 'collections')).initializing_shards, 1);
  assert.equal(logs(clusterHealth(reported('failed'), 'collections')).status, 'red');
  assert.equal(logs(clusterHealth(reported(undefined), 'collections')).status, 'red', 'a node that did not answer');
});
