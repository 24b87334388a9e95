import { test } from 'node:test';
import assert from 'node:assert/strict';
import { seededRandom } from '../segment/reference-leaf.fixture.ts';
import { executeQuery } from '../query/execute.ts';
import type { ShardQueryResult } from '../query/search-request.ts';
import { buildLeaves, dealDocs, fieldsOf, hitIds, type CorpusDoc } from '../query/test-corpus.fixture.ts';
import { mergeTopHits, mergeTotals } from './merge.ts';

const fields = fieldsOf({
  properties: {
    uid: { type: 'keyword' },
    title: { type: 'text' },
    category: { type: 'keyword' },
    price: { type: 'double' },
    sizes: { type: 'integer' },
    day: { type: 'date' },
  },
});

function corpus(count: number, seed: number): CorpusDoc[] {
  const random = seededRandom(seed);
  return Array.from({ length: count }, (_, n) => {
    const source: Record<string, unknown> = { uid: `u${String(n).padStart(4, '0')}`, title: random() < 0.5 ? 'red apple' : 'green apple pie' };
    if (random() < 0.85) source.category = random() < 0.2 ? ['é-cat', `c${Math.floor(random() * 5)}`] : `c${Math.floor(random() * 5)}`;
    if (random() < 0.8) source.price = Math.floor(random() * 40) / 2;
    if (random() < 0.7) source.sizes = Array.from({ length: 1 + Math.floor(random() * 3) }, () => Math.floor(random() * 10));
    if (random() < 0.9) source.day = Date.UTC(2024, 0, 1 + Math.floor(random() * 60));
    return { id: source.uid as string, source };
  });
}

const docs = corpus(240, 11);
const leaves = buildLeaves(docs, fields, 3);

function search(request: Record<string, unknown>, target = leaves): ShardQueryResult {
  return executeQuery(target, fields, { from: 0, size: 1000, ...request });
}

type Value = number | string | null;

/** Reference ordering computed from the sources. */
function referenceOrder(key: (source: Record<string, unknown>) => Value[], compare: (a: Value[], b: Value[]) => number): string[] {
  return docs
    .map((doc, index) => ({ id: doc.id, index, values: key(doc.source) }))
    .sort((a, b) => compare(a.values, b.values) || a.index - b.index)
    .map((entry) => entry.id);
}

function values(source: Record<string, unknown>, field: string): Value[] {
  const raw = source[field];
  return raw === undefined ? [] : (Array.isArray(raw) ? raw : [raw]) as Value[];
}

function compareValue(a: Value, b: Value, descending: boolean, missingFirst: boolean): number {
  if (a === null || b === null) return a === b ? 0 : (a === null) === missingFirst ? -1 : 1;
  const result = a < b ? -1 : a > b ? 1 : 0;
  return descending ? -result : result;
}

test('numeric sort: min for asc, max for desc, missing last', () => {
  const ascending = referenceOrder(
    (source) => [values(source, 'sizes').length ? Math.min(...(values(source, 'sizes') as number[])) : null],
    (a, b) => compareValue(a[0]!, b[0]!, false, false),
  );
  assert.deepEqual(hitIds(leaves, search({ sort: 'sizes' }).hits), ascending);
  const descending = referenceOrder(
    (source) => [values(source, 'sizes').length ? Math.max(...(values(source, 'sizes') as number[])) : null],
    (a, b) => compareValue(a[0]!, b[0]!, true, false),
  );
  const result = search({ sort: { sizes: 'desc' } });
  assert.deepEqual(hitIds(leaves, result.hits), descending);
  assert.equal(result.maxScore, null);
  assert.ok(Number.isNaN(result.hits[0]!.score), 'no scores when sorting by field');
  assert.equal(result.hits.at(-1)!.sort![0], null, 'missing values sort last and render as null');
});

test('keyword sort compares terms across leaves; multi-key with _first and custom missing', () => {
  const expected = referenceOrder(
    (source) => {
      const categories = values(source, 'category') as string[];
      return [categories.length ? [...categories].sort().at(-1)! : null, (source.price as number | undefined) ?? null];
    },
    (a, b) => compareValue(a[0]!, b[0]!, true, false) || compareValue(a[1]!, b[1]!, false, true),
  );
  const result = search({ sort: [{ category: { order: 'desc' } }, { price: { order: 'asc', missing: '_first' } }] });
  assert.deepEqual(hitIds(leaves, result.hits), expected);
  assert.equal(result.hits[0]!.sort![0], 'é-cat');
  const custom = search({ sort: [{ price: { order: 'asc', missing: 7.25 } }, 'uid'] });
  const expectedCustom = referenceOrder(
    (source) => [(source.price as number | undefined) ?? 7.25, source.uid as string],
    (a, b) => compareValue(a[0]!, b[0]!, false, false) || compareValue(a[1]!, b[1]!, false, false),
  );
  assert.deepEqual(hitIds(leaves, custom.hits), expectedCustom);
  const substituted = custom.hits.find((hit) => leaves[hit.leaf]!.meta(hit.doc).id === docs.find((doc) => doc.source.price === undefined)!.id)!;
  assert.equal(substituted.sort![0], 7.25);
});

test('_score, _doc and avg mode', () => {
  const byScore = search({ query: { match: { title: 'green pie' } }, sort: ['_score', '_doc'] });
  const plain = search({ query: { match: { title: 'green pie' } } });
  assert.deepEqual(byScore.hits.map((hit) => [hit.leaf, hit.doc, hit.score]), plain.hits.map((hit) => [hit.leaf, hit.doc, hit.score]));
  assert.deepEqual(byScore.hits[0]!.sort, [plain.hits[0]!.score, byScore.hits[0]!.sort![1]]);
  const docOrder = search({ sort: { _doc: 'desc' } });
  assert.deepEqual(hitIds(leaves, docOrder.hits), docs.map((doc) => doc.id).reverse());
  const average = search({ sort: [{ sizes: { order: 'asc', mode: 'avg' } }, 'uid'] });
  const expected = referenceOrder(
    (source) => {
      const sizes = values(source, 'sizes') as number[];
      return [sizes.length ? sizes.reduce((sum, size) => sum + size, 0) / sizes.length : null, source.uid as string];
    },
    (a, b) => compareValue(a[0]!, b[0]!, false, false) || compareValue(a[1]!, b[1]!, false, false),
  );
  assert.deepEqual(hitIds(leaves, average.hits), expected);
  const explicit = search({ query: { match: { title: 'pie' } }, sort: '_score' });
  assert.deepEqual(explicit.hits[0]!.sort, [explicit.hits[0]!.score]);
});

test('search_after pages through every doc exactly once', () => {
  for (const sort of [[{ day: 'desc' }, '_doc'], [{ category: 'asc' }, { price: 'desc' }, 'uid'], ['_score', 'uid']]) {
    const query = { match: { title: 'apple green' } };
    const all = hitIds(leaves, search({ query, sort }).hits);
    const seen: string[] = [];
    let after: unknown[] | undefined;
    for (let page = 0; page < 100; page++) {
      const result = search({ query, sort, size: 17, searchAfter: after });
      if (result.hits.length === 0) break;
      seen.push(...hitIds(leaves, result.hits));
      after = result.hits.at(-1)!.sort;
      assert.equal(result.total.value, all.length, 'the total ignores search_after');
    }
    assert.deepEqual(seen, all, JSON.stringify(sort));
  }
});

test('merging shard results gives the single-shard order', () => {
  const shards = dealDocs(docs, 3).map((group, index) => buildLeaves(group, fields, index + 1));
  for (const sort of [[{ price: 'desc' }, 'uid'], [{ category: { order: 'asc', missing: '_first' } }, { day: 'asc' }, 'uid']]) {
    for (const [from, size] of [[0, 10], [25, 30], [230, 20]]) {
      const perShard = shards.map((shard, index) => ({ shard: index, result: search({ sort, size: from + size }, shard) }));
      const merged = mergeTopHits(perShard, { from, size, sort });
      const mergedIds = merged.map(({ shard, hit }) => shards[shard]![hit.leaf]!.meta(hit.doc).id);
      assert.deepEqual(mergedIds, hitIds(leaves, search({ sort }).hits).slice(from, from + size), JSON.stringify(sort));
    }
  }
  const constant = { constant_score: { filter: { match: { title: 'apple' } } } };
  const perShard = shards.map((shard, index) => ({ shard: index, result: search({ query: constant, size: 5 }, shard) }));
  const merged = mergeTopHits(perShard, { from: 0, size: 8 });
  assert.deepEqual(
    merged.map(({ shard, hit }) => [shard, hit.leaf, hit.doc]),
    perShard.flatMap(({ shard, result }) => result.hits.map((hit) => [shard, hit.leaf, hit.doc])).slice(0, 8),
    'equal scores are broken by shard, then leaf, then doc',
  );
});

test('totals merge into a capped lower bound', () => {
  assert.deepEqual(mergeTotals([{ value: 3, relation: 'eq' }, { value: 4, relation: 'eq' }]), { value: 7, relation: 'eq' });
  assert.deepEqual(mergeTotals([{ value: 10_000, relation: 'gte' }, { value: 5, relation: 'eq' }]), { value: 10_000, relation: 'gte' });
  assert.deepEqual(mergeTotals([{ value: 8, relation: 'eq' }, { value: 5, relation: 'eq' }], 10), { value: 10, relation: 'gte' });
  assert.deepEqual(mergeTotals([{ value: 8, relation: 'eq' }, { value: 5, relation: 'gte' }], true), { value: 13, relation: 'gte' });
});
