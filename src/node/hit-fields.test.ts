import { test } from 'node:test';
import assert from 'node:assert/strict';
import { flattenMapping, type Mapping } from '../engine/mapping/mapping.ts';
import { hitFieldValues, parseHitFields, sourceValues } from './hit-fields.ts';

test('source values through nested objects, arrays of objects and dotted keys', () => {
  const source = { a: { b: [{ c: 1 }, { c: [2, 3] }] }, 'a.b': { c: 4 }, d: null, e: [] };
  assert.deepEqual(sourceValues(source, 'a.b.c').sort(), [1, 2, 3, 4]);
  assert.deepEqual(sourceValues(source, 'd'), []);
  assert.deepEqual(sourceValues(source, 'e'), []);
  assert.deepEqual(sourceValues(source, 'missing.path'), []);
});

test('fields by type, multi-fields from their parent, dates formatted, docvalues sorted', () => {
  const mapping: Mapping = {
    properties: {
      title: { type: 'text', fields: { raw: { type: 'keyword' } } },
      count: { type: 'integer' },
      on: { type: 'boolean' },
      when: { type: 'date' },
      tags: { type: 'keyword', store: true },
    },
  };
  const fields = flattenMapping(mapping);
  const source = { title: 'Hello', count: '7', on: 'true', when: '2020-01-02', tags: ['b', 'a', 'b'] };
  const spec = parseHitFields({ fields: ['title*', 'count', 'on', { field: 'when', format: 'dd/MM/yyyy' }], docvalue_fields: ['tags'] }, false);
  assert.deepEqual(hitFieldValues(source, spec, fields, mapping), {
    title: ['Hello'],
    'title.raw': ['Hello'],
    count: [7],
    on: [true],
    when: ['02/01/2020'],
    tags: ['a', 'b'],
  });
  assert.deepEqual(hitFieldValues(source, parseHitFields({ stored_fields: ['*'] }, false), fields, mapping), { tags: ['b', 'a', 'b'] });
  assert.throws(() => hitFieldValues(source, parseHitFields({ docvalue_fields: ['title'] }, false), fields, mapping), /fielddata is unsupported/);
  assert.throws(() => parseHitFields({ stored_fields: '_none_', fields: ['title'] }, false), /cannot be disabled when using the \[fields\] option/);
  assert.throws(() => parseHitFields({ fields: [3] }, false), /entries must be a field name/);
});
