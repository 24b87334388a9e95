import { test } from 'node:test';
import assert from 'node:assert/strict';
import { EngineError } from '../errors.ts';
import { FieldMap, flattenMapping } from './mapping.ts';
import { parseDocument } from './parse-document.ts';
import { mergeMappings, validateMapping } from './validate.ts';

const mapping = validateMapping({
  properties: {
    name: { type: 'text', fields: { raw: { type: 'keyword' } } },
    label: { type: 'alias', path: 'name.raw' },
    info: { properties: { size: { type: 'alias', path: 'n' } } },
    n: { type: 'long' },
  },
});

test('get answers an alias with its target field; iteration leaves aliases out', () => {
  const fields = flattenMapping(mapping);
  assert.ok(fields instanceof FieldMap);
  assert.equal(fields.get('label'), fields.get('name.raw'));
  assert.equal(fields.get('info.size')?.path, 'n');
  assert.deepEqual([...fields.keys()].sort(), ['n', 'name', 'name.raw']);
  assert.deepEqual([...fields.aliases()], [['label', 'name.raw'], ['info.size', 'n']]);
});

test('a document may not write to an alias', () => {
  const fields = flattenMapping(mapping);
  for (const [doc, alias] of [[{ label: 'x' }, 'label'], [{ info: { size: 2 } }, 'info.size'], [{ 'info.size': 2 }, 'info.size']] as const) {
    assert.throws(
      () => parseDocument(doc as Record<string, unknown>, fields),
      (error: unknown) => error instanceof EngineError && error.code === 'mapper_parsing' && error.message === `Cannot write to a field alias [${alias}].`,
    );
  }
  assert.deepEqual(parseDocument({ n: 3, info: {} }, fields).numeric.get('n'), [3]);
});

test('alias paths are checked on the whole mapping, after a merge for PUT _mapping', () => {
  const reason = (build: () => unknown): string => {
    try {
      build();
    } catch (error) {
      assert.ok(error instanceof EngineError && error.code === 'mapper_parsing');
      return error.message;
    }
    assert.fail('no error');
  };
  assert.match(reason(() => validateMapping({ properties: { a: { type: 'alias', path: 'b' } } })), /an alias must refer to an existing field in the mappings\.$/);
  assert.match(reason(() => validateMapping({ properties: { a: { type: 'alias', path: 'info' }, info: { properties: {} } } })), /an alias must refer to an existing field/);
  assert.match(reason(() => validateMapping({ properties: { a: { type: 'alias', path: 'a' } } })), /an alias cannot refer to itself\.$/);
  assert.match(reason(() => validateMapping({ properties: { n: { type: 'long' }, a: { type: 'alias', path: 'b' }, b: { type: 'alias', path: 'n' } } })), /Invalid \[path\] value \[b\] for field alias \[a\]: an alias cannot refer to another alias\./);
  assert.match(reason(() => validateMapping({ properties: { a: { type: 'alias', path: 'n', store: true } } })), /^Mapping definition for \[a\] has unsupported parameters: {2}\[store : true\]$/);
  assert.match(reason(() => validateMapping({ properties: { t: { type: 'text', fields: { a: { type: 'alias', path: 't' } } } } })), /cannot be of type \[alias\]/);
  const update = validateMapping({ properties: { extra: { type: 'alias', path: 'n' } } }, { partial: true });
  assert.equal(flattenMapping(mergeMappings(mapping, update)).get('extra')?.path, 'n');
  const moved = mergeMappings(mapping, validateMapping({ properties: { label: { type: 'alias', path: 'name' } } }, { partial: true }));
  assert.equal(flattenMapping(moved).get('label')?.path, 'name');
  assert.match(reason(() => mergeMappings(mapping, validateMapping({ properties: { bad: { type: 'alias', path: 'none' } } }, { partial: true }))), /an alias must refer/);
});
