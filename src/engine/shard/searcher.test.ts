import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import type { LeafReader } from '../segment/leaf-reader.ts';
import { DEFAULT_ENGINE_SETTINGS, Shard } from './shard.ts';

test('a fetch without source reads id and doc meta only, from segments and from the mutable layer', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'trove-searcher-'));
  const shard = await Shard.open({
    dir,
    uuid: 'searcher-test',
    mapping: { properties: { title: { type: 'text' }, views: { type: 'long', inplace: true } } },
    settings: DEFAULT_ENGINE_SETTINGS,
  });
  try {
    await shard.writeBatch(Array.from({ length: 30 }, (_, n) => ({ kind: 'index' as const, id: `s${n}`, source: { title: 'old hello', views: n } })));
    await shard.epoch();
    await shard.write({ kind: 'index', id: 's3', source: { title: 'new hello', views: 100 } });
    await shard.write({ kind: 'index', id: 'm1', source: { title: 'mutable hello', views: 1 } });
    const searcher = shard.searcher();
    try {
      const { hits } = searcher.query({ query: { match: { title: 'hello' } }, from: 0, size: 50, sort: [{ views: 'desc' }] });
      assert.equal(hits.length, 31);
      const withSource = hits.map((hit) => searcher.fetch(hit));
      const asText = hits.map((hit) => searcher.fetch(hit, 'text'));
      assert.deepEqual(
        asText,
        withSource.map(({ source: _source, ...rest }) => rest),
      );
      for (const leaf of searcher.leaves) {
        (leaf as { source: LeafReader['source'] }).source = () => assert.fail(`${leaf.name}: the stored source was read`);
      }
      const withoutSource = hits.map((hit) => searcher.fetch(hit, false));
      assert.ok(withoutSource.every((document) => !('source' in document)));
      assert.deepEqual(
        withoutSource,
        withSource.map(({ source: _source, sourceText: _text, ...meta }) => meta),
      );
      assert.deepEqual(withSource[0], { id: 's3', source: { title: 'new hello', views: 100 }, sourceText: '{"title":"new hello","views":100}', seqNo: 31, version: 2, primaryTerm: 1 });
    } finally {
      searcher.release();
    }
  } finally {
    await shard.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('a query phase on a snapshot pauses inside the mutable layer and sees each document once, as it was, whatever writes run in its pauses', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'trove-searcher-'));
  const shard = await Shard.open({ dir, uuid: 'searcher-pause', mapping: { properties: { title: { type: 'text' }, n: { type: 'long' } } }, settings: DEFAULT_ENGINE_SETTINGS });
  try {
    const count = 10_000;
    await shard.writeBatch(Array.from({ length: count }, (_, n) => ({ kind: 'index' as const, id: `d${n}`, source: { title: `hello ${n % 7 === 0 ? 'seven' : 'other'}`, n } })));
    const searcher = shard.snapshot();
    try {
      const run = searcher.startQuery({ query: { match: { title: 'hello' } }, from: 0, size: count, sort: [{ n: 'asc' }], trackTotalHits: true });
      let pauses = 0;
      let next = 0;
      while (!run.step(performance.now() - 1)) {
        pauses++;
        assert.ok(pauses <= count, 'the run ends');
        // In every pause: an update that moves a doc to a new doc id, a delete and a new doc.
        await shard.write({ kind: 'index', id: `d${next}`, source: { title: 'hello changed', n: -next } });
        await shard.write({ kind: 'delete', id: `d${count - 1 - next}` });
        await shard.write({ kind: 'index', id: `new${next}`, source: { title: 'hello', n: -1 } });
        next++;
      }
      assert.ok(pauses > 0, 'the mutable layer was collected in more than one piece');
      const result = run.result();
      assert.equal(result.total.value, count);
      const ids = result.hits.map((hit) => searcher.fetch(hit).id);
      assert.deepEqual(ids, Array.from({ length: count }, (_, n) => `d${n}`));
      assert.deepEqual(searcher.fetch(result.hits[0]!).source, { title: 'hello seven', n: 0 });
    } finally {
      searcher.release();
    }
  } finally {
    await shard.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
