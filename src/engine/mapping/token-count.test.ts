import { test } from 'node:test';
import assert from 'node:assert/strict';
import { flattenMapping } from './mapping.ts';
import { countTokens, parseDocument } from './parse-document.ts';
import { validateMapping } from './validate.ts';

const fields = flattenMapping(
  validateMapping({
    properties: {
      body: { type: 'text', fields: { n: { type: 'token_count', analyzer: 'whitespace' } } },
      stop: { type: 'token_count', analyzer: 'english', null_value: 'a b' },
      tokens: { type: 'token_count', analyzer: 'english', enable_position_increments: false },
    },
  }),
);

test('token_count columns hold the analyzer count of each value', () => {
  const parsed = parseDocument({ body: ['a b  c', ''], stop: 'the end of the day', tokens: 'the end of the day' }, fields);
  assert.deepEqual(parsed.numeric.get('body.n'), [3, 0]);
  assert.deepEqual(parsed.numeric.get('stop'), [5]);
  assert.deepEqual(parsed.numeric.get('tokens'), [2]);
  assert.deepEqual(parseDocument({ stop: null }, fields).numeric.get('stop'), [2]);
  assert.equal(countTokens(fields.get('body.n')!, 42), 1);
  assert.throws(() => parseDocument({ stop: { a: 1 } }, fields), /failed to parse field \[stop\]/);
});

test('token_count requires an analyzer and takes enable_position_increments', () => {
  assert.throws(() => validateMapping({ properties: { n: { type: 'token_count' } } }), /Analyzer must be set for field \[n\] but wasn't\./);
  assert.throws(() => validateMapping({ properties: { n: { type: 'token_count', analyzer: 'standard', enable_position_increments: 'yes' } } }), /must be a boolean/);
  assert.throws(() => validateMapping({ properties: { n: { type: 'long', enable_position_increments: true } } }), /is not allowed/);
});
