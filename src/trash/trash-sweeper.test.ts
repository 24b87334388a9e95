import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import type { CollectionMeta } from '../cluster/catalog.ts';
import { DEFAULT_ENGINE_SETTINGS } from '../engine/shard/shard.ts';
import { NO_TRASH_FAULTS } from './trash-faults.ts';
import { TrashStore } from './trash-store.ts';
import { TrashSweeper } from './trash-sweeper.ts';

function emptyCollection(name: string): CollectionMeta {
  return {
    name,
    uuid: crypto.randomUUID(),
    namespace: 'default',
    settings: { number_of_shards: 1, number_of_replicas: 0 },
    mapping: { properties: {} },
    shards: [{ id: 0, uuid: crypto.randomUUID() }],
    placements: [{ shard: 0, primary: 'node-1', replicas: [] }],
    createdAt: 1,
    version: 1,
  };
}

test('the current retention applies to every item, counted from its recorded deletedAt', async () => {
  const dataPath = await mkdtemp(join(tmpdir(), 'trove-trash-sweeper-'));
  try {
    const logger = pino({ level: 'silent' });
    const store = await TrashStore.open({ dataPath, nodeId: 'node-1', engineSettings: DEFAULT_ENGINE_SETTINGS, logger, faults: NO_TRASH_FAULTS });
    const now = 1_000_000_000;
    for (const [name, age] of [['old', 100], ['recent', 10]] as const) {
      const meta = emptyCollection(name);
      const namespace = { name: 'default', uuid: '', createdAt: 0 };
      await store.prepareDelete({ itemId: name, kind: 'collection', name, namespace, deletedAt: now - age * 1000, collections: [meta] });
      await store.retire([{ meta, openShards: [null] }]);
    }
    let retentionSecs = 3600;
    const sweeper = new TrashSweeper({ store, retentionSecs: () => retentionSecs, logger, now: () => now });
    assert.deepEqual(await sweeper.sweep(), []);
    retentionSecs = 50;
    assert.deepEqual(await sweeper.sweep(), ['old']);
    retentionSecs = 10;
    assert.deepEqual(await sweeper.sweep(), ['recent'], 'an item exactly at its deadline goes');

    const reopened = await TrashStore.open({ dataPath, nodeId: 'node-1', engineSettings: DEFAULT_ENGINE_SETTINGS, logger, faults: NO_TRASH_FAULTS });
    assert.deepEqual(reopened.items(), []);
    sweeper.start();
    await sweeper.stop();
  } finally {
    await rm(dataPath, { recursive: true, force: true });
  }
});
