import assert from 'node:assert/strict';
import { test } from 'node:test';
import { EngineError } from '../errors.ts';
import { DEPTH_LIMIT, TOTAL_FIELDS_LIMIT } from './limits.ts';
import { flattenMapping, type Mapping } from './mapping.ts';
import { mergeMappings, validateMapping } from './validate.ts';

function errorWith(code: string, pattern: RegExp): (error: unknown) => boolean {
  return (error) => error instanceof EngineError && error.code === code && pattern.test(error.message);
}

test('accepts and normalizes a full mapping', () => {
  const mapping = validateMapping({
    dynamic: 'strict',
    properties: {
      title: { type: 'text', analyzer: 'english', fields: { raw: { type: 'keyword', ignore_above: 100 } } },
      views: { type: 'long', inplace: true },
      rating: { type: 'double', inplace: false },
      seen: { type: 'date', inplace: true },
      flag: { type: 'boolean', inplace: true },
      author: { properties: { name: { type: 'keyword' } } },
    },
  });
  assert.deepEqual(mapping, {
    dynamic: 'strict',
    properties: {
      title: { type: 'text', analyzer: 'english', fields: { raw: { type: 'keyword', ignore_above: 100 } } },
      views: { type: 'long', inplace: true },
      rating: { type: 'double' },
      seen: { type: 'date', inplace: true },
      flag: { type: 'boolean', inplace: true },
      author: { type: 'object', properties: { name: { type: 'keyword' } } },
    },
  });
  assert.deepEqual(validateMapping({}), { properties: {} });
  assert.equal(validateMapping({ dynamic: 'false' }).dynamic, false);
});

test('dotted field names expand into objects and merge with explicit ones', () => {
  const mapping = validateMapping({
    properties: {
      'a.b.c': { type: 'long' },
      a: { properties: { d: { type: 'keyword' } } },
      'a.b.e': { type: 'text' },
    },
  });
  assert.deepEqual(mapping.properties.a, {
    type: 'object',
    properties: {
      b: { type: 'object', properties: { c: { type: 'long' }, e: { type: 'text' } } },
      d: { type: 'keyword' },
    },
  });
  assert.deepEqual([...flattenMapping(mapping).keys()].sort(), ['a.b.c', 'a.b.e', 'a.d']);
  assert.throws(
    () => validateMapping({ properties: { 'a.b': { type: 'long' }, a: { type: 'keyword' } } }),
    errorWith('mapper_parsing', /mapper \[a\] cannot be changed from type \[object\] to \[keyword\]/),
  );
});

test('inplace only on numeric, boolean and date fields', () => {
  for (const type of ['text', 'keyword']) {
    assert.throws(
      () => validateMapping({ properties: { title: { type, inplace: true } } }),
      errorWith('mapper_parsing', new RegExp(`^\\[inplace\\] is not allowed on field \\[title\\] of type \\[${type}\\]$`)),
    );
  }
  assert.throws(
    () => validateMapping({ properties: { a: { type: 'object', inplace: true, properties: {} } } }),
    errorWith('mapper_parsing', /\[inplace\] is not allowed on field \[a\] of type \[object\]/),
  );
  assert.throws(
    () => validateMapping({ properties: { n: { type: 'long', inplace: 'yes' } } }),
    errorWith('mapper_parsing', /must be a boolean/),
  );
  assert.throws(
    () => validateMapping({ properties: { n: { type: 'long', fields: { raw: { type: 'long', inplace: true } } } } }),
    errorWith('mapper_parsing', /\[inplace\] is not allowed on multi-field \[n.raw\]/),
  );
});

test('unknown types, parameters and analyzers are rejected', () => {
  const cases: [unknown, RegExp][] = [
    [{ properties: { a: { type: 'geo_shape' } } }, /No handler for type \[geo_shape\] declared on field \[a\]/],
    [{ properties: { a: {} } }, /No type specified for field \[a\]/],
    [{ properties: { a: { type: 'text', similarity: 'BM25' } } }, /unknown parameter \[similarity\] on mapper \[a\] of type \[text\]/],
    [{ properties: { a: { type: 'text', analyzer: 'klingon' } } }, /analyzer \[klingon\] has not been configured/],
    [{ properties: { a: { type: 'long', analyzer: 'standard' } } }, /\[analyzer\] is not allowed on field \[a\] of type \[long\]/],
    [{ properties: { a: { type: 'long', properties: {} } } }, /\[properties\] is not allowed on field \[a\] of type \[long\]/],
    [{ properties: { a: { type: 'object', fields: {} } } }, /\[fields\] is not allowed on field \[a\] of type \[object\]/],
    [{ properties: { a: { type: 'keyword', ignore_above: -1 } } }, /ignore_above/],
    [{ properties: { a: { type: 'text', fields: { 'x.y': { type: 'keyword' } } } } }, /multi-field name \[x.y\]/],
    [{ properties: { a: { type: 'text', fields: { x: { type: 'object' } } } } }, /multi-field \[a.x\] cannot be of type \[object\]/],
    [{ properties: { a: 'text' } }, /Expected an object for property \[a\]/],
    [{ properties: [] }, /\[properties\] must be an object/],
    [{ dynamic: 'sometimes' }, /\[dynamic\] must be one of/],
    [{ _routing: { required: true } }, /Root mapping definition has unsupported parameters: \[_routing : \{"required":true\}\]/],
    [{ _source: { compress: true } }, /unknown parameter \[compress\] on mapper \[_source\]/],
    [[], /Root mapping definition must be an object/],
    [{ properties: { _id: { type: 'keyword' } } }, /\[_id\] is a metadata field/],
  ];
  for (const [body, pattern] of cases) {
    assert.throws(() => validateMapping(body), errorWith('mapper_parsing', pattern), JSON.stringify(body));
  }
});

test('field names must be non-empty without leading, trailing or doubled dots', () => {
  for (const name of ['', ' ', '.a', 'a.', 'a..b']) {
    assert.throws(() => validateMapping({ properties: { [name]: { type: 'long' } } }), errorWith('mapper_parsing', /field name/), name);
  }
});

test('depth and total-field limits', () => {
  let properties: Record<string, unknown> = { leaf: { type: 'long' } };
  for (let level = 1; level < DEPTH_LIMIT; level++) properties = { [`l${level}`]: { properties } };
  validateMapping({ properties });
  const tooDeep = { l0: { properties } };
  assert.throws(() => validateMapping({ properties: tooDeep }), errorWith('mapper_parsing', /Limit of mapping depth \[20\]/));
  const dotted = Array.from({ length: DEPTH_LIMIT + 1 }, (_, index) => `d${index}`).join('.');
  assert.throws(() => validateMapping({ properties: { [dotted]: { type: 'long' } } }), errorWith('mapper_parsing', /depth/));

  const many: Record<string, unknown> = {};
  for (let index = 0; index <= TOTAL_FIELDS_LIMIT; index++) many[`f${index}`] = { type: 'long' };
  assert.throws(() => validateMapping({ properties: many }), errorWith('illegal_argument', /^Limit of total fields \[1000\] has been exceeded$/));
  delete many.f0;
  validateMapping({ properties: many });
});

test('mergeMappings adds fields and keeps the current ones', () => {
  const current = validateMapping({
    properties: { title: { type: 'text' }, author: { properties: { name: { type: 'keyword' } } } },
  });
  const snapshot = structuredClone(current);
  const merged = mergeMappings(
    current,
    validateMapping({
      dynamic: 'strict',
      properties: {
        price: { type: 'long', inplace: true },
        'author.age': { type: 'integer' },
        title: { type: 'text', fields: { raw: { type: 'keyword' } } },
      },
    }),
  );
  assert.deepEqual(merged, {
    dynamic: 'strict',
    properties: {
      title: { type: 'text', fields: { raw: { type: 'keyword' } } },
      author: { type: 'object', properties: { name: { type: 'keyword' }, age: { type: 'integer' } } },
      price: { type: 'long', inplace: true },
    },
  });
  assert.deepEqual(current, snapshot, 'inputs are not mutated');
  assert.equal(mergeMappings({ dynamic: false, properties: {} }, { properties: {} }).dynamic, false);
});

test('mergeMappings rejects changes to type, inplace and analyzer', () => {
  const current: Mapping = {
    properties: { price: { type: 'long' }, title: { type: 'text', analyzer: 'english' }, views: { type: 'long', inplace: true } },
  };
  assert.throws(
    () => mergeMappings(current, { properties: { price: { type: 'text' } } }),
    errorWith('illegal_argument', /^mapper \[price\] cannot be changed from type \[long\] to \[text\]$/),
  );
  assert.throws(
    () => mergeMappings(current, { properties: { price: { type: 'long', inplace: true } } }),
    errorWith('illegal_argument', /mapper \[price\] cannot change parameter \[inplace\] from \[false\] to \[true\]/),
  );
  assert.throws(
    () => mergeMappings(current, { properties: { views: { type: 'long' } } }),
    errorWith('illegal_argument', /\[inplace\] from \[true\] to \[false\]/),
  );
  assert.throws(
    () => mergeMappings(current, { properties: { title: { type: 'text' } } }),
    errorWith('illegal_argument', /\[analyzer\] from \[english\] to \[standard\]/),
  );
  assert.throws(
    () => mergeMappings(current, { properties: { price: { type: 'object', properties: {} } } }),
    errorWith('illegal_argument', /from type \[long\] to \[object\]/),
  );
  assert.throws(
    () => mergeMappings({ properties: { t: { type: 'text', fields: { raw: { type: 'keyword' } } } } }, { properties: { t: { type: 'text', fields: { raw: { type: 'long' } } } } }),
    errorWith('illegal_argument', /mapper \[t.raw\] cannot be changed from type \[keyword\] to \[long\]/),
  );
});

test('mergeMappings enforces the total-fields limit', () => {
  const current: Mapping = { properties: {} };
  for (let index = 0; index < TOTAL_FIELDS_LIMIT; index++) current.properties[`f${index}`] = { type: 'long' };
  assert.throws(() => mergeMappings(current, { properties: { extra: { type: 'long' } } }), errorWith('illegal_argument', /Limit of total fields/));
});

test('reserved names (__proto__, constructor, prototype) are refused as any field or multi-field segment', () => {
  for (const name of ['__proto__', 'constructor', 'prototype']) {
    const shapes: Array<Record<string, unknown>> = [
      Object.fromEntries([[name, { type: 'long' }]]),
      { [`${name}.unknown`]: { type: 'boolean', inplace: true } },
      { [`a.${name}.b`]: { type: 'long' } },
      { outer: { properties: Object.fromEntries([[name, { type: 'keyword' }]]) } },
      { title: { type: 'text', fields: Object.fromEntries([[name, { type: 'keyword' }]]) } },
    ];
    for (const properties of shapes) {
      assert.throws(
        () => validateMapping({ properties }),
        errorWith('mapper_parsing', new RegExp(`field name \\[[^\\]]*${name}[^\\]]*\\] is not allowed: \\[${name}\\] is a reserved name`)),
        JSON.stringify(Object.keys(properties)),
      );
    }
  }
  assert.equal(({} as Record<string, unknown>).unknown, undefined);
  const ordinary = validateMapping({ properties: { toString: { type: 'long' }, 'a.valueOf': { type: 'keyword' } } });
  assert.deepEqual(Object.keys(flattenMapping(ordinary)).length, 0, 'a Map: no enumerable keys');
  assert.deepEqual([...flattenMapping(ordinary).keys()].sort(), ['a.valueOf', 'toString'], 'other Object.prototype names are ordinary fields');
});

test('geo_point, binary doc_values, ignore_malformed, index_prefixes and index_phrases', () => {
  const mapping = validateMapping({
    properties: {
      place: { type: 'geo_point', ignore_malformed: true, doc_values: false, null_value: [0, 0] },
      blob: { type: 'binary', doc_values: true },
      count: { type: 'long', ignore_malformed: false },
      body: { type: 'text', index_prefixes: { min_chars: 1, max_chars: 19 }, index_phrases: true },
      notes: { type: 'match_only_text', index_prefixes: {}, index_phrases: false },
    },
  });
  assert.deepEqual(mapping.properties.place, { type: 'geo_point', ignore_malformed: true, doc_values: false, null_value: [0, 0] });
  assert.deepEqual(mapping.properties.body, { type: 'text', index_prefixes: { min_chars: 1, max_chars: 19 }, index_phrases: true });
  assert.deepEqual(mapping.properties.notes, { type: 'match_only_text', index_prefixes: {}, index_phrases: false });
  const cases: [unknown, RegExp][] = [
    [{ properties: { a: { type: 'keyword', ignore_malformed: true } } }, /\[ignore_malformed\] is not allowed on field \[a\] of type \[keyword\]/],
    [{ properties: { a: { type: 'long', ignore_malformed: 'yes' } } }, /\[ignore_malformed\] on field \[a\] must be a boolean/],
    [{ properties: { a: { type: 'keyword', index_phrases: true } } }, /\[index_phrases\] is not allowed/],
    [{ properties: { a: { type: 'text', index_prefixes: true } } }, /\[index_prefixes\] on field \[a\] must be an object/],
    [{ properties: { a: { type: 'text', index_prefixes: { min_chars: 1.5 } } } }, /must be an integer/],
    [{ properties: { a: { type: 'text', index_prefixes: { min_chars: 0 } } } }, /min_chars \[0\] must be greater than zero/],
    [{ properties: { a: { type: 'text', index_prefixes: { max_chars: 20 } } } }, /max_chars \[20\] must be less than 20/],
    [{ properties: { a: { type: 'text', index_prefixes: { min_chars: 4, max_chars: 3 } } } }, /min_chars \[4\] must be less than max_chars \[3\]/],
    [{ properties: { a: { type: 'geo_point', copy_to: 'b' } } }, /\[copy_to\] is not allowed/],
    [{ properties: { a: { type: 'geo_point', null_value: 'x!' } } }, /\[null_value\] of field \[a\]/],
    [{ properties: { a: { type: 'text', fields: { g: { type: 'geo_point' } } } } }, /multi-field \[a.g\] cannot be of type \[geo_point\]/],
    [{ properties: { a: { type: 'binary', index: true } } }, /\[index\] is not allowed/],
  ];
  for (const [body, pattern] of cases) {
    assert.throws(() => validateMapping(body), errorWith('mapper_parsing', pattern), JSON.stringify(body));
  }
});

test('mergeMappings: binary doc_values, index_prefixes and index_phrases are fixed; ignore_malformed may change', () => {
  const current = validateMapping({ properties: { blob: { type: 'binary' }, body: { type: 'text', index_phrases: true }, n: { type: 'long' } } });
  assert.throws(() => mergeMappings(current, validateMapping({ properties: { blob: { type: 'binary', doc_values: true } } })), errorWith('illegal_argument', /doc_values/));
  assert.throws(() => mergeMappings(current, validateMapping({ properties: { body: { type: 'text' } } })), errorWith('illegal_argument', /index_phrases/));
  assert.throws(() => mergeMappings(current, validateMapping({ properties: { body: { type: 'text', index_phrases: true, index_prefixes: {} } } })), errorWith('illegal_argument', /index_prefixes/));
  mergeMappings(current, validateMapping({ properties: { blob: { type: 'binary', doc_values: false } } }));
  const merged = mergeMappings(current, validateMapping({ properties: { n: { type: 'long', ignore_malformed: true } } }));
  assert.equal(merged.properties.n?.ignore_malformed, true);
});
