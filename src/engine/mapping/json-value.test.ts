import assert from 'node:assert/strict';
import { test } from 'node:test';
import { cloneJson, isPlainObject, jsonEqual, previewJson } from './json-value.ts';

test('jsonEqual ignores key order but not array order', () => {
  assert.equal(jsonEqual({ a: 1, b: { c: [1, { d: 2, e: 3 }] } }, { b: { c: [1, { e: 3, d: 2 }] }, a: 1 }), true);
  assert.equal(jsonEqual([1, 2], [2, 1]), false);
  assert.equal(jsonEqual({ a: 1 }, { a: 1, b: undefined }), false);
  assert.equal(jsonEqual({ a: null }, {}), false);
  assert.equal(jsonEqual([], {}), false);
  assert.equal(jsonEqual(1, '1'), false);
  assert.equal(jsonEqual(null, null), true);
});

test('cloneJson copies deeply, including __proto__ keys', () => {
  const original = JSON.parse('{"a": [1, {"b": 2}], "__proto__": {"x": 1}}') as Record<string, unknown>;
  const copy = cloneJson(original);
  assert.ok(jsonEqual(copy, original));
  assert.notEqual(copy.a, original.a);
  assert.ok(Object.hasOwn(copy, '__proto__'));
  assert.equal(Object.getPrototypeOf(copy), Object.prototype);
});

test('isPlainObject and previewJson', () => {
  assert.equal(isPlainObject({}), true);
  assert.equal(isPlainObject([]), false);
  assert.equal(isPlainObject(null), false);
  assert.equal(previewJson('abc'), '"abc"');
  assert.equal(previewJson(undefined), 'undefined');
  assert.ok(previewJson('x'.repeat(500)).endsWith('...'));
  assert.ok(previewJson('x'.repeat(500)).length < 110);
});
