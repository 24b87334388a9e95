import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { CollectionMeta, NodeRecord } from '../cluster/catalog.ts';
import { EngineError } from '../engine/errors.ts';
import { compactAcrossNodes, primaryNodeIds, type CompactionNode, type CompactOptions } from './compaction.ts';
import { NodeError } from './node-error.ts';

const collection: CollectionMeta = {
  name: 'mail',
  uuid: 'c-uuid',
  namespace: 'default',
  settings: { number_of_shards: 5, number_of_replicas: 0 },
  mapping: { properties: {} },
  shards: [0, 1, 2, 3, 4].map((id) => ({ id, uuid: `s${id}` })),
  placements: [
    { shard: 0, primary: 'node-b', replicas: [] },
    { shard: 1, primary: 'node-a', replicas: [] },
    { shard: 2, primary: 'node-c', replicas: [] },
    { shard: 3, primary: 'node-a', replicas: ['node-b'] },
    { shard: 4, primary: null, replicas: [] },
  ],
  createdAt: 0,
  version: 1,
};

const registry: NodeRecord[] = [
  { id: 'node-a', name: 'alpha', address: 'http://127.0.0.1:9200', version: '0', roles: ['data'], startedAt: 0 },
  { id: 'node-b', name: 'bravo', address: 'http://127.0.0.1:9201', version: '0', roles: ['data'], startedAt: 0 },
];

/** A node that counts its primaries of the collection and queues a job for them. */
function workingNode(nodeId: string, seen: CompactOptions[]): CompactionNode {
  return {
    nodeId,
    compact: async (meta, options) => {
      seen.push(options);
      return { jobId: `${nodeId}:1`, primaryPasses: meta.placements.filter((placement) => placement.primary === nodeId).length };
    },
  };
}

test('primary nodes are the distinct nodes holding a primary; unassigned shards have none', () => {
  assert.deepEqual(primaryNodeIds(collection).sort(), ['node-a', 'node-b', 'node-c']);
});

test('every hosting node answers one row; a failing or unreachable node fails only its own row', async () => {
  const seen: CompactOptions[] = [];
  const failing: CompactionNode = {
    nodeId: 'node-b',
    compact: async () => {
      throw new EngineError('fault_injected', 'disk on fire');
    },
  };
  const lookup = (nodeId: string): CompactionNode | null => (nodeId === 'node-a' ? workingNode('node-a', seen) : nodeId === 'node-b' ? failing : null);
  const result = await compactAcrossNodes(collection, registry, lookup, { maxSegments: 2 });

  assert.equal(result.collection, 'mail');
  assert.deepEqual(
    result.rows.map((row) => row.nodeName),
    ['alpha', 'bravo', 'node-c'],
  );
  const [alpha, bravo, unknown] = result.rows;
  assert.deepEqual(alpha!.queued, { jobId: 'node-a:1', primaryPasses: 2 });
  assert.equal(alpha!.error, undefined);
  assert.ok(bravo!.error instanceof EngineError && bravo!.error.message === 'disk on fire');
  assert.equal(bravo!.queued, undefined);
  assert.ok(unknown!.error instanceof NodeError && unknown!.error.code === 'shard_unavailable');
  assert.match((unknown!.error as Error).message, /node \[node-c\] hosts primaries of \[mail\] but cannot be reached/);
  assert.deepEqual(seen, [{ maxSegments: 2 }]);
});

test('a slow node does not hold back the others: rows are collected concurrently', async () => {
  const order: string[] = [];
  const node = (nodeId: string, delayMs: number): CompactionNode => ({
    nodeId,
    compact: async () => {
      order.push(`start ${nodeId}`);
      await new Promise((resolve) => setTimeout(resolve, delayMs));
      order.push(`end ${nodeId}`);
      return { jobId: `${nodeId}:7`, primaryPasses: 1 };
    },
  });
  const nodes = new Map([['node-a', node('node-a', 30)], ['node-b', node('node-b', 1)], ['node-c', node('node-c', 1)]]);
  const result = await compactAcrossNodes(collection, registry, (nodeId) => nodes.get(nodeId) ?? null, { maxSegments: 1 });
  assert.equal(result.rows.filter((row) => row.queued).length, 3);
  assert.deepEqual(order.slice(0, 3).sort(), ['start node-a', 'start node-b', 'start node-c']);
  assert.equal(order.at(-1), 'end node-a');
});
