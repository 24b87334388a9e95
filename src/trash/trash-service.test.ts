import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import type { CollectionMeta } from '../cluster/catalog.ts';
import { LocalCoordinator } from '../cluster/local/local-coordinator.ts';
import type { NodeItemVerification, NodeTrash, NodeTrashItem, NodeTrashListing } from './node-trash.ts';
import type { ShardCheck } from '../engine/directory/shard-verify.ts';
import { TrashError } from './trash-error.ts';
import { NO_TRASH_FAULTS } from './trash-faults.ts';
import { TrashService } from './trash-service.ts';
import type { PurgedItem, TrashIntent } from './trash-store.ts';

/** A node's trash kept in memory, recording the calls it receives. */
class FakeNode implements NodeTrash {
  readonly calls: string[] = [];
  readonly items = new Map<string, NodeTrashItem>();
  readonly checks = new Map<string, ShardCheck[]>();
  failing: string | null = null;

  constructor(readonly nodeId: string, readonly nodeName: string) {}

  private record(call: string): void {
    this.calls.push(call);
    if (this.failing === call) throw new Error(`${this.nodeName} is unreachable`);
  }

  async list(): Promise<NodeTrashListing> {
    return { items: [...this.items.values()], unreadable: [] };
  }
  async prepareDelete(intent: TrashIntent): Promise<void> {
    this.record('prepareDelete');
    this.items.set(intent.itemId, { ...intent, namespace: intent.namespace.name, namespaceUuid: intent.namespace.uuid, namespaceCreatedAt: 0, state: 'pending', shards: [] });
  }
  async abortDelete(itemId: string): Promise<void> {
    this.record('abortDelete');
    this.items.delete(itemId);
  }
  async finishDelete(itemId: string): Promise<void> {
    this.record('finishDelete');
    this.items.get(itemId)!.state = 'trashed';
  }
  async verify(itemId: string): Promise<NodeItemVerification | null> {
    const item = this.items.get(itemId);
    return item ? { state: item.state, shards: this.checks.get(itemId) ?? [] } : null;
  }
  async prepareRestore(itemId: string): Promise<void> {
    this.record('prepareRestore');
    this.items.get(itemId)!.state = 'restoring';
  }
  async abortRestore(itemId: string): Promise<void> {
    this.record('abortRestore');
    this.items.get(itemId)!.state = 'trashed';
  }
  async finishRestore(itemId: string): Promise<void> {
    this.record('finishRestore');
    this.items.delete(itemId);
  }
  async purge(itemId: string): Promise<PurgedItem | null> {
    this.record('purge');
    const item = this.items.get(itemId);
    this.items.delete(itemId);
    return item ? { itemId, shards: item.shards.length, bytes: 10 } : null;
  }
}

const MAPPING = { properties: { title: { type: 'text' as const } } };
let dataPath: string;
let coordinator: LocalCoordinator;

before(async () => {
  dataPath = await mkdtemp(join(tmpdir(), 'trove-trash-service-'));
  coordinator = await LocalCoordinator.open({ dataPath, clusterName: 'trove' });
});

after(async () => {
  await coordinator.close();
  await rm(dataPath, { recursive: true, force: true });
});

function service(nodes: FakeNode[]): TrashService {
  return new TrashService({
    coordinator,
    nodes: () => nodes,
    waitForRevision: async () => undefined,
    retentionSecs: () => 3600,
    faults: NO_TRASH_FAULTS,
    logger: pino({ level: 'silent' }),
  });
}

/** A collection whose two shards live on two nodes, trashed on both. */
function trashedOnTwoNodes(alpha: FakeNode, beta: FakeNode, name: string): { itemId: string; meta: CollectionMeta } {
  const meta: CollectionMeta = {
    name,
    uuid: crypto.randomUUID(),
    namespace: 'default',
    settings: { number_of_shards: 2, number_of_replicas: 0 },
    mapping: MAPPING,
    shards: [{ id: 0, uuid: crypto.randomUUID() }, { id: 1, uuid: crypto.randomUUID() }],
    placements: [{ shard: 0, primary: alpha.nodeId, replicas: [] }, { shard: 1, primary: beta.nodeId, replicas: [] }],
    createdAt: 1,
    version: 3,
  };
  const itemId = `item-${name}`;
  for (const [index, node] of [alpha, beta].entries()) {
    const item: NodeTrashItem = { itemId, kind: 'collection', name, namespace: 'default', namespaceUuid: '', namespaceCreatedAt: 0, deletedAt: 1, state: 'trashed', collections: [meta], shards: [] };
    node.items.set(itemId, item);
    node.checks.set(itemId, [{ collection: name, shard: index, uuid: meta.shards[index].uuid, status: 'ok', expectedDocuments: 1, foundDocuments: 1, filesChecked: 3, bytesChecked: 30, problems: [] }]);
  }
  return { itemId, meta };
}

test('a node that cannot record the delete stops it: the others forget their intent, the catalog is unchanged', async () => {
  const alpha = new FakeNode('node-a', 'alpha');
  const beta = new FakeNode('node-b', 'beta');
  await coordinator.createCollection({ name: 'kept', settings: { number_of_shards: 1, number_of_replicas: 0 }, mapping: MAPPING });
  beta.failing = 'prepareDelete';
  await assert.rejects(service([alpha, beta]).deleteCollections('kept'), (error) => error instanceof TrashError && error.code === 'trash_unavailable' && /beta is unreachable/.test(error.message));
  assert.deepEqual(alpha.calls, ['prepareDelete', 'abortDelete']);
  assert.equal(alpha.items.size, 0);
  assert.ok(coordinator.getCollection('kept'));

  beta.failing = null;
  const deleted = await service([alpha, beta]).deleteCollections('kept');
  assert.equal(coordinator.getCollection('kept'), null);
  assert.ok(alpha.items.has(deleted.trash_items[0].item_id) && beta.items.has(deleted.trash_items[0].item_id), 'every node got the intent');
  assert.deepEqual(beta.calls, ['prepareDelete', 'prepareDelete', 'finishDelete']);
});

test('a restore needs every shard intact on its node; otherwise 409 with the findings and nothing changes', async () => {
  const alpha = new FakeNode('node-a', 'alpha');
  const beta = new FakeNode('node-b', 'beta');
  const { itemId } = trashedOnTwoNodes(alpha, beta, 'split');
  beta.checks.get(itemId)![0] = { ...beta.checks.get(itemId)![0], status: 'damaged', problems: ['terms: checksum mismatch'] };
  const revision = coordinator.revision;
  await assert.rejects(service([alpha, beta]).restore(itemId, {}), (error) => {
    assert.ok(error instanceof TrashError && error.code === 'trash_item_incomplete');
    const findings = error.details.findings as Array<{ node_name: string; status: string }>;
    assert.deepEqual(findings.map((finding) => [finding.node_name, finding.status]), [['alpha', 'ok'], ['beta', 'damaged']]);
    return true;
  });
  assert.equal(coordinator.revision, revision);
  assert.deepEqual([...alpha.calls, ...beta.calls], []);
});

test('a complete item comes back on every node with its recorded metadata', async () => {
  const alpha = new FakeNode('node-a', 'alpha');
  const beta = new FakeNode('node-b', 'beta');
  const { itemId, meta } = trashedOnTwoNodes(alpha, beta, 'whole');
  const restored = await service([alpha, beta]).restore(itemId, { rename_to: 'whole-again' });
  assert.deepEqual(restored.collections, ['whole-again']);
  const live = coordinator.getCollection('whole-again');
  assert.deepEqual([live?.uuid, live?.shards, live?.placements, live?.version], [meta.uuid, meta.shards, meta.placements, 3]);
  assert.deepEqual(alpha.calls, ['prepareRestore', 'finishRestore']);
  assert.deepEqual(beta.calls, ['prepareRestore', 'finishRestore']);
});

test('a restore refused by the catalog is undone on every node; purge reports each node', async () => {
  const alpha = new FakeNode('node-a', 'alpha');
  const beta = new FakeNode('node-b', 'beta');
  const { itemId } = trashedOnTwoNodes(alpha, beta, 'taken');
  await coordinator.createCollection({ name: 'taken', settings: { number_of_shards: 1, number_of_replicas: 0 }, mapping: MAPPING });
  await assert.rejects(service([alpha, beta]).restore(itemId, {}), (error) => error instanceof TrashError && error.code === 'trash_restore_conflict');
  assert.deepEqual(alpha.calls, [], 'the conflict is found before any node is touched');

  beta.failing = 'prepareRestore';
  await assert.rejects(service([alpha, beta]).restore(itemId, { rename_to: 'other' }), (error) => error instanceof TrashError && error.code === 'trash_unavailable');
  assert.deepEqual(alpha.calls, ['prepareRestore', 'abortRestore']);
  assert.equal(alpha.items.get(itemId)?.state, 'trashed');
  assert.equal(coordinator.getCollection('other'), null);

  beta.failing = 'purge';
  const purged = await service([alpha, beta]).purge(itemId);
  assert.equal(purged.acknowledged, false);
  assert.deepEqual(purged.nodes.map((node) => node.node_name), ['alpha']);
  assert.equal(purged._nodes.failed, 1);
  beta.failing = null;
  assert.equal((await service([alpha, beta]).purge(itemId))._nodes.successful, 2);
  await assert.rejects(service([alpha, beta]).purge(itemId), (error) => error instanceof TrashError && error.code === 'trash_item_not_found');
});
