import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { renderAggregations } from '../collect/render-aggregations.ts';
import { EngineError } from '../errors.ts';
import { flattenMapping, type Mapping } from '../mapping/mapping.ts';
import { planUpdate } from '../update/plan-update.ts';
import type { UpdateOperation } from './operations.ts';
import { maintenanceStep, prng, type MaintenanceStep } from './model-steps.fixture.ts';
import { Shard } from './shard.ts';

/**
 * Model-based test of field-level updates: random sequences of creates, the eleven operators on
 * every field type, epochs, merges, reopen and crash on a shard, checked after every step against
 * a full re-index oracle: a fresh shard holding the documents the update planner computes from
 * whole documents. Hits, scores (exactly), sort values, aggregations and sources must be equal.
 */

const MAPPING: Mapping = {
  dynamic: 'strict',
  properties: {
    title: { type: 'text' },
    tags: { type: 'keyword' },
    tag: { type: 'keyword' },
    label: { type: 'keyword' },
    n: { type: 'long' },
    price: { type: 'double' },
    when: { type: 'date' },
    flag: { type: 'boolean' },
    views: { type: 'long', inplace: true },
    meta: { type: 'object', properties: { note: { type: 'text' }, rank: { type: 'integer' } } },
    body: { type: 'text' },
  },
};
const FIELDS = flattenMapping(MAPPING);
const WORDS = ['alpha', 'bravo', 'charlie', 'delta', 'echo', 'foxtrot', 'golf', 'hotel'];
const TAGS = ['red', 'green', 'blue', 'cyan'];
const SETTINGS = { epochIntervalMs: 3_600_000, epochMaxDocs: 1_000_000, mergeSegmentsPerTier: 3 };

type Doc = Record<string, unknown>;

/** A random operation on a random field of the right type. */
function randomOperation(random: () => number): UpdateOperation {
  const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)]!;
  const words = (count: number): string => Array.from({ length: count }, () => pick(WORDS)).join(' ');
  const choices: Array<() => UpdateOperation> = [
    () => ({ op: 'set', field: 'title', value: words(1 + Math.floor(random() * 5)) }),
    () => ({ op: 'append', field: 'title', value: words(2) }),
    () => ({ op: 'set', field: 'tag', value: pick(TAGS) }),
    () => ({ op: 'add_to_set', field: 'tags', value: pick(TAGS) }),
    () => ({ op: 'append', field: 'tags', value: pick(TAGS) }),
    () => ({ op: 'unset', field: pick(['tag', 'tags', 'title', 'price', 'meta.note', 'flag', 'when']) }),
    () => ({ op: 'incr', field: 'n', value: Math.floor(random() * 7) - 3 }),
    () => ({ op: 'mul', field: 'price', value: pick([2, 0.5, -1]) }),
    () => ({ op: 'min', field: 'n', value: Math.floor(random() * 10) }),
    () => ({ op: 'max', field: 'price', value: Math.floor(random() * 40) }),
    () => ({ op: 'toggle', field: 'flag' }),
    () => ({ op: 'set', field: 'when', value: `2024-0${1 + Math.floor(random() * 9)}-1${Math.floor(random() * 9)}T00:00:00Z` }),
    () => ({ op: 'current_date', field: 'when' }),
    () => ({ op: 'rename', field: 'tag', value: 'label' }),
    () => ({ op: 'rename', field: 'label', value: 'tag' }),
    () => ({ op: 'set', field: 'meta.note', value: words(3) }),
    () => ({ op: 'incr', field: 'meta.rank', value: 1 }),
    () => ({ op: 'incr', field: 'views', value: 5 }),
    () => ({ op: 'set', field: 'body', value: words(4) }),
  ];
  return pick(choices)();
}

function randomDoc(random: () => number): Doc {
  const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)]!;
  const words = (count: number): string => Array.from({ length: count }, () => pick(WORDS)).join(' ');
  return {
    title: words(1 + Math.floor(random() * 6)),
    tags: [pick(TAGS), pick(TAGS)],
    tag: pick(TAGS),
    n: Math.floor(random() * 20),
    price: Math.floor(random() * 100) / 4,
    when: `2023-0${1 + Math.floor(random() * 9)}-0${1 + Math.floor(random() * 9)}T00:00:00Z`,
    flag: random() < 0.5,
    views: Math.floor(random() * 50),
    meta: { note: words(2), rank: Math.floor(random() * 5) },
    // About one doc in eight is large enough (over 16 KiB) for its segment source to be pieced.
    body: words(random() < 0.125 ? 3500 : 30 + Math.floor(random() * 30)),
  };
}

async function runSequence(seed: number, steps: number): Promise<void> {
  const random = prng(seed);
  const dir = mkdtempSync(path.join(tmpdir(), 'trove-field-model-'));
  const oracle = new Map<string, Doc>();
  let shard = await Shard.open({ dir, uuid: 'fields', mapping: MAPPING, settings: SETTINGS });
  let created = 0;
  try {
    for (let step = 0; step < steps; step++) {
      const roll = random();
      let action: string;
      if (roll < 0.2 || oracle.size === 0) {
        const id = `d${created++}`;
        const doc = randomDoc(random);
        action = `create ${id}`;
        await shard.write({ kind: 'index', id, source: structuredClone(doc) });
        oracle.set(id, doc);
      } else if (roll < 0.8) {
        const id = `d${Math.floor(random() * created)}`;
        const ops = Array.from({ length: 1 + Math.floor(random() * 2) }, () => randomOperation(random));
        action = `update ${id} ${JSON.stringify(ops)}`;
        const current = oracle.get(id)!;
        let expected: Doc | EngineError;
        try {
          // As stored: a full re-index serialises the planned document (-0 becomes 0).
          expected = JSON.parse(JSON.stringify(planUpdate(current, { ops }, FIELDS).source)) as Doc;
        } catch (error) {
          if (!(error instanceof EngineError)) throw error;
          expected = error;
        }
        if (expected instanceof EngineError) {
          await assert.rejects(shard.write({ kind: 'update', id, ops }), { message: expected.message }, action);
        } else {
          const result = await shard.write({ kind: 'update', id, ops });
          // current_date's value is the clock's: taken from the shard, unless a later op removed the field.
          if (ops.some((operation) => operation.op === 'current_date') && Object.hasOwn(expected, 'when')) expected.when = shard.get(id)!.source.when;
          if (result.result !== 'noop') oracle.set(id, expected);
        }
      } else {
        action = roll < 0.87 ? 'epoch' : roll < 0.92 ? 'merge' : roll < 0.96 ? 'reopen' : 'crash';
        shard = await maintenanceStep(action as MaintenanceStep, shard, () => Shard.open({ dir, uuid: 'fields', mapping: MAPPING, settings: SETTINGS }));
      }
      await compareWithReindex(shard, oracle, `seed ${seed} step ${step} (${action})`);
    }
  } finally {
    await shard.close().catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
  }
}

const QUERIES: unknown[] = [
  { match_all: {} },
  { match: { title: 'alpha bravo' } },
  { match: { body: 'charlie delta echo' } },
  { match_phrase: { title: 'alpha bravo' } },
  { match: { 'meta.note': 'golf hotel' } },
  { term: { tag: 'red' } },
  { terms: { tags: ['green', 'cyan'] } },
  { term: { label: 'blue' } },
  { range: { n: { gte: 5 } } },
  { range: { n: { gte: 17 } } },
  { terms: { n: [3, 9, 18] } },
  { range: { price: { gte: 23 } } },
  { range: { price: { lt: 10 } } },
  { range: { when: { gte: '2023-06-01' } } },
  { term: { flag: true } },
  { range: { views: { gte: 30 } } },
  { range: { 'meta.rank': { gte: 2 } } },
  { exists: { field: 'tag' } },
  { bool: { should: [{ match: { title: 'echo' } }, { term: { tags: 'red' } }], filter: [{ exists: { field: 'n' } }] } },
];
const SORTS: unknown[] = [[{ n: 'asc' }, { price: 'desc' }], [{ when: 'desc' }], [{ tag: 'asc' }, { views: 'desc' }], [{ 'meta.rank': 'asc' }, { flag: 'desc' }]];
const AGGS = {
  tags: { terms: { field: 'tags' } },
  tag: { terms: { field: 'tag' } },
  label: { terms: { field: 'label' } },
  n: { stats: { field: 'n' } },
  price: { sum: { field: 'price' } },
  when: { max: { field: 'when' } },
  flag: { terms: { field: 'flag' } },
  rank: { avg: { field: 'meta.rank' } },
};

/** Runs the same searches on the shard and on a fresh shard of the oracle's documents. */
async function compareWithReindex(shard: Shard, oracle: Map<string, Doc>, where: string): Promise<void> {
  for (const [id, doc] of oracle) assert.deepEqual(shard.get(id)?.source, doc, `${where}: ${id} source`);
  const dir = mkdtempSync(path.join(tmpdir(), 'trove-field-oracle-'));
  const fresh = await Shard.open({ dir, uuid: 'oracle', mapping: MAPPING, settings: SETTINGS });
  try {
    await fresh.writeBatch([...oracle].map(([id, doc]) => ({ kind: 'index' as const, id, source: structuredClone(doc) })));
    const tested = shard.searcher();
    const expected = fresh.searcher();
    try {
      const run = (searcher: typeof tested, query: unknown, sort?: unknown) => {
        const result = searcher.query({ query, from: 0, size: 100, sort, aggs: AGGS, trackTotalHits: true });
        const hits = result.hits.map((hit) => ({ id: searcher.fetch(hit, false).id, score: hit.score, sort: hit.sort }));
        if (!sort) hits.sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : 1));
        return { total: result.total.value, hits, aggs: renderAggregations(result.aggs!, AGGS) };
      };
      for (const query of QUERIES) assert.deepEqual(run(tested, query), run(expected, query), `${where}: ${JSON.stringify(query)}`);
      for (const sort of SORTS) {
        assert.deepEqual(run(tested, { match_all: {} }, sort), run(expected, { match_all: {} }, sort), `${where}: sort ${JSON.stringify(sort)}`);
      }
    } finally {
      tested.release();
      expected.release();
    }
  } finally {
    await fresh.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

test('field-level updates match a full re-index over random operation sequences', async () => {
  const sequences = Number(process.env.TROVE_MODEL_SEQUENCES ?? 25);
  const steps = Number(process.env.TROVE_MODEL_STEPS ?? 25);
  for (let seed = 1; seed <= sequences; seed++) await runSequence(seed, steps);
});
