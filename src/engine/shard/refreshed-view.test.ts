import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { runInSlices } from '../query/execute.ts';
import { DEFAULT_ENGINE_SETTINGS, Shard, type EngineSettings } from './shard.ts';

const MAPPING = { properties: { title: { type: 'text' }, n: { type: 'long' }, views: { type: 'long', inplace: true } } } as const;

async function withShard(settings: Partial<EngineSettings>, run: (shard: Shard) => Promise<void>): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'trove-refresh-'));
  const shard = await Shard.open({ dir, uuid: 'refresh-test', mapping: MAPPING, settings: { ...DEFAULT_ENGINE_SETTINGS, mergeEnabled: false, ...settings } });
  try {
    await run(shard);
  } finally {
    await shard.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** What a search sees now: id → n, and the count. */
async function searched(shard: Shard): Promise<{ ids: Map<string, number>; count: number }> {
  const searcher = shard.searchView();
  try {
    const result = await runInSlices(searcher.startQuery({ query: { match_all: {} }, from: 0, size: 1000, sort: [{ n: 'asc' }], trackTotalHits: true }));
    const ids = new Map(result.hits.map((hit) => {
      const document = searcher.fetch(hit);
      return [document.id, (document.source as { n: number }).n];
    }));
    return { ids, count: searcher.count({ match_all: {} }) };
  } finally {
    searcher.release();
  }
}

const doc = (n: number) => ({ title: 'alpha', n, views: n });

test('immediate mode (the default): every write is searchable at once, refresh changes nothing', async () => {
  await withShard({}, async (shard) => {
    await shard.write({ kind: 'index', id: 'a', source: doc(1) });
    assert.deepEqual([...(await searched(shard)).ids], [['a', 1]]);
    assert.equal(shard.refresh(), false);
    assert.equal(await shard.waitForRefresh(0), true);
    assert.equal(shard.getVisible('a')?.version, 1);
  });
});

test('refresh mode: searches, counts and non-realtime gets read the last refresh; realtime gets the latest', async () => {
  await withShard({ visibility: 'refresh', refreshIntervalMs: -1 }, async (shard) => {
    await shard.write({ kind: 'index', id: 'a', source: doc(1) });
    await shard.write({ kind: 'index', id: 'b', source: doc(2) });
    assert.equal((await searched(shard)).count, 0);
    assert.equal(shard.getVisible('a'), null);
    assert.equal(shard.existsVisible('a'), false);
    assert.equal(shard.get('a')?.version, 1);
    assert.equal(shard.refresh(), true);
    assert.equal(shard.refresh(), false, 'nothing new: the view stays');
    assert.deepEqual([...(await searched(shard)).ids], [['a', 1], ['b', 2]]);
    // An update, a delete and an in-place write stay hidden until the next refresh, in every layer.
    await shard.epoch();
    await shard.write({ kind: 'index', id: 'a', source: doc(10) });
    await shard.write({ kind: 'delete', id: 'b' });
    await shard.write({ kind: 'update', id: 'c', doc: doc(3), docAsUpsert: true });
    const before = await searched(shard);
    assert.deepEqual([...before.ids], [['a', 1], ['b', 2]]);
    assert.equal(before.count, 2);
    assert.equal((shard.getVisible('a')?.source as { n: number }).n, 1);
    assert.equal(shard.getVisible('b')?.version, 1);
    assert.equal(shard.getVisible('c'), null);
    assert.equal((shard.get('a')?.source as { n: number }).n, 10);
    assert.equal(shard.get('b'), null);
    assert.equal(shard.refresh(), true);
    const after = await searched(shard);
    assert.deepEqual([...after.ids], [['c', 3], ['a', 10]]);
    assert.equal(shard.getVisible('b'), null);
    assert.equal(shard.existsVisible('c'), true);
  });
});

test('a search holding a view keeps it across refreshes; the old view closes when it lets go', async () => {
  await withShard({ visibility: 'refresh', refreshIntervalMs: -1 }, async (shard) => {
    await shard.writeBatch(Array.from({ length: 5 }, (_, n) => ({ kind: 'index' as const, id: `d${n}`, source: doc(n) })));
    shard.refresh();
    const held = shard.searchView();
    await shard.write({ kind: 'delete', id: 'd0' });
    await shard.write({ kind: 'index', id: 'd9', source: doc(9) });
    shard.refresh();
    assert.equal(held.count({ match_all: {} }), 5);
    assert.equal((await searched(shard)).count, 5);
    assert.equal((await searched(shard)).ids.has('d0'), false);
    held.release();
    // A merge replaces the leaves: the next refresh takes them even with no new write.
    await shard.forceMerge({ maxSegments: 1 });
    assert.equal(shard.refresh(), true);
    assert.equal((await searched(shard)).count, 5);
  });
});

test('waitForRefresh resolves after the refresh that includes the writes, or false after its timeout', async () => {
  await withShard({ visibility: 'refresh', refreshIntervalMs: -1 }, async (shard) => {
    await shard.write({ kind: 'index', id: 'a', source: doc(1) });
    assert.equal(await shard.waitForRefresh(20), false);
    const waiting = shard.waitForRefresh(10_000);
    let settled = false;
    void waiting.then(() => (settled = true));
    await new Promise((resolve) => setTimeout(resolve, 20));
    assert.equal(settled, false);
    shard.refresh();
    assert.equal(await waiting, true);
    assert.equal(await shard.waitForRefresh(0), true, 'already included');
  });
});

test('the periodic refresh runs every refresh interval; switching to immediate shows every write at once', async () => {
  await withShard({ visibility: 'refresh', refreshIntervalMs: 30 }, async (shard) => {
    await shard.write({ kind: 'index', id: 'a', source: doc(1) });
    assert.equal(await shard.waitForRefresh(5_000), true);
    assert.equal((await searched(shard)).count, 1);
    shard.updateSettings({ refreshIntervalMs: -1 });
    await shard.write({ kind: 'index', id: 'b', source: doc(2) });
    await new Promise((resolve) => setTimeout(resolve, 100));
    assert.equal((await searched(shard)).count, 1, 'no periodic refresh with -1');
    const waiting = shard.waitForRefresh(10_000);
    shard.updateSettings({ visibility: 'immediate' });
    assert.equal(await waiting, true, 'leaving refresh mode answers the waiters');
    assert.equal((await searched(shard)).count, 2);
    shard.updateSettings({ visibility: 'refresh' });
    await shard.write({ kind: 'index', id: 'c', source: doc(3) });
    assert.equal((await searched(shard)).count, 2, 'entering refresh mode takes a view of the copy then');
  });
});
