import { test } from 'node:test';
import assert from 'node:assert/strict';
import { dynamicMappingUpdate } from './dynamic.ts';
import { mergeMappings, validateMapping } from './validate.ts';

const mapping = validateMapping({
  dynamic_templates: [
    { ips: { match: '*_ip', mapping: { type: 'ip' } } },
    { labels: { path_match: 'meta.*', match_mapping_type: 'object', mapping: { type: 'flattened' } } },
    { strings: { match_mapping_type: 'string', unmatch: 'body*', mapping: { type: 'keyword', meta: { from: '{name}' } } } },
    { numbers: { match_pattern: 'regex', match: '^n_\\d+$', mapping: { type: '{dynamic_type}', index: false } } },
    { whole: { match_mapping_type: ['double'], mapping: { type: 'scaled_float', scaling_factor: 100 } } },
  ],
  properties: {},
});

test('the first matching template maps a new field, with {name} and {dynamic_type} substituted', () => {
  const updated = dynamicMappingUpdate(mapping, {
    client_ip: '10.0.0.1',
    meta: { tags: { a: 1 } },
    title: 'Hello',
    body: 'long text',
    n_12: 7,
    price: 1.25,
    when: '2024-01-01',
    other: { x: 'y' },
  })!;
  assert.deepEqual(updated.properties.client_ip, { type: 'ip' });
  assert.deepEqual(updated.properties.meta, { type: 'object', properties: { tags: { type: 'flattened' } } });
  assert.deepEqual(updated.properties.title, { type: 'keyword', meta: { from: 'title' } });
  assert.equal(updated.properties.body!.type, 'text');
  assert.deepEqual(updated.properties.n_12, { type: 'long', index: false });
  assert.deepEqual(updated.properties.price, { type: 'scaled_float', scaling_factor: 100 });
  assert.deepEqual(updated.properties.when, { type: 'date' });
  assert.deepEqual(updated.properties.other!.properties!.x, { type: 'keyword', meta: { from: 'x' } });
  assert.deepEqual(updated.dynamic_templates, mapping.dynamic_templates);
});

test('templates are validated when put, and merged by name', () => {
  assert.throws(() => validateMapping({ dynamic_templates: { a: {} } }), /An array of named objects is expected/);
  assert.throws(() => validateMapping({ dynamic_templates: [{ a: { match: 'x' } }] }), /template \[a\] must have a mapping object/);
  assert.throws(() => validateMapping({ dynamic_templates: [{ a: { match: 'x', bogus: 1, mapping: {} } }] }), /Illegal dynamic template parameter: \[bogus\]/);
  assert.throws(() => validateMapping({ dynamic_templates: [{ a: { match_mapping_type: 'text', mapping: {} } }] }), /No field type matched on \[text\]/);
  assert.throws(
    () => validateMapping({ dynamic_templates: [{ a: { match: 'x', mapping: { type: 'nonsense' } } }] }),
    /dynamic template \[a\] has invalid content .*match_mapping_type: \[string\], caused by \[No handler for type \[nonsense\]/,
  );
  const merged = mergeMappings(mapping, validateMapping({ dynamic_templates: [{ ips: { match: '*_addr', mapping: { type: 'ip' } } }, { extra: { match: 'z', mapping: { type: 'long' } } }] }, { partial: true }));
  assert.deepEqual(merged.dynamic_templates!.map((template) => Object.keys(template)[0]), ['ips', 'labels', 'strings', 'numbers', 'whole', 'extra']);
  assert.equal(merged.dynamic_templates![0]!.ips!.match, '*_addr');
});

test('a template mapping a field as an alias must name an existing field', () => {
  const aliases = validateMapping({ dynamic_templates: [{ links: { match: 'see_*', mapping: { type: 'alias', path: 'target' } } }], properties: { target: { type: 'long' } } });
  assert.deepEqual(dynamicMappingUpdate(aliases, { see_a: null, other: 1 })!.properties.see_a, undefined);
  const broken = validateMapping({ dynamic_templates: [{ links: { match: 'see_*', mapping: { type: 'alias', path: 'nowhere' } } }], properties: {} });
  assert.throws(() => dynamicMappingUpdate(broken, { see_a: 1 }), /an alias must refer to an existing field in the mappings/);
});

test('date_detection: false keeps date-like strings as text; numeric_detection reads numeric strings as numbers', () => {
  const plain = validateMapping({ date_detection: false, numeric_detection: 'true', properties: {} });
  assert.equal(plain.date_detection, false);
  assert.equal(plain.numeric_detection, true);
  const updated = dynamicMappingUpdate(plain, { day: '2024-01-01', count: '42', ratio: '1.5', word: '12ab' })!;
  assert.equal(updated.properties.day!.type, 'text');
  assert.deepEqual(updated.properties.count, { type: 'long' });
  assert.deepEqual(updated.properties.ratio, { type: 'double' });
  assert.equal(updated.properties.word!.type, 'text');
  const templated = validateMapping({ numeric_detection: true, dynamic_templates: [{ nums: { match_mapping_type: 'long', mapping: { type: 'integer' } } }], properties: {} });
  assert.deepEqual(dynamicMappingUpdate(templated, { n: '7', day: '2024-01-01' })!.properties, { n: { type: 'integer' }, day: { type: 'date' } });
  assert.throws(() => validateMapping({ date_detection: 'maybe' }), /\[date_detection\] must be a boolean/);
  const merged = mergeMappings(plain, validateMapping({ date_detection: true }, { partial: true }));
  assert.equal(merged.date_detection, true);
  assert.equal(merged.numeric_detection, true);
});
