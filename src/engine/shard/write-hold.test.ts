import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { maintenanceSlots, MAINTENANCE_SLOTS_PER_THREAD } from './maintenance-slots.ts';
import type { WriteOp } from './operations.ts';
import { DEFAULT_ENGINE_SETTINGS, Shard } from './shard.ts';

const EPOCH_BYTES = 256 * 1024;

function batch(from: number, count: number): WriteOp[] {
  return Array.from({ length: count }, (_, k) => ({
    kind: 'index' as const,
    id: `doc-${from + k}`,
    source: { title: `words ${from + k} of a document long enough to fill the layer`, body: 'lorem ipsum dolor '.repeat(40) },
  }));
}

test('client writes are held while the mutable layer is full and no epoch can freeze it, and go on once one does', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'trove-write-hold-'));
  const settings = { ...DEFAULT_ENGINE_SETTINGS, epochMaxBytes: EPOCH_BYTES, epochMaxDocs: 1_000_000, mergeEnabled: false };
  const shard = await Shard.open({ dir, uuid: 'write-hold', mapping: { properties: { title: { type: 'text' }, body: { type: 'text' } } }, settings });
  // Every maintenance slot of this thread is taken, so no epoch runs until they are released.
  const releases: Array<() => void> = [];
  const blockers = Array.from({ length: MAINTENANCE_SLOTS_PER_THREAD }, () =>
    maintenanceSlots.run(() => new Promise<void>((resolve) => releases.push(resolve))),
  );
  try {
    let written = 0;
    let held: Promise<unknown> | null = null;
    for (let round = 0; round < 200 && held === null; round++) {
      const pending = shard.writeBatch(batch(written, 20));
      written += 20;
      const settled = await Promise.race([pending.then(() => true), sleep(300).then(() => false)]);
      if (!settled) held = pending;
    }
    assert.ok(held, 'a write was held before 4000 documents');
    const stats = shard.stats();
    assert.equal(stats.heldWrites, 1);
    assert.equal(stats.epochs, 0);
    // The layer stopped growing near the hold threshold (four epoch sizes), not at what was sent.
    assert.ok(stats.mutableDocs < written, `${stats.mutableDocs} docs applied of ${written} sent`);
    assert.equal(shard.get(`doc-${written - 1}`), null);
    for (const release of releases) release();
    await held;
    await Promise.all(blockers);
    await shard.waitForMaintenance();
    const after = shard.stats();
    assert.equal(after.heldWrites, 0);
    assert.ok(after.heldMs > 0);
    assert.ok(after.epochs >= 1);
    assert.equal(after.docs, written);
    assert.ok(shard.get(`doc-${written - 1}`));
  } finally {
    for (const release of releases) release();
    await shard.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
