import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ApiError } from './errors.ts';
import { isBlank, parseJsonText } from './json-body.ts';

function nested(depth: number): string {
  return '['.repeat(depth) + ']'.repeat(depth);
}

function codeOf(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    assert.ok(error instanceof ApiError);
    return error.code;
  }
  return 'none';
}

test('parses JSON and yields undefined for a blank body', () => {
  assert.deepEqual(parseJsonText('{"a":[1,{"b":"x"}]}'), { a: [1, { b: 'x' }] });
  assert.equal(parseJsonText(''), undefined);
  assert.equal(parseJsonText(' \n\t '), undefined);
  assert.equal(isBlank(' x '), false);
});

test('allows nesting up to the limit and rejects one level more', () => {
  assert.deepEqual(parseJsonText(nested(20)), JSON.parse(nested(20)));
  assert.equal(codeOf(() => parseJsonText(nested(21))), 'nesting_too_deep');
  assert.match(
    (() => {
      try {
        parseJsonText(`{"a":${nested(25)}}`, 'line [3]');
      } catch (error) {
        return (error as Error).message;
      }
      return '';
    })(),
    /line \[3\].*\[20\]/,
  );
});

test('brackets inside strings, escaped quotes and backslashes do not count as nesting', () => {
  const text = JSON.stringify({ a: '[[[[[[[[[[[[[[[[[[[[[[[[[', b: 'x\\"{{{{{{{{{{{{{{{{{{{{{{{{{{{', c: 'end\\' });
  assert.deepEqual(parseJsonText(text), JSON.parse(text));
});

test('malformed JSON is an invalid_json ApiError naming the body', () => {
  assert.equal(codeOf(() => parseJsonText('{"a":')), 'invalid_json');
  assert.equal(codeOf(() => parseJsonText('{"a" 1}')), 'invalid_json');
  assert.equal(codeOf(() => parseJsonText('"unterminated')), 'invalid_json');
});

test('a __proto__ key is rejected, a __proto__ string value is not', () => {
  assert.equal(codeOf(() => parseJsonText('{"__proto__": {"polluted": true}}')), 'invalid_json');
  assert.equal(codeOf(() => parseJsonText('{"a": {"__proto__" :1}}')), 'invalid_json');
  assert.deepEqual(parseJsonText('{"a": "__proto__", "b": ["__proto__"]}'), { a: '__proto__', b: ['__proto__'] });
});
