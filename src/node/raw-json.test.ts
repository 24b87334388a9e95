import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseLossless } from './lossless-json.ts';
import { plainJson, RawJson, stringifyWithRawJson } from './raw-json.ts';

test('raw values are written as their text, wherever they sit', () => {
  const value = { a: new RawJson('{"n": 9223372036854775807}'), b: [new RawJson('1.0'), 'x'], c: 'plain' };
  assert.equal(stringifyWithRawJson(value), '{"a":{"n": 9223372036854775807},"b":[1.0,"x"],"c":"plain"}');
  assert.equal(stringifyWithRawJson(new RawJson(' 1e400 ')), ' 1e400 ');
  assert.equal(stringifyWithRawJson({ none: 1 }), '{"none":1}');
});

test('user strings that look like placeholders stay strings', () => {
  const first = stringifyWithRawJson({ a: new RawJson('1') });
  assert.equal(first, '{"a":1}');
  const tricky = { s: '"0', t: '\\"', u: new RawJson('2'), v: ['0"', new RawJson('3')] };
  assert.deepEqual(JSON.parse(stringifyWithRawJson(tricky)), { s: '"0', t: '\\"', u: 2, v: ['0"', 3] });
});

test('outside the serialiser a raw value is its parsed value', () => {
  assert.equal(JSON.stringify({ a: new RawJson('[1, 2]') }), '{"a":[1,2]}');
  assert.deepEqual(plainJson({ a: new RawJson('{"b": 1}'), c: [new RawJson('2')] }), { a: { b: 1 }, c: [2] });
});

test('a lossless parse keeps number literals a float would change, and JSON.parse semantics otherwise', () => {
  const parsed = parseLossless('{"n": 9223372036854775807, "m": 5, "f": 1.0, "e": 1e400, "s": "caf\\u00e9", "__proto__": {"x": true}, "d": 1, "d": 2, "a": [null, false, -0]}') as Record<string, unknown>;
  assert.ok(parsed.n instanceof RawJson && parsed.n.text === '9223372036854775807');
  assert.equal(parsed.m, 5);
  assert.ok(parsed.f instanceof RawJson && parsed.f.text === '1.0');
  assert.ok(parsed.e instanceof RawJson && parsed.e.text === '1e400');
  assert.equal(parsed.s, 'café');
  assert.ok(Object.hasOwn(parsed, '__proto__'));
  assert.equal(Object.getPrototypeOf(parsed), Object.prototype);
  assert.equal(parsed.d, 2);
  assert.equal(stringifyWithRawJson(parsed.a), '[null,false,-0]');
  assert.equal(stringifyWithRawJson(parsed), '{"n":9223372036854775807,"m":5,"f":1.0,"e":1e400,"s":"café","__proto__":{"x":true},"d":2,"a":[null,false,-0]}');
  assert.throws(() => parseLossless('{"a": "open'), SyntaxError);
});
