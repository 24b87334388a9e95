import { test } from 'node:test';
import assert from 'node:assert/strict';
import { executeQuery } from './execute.ts';
import { buildLeaf, fieldsOf, hitIds, type CorpusDoc } from './test-corpus.fixture.ts';

const fields = fieldsOf({ properties: { tag: { type: 'keyword' }, title: { type: 'text' }, year: { type: 'integer' } } });
const docs: CorpusDoc[] = [
  { id: '1', source: { tag: 'Quick*Fox', title: 'Quick fox', year: 1 } },
  { id: '2', source: { tag: 'quick*fox' } },
  { id: '3', source: { tag: 'QUICKER' } },
  { id: '4', source: { tag: 'slow' } },
];
const leaves = [buildLeaf(docs, fields, 0)];

function ids(query: unknown): string[] {
  return hitIds(leaves, executeQuery(leaves, fields, { query, from: 0, size: 10 }).hits).sort();
}

test('term and prefix with case_insensitive match every case variant, literally', () => {
  assert.deepEqual(ids({ term: { tag: { value: 'QUICK*fox', case_insensitive: true } } }), ['1', '2']);
  assert.deepEqual(ids({ term: { tag: { value: 'QUICK*fox' } } }), []);
  assert.deepEqual(ids({ term: { tag: { value: 'quick', case_insensitive: true } } }), []);
  assert.deepEqual(ids({ prefix: { tag: { value: 'quick', case_insensitive: true } } }), ['1', '2', '3']);
  assert.deepEqual(ids({ prefix: { tag: { value: 'quick' } } }), ['2']);
  assert.deepEqual(ids({ prefix: { tag: { value: 'quick', case_insensitive: false } } }), ['2']);
  assert.deepEqual(ids({ term: { title: { value: 'QUICK', case_insensitive: true } } }), ['1']);
  const scored = executeQuery(leaves, fields, { query: { term: { tag: { value: 'SLOW', case_insensitive: true, boost: 3 } } }, from: 0, size: 1 });
  assert.equal(scored.hits[0]!.score, 3);
});

test('terms has no case_insensitive (as ES); value fields and bad flags are refused', () => {
  assert.throws(() => ids({ terms: { tag: ['quick'], case_insensitive: true } }), /\[terms\] query does not support \[case_insensitive\]/);
  assert.throws(() => ids({ term: { year: { value: 1, case_insensitive: true } } }), /does not support case insensitive term queries/);
  assert.throws(() => ids({ prefix: { tag: { value: 'q', case_insensitive: 'yes' } } }), /\[case_insensitive\] must be a boolean/);
});
