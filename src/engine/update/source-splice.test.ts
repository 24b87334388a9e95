import assert from 'node:assert/strict';
import { test } from 'node:test';
import { readTopLevelTexts, spliceSource, topLevelLayout } from './source-splice.ts';

const splice = (text: string, replacements: Array<[string, string | null]>): string => spliceSource(Buffer.from(text), new Map(replacements)).toString();

test('top-level members are found as byte ranges, strings with escapes and nesting skipped', () => {
  const text = Buffer.from('{ "a" : 1.0, "b\\"q": "x}\\\\", "c": {"d": [1, {"e": "]"}]}, "n": 9223372036854775807 }');
  const layout = topLevelLayout(text);
  assert.deepEqual(layout.entries.map((entry) => entry.key), ['a', 'b"q', 'c', 'n']);
  assert.deepEqual(Object.fromEntries(readTopLevelTexts(text, ['a', 'c', 'n', 'missing'])), {
    a: '1.0',
    c: '{"d": [1, {"e": "]"}]}',
    n: '9223372036854775807',
  });
  assert.deepEqual(topLevelLayout(Buffer.from(' {}')).entries, []);
});

test('splicing replaces, removes and appends fields and keeps every other byte', () => {
  const text = '{"big": 9223372036854775807, "x": 1.0,\n  "tags": ["a"], "last": 1e3}';
  assert.equal(splice(text, [['x', '2']]), '{"big": 9223372036854775807, "x": 2,\n  "tags": ["a"], "last": 1e3}');
  assert.equal(splice(text, [['tags', null]]), '{"big": 9223372036854775807, "x": 1.0,\n  "last": 1e3}');
  assert.equal(splice(text, [['last', null]]), '{"big": 9223372036854775807, "x": 1.0,\n  "tags": ["a"]}');
  assert.equal(splice(text, [['big', null], ['x', null]]), '{"tags": ["a"], "last": 1e3}');
  assert.equal(splice(text, [['new', '"v"']]), '{"big": 9223372036854775807, "x": 1.0,\n  "tags": ["a"], "last": 1e3,"new":"v"}');
  assert.equal(splice('{}', [['a', '1']]), '{"a":1}');
  assert.equal(splice('{"a": 1}', [['a', null], ['b', 'true']]), '{"b":true}');
  for (const [source, replacements] of [
    [text, [['x', '[1,2]'], ['tags', null], ['z', '{"q":1}']]],
    ['{"a":1,"a":2,"b":3}', [['a', '5']]],
  ] as Array<[string, Array<[string, string | null]>]>) {
    const expected: Record<string, unknown> = JSON.parse(source);
    for (const [key, value] of replacements) {
      if (value === null) delete expected[key];
      else expected[key] = JSON.parse(value);
    }
    assert.deepEqual(JSON.parse(splice(source, replacements)), expected);
  }
});

test('a text that is not an object is refused', () => {
  assert.throws(() => topLevelLayout(Buffer.from('[1]')), /not a JSON object/);
  assert.throws(() => topLevelLayout(Buffer.from('{"a": "unterminated}')), /unterminated string/);
});
