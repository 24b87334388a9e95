import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { runInSlices } from '../query/execute.ts';
import type { Searcher } from './searcher.ts';
import { DEFAULT_ENGINE_SETTINGS, Shard } from './shard.ts';

const MAPPING = { properties: { title: { type: 'text' }, tag: { type: 'keyword' }, n: { type: 'long' }, views: { type: 'long', inplace: true } } } as const;

async function withShard(run: (shard: Shard) => Promise<void>): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'trove-snapshot-'));
  const shard = await Shard.open({ dir, uuid: 'snapshot-test', mapping: MAPPING, settings: { ...DEFAULT_ENGINE_SETTINGS, mergeEnabled: false } });
  try {
    await run(shard);
  } finally {
    await shard.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** Every hit of a query on the snapshot, fetched: id → source. */
async function read(searcher: Searcher, query: unknown = { match_all: {} }, sort: unknown = [{ n: 'asc' }]): Promise<Map<string, Record<string, unknown>>> {
  const result = await runInSlices(searcher.startQuery({ query, from: 0, size: 1000, sort, trackTotalHits: true }));
  assert.equal(result.total.value, result.hits.length);
  return new Map(result.hits.map((hit) => {
    const document = searcher.fetch(hit);
    return [document.id, document.source!];
  }));
}

const doc = (n: number, title = 'alpha beta') => ({ title, tag: n % 2 === 0 ? 'even' : 'odd', n, views: n });

test('a snapshot sees the documents and content of its open, whatever writes, epochs and merges follow', async () => {
  await withShard(async (shard) => {
    await shard.writeBatch(Array.from({ length: 40 }, (_, n) => ({ kind: 'index' as const, id: `s${n}`, source: doc(n) })));
    await shard.epoch();
    await shard.writeBatch(Array.from({ length: 20 }, (_, n) => ({ kind: 'index' as const, id: `t${n}`, source: doc(100 + n) })));
    await shard.epoch();
    // Mutable layer at open.
    await shard.writeBatch(Array.from({ length: 10 }, (_, n) => ({ kind: 'index' as const, id: `m${n}`, source: doc(200 + n) })));
    const searcher = shard.snapshot();
    try {
      const before = await read(searcher);
      const beforeAlpha = await read(searcher, { match: { title: 'alpha' } }, [{ _score: 'desc' }, { n: 'asc' }]);
      const scored = await runInSlices(searcher.startQuery({ query: { match: { title: 'alpha' } }, from: 0, size: 100 }));
      assert.equal(before.size, 70);
      // Updates, deletes, inplace updates and new docs in every layer.
      await shard.write({ kind: 'index', id: 's1', source: doc(1, 'gamma') });
      await shard.write({ kind: 'delete', id: 't3' });
      await shard.write({ kind: 'delete', id: 'm4' });
      await shard.write({ kind: 'index', id: 'm5', source: doc(205, 'alpha alpha alpha') });
      await shard.write({ kind: 'update', id: 's2', ops: [{ op: 'set', field: 'views', value: 999 }] });
      await shard.write({ kind: 'update', id: 'm6', ops: [{ op: 'set', field: 'views', value: 777 }] });
      await shard.writeBatch(Array.from({ length: 30 }, (_, n) => ({ kind: 'index' as const, id: `new${n}`, source: doc(300 + n, 'alpha') })));
      assert.equal(shard.get('s2')!.source.views, 999);
      await shard.epoch();
      await shard.write({ kind: 'update', id: 's2', ops: [{ op: 'set', field: 'views', value: 1000 }] });
      await shard.write({ kind: 'delete', id: 's5' });
      await shard.forceMerge({ maxSegments: 1 });
      await shard.write({ kind: 'delete', id: 's6' });
      assert.deepEqual(await read(searcher), before);
      assert.deepEqual(await read(searcher, { match: { title: 'alpha' } }, [{ _score: 'desc' }, { n: 'asc' }]), beforeAlpha);
      const rescored = await runInSlices(searcher.startQuery({ query: { match: { title: 'alpha' } }, from: 0, size: 100 }));
      assert.deepEqual(rescored.hits.map((hit) => [hit.leaf, hit.doc, hit.score]), scored.hits.map((hit) => [hit.leaf, hit.doc, hit.score]));
      assert.deepEqual(await read(searcher, { range: { views: { gte: 999 } } }), new Map());
      assert.deepEqual([...(await read(searcher, { ids: { values: ['s1', 'm5', 'new1'] } })).keys()], ['s1', 'm5']);
      assert.equal((await read(searcher, { term: { tag: 'even' } })).size, 35);
      const sorted = await runInSlices(searcher.startQuery({ from: 0, size: 3, sort: [{ views: 'desc' }] }));
      assert.deepEqual(sorted.hits.map((hit) => hit.sort), [[209], [208], [207]]);
      // The live shard sees the writes.
      const live = shard.searcher();
      try {
        assert.equal((await read(live)).size, 70 - 4 + 30);
      } finally {
        live.release();
      }
    } finally {
      searcher.release();
    }
    assert.equal(shard.stats().segments.length, 1);
  });
});

test('_shard_doc sort values place the shard in the high 32 bits and page with search_after', async () => {
  await withShard(async (shard) => {
    await shard.writeBatch(Array.from({ length: 12 }, (_, n) => ({ kind: 'index' as const, id: `d${n}`, source: doc(n) })));
    const searcher = shard.snapshot();
    try {
      assert.throws(() => searcher.startQuery({ from: 0, size: 5, sort: ['_shard_doc'] }), /cannot be used without \[point in time\]/);
      const base = 3 * 2 ** 32;
      const first = await runInSlices(searcher.startQuery({ from: 0, size: 5, sort: [{ tag: 'asc' }, '_shard_doc'], shardIndex: 3 }));
      assert.deepEqual(first.hits.map((hit) => hit.sort), [0, 2, 4, 6, 8].map((n) => ['even', base + n]));
      const next = await runInSlices(searcher.startQuery({ from: 0, size: 5, sort: [{ tag: 'asc' }, '_shard_doc'], shardIndex: 3, searchAfter: first.hits.at(-1)!.sort }));
      assert.deepEqual(next.hits.map((hit) => hit.sort), [['even', base + 10], ['odd', base + 1], ['odd', base + 3], ['odd', base + 5], ['odd', base + 7]]);
      assert.equal(next.total.value, 12);
    } finally {
      searcher.release();
    }
  });
});
