import assert from 'node:assert/strict';
import { test } from 'node:test';
import { EngineError } from '../errors.ts';
import { dynamicMappingUpdate } from './dynamic.ts';
import { DEPTH_LIMIT, TOTAL_FIELDS_LIMIT } from './limits.ts';
import type { Mapping } from './mapping.ts';

const base: Mapping = {
  properties: {
    title: { type: 'text' },
    user: { type: 'object', properties: { name: { type: 'keyword' } } },
  },
};

function errorWith(code: string, pattern: RegExp): (error: unknown) => boolean {
  return (error) => error instanceof EngineError && error.code === code && pattern.test(error.message);
}

test('detects types the Elasticsearch way', () => {
  const updated = dynamicMappingUpdate(base, {
    body: 'some text',
    when: '2024-05-06T07:08:09Z',
    year: '2024',
    count: 3,
    huge: 1e20,
    ratio: 0.5,
    flag: false,
    meta: { source: 'web', tags: ['a'] },
  });
  assert.ok(updated);
  assert.deepEqual(updated.properties.body, {
    type: 'text',
    fields: { keyword: { type: 'keyword', ignore_above: 256 } },
  });
  assert.deepEqual(updated.properties.when, { type: 'date' });
  assert.equal(updated.properties.year?.type, 'text');
  assert.deepEqual(updated.properties.count, { type: 'long' });
  assert.deepEqual(updated.properties.ratio, { type: 'double' });
  assert.deepEqual(updated.properties.huge, { type: 'double' });
  assert.deepEqual(updated.properties.flag, { type: 'boolean' });
  assert.equal(updated.properties.meta?.type, 'object');
  assert.equal(updated.properties.meta?.properties?.source?.type, 'text');
  assert.equal(updated.properties.meta?.properties?.tags?.type, 'text');
  assert.deepEqual(updated.properties.title, { type: 'text' }, 'existing fields are untouched');
});

test('returns null when nothing is new, and never mutates its input', () => {
  const snapshot = structuredClone(base);
  assert.equal(dynamicMappingUpdate(base, { title: 'x', user: { name: 'y' } }), null);
  assert.equal(dynamicMappingUpdate(base, { fresh: null, empty: [], nulls: [null, [null]] }), null);
  const updated = dynamicMappingUpdate(base, { user: { age: 3 } });
  assert.deepEqual(updated?.properties.user?.properties?.age, { type: 'long' });
  assert.deepEqual(base, snapshot);
});

test('arrays take the type of their first non-null element; arrays of objects merge', () => {
  const updated = dynamicMappingUpdate(base, { scores: [null, 2.5, 1], items: [{ a: 1 }, { b: 'x' }] });
  assert.deepEqual(updated?.properties.scores, { type: 'double' });
  assert.deepEqual(Object.keys(updated?.properties.items?.properties ?? {}).sort(), ['a', 'b']);
});

test('dotted keys expand into objects', () => {
  const updated = dynamicMappingUpdate(base, { 'geo.point.lat': 1.5, 'user.age': 4 });
  assert.deepEqual(updated?.properties.geo, {
    type: 'object',
    properties: { point: { type: 'object', properties: { lat: { type: 'double' } } } },
  });
  assert.deepEqual(updated?.properties.user?.properties?.age, { type: 'long' });
});

test('strict rejects a new field naming it and its parent', () => {
  const strict: Mapping = { ...base, dynamic: 'strict' };
  assert.equal(dynamicMappingUpdate(strict, { title: 'x' }), null);
  assert.throws(
    () => dynamicMappingUpdate(strict, { foo: 1 }),
    errorWith('strict_dynamic_mapping', /^mapping set to strict, dynamic introduction of \[foo\] within \[_doc\] is not allowed$/),
  );
  assert.throws(
    () => dynamicMappingUpdate(strict, { user: { age: 1 } }),
    errorWith('strict_dynamic_mapping', /introduction of \[age\] within \[user\]/),
  );
});

test('dynamic false ignores new fields', () => {
  assert.equal(dynamicMappingUpdate({ ...base, dynamic: false }, { foo: 1, bar: { baz: 'x' } }), null);
});

test('total fields limit', () => {
  const source: Record<string, unknown> = {};
  for (let index = 0; index < TOTAL_FIELDS_LIMIT; index++) source[`f${index}`] = index;
  assert.throws(
    () => dynamicMappingUpdate(base, source),
    errorWith('illegal_argument', /^Limit of total fields \[1000\] has been exceeded$/),
  );
  const fits: Record<string, unknown> = {};
  for (let index = 0; index < TOTAL_FIELDS_LIMIT - 3; index++) fits[`f${index}`] = index;
  assert.ok(dynamicMappingUpdate(base, fits));
});

test('depth limit', () => {
  let deep: Record<string, unknown> = { leaf: 1 };
  for (let level = 0; level < DEPTH_LIMIT; level++) deep = { [`l${level}`]: deep };
  assert.throws(() => dynamicMappingUpdate(base, deep), errorWith('mapper_parsing', /Limit of mapping depth \[20\]/));
  let fits: Record<string, unknown> = { leaf: 1 };
  for (let level = 0; level < DEPTH_LIMIT - 1; level++) fits = { [`l${level}`]: fits };
  assert.ok(dynamicMappingUpdate(base, fits));
});

test('bad field names and metadata fields are rejected', () => {
  assert.throws(() => dynamicMappingUpdate(base, { '': 1 }), errorWith('mapper_parsing', /empty/));
  assert.throws(() => dynamicMappingUpdate(base, { '  ': 1 }), errorWith('mapper_parsing', /whitespace/));
  assert.throws(() => dynamicMappingUpdate(base, { 'a.': 1 }), errorWith('mapper_parsing', /dot/));
  assert.throws(() => dynamicMappingUpdate(base, { _id: '1' }), errorWith('mapper_parsing', /\[_id\] is a metadata field/));
});

test('a __proto__ key (an own key, as JSON.parse makes it) is refused and the mapping is untouched', () => {
  const source = JSON.parse('{"__proto__": {"x": 1}}') as Record<string, unknown>;
  assert.throws(() => dynamicMappingUpdate(base, source), errorWith('mapper_parsing', /field name \[__proto__\] is not allowed/));
  assert.equal(Object.hasOwn(base.properties, '__proto__'), false);
  assert.equal(Object.getPrototypeOf(base.properties), Object.prototype);
});

test('a document introducing a reserved name (__proto__, constructor, prototype) is refused, naming the field', () => {
  for (const name of ['__proto__', 'constructor', 'prototype']) {
    const sources: Array<Record<string, unknown>> = [
      Object.fromEntries([[name, 1]]),
      { [`${name}.unknown`]: true },
      { user: Object.fromEntries([[`${name}.x`, 1]]) },
      { fresh: { nested: Object.fromEntries([[name, 'x']]) } },
    ];
    for (const source of sources) {
      assert.throws(
        () => dynamicMappingUpdate(base, source),
        errorWith('mapper_parsing', new RegExp(`\\[${name}\\] is a reserved name`)),
        JSON.stringify(source),
      );
    }
    assert.throws(() => dynamicMappingUpdate({ ...base, dynamic: 'strict' }, { [`${name}.x`]: 1 }), errorWith('strict_dynamic_mapping', /not allowed/));
    assert.equal(dynamicMappingUpdate({ ...base, dynamic: false }, { [`${name}.x`]: 1 }), null, 'dynamic false ignores unmapped fields');
  }
  assert.equal(({} as Record<string, unknown>).unknown, undefined);
});
