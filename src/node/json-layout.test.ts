import { test } from 'node:test';
import assert from 'node:assert/strict';
import { compactJson, indentJson } from './json-layout.ts';

test('indenting lays out as JSON.stringify with two spaces, literals kept', () => {
  const samples = ['{}', '[]', '{"a":{},"b":[],"c":[1,{"d":"e , : { ["}],"f":null}', ' { "x" : [ true , false ] } ', '"s"', '12'];
  for (const sample of samples) assert.equal(indentJson(sample), JSON.stringify(JSON.parse(sample), null, 2), sample);
  assert.equal(indentJson('{"n":9223372036854775807,"s":"\\u00e9\\"","f":1.0}'), '{\n  "n": 9223372036854775807,\n  "s": "\\u00e9\\"",\n  "f": 1.0\n}');
});

test('compacting drops the whitespace between tokens only', () => {
  assert.equal(compactJson('{ "a" :\n [1 ,\t2e400 ], "s": " x \\" y " }'), '{"a":[1,2e400],"s":" x \\" y "}');
  assert.equal(compactJson(' { } '), '{}');
});
