import assert from 'node:assert/strict';
import { test } from 'node:test';
import { EngineError, type EngineErrorCode } from '../errors.ts';
import { roundToHalfFloat } from './field-value.ts';
import { encodeIp } from './ip.ts';
import { flattenMapping, keyedCompanionPath, segmentFieldList } from './mapping.ts';
import { mergeMappings } from './merge.ts';
import { parseDocument } from './parse-document.ts';
import { validateMapping } from './validate.ts';

function failsWith(code: EngineErrorCode, pattern: RegExp): (error: unknown) => boolean {
  return (error) => error instanceof EngineError && error.code === code && pattern.test(error.message);
}

const mapping = validateMapping({
  properties: {
    tiny: { type: 'byte' },
    small: { type: 'short' },
    half: { type: 'half_float' },
    price: { type: 'scaled_float', scaling_factor: 100 },
    counter: { type: 'unsigned_long' },
    address: { type: 'ip' },
    blob: { type: 'binary' },
    at: { type: 'date_nanos' },
    day: { type: 'date', format: 'yyyy/MM/dd||epoch_second' },
    body: { type: 'match_only_text' },
    path: { type: 'wildcard' },
    labels: { type: 'flattened' },
    status: { type: 'keyword', null_value: 'unknown' },
    first: { type: 'text', copy_to: ['full'] },
    last: { type: 'text', copy_to: 'full' },
    full: { type: 'text', fields: { raw: { type: 'keyword' } } },
    hidden: { type: 'long', index: false },
    unsorted: { type: 'keyword', doc_values: false, meta: { unit: 'none' }, store: true },
  },
});
const fields = flattenMapping(mapping);

test('numeric types hold their ranges and precisions', () => {
  const parsed = parseDocument({ tiny: -128, small: '32767', half: 0.1, price: 12.345, counter: 9007199254740991 }, fields, { strictNumbers: true });
  assert.deepEqual(parsed.numeric.get('tiny'), [-128]);
  assert.deepEqual(parsed.numeric.get('small'), [32767]);
  assert.deepEqual(parsed.numeric.get('half'), [roundToHalfFloat(0.1)]);
  assert.equal(roundToHalfFloat(0.1), 0.0999755859375);
  assert.equal(roundToHalfFloat(65504), 65504);
  assert.equal(roundToHalfFloat(2049), 2048, 'ties to even');
  assert.deepEqual(parsed.numeric.get('price'), [12.35]);
  assert.deepEqual(parsed.numeric.get('counter'), [9007199254740991]);
  const bad: [Record<string, unknown>, RegExp][] = [
    [{ tiny: 128 }, /\[tiny\] of type \[byte\].*out of range for a byte/],
    [{ small: -32769 }, /\[small\] of type \[short\].*out of range for a short/],
    [{ half: 70000 }, /\[half\].*out of range for a half_float/],
    [{ counter: -1 }, /\[counter\].*out of range for an unsigned_long/],
    [{ counter: 18446744073709551615 }, /\[counter\].*cannot be held exactly/],
    [{ counter: 1e20 }, /\[counter\].*out of range/],
    [{ price: 'cheap' }, /\[price\] of type \[scaled_float\].*is not a number/],
  ];
  for (const [document, pattern] of bad) {
    assert.throws(() => parseDocument(document, fields, { strictNumbers: true }), failsWith('mapper_parsing', pattern), JSON.stringify(document));
  }
});

test('ip, binary, dates with formats and date_nanos', () => {
  const parsed = parseDocument(
    { address: ['10.0.0.1', '2001:db8::1'], blob: 'aGVsbG8=', at: '2024-05-06T07:08:09.123456789Z', day: ['2024/05/06', 1714953600] },
    fields,
  );
  assert.deepEqual(parsed.keyword.get('address'), [encodeIp('10.0.0.1'), encodeIp('2001:db8::1')]);
  assert.equal(parsed.keyword.has('blob') || parsed.numeric.has('blob'), false, 'binary is not indexed');
  assert.deepEqual(parsed.numeric.get('at'), [Date.UTC(2024, 4, 6, 7, 8, 9, 123)]);
  assert.deepEqual(parsed.numeric.get('day'), [Date.UTC(2024, 4, 6), Date.UTC(2024, 4, 6)]);
  assert.throws(() => parseDocument({ address: '10.0.0.256' }, fields), failsWith('mapper_parsing', /\[address\] of type \[ip\].*not an IP string literal/));
  assert.throws(() => parseDocument({ blob: 'not base64!' }, fields), failsWith('mapper_parsing', /\[blob\] of type \[binary\].*base64/));
  assert.throws(() => parseDocument({ at: '1969-12-31T23:59:59Z' }, fields), failsWith('mapper_parsing', /\[at\].*out of range for date_nanos/));
  assert.throws(() => parseDocument({ day: '2024-05-06' }, fields), failsWith('mapper_parsing', /\[day\].*expected format \[yyyy\/MM\/dd\|\|epoch_second\]/));
});

test('null_value, copy_to and multi-fields', () => {
  const parsed = parseDocument({ status: null, first: 'Ada', last: ['Lovelace', null] }, fields);
  assert.deepEqual(parsed.keyword.get('status'), ['unknown']);
  assert.deepEqual(parsed.text.get('full'), ['Ada', 'Lovelace']);
  assert.deepEqual(parsed.keyword.get('full.raw'), ['Ada', 'Lovelace']);
  assert.deepEqual(parseDocument({ status: [null, 'ok'] }, fields).keyword.get('status'), ['unknown', 'ok']);
});

test('flattened fields index every leaf value, and key\\0value in the keyed companion', () => {
  const parsed = parseDocument({ labels: { color: 'red', size: { eu: 42 }, tags: ['a', 'b'] }, 'labels.extra': true }, fields);
  assert.deepEqual(parsed.keyword.get('labels'), ['red', '42', 'a', 'b', 'true']);
  assert.deepEqual(parsed.keyword.get(keyedCompanionPath('labels')), ['color\0red', 'size.eu\0' + '42', 'tags\0a', 'tags\0b', 'extra\0true']);
  const view = fields.get('labels.size.eu')!;
  assert.equal(view.path, keyedCompanionPath('labels'));
  assert.equal(view.keyPrefix, 'size.eu\0');
  assert.equal(view.displayPath, 'labels.size.eu');
  assert.equal(fields.get('labels.'), undefined);
  assert.equal(fields.get(keyedCompanionPath('labels'))?.keyPrefix, '', 'the companion is found by get');
  assert.ok(![...fields.keys()].includes(keyedCompanionPath('labels')), 'and left out of iteration');
  assert.ok(segmentFieldList(fields, () => true).some((field) => field.path === keyedCompanionPath('labels')), 'but stored in segments');
  assert.ok(!segmentFieldList(fields, () => false).some((field) => field.path === keyedCompanionPath('labels')), 'when a source holds values of it');
  let deep: unknown = 'x';
  for (let level = 0; level < 25; level++) deep = { k: deep };
  assert.throws(() => parseDocument({ labels: deep as Record<string, unknown> }, fields), failsWith('mapper_parsing', /flattened depth limit/));
});

test('index, doc_values and storage flags of the flattened fields', () => {
  assert.equal(fields.get('hidden')!.searchable, false);
  assert.equal(fields.get('hidden')!.docValues, true);
  assert.equal(fields.get('unsorted')!.docValues, false);
  assert.equal(fields.get('blob')!.storage, 'none');
  assert.equal(fields.get('body')!.storage, 'text');
  assert.equal(fields.get('path')!.storage, 'keyword');
  assert.equal(fields.get('at')!.storage, 'numeric');
});

test('scaling_factor may be a numeric string, read as its number (as Elasticsearch)', () => {
  const mapping = validateMapping({ properties: { p: { type: 'scaled_float', scaling_factor: '100.0' } } });
  assert.equal((mapping.properties.p as { scaling_factor?: number }).scaling_factor, 100);
});

test('parameter validation names the field', () => {
  const cases: [unknown, RegExp][] = [
    [{ properties: { p: { type: 'scaled_float' } } }, /\[scaling_factor\] is required for field \[p\]/],
    [{ properties: { p: { type: 'scaled_float', scaling_factor: 0 } } }, /\[scaling_factor\] on field \[p\] must be a positive/],
    [{ properties: { p: { type: 'scaled_float', scaling_factor: 'many' } } }, /\[scaling_factor\] on field \[p\] must be a positive/],
    [{ properties: { d: { type: 'date', format: 'yyyy-QQ' } } }, /Invalid format: \[yyyy-QQ\] for field \[d\]/],
    [{ properties: { d: { type: 'date', format: '' } } }, /\[format\] on field \[d\]/],
    [{ properties: { n: { type: 'long', null_value: 'abc' } } }, /\[null_value\] of field \[n\] does not fit its type/],
    [{ properties: { a: { type: 'ip', null_value: '1.2.3' } } }, /\[null_value\] of field \[a\]/],
    [{ properties: { m: { type: 'keyword', meta: { unit: 5 } } } }, /\[meta\] values can only be strings/],
    [{ properties: { m: { type: 'keyword', meta: { a: '1', b: '2', c: '3', d: '4', e: '5', f: '6' } } } }, /\[meta\] can't have more than 5 entries/],
    [{ properties: { c: { type: 'text', copy_to: 'c' } } }, /\[copy_to\] on field \[c\] cannot name the field itself/],
    [{ properties: { c: { type: 'text', copy_to: [1] } } }, /\[copy_to\] on field \[c\] must be/],
    [{ properties: { b: { type: 'binary', index: true } } }, /\[index\] is not allowed on field \[b\] of type \[binary\]/],
    [{ properties: { t: { type: 'text', doc_values: true } } }, /\[doc_values\] is not allowed on field \[t\] of type \[text\]/],
    [{ properties: { t: { type: 'text', fields: { k: { type: 'keyword', copy_to: 'x' } } } } }, /\[copy_to\] is not allowed on multi-field \[t.k\]/],
    [{ properties: { i: { type: 'long', index: 'no' } } }, /\[index\] on field \[i\] must be a boolean/],
    [{ _source: { includes: 'a', enabled: 'yes' } }, /\[_source.enabled\] must be a boolean/],
  ];
  for (const [body, pattern] of cases) assert.throws(() => validateMapping(body), failsWith('mapper_parsing', pattern), JSON.stringify(body));
  assert.deepEqual(validateMapping({ _source: { includes: 'a.*', excludes: ['b'] } })._source, { includes: ['a.*'], excludes: ['b'] });
});

test('mapping updates keep fixed parameters and replace updatable ones', () => {
  const current = validateMapping({ properties: { n: { type: 'long', index: false }, k: { type: 'keyword', meta: { a: 'b' } } } });
  assert.throws(
    () => mergeMappings(current, validateMapping({ properties: { n: { type: 'long' } } })),
    failsWith('illegal_argument', /mapper \[n\] cannot change parameter \[index\] from \[false\] to \[true\]/),
  );
  assert.throws(
    () => mergeMappings(current, validateMapping({ properties: { n: { type: 'short', index: false } } })),
    failsWith('illegal_argument', /cannot be changed from type \[long\] to \[short\]/),
  );
  const merged = mergeMappings(current, validateMapping({ properties: { k: { type: 'keyword', meta: { c: 'd' }, ignore_above: 5 } } }));
  assert.deepEqual(merged.properties.k, { type: 'keyword', meta: { c: 'd' }, ignore_above: 5 });
  assert.throws(
    () => mergeMappings(validateMapping({ _source: { enabled: false } }), validateMapping({ _source: { enabled: true } })),
    failsWith('illegal_argument', /Cannot update parameter \[enabled\] from \[false\] to \[true\]/),
  );
});
