import assert from 'node:assert/strict';
import { test } from 'node:test';
import { EngineError } from '../errors.ts';
import { flattenMapping, type Mapping } from './mapping.ts';
import { checkFieldValue, parseDocument } from './parse-document.ts';
import { coerceColumnValue } from './field-value.ts';

const mapping: Mapping = {
  properties: {
    title: { type: 'text', fields: { keyword: { type: 'keyword', ignore_above: 10 } } },
    tag: { type: 'keyword' },
    price: { type: 'long' },
    rank: { type: 'integer' },
    score: { type: 'double' },
    ratio: { type: 'float' },
    published: { type: 'date' },
    active: { type: 'boolean' },
    views: { type: 'long', inplace: true },
    author: {
      type: 'object',
      properties: { name: { type: 'keyword' }, address: { type: 'object', properties: { city: { type: 'text' } } } },
    },
  },
};
const fields = flattenMapping(mapping);

function mapperError(pattern: RegExp): (error: unknown) => boolean {
  return (error) => error instanceof EngineError && error.code === 'mapper_parsing' && pattern.test(error.message);
}

test('collects text, keyword and numeric values with multi-fields', () => {
  const parsed = parseDocument(
    {
      title: 'Hello you',
      tag: ['a', 'b'],
      price: 12,
      score: 1.5,
      published: '2024-01-02',
      active: true,
      author: { name: 'Ann', address: { city: 'Paris' } },
      unmapped: { anything: [1, 'x'] },
    },
    fields,
  );
  assert.deepEqual(parsed.text.get('title'), ['Hello you']);
  assert.deepEqual(parsed.keyword.get('title.keyword'), ['Hello you']);
  assert.deepEqual(parsed.keyword.get('tag'), ['a', 'b']);
  assert.deepEqual(parsed.numeric.get('price'), [12]);
  assert.deepEqual(parsed.numeric.get('score'), [1.5]);
  assert.deepEqual(parsed.numeric.get('published'), [Date.UTC(2024, 0, 2)]);
  assert.deepEqual(parsed.numeric.get('active'), [1]);
  assert.deepEqual(parsed.keyword.get('author.name'), ['Ann']);
  assert.deepEqual(parsed.text.get('author.address.city'), ['Paris']);
  assert.equal(parsed.text.has('unmapped.anything'), false);
});

test('ignore_above drops long keywords but keeps the text value', () => {
  const parsed = parseDocument({ title: 'a rather long title' }, fields);
  assert.deepEqual(parsed.text.get('title'), ['a rather long title']);
  assert.equal(parsed.keyword.has('title.keyword'), false);
});

test('arrays everywhere, nested arrays flattened, nulls skipped', () => {
  const parsed = parseDocument(
    {
      price: [1, [2, [3]], null],
      title: null,
      author: [{ name: 'A' }, { name: ['B', null] }, null],
      published: [1_700_000_000_000, '1700000000001'],
    },
    fields,
  );
  assert.deepEqual(parsed.numeric.get('price'), [1, 2, 3]);
  assert.equal(parsed.text.has('title'), false);
  assert.deepEqual(parsed.keyword.get('author.name'), ['A', 'B']);
  assert.deepEqual(parsed.numeric.get('published'), [1_700_000_000_000, 1_700_000_000_001]);
});

test('literal dotted keys mean the nested path', () => {
  const parsed = parseDocument({ 'author.name': 'Ann', author: { 'address.city': 'Rome' } }, fields);
  assert.deepEqual(parsed.keyword.get('author.name'), ['Ann']);
  assert.deepEqual(parsed.text.get('author.address.city'), ['Rome']);
});

test('coercion follows Elasticsearch defaults', () => {
  const parsed = parseDocument(
    { price: '42', rank: 7.9, score: '1e3', active: ['false', 'true'], tag: [5, true], title: 3.5, ratio: '' },
    fields,
  );
  assert.deepEqual(parsed.numeric.get('price'), [42]);
  assert.deepEqual(parsed.numeric.get('rank'), [7]);
  assert.deepEqual(parsed.numeric.get('score'), [1000]);
  assert.deepEqual(parsed.numeric.get('active'), [0, 1]);
  assert.deepEqual(parsed.keyword.get('tag'), ['5', 'true']);
  assert.deepEqual(parsed.text.get('title'), ['3.5']);
  assert.equal(parsed.numeric.has('ratio'), false, 'an empty string is a missing number');
});

test('values that do not fit the mapped type are mapper_parsing errors', () => {
  assert.throws(() => parseDocument({ price: 'abc' }, fields), mapperError(/failed to parse field \[price\] of type \[long\]: value \["abc"\]/));
  assert.throws(() => parseDocument({ price: true }, fields), mapperError(/\[price\] of type \[long\]/));
  assert.throws(() => parseDocument({ rank: 3_000_000_000 }, fields), mapperError(/out of range for an integer/));
  assert.throws(() => parseDocument({ price: 1e19 }, fields), mapperError(/out of range for a long/));
  assert.deepEqual(parseDocument({ price: 9223372036854775807 }, fields).numeric.get('price'), [2 ** 63], 'replay: Long.MAX_VALUE (rounded to 2^63 by JSON.parse) still loads');
  assert.throws(() => parseDocument({ ratio: 1e39 }, fields), mapperError(/out of range for a float/));
  assert.throws(() => parseDocument({ published: 'yesterday' }, fields), mapperError(/\[published\] of type \[date\]/));
  assert.throws(() => parseDocument({ active: 1 }, fields), mapperError(/\[active\] of type \[boolean\]/));
  assert.throws(() => parseDocument({ tag: { nested: 1 } }, fields), mapperError(/\[tag\] of type \[keyword\].*object/));
  assert.throws(() => parseDocument({ price: [1, { a: 1 }] }, fields), mapperError(/\[price\]/));
});

test('a concrete value where an object is mapped is rejected', () => {
  assert.throws(() => parseDocument({ author: 'Ann' }, fields), mapperError(/object mapping for \[author\].*concrete value/));
  assert.throws(() => parseDocument({ author: { address: 5 } }, fields), mapperError(/\[author.address\]/));
  assert.throws(() => parseDocument({ author: ['Ann'] }, fields), mapperError(/\[author\]/));
});

test('a value below a leaf field is rejected', () => {
  assert.throws(() => parseDocument({ 'price.cents': 5 }, fields), mapperError(/\[price.cents\].*\[price\].*\[long\]/));
  assert.throws(() => parseDocument({ 'title.keyword': 'x' }, fields), mapperError(/\[title.keyword\]/));
});

test('an inplace field holds a single value', () => {
  assert.deepEqual(parseDocument({ views: [5] }, fields).numeric.get('views'), [5]);
  assert.throws(() => parseDocument({ views: [1, 2] }, fields), mapperError(/\[views\].*single value/));
});

test('metadata fields cannot appear in a document', () => {
  assert.throws(() => parseDocument({ _id: 'x' }, fields), mapperError(/\[_id\] is a metadata field/));
});

test('checkFieldValue validates a value at a path as parseDocument would', () => {
  checkFieldValue('price', '12', fields);
  checkFieldValue('author', { name: 'x' }, fields);
  checkFieldValue('unmapped.deep', { a: [1] }, fields);
  checkFieldValue('', { price: 1 }, fields);
  assert.throws(() => checkFieldValue('price', 'x', fields), mapperError(/\[price\]/));
  assert.throws(() => checkFieldValue('author', 3, fields), mapperError(/\[author\]/));
  assert.throws(() => checkFieldValue('author.name.first', 'x', fields), mapperError(/\[author.name\]/));
  assert.throws(() => checkFieldValue('', [1], fields), mapperError(/JSON object/));
});

test('keys such as __proto__ and constructor are ordinary fields', () => {
  const source = JSON.parse('{"__proto__": {"price": "x"}, "constructor": 1, "price": 3}') as Record<string, unknown>;
  const parsed = parseDocument(source, fields);
  assert.deepEqual(parsed.numeric.get('price'), [3]);
});

test('new writes (strictNumbers) refuse a long beyond 2^53 whose digits they do not have; replay still loads it', () => {
  const strict = { strictNumbers: true };
  const inexact = /failed to parse field \[price\] of type \[long\]: value \[.*\] cannot be held exactly: beyond ±9007199254740991/;
  for (const value of ['9007199254740993', '9223372036854775807', '-9223372036854775808']) {
    assert.doesNotThrow(() => parseDocument({ price: value }, fields, strict), 'a string carries its digits (exact-long.test.ts)');
  }
  for (const value of [9223372036854775807, 9223372036854775808, 9007199254740993, -9007199254740993, 2 ** 53, 1e17, [1, 2 ** 60]]) {
    assert.throws(() => parseDocument({ price: value }, fields, strict), mapperError(inexact), JSON.stringify(value));
    assert.throws(() => checkFieldValue('', { price: value }, fields), mapperError(inexact), `update check of ${JSON.stringify(value)}`);
    assert.throws(() => checkFieldValue('price', value, fields), mapperError(inexact));
    assert.doesNotThrow(() => parseDocument({ price: value }, fields), 'replay parses what older versions admitted');
  }
  assert.throws(() => coerceColumnValue(fields.get('price')!, 2 ** 60), mapperError(inexact), 'column values of updates are new writes');
  assert.equal(coerceColumnValue(fields.get('price')!, 2 ** 60, false), 2 ** 60);
  for (const value of [9007199254740991, -9007199254740991, '9007199254740991', 12.9, '-7']) {
    assert.doesNotThrow(() => parseDocument({ price: value }, fields, strict), JSON.stringify(value));
  }
  assert.deepEqual(parseDocument({ price: 9007199254740991, score: 9007199254740993 }, fields, strict).numeric.get('price'), [9007199254740991]);
  assert.throws(() => parseDocument({ price: 1e19 }, fields, strict), mapperError(/out of range for a long/));
});

test('a numeric string of many digits is checked in linear time (the old pattern backtracked quadratically)', () => {
  const started = performance.now();
  assert.throws(() => parseDocument({ price: `${'1'.repeat(200_000)}x` }, fields), mapperError(/is not a number/));
  assert.ok(performance.now() - started < 1000, `took ${performance.now() - started} ms`);
  assert.deepEqual(parseDocument({ score: ['1.', '.5', '-2.5e1', '+3'] }, fields).numeric.get('score'), [1, 0.5, -25, 3]);
});

test('geo_point values go to the latitude and longitude columns; several points also as pair terms', () => {
  const geoFields = flattenMapping({ properties: { place: { type: 'geo_point' }, spot: { type: 'geo_point', null_value: '1,2' } } });
  const one = parseDocument({ place: { lat: 10, lon: 20 }, spot: null }, geoFields);
  assert.deepEqual(one.numeric.get('place\u0000lat'), [10]);
  assert.deepEqual(one.numeric.get('place\u0000lon'), [20]);
  assert.equal(one.keyword.has('place\u0000points'), false, 'a single point needs no pair terms');
  assert.deepEqual([one.numeric.get('spot\u0000lat'), one.numeric.get('spot\u0000lon')], [[1], [2]], 'null_value');
  const many = parseDocument({ place: [[20, 10], '30,40', null] }, geoFields);
  assert.deepEqual(many.numeric.get('place\u0000lat'), [10, 30]);
  assert.deepEqual(many.numeric.get('place\u0000lon'), [20, 40]);
  assert.deepEqual(many.keyword.get('place\u0000points'), ['10,20', '30,40']);
  assert.throws(() => parseDocument({ place: [[20, 10], [[1, 2]]] }, geoFields), mapperError(/\[place\] of type \[geo_point\]/));
  assert.throws(() => parseDocument({ place: { lat: -91, lon: 0 } }, geoFields), mapperError(/illegal latitude/));
  assert.throws(() => checkFieldValue('place', 'nowhere', geoFields), mapperError(/geohash/));
});

test('ignore_malformed skips values that do not fit and names their fields in _ignored', () => {
  const lenient = flattenMapping({
    properties: {
      count: { type: 'integer', ignore_malformed: true, fields: { raw: { type: 'keyword' } } },
      when: { type: 'date', ignore_malformed: true },
      addr: { type: 'ip', ignore_malformed: true },
      place: { type: 'geo_point', ignore_malformed: true },
      strict: { type: 'integer' },
    },
  });
  const parsed = parseDocument({ count: ['x', 5, { a: 1 }], when: 'soon', addr: 'nowhere', place: [[0, 0], [500, 0]], strict: 3 }, lenient);
  assert.deepEqual(parsed.numeric.get('count'), [5]);
  assert.deepEqual(parsed.keyword.get('count.raw'), ['x', '5'], 'multi-fields still take what fits them');
  assert.equal(parsed.numeric.has('when'), false);
  assert.equal(parsed.keyword.has('addr'), false);
  assert.deepEqual(parsed.numeric.get('place\u0000lat'), [0], 'the good point of the field is kept');
  assert.deepEqual(parsed.numeric.get('strict'), [3]);
  assert.deepEqual(parsed.keyword.get('_ignored'), ['count', 'when', 'addr', 'place']);
  assert.equal(parseDocument({ count: 1 }, lenient).keyword.has('_ignored'), false);
  assert.throws(() => parseDocument({ strict: 'x' }, lenient), mapperError(/\[strict\]/));
  assert.equal(lenient.get('_ignored')?.storage, 'keyword', 'every mapping answers the _ignored field');
  assert.equal([...lenient.keys()].includes('_ignored'), false, 'hidden from field listings');
});

test('binary with doc values keeps its base64 text in a column; without, a presence mark', () => {
  const binaryFields = flattenMapping({ properties: { kept: { type: 'binary', doc_values: true }, plain: { type: 'binary' } } });
  const parsed = parseDocument({ kept: 'aGVsbG8=', plain: ['d29y', 'bGQ='] }, binaryFields);
  assert.deepEqual(parsed.keyword.get('kept'), ['aGVsbG8=']);
  assert.equal(parsed.keyword.has('plain'), false);
  assert.deepEqual(parsed.keyword.get('plain\u0000present'), ['', '']);
  const kept = binaryFields.get('kept')!;
  assert.deepEqual([kept.storage, kept.searchable, kept.docValues], ['keyword', false, true]);
  const plain = binaryFields.get('plain')!;
  assert.deepEqual([plain.storage, plain.searchable, plain.docValues], ['none', false, false]);
  assert.throws(() => parseDocument({ kept: 'not base64!' }, binaryFields), mapperError(/\[kept\] of type \[binary\]/));
});
