import { test } from 'node:test';
import assert from 'node:assert/strict';
import { flattenMapping, shownMapping } from './mapping.ts';
import { parseDocument } from './parse-document.ts';
import { validateMapping } from './validate.ts';

test('index.mapping.ignore_malformed is the default of the fields that take ignore_malformed', () => {
  const mapping = validateMapping({
    properties: {
      n: { type: 'integer' },
      strict: { type: 'integer', ignore_malformed: false },
      k: { type: 'keyword' },
      t: { type: 'text', fields: { num: { type: 'long' } } },
    },
  });
  assert.equal(flattenMapping(mapping).get('n')!.ignoreMalformed, undefined);
  const lenient = flattenMapping({ ...mapping, indexIgnoreMalformed: true });
  assert.equal(lenient.get('n')!.ignoreMalformed, true);
  assert.equal(lenient.get('t.num')!.ignoreMalformed, true);
  assert.equal(lenient.get('strict')!.ignoreMalformed, undefined);
  assert.equal(lenient.get('k')!.ignoreMalformed, undefined);
  const parsed = parseDocument({ n: 'x', t: 'words' }, lenient);
  assert.deepEqual(parsed.keyword.get('_ignored'), ['n', 't.num']);
  assert.throws(() => parseDocument({ strict: 'x' }, lenient), /failed to parse field \[strict\]/);
  assert.deepEqual(shownMapping({ ...mapping, indexIgnoreMalformed: true }), mapping);
  assert.throws(() => validateMapping({ indexIgnoreMalformed: true, properties: {} }), /Root mapping definition has unsupported parameters/);
});
