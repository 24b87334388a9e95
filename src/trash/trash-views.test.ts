import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { CollectionMeta } from '../cluster/catalog.ts';
import type { NodeItemVerification, NodeTrashItem } from './node-trash.ts';
import type { ShardCheck } from '../engine/directory/shard-verify.ts';
import { mergeListings, mergeVerifications } from './trash-views.ts';

function collection(name: string, placements: Array<string | null>): CollectionMeta {
  return {
    name,
    uuid: `${name}-uuid`,
    namespace: 'shop',
    settings: { number_of_shards: placements.length, number_of_replicas: 0 },
    mapping: { properties: {} },
    shards: placements.map((_, id) => ({ id, uuid: `${name}-s${id}` })),
    placements: placements.map((primary, shard) => ({ shard, primary, replicas: [] })),
    createdAt: 1,
    version: 1,
  };
}

function snapshot(meta: CollectionMeta, shard: number, documents: number) {
  return {
    collection: meta.name,
    collectionUuid: meta.uuid,
    shard,
    uuid: meta.shards[shard].uuid,
    documents,
    deletedDocuments: 0,
    seqNo: documents,
    segments: 1,
    bytes: 100 * documents,
  };
}

const orders = collection('orders', ['node-a', 'node-b']);
const invoices = collection('invoices', ['node-b']);

function item(overrides: Partial<NodeTrashItem>): NodeTrashItem {
  return {
    itemId: 'item-1',
    kind: 'namespace',
    name: 'shop',
    namespace: 'shop',
    namespaceUuid: 'shop-uuid',
    namespaceCreatedAt: 1,
    deletedAt: 1_000_000,
    state: 'trashed',
    collections: [orders, invoices],
    shards: [],
    ...overrides,
  };
}

test('listings of several nodes merge by item, sum the snapshot and group by namespace', () => {
  const onA = item({ shards: [snapshot(orders, 0, 3)] });
  const onB = item({ shards: [snapshot(orders, 1, 4), snapshot(invoices, 0, 5)] });
  const single = item({ itemId: 'item-2', kind: 'collection', name: 'logs', namespace: 'default', deletedAt: 2_000_000, collections: [], shards: [] });
  const view = mergeListings(
    [
      { nodeId: 'node-a', nodeName: 'alpha', listing: { items: [onA, single], unreadable: [] } },
      { nodeId: 'node-b', nodeName: 'beta', listing: { items: [onB], unreadable: [{ itemId: 'broken', reason: 'bad json' }] } },
    ],
    [{ nodeId: 'node-c', nodeName: 'gamma', error: new Error('unreachable') }],
    60,
  );
  assert.deepEqual(Object.keys(view.namespaces), ['default', 'shop']);
  assert.equal(view.total_items, 2);
  const [shop] = view.namespaces.shop.items;
  assert.deepEqual(shop.summary, { collections: 2, shards: 3, documents: 12, bytes: 1200, segments: 3 });
  assert.deepEqual(shop.collections.map((entry) => [entry.name, entry.shards, entry.documents]), [['orders', 2, 7], ['invoices', 1, 5]]);
  assert.deepEqual(shop.nodes.map((node) => [node.node_name, node.shards]), [['alpha', 1], ['beta', 2]]);
  assert.equal(shop.expires_at_millis, 1_000_000 + 60_000);
  assert.equal(shop.deleted_at, new Date(1_000_000).toISOString());
  assert.deepEqual(view._nodes, { total: 3, successful: 2, failed: 1, failures: view._nodes.failures });
  assert.deepEqual(view.unreadable, [{ node_id: 'node-b', node_name: 'beta', item_id: 'broken', reason: 'bad json' }]);
});

test('an item that one node still restores is shown with that state', () => {
  const view = mergeListings(
    [
      { nodeId: 'node-a', nodeName: 'alpha', listing: { items: [item({})], unreadable: [] } },
      { nodeId: 'node-b', nodeName: 'beta', listing: { items: [item({ state: 'restoring' })], unreadable: [] } },
    ],
    [],
    60,
  );
  assert.equal(view.namespaces.shop.items[0].state, 'restoring');
});

function check(meta: CollectionMeta, shard: number, status: ShardCheck['status'] = 'ok'): ShardCheck {
  return {
    collection: meta.name,
    shard,
    uuid: meta.shards[shard].uuid,
    status,
    expectedDocuments: 3,
    foundDocuments: status === 'document_count_mismatch' ? 2 : 3,
    filesChecked: 5,
    bytesChecked: 500,
    problems: status === 'ok' ? [] : ['something'],
  };
}

test('verification needs every shard intact on the node its placement names', () => {
  const answers = (a: NodeItemVerification | null, b: NodeItemVerification | null) => [
    { nodeId: 'node-a', nodeName: 'alpha', result: a },
    { nodeId: 'node-b', nodeName: 'beta', result: b },
  ];
  const complete = mergeVerifications(item({}), answers({ state: 'trashed', shards: [check(orders, 0)] }, { state: 'trashed', shards: [check(orders, 1), check(invoices, 0)] }), []);
  assert.equal(complete.complete, true);
  assert.equal(complete.summary.ok, 3);

  // The shard of node-b sits on node-a: a restore would reopen it on node-b, where it is missing.
  const misplaced = mergeVerifications(item({}), answers({ state: 'trashed', shards: [check(orders, 0), check(orders, 1)] }, { state: 'trashed', shards: [check(invoices, 0, 'damaged')] }), []);
  assert.equal(misplaced.complete, false);
  assert.deepEqual(misplaced.shards.map((shard) => shard.status), ['ok', 'missing', 'damaged']);

  const nodeDown = mergeVerifications(item({}), [{ nodeId: 'node-a', nodeName: 'alpha', result: { state: 'trashed', shards: [check(orders, 0)] } }], [
    { nodeId: 'node-b', nodeName: 'beta', error: new Error('connection refused') },
  ]);
  assert.deepEqual(nodeDown.shards.map((shard) => shard.status), ['ok', 'node_unavailable', 'node_unavailable']);
  assert.match(nodeDown.shards[1].problems[0], /connection refused/);
  assert.equal(nodeDown.summary.node_unavailable, 2);
});

test('a shard that was unassigned when deleted never had data and does not block a restore', () => {
  const lonely = collection('lonely', [null]);
  const view = mergeVerifications(item({ collections: [lonely] }), [{ nodeId: 'node-a', nodeName: 'alpha', result: null }], []);
  assert.equal(view.complete, true);
  assert.equal(view.shards[0].status, 'unassigned');
});
