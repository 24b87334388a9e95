import { test } from 'node:test';
import assert from 'node:assert/strict';
import { emptyCatalog, inSyncOf, primaryTermOf, type Catalog, type NodeRecord } from '../catalog.ts';
import { CatalogError } from '../catalog-error.ts';
import { allocateUnassigned } from '../etcd/allocation.ts';
import { markInSyncIn, markStaleIn, promoteReplicas } from './in-sync-rules.ts';

function node(id: string): NodeRecord {
  return { id, name: id, address: `http://${id}`, version: 'test', roles: ['data'], startedAt: 1 };
}

function catalog(nodes: string[]): Catalog {
  const draft = emptyCatalog('test', 'cluster', 0);
  for (const id of nodes) draft.nodes[id] = node(id);
  draft.collections.c = {
    name: 'c',
    uuid: 'c-uuid',
    namespace: 'default',
    settings: { number_of_shards: 1, number_of_replicas: 2 },
    mapping: { properties: {} },
    shards: [{ id: 0, uuid: 's0' }],
    placements: [{ shard: 0, primary: 'a', replicas: ['b', 'c'] }],
    createdAt: 0,
    version: 1,
  };
  return draft;
}

const address = { collection: 'c', collectionUuid: 'c-uuid', shard: 0 };
const conflict = (error: unknown): boolean => error instanceof CatalogError && error.code === 'catalog_conflict';

test('a replica joins the in-sync set under the current term only', () => {
  const draft = catalog(['a', 'b', 'c']);
  assert.deepEqual(inSyncOf(draft.collections.c!.placements[0]!), ['a']);
  markInSyncIn(draft, address, 'b', 1);
  assert.deepEqual(inSyncOf(draft.collections.c!.placements[0]!), ['a', 'b']);
  assert.equal(draft.collections.c!.version, 2);
  assert.throws(() => markInSyncIn(draft, address, 'c', 2), conflict);
  assert.throws(() => markInSyncIn(draft, address, 'z', 1), conflict);
  assert.throws(() => markInSyncIn(draft, { ...address, collectionUuid: 'other' }, 'c', 1), conflict);
});

test('copies leave the in-sync set, never the primary, and only under the current term', () => {
  const draft = catalog(['a', 'b', 'c']);
  markInSyncIn(draft, address, 'b', 1);
  markInSyncIn(draft, address, 'c', 1);
  assert.throws(() => markStaleIn(draft, address, ['b'], 0), conflict);
  markStaleIn(draft, address, ['a', 'b'], 1);
  assert.deepEqual(inSyncOf(draft.collections.c!.placements[0]!), ['a', 'c']);
});

test('the master promotes the first in-sync replica of a gone primary under the next term', () => {
  const draft = catalog(['a', 'b', 'c']);
  markInSyncIn(draft, address, 'c', 1);
  delete draft.nodes.a;
  assert.equal(promoteReplicas(draft, () => false), false, 'a node not known to be gone keeps its copies');
  assert.equal(promoteReplicas(draft, () => true), true);
  const placement = draft.collections.c!.placements[0]!;
  assert.equal(placement.primary, 'c', 'b was never in sync, so it cannot be promoted');
  assert.equal(primaryTermOf(placement), 2);
  assert.deepEqual(inSyncOf(placement), ['c'], 'the other replicas recover from the new primary');
  assert.deepEqual(placement.replicas, ['b']);
  allocateUnassigned(draft);
  assert.equal(draft.collections.c!.placements[0]!.primaryTerm, 2, 'allocation keeps the term');
});

test('a gone primary without an in-sync replica stays where it is', () => {
  const draft = catalog(['b', 'c']);
  assert.equal(promoteReplicas(draft, () => true), false);
  assert.equal(draft.collections.c!.placements[0]!.primary, 'a');
});

test('replicas on gone nodes leave the placement; fewer replicas drop those out of sync first', () => {
  const draft = catalog(['a', 'b', 'c']);
  markInSyncIn(draft, address, 'c', 1);
  draft.collections.c!.settings.number_of_replicas = 1;
  assert.equal(allocateUnassigned(draft), true);
  assert.deepEqual(draft.collections.c!.placements[0]!.replicas, ['c']);
  delete draft.nodes.c;
  promoteReplicas(draft, () => true);
  assert.deepEqual(draft.collections.c!.placements[0]!.replicas, []);
  assert.deepEqual(inSyncOf(draft.collections.c!.placements[0]!), ['a']);
});
