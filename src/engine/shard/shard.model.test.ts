import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import type { Mapping } from '../mapping/mapping.ts';
import { maintenanceStep, prng, type MaintenanceStep } from './model-steps.fixture.ts';
import { Shard } from './shard.ts';

/**
 * Model-based test: random sequences of index / overwrite / delete / inplace update / epoch /
 * merge / reopen / crash against a plain Map oracle, checked after every step.
 */

const MAPPING: Mapping = {
  dynamic: 'strict',
  properties: {
    title: { type: 'text' },
    tag: { type: 'keyword' },
    views: { type: 'long', inplace: true },
    price: { type: 'double' },
  },
};
const WORDS = ['alpha', 'bravo', 'charlie', 'delta', 'echo', 'foxtrot', 'golf', 'hotel'];
const TAGS = ['red', 'green', 'blue'];

interface ModelDoc {
  title: string;
  tag: string;
  views: number;
  price: number;
}

const SETTINGS = { epochIntervalMs: 3_600_000, epochMaxDocs: 1_000_000, mergeSegmentsPerTier: 3 };

async function runSequence(seed: number, steps: number): Promise<void> {
  const random = prng(seed);
  const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)]!;
  const dir = mkdtempSync(path.join(tmpdir(), 'trove-model-'));
  const oracle = new Map<string, ModelDoc>();
  let shard = await Shard.open({ dir, uuid: 'model', mapping: MAPPING, settings: SETTINGS });
  let priceCounter = 0;
  try {
    for (let step = 0; step < steps; step++) {
      const id = `d${Math.floor(random() * 25)}`;
      const roll = random();
      let action: string;
      if (roll < 0.4) {
        action = 'index';
        const title = Array.from({ length: 1 + Math.floor(random() * 6) }, () => pick(WORDS)).join(' ');
        const doc: ModelDoc = { title, tag: pick(TAGS), views: Math.floor(random() * 100), price: ++priceCounter + random() / 2 };
        await shard.write({ kind: 'index', id, source: { ...doc } });
        oracle.set(id, doc);
      } else if (roll < 0.55) {
        action = 'delete';
        const result = await shard.write({ kind: 'delete', id });
        assert.equal(result.result, oracle.has(id) ? 'deleted' : 'not_found');
        oracle.delete(id);
      } else if (roll < 0.75) {
        action = 'incr';
        const amount = Math.floor(random() * 10) - 3;
        if (oracle.has(id)) {
          await shard.write({ kind: 'update', id, ops: [{ op: 'incr', field: 'views', value: amount }] });
          oracle.get(id)!.views += amount;
        } else {
          await assert.rejects(shard.write({ kind: 'update', id, ops: [{ op: 'incr', field: 'views', value: amount }] }), /document missing/);
        }
      } else {
        action = roll < 0.83 ? 'epoch' : roll < 0.88 ? 'merge' : roll < 0.94 ? 'reopen' : 'crash';
        shard = await maintenanceStep(action as MaintenanceStep, shard, () => Shard.open({ dir, uuid: 'model', mapping: MAPPING, settings: SETTINGS }));
      }
      check(shard, oracle, `seed ${seed} step ${step} (${action} ${id})`);
    }
  } finally {
    await shard.close().catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
  }
}

function ids(hits: { id: string }[]): string[] {
  return hits.map((hit) => hit.id).sort();
}

function check(shard: Shard, oracle: Map<string, ModelDoc>, where: string): void {
  for (const [id, doc] of oracle) {
    const stored = shard.get(id);
    assert.ok(stored, `${where}: ${id} missing`);
    assert.deepEqual(stored.source, { ...doc }, `${where}: ${id} source`);
  }
  const searcher = shard.searcher();
  try {
    const all = searcher.query({ query: { match_all: {} }, from: 0, size: 100 });
    assert.equal(all.total.value, oracle.size, `${where}: total`);
    const fetchAll = (query: unknown, sort?: unknown) =>
      searcher.query({ query, from: 0, size: 100, sort }).hits.map((hit) => searcher.fetch(hit));
    const tag = 'green';
    assert.deepEqual(ids(fetchAll({ term: { tag } })), [...oracle].filter(([, doc]) => doc.tag === tag).map(([id]) => id).sort(), `${where}: term`);
    const word = 'delta';
    assert.deepEqual(
      ids(fetchAll({ match: { title: word } })),
      [...oracle].filter(([, doc]) => doc.title.split(' ').includes(word)).map(([id]) => id).sort(),
      `${where}: match`,
    );
    assert.deepEqual(
      ids(fetchAll({ range: { views: { gte: 50 } } })),
      [...oracle].filter(([, doc]) => doc.views >= 50).map(([id]) => id).sort(),
      `${where}: range on inplace`,
    );
    const byPrice = fetchAll({ match_all: {} }, [{ price: 'desc' }]).map((hit) => hit.id);
    const expected = [...oracle].sort((a, b) => b[1].price - a[1].price).map(([id]) => id);
    assert.deepEqual(byPrice, expected, `${where}: sort by price`);
    // Ranking: scores must not depend on how documents are spread over leaves beyond stats.
    const scored = searcher.query({ query: { match: { title: 'alpha bravo' } }, from: 0, size: 100 });
    for (let index = 1; index < scored.hits.length; index++) {
      assert.ok(scored.hits[index - 1]!.score >= scored.hits[index]!.score, `${where}: score order`);
    }
  } finally {
    searcher.release();
  }
}

test('shard matches an in-memory oracle over random operation sequences', async () => {
  const sequences = Number(process.env.TROVE_MODEL_SEQUENCES ?? 100);
  const steps = Number(process.env.TROVE_MODEL_STEPS ?? 20);
  for (let seed = 1; seed <= sequences; seed++) await runSequence(seed, steps);
});
