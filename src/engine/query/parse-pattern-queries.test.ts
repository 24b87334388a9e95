import { test } from 'node:test';
import assert from 'node:assert/strict';
import { EngineError } from '../errors.ts';
import { executeQuery, parseQuery } from './execute.ts';
import { buildLeaf, fieldsOf, hitIds, type CorpusDoc } from './test-corpus.fixture.ts';

const fields = fieldsOf({ properties: { title: { type: 'text' }, tag: { type: 'keyword' }, price: { type: 'double' } } });
const docs: CorpusDoc[] = [
  { id: '1', source: { title: 'Kimchy rocks', tag: 'Kimchy' } },
  { id: '2', source: { title: 'Kitty cats', tag: 'kitty' } },
  { id: '3', source: { title: 'Quick fox', tag: ['ki', 'fox-42'] } },
  { id: '4', source: { title: 'Nothing here', tag: 'a'.repeat(10_000) } },
];
const leaves = [buildLeaf(docs.slice(0, 2), fields, 0), buildLeaf(docs.slice(2), fields, 1)];

function ids(query: unknown): string[] {
  const result = executeQuery(leaves, fields, { query, from: 0, size: 20 });
  return hitIds(leaves, result.hits).sort();
}

function failsWith(query: unknown, code: string, message: RegExp): void {
  assert.throws(
    () => parseQuery(query, fields),
    (error: unknown) => error instanceof EngineError && error.code === code && message.test(error.message),
    JSON.stringify(query).slice(0, 80),
  );
}

test('wildcard on keyword and text fields', () => {
  assert.deepEqual(ids({ wildcard: { tag: 'ki*y' } }), ['2']);
  assert.deepEqual(ids({ wildcard: { tag: { value: 'ki*y', case_insensitive: true } } }), ['1', '2']);
  assert.deepEqual(ids({ wildcard: { tag: { wildcard: 'k?', boost: 2, rewrite: 'constant_score' } } }), ['3']);
  assert.deepEqual(ids({ wildcard: { title: 'KI*' } }), ['1', '2'], 'text fields: the pattern is normalised like the terms');
  assert.deepEqual(ids({ wildcard: { missing: 'x*' } }), []);
  assert.deepEqual(ids({ bool: { filter: { wildcard: { tag: 'fox-*' } } } }), ['3']);
  const scores = executeQuery(leaves, fields, { query: { wildcard: { tag: { value: 'k*', boost: 3 } } }, from: 0, size: 20 }).hits.map((hit) => hit.score);
  assert.deepEqual(scores, [3, 3], 'constant score: the boost');
});

test('regexp on keyword and text fields', () => {
  assert.deepEqual(ids({ regexp: { tag: 'k.*y' } }), ['2']);
  assert.deepEqual(ids({ regexp: { tag: { value: 'k.*y', case_insensitive: true } } }), ['1', '2']);
  assert.deepEqual(ids({ regexp: { tag: { value: 'fox-<1-50>', flags: 'INTERVAL' } } }), ['3']);
  assert.deepEqual(ids({ regexp: { tag: { value: 'fox-<1-50>', flags: 'NONE' } } }), []);
  assert.deepEqual(ids({ regexp: { title: 'r[o]ck.' } }), ['1']);
  assert.deepEqual(ids({ regexp: { tag: { value: 'fox-\\d+', flags_value: 0 } } }), ['3']);
});

test('pathological patterns against a 10k-character term stay one pass per term', () => {
  assert.deepEqual(ids({ wildcard: { tag: '*a*a*a*a*a*a*a*b' } }), []);
  assert.deepEqual(ids({ wildcard: { tag: '*a*a*a*a*a*a*a*' } }), ['4']);
  assert.deepEqual(ids({ regexp: { tag: '(a+)+b' } }), []);
  assert.deepEqual(ids({ regexp: { tag: '(a|aa)*' } }), ['4']);
});

test('wildcard and regexp errors', () => {
  failsWith({ wildcard: { tag: { value: 'a', bogus: 1 } } }, 'parsing', /^\[wildcard\] unknown field \[bogus\]$/);
  failsWith({ wildcard: { tag: {} } }, 'parsing', /No value specified for wildcard query/);
  failsWith({ wildcard: { price: '1*' } }, 'parsing', /Can only use wildcard queries on keyword and text fields - not on \[price\] which is of type \[double\]/);
  failsWith({ wildcard: { tag: { value: 'a*', rewrite: 'fancy' } } }, 'parsing', /Failed to parse rewrite_method \[fancy\]/);
  failsWith({ wildcard: { tag: 'a', title: 'b' } }, 'parsing', /doesn't support multiple fields/);
  failsWith({ regexp: { tag: { value: 'a', flags: 'INTERVAL|BOGUS' } } }, 'parsing', /Unknown regexp flag \[BOGUS\]/);
  failsWith({ regexp: { tag: {} } }, 'parsing', /value cannot be null/);
  failsWith({ regexp: { tag: 'a(b' } }, 'parsing', /expected '\)' at position 3/);
  failsWith({ regexp: { price: 'a' } }, 'parsing', /Can only use regexp queries on keyword and text fields/);
  failsWith({ regexp: { tag: 'a'.repeat(1001) } }, 'illegal_argument', /The length of regex \[1001\] .* \[index\.max_regex_length\]/);
  failsWith({ regexp: { tag: '[ab]*a[ab]{20}' } }, 'too_complex_to_determinize', /more than 10000 states/);
  failsWith({ regexp: { tag: { value: '[ab]*a[ab]{6}', max_determinized_states: 10 } } }, 'too_complex_to_determinize', /more than 10 states/);
  failsWith({ wildcard: { tag: `*a${'?'.repeat(20)}` } }, 'too_complex_to_determinize', /more than 10000 states/);
});
