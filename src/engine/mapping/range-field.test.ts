import { test } from 'node:test';
import assert from 'node:assert/strict';
import { EngineError } from '../errors.ts';
import { flattenMapping } from './mapping.ts';
import { parseDocument } from './parse-document.ts';
import { decodeRangePair, encodeRangePair, lowBoundWindow, parseRangeValue, rangeMatches, stepBound } from './range-field.ts';
import { validateMapping } from './validate.ts';
import { encodeIp } from './ip.ts';

const fields = flattenMapping(
  validateMapping({
    properties: {
      ints: { type: 'integer_range' },
      floats: { type: 'float_range' },
      days: { type: 'date_range', format: 'yyyy-MM-dd' },
      nets: { type: 'ip_range' },
    },
  }),
);

test('gt and lt become inclusive bounds one step inside, open ends the extremes', () => {
  assert.deepEqual(parseRangeValue(fields.get('ints')!, { gt: 1, lt: 10 }), { from: 2, to: 9 });
  assert.deepEqual(parseRangeValue(fields.get('ints')!, { gte: 5 }), { from: 5, to: Infinity });
  assert.deepEqual(parseRangeValue(fields.get('ints')!, { lte: null, gte: '7' }), { from: 7, to: Infinity });
  const floats = parseRangeValue(fields.get('floats')!, { gt: 1, lt: 2 });
  assert.equal(floats.from, 1 + 2 ** -23);
  assert.equal(floats.to, 2 - 2 ** -23);
  assert.deepEqual(parseRangeValue(fields.get('days')!, { gte: '2024-01-01', lt: '2024-01-02' }), { from: 1704067200000, to: 1704153599999 });
  assert.deepEqual(parseRangeValue(fields.get('nets')!, '10.0.0.0/8'), { from: encodeIp('10.0.0.0'), to: encodeIp('10.255.255.255') });
  assert.equal(stepBound('ip_range', encodeIp('10.0.0.255')!, true), encodeIp('10.0.1.0'));
  assert.equal(stepBound('double_range', 1, false), 1 - 2 ** -53);
});

test('malformed ranges are mapper_parsing errors in OpenSearch words', () => {
  const reason = (value: unknown, path = 'ints'): string => {
    try {
      parseRangeValue(fields.get(path)!, value);
    } catch (error) {
      assert.ok(error instanceof EngineError);
      assert.equal(error.code, 'mapper_parsing');
      return error.message;
    }
    assert.fail('no error');
  };
  assert.match(reason({ gte: 3, lte: 2 }), /min value \(3\) is greater than max value \(2\)/);
  assert.match(reason({ gt: 2, lt: 3 }), /min value \(3\) is greater than max value \(2\)/);
  assert.match(reason(4), /expected an object/);
  assert.match(reason({ from: 1 }), /with unknown parameter \[from\]/);
  assert.match(reason({ gte: 'x' }), /is not a number/);
  assert.match(reason('10.0.0.0', 'nets'), /expected an object or a CIDR block/);
  assert.match(reason({ gte: '10.0.0.9', lte: '10.0.0.1' }, 'nets'), /min value \(10.0.0.9\) is greater than max value \(10.0.0.1\)/);
});

test('a document indexes bound columns, and pairs only when it holds several ranges', () => {
  const one = parseDocument({ ints: { gte: 1, lte: 3 } }, fields);
  assert.deepEqual(one.numeric.get('ints\u0000from'), [1]);
  assert.deepEqual(one.numeric.get('ints\u0000to'), [3]);
  assert.equal(one.keyword.get('ints\u0000ranges'), undefined);
  const two = parseDocument({ ints: [{ gte: 1, lte: 3 }, null, { gte: 7 }], nets: ['1.2.3.0/24'] }, fields);
  assert.deepEqual(two.numeric.get('ints\u0000from'), [1, 7]);
  assert.deepEqual(two.keyword.get('ints\u0000ranges'), ['1|3', '7|Infinity']);
  assert.deepEqual(two.keyword.get('nets\u0000from'), [encodeIp('1.2.3.0')]);
  assert.deepEqual(decodeRangePair(encodeRangePair({ from: -Infinity, to: 2.5 }), false), { from: -Infinity, to: 2.5 });
});

test('relations: intersects, within, contains, and the low-bound window that pre-filters them', () => {
  const doc = { from: 10, to: 20 };
  assert.equal(rangeMatches(doc, { from: 20, to: 30 }, 'intersects'), true);
  assert.equal(rangeMatches(doc, { from: 21, to: 30 }, 'intersects'), false);
  assert.equal(rangeMatches(doc, { from: 10, to: 20 }, 'within'), true);
  assert.equal(rangeMatches(doc, { from: 11, to: 20 }, 'within'), false);
  assert.equal(rangeMatches(doc, { from: 12, to: 18 }, 'contains'), true);
  assert.equal(rangeMatches(doc, { from: 5, to: 18 }, 'contains'), false);
  assert.deepEqual(lowBoundWindow({ from: 5, to: 9 }, 'intersects', 'long_range'), { from: -Infinity, to: 9 });
  assert.deepEqual(lowBoundWindow({ from: 5, to: 9 }, 'within', 'long_range'), { from: 5, to: 9 });
  assert.deepEqual(lowBoundWindow({ from: 5, to: 9 }, 'contains', 'long_range'), { from: -Infinity, to: 5 });
});

test('range types take format (dates), index, store, meta and doc_values, not multi-fields or null_value', () => {
  assert.throws(() => validateMapping({ properties: { r: { type: 'integer_range', format: 'yyyy' } } }), /\[format\] is not allowed/);
  assert.throws(() => validateMapping({ properties: { r: { type: 'integer_range', null_value: 1 } } }), /\[null_value\] is not allowed/);
  assert.throws(() => validateMapping({ properties: { r: { type: 'long_range', fields: { k: { type: 'keyword' } } } } }), /\[fields\] is not allowed/);
  assert.throws(() => validateMapping({ properties: { r: { type: 'keyword', fields: { k: { type: 'ip_range' } } } } }), /cannot be of type \[ip_range\]/);
  const mapping = validateMapping({ properties: { r: { type: 'double_range', index: false, store: true, doc_values: true, meta: { unit: 's' } } } });
  assert.equal(flattenMapping(mapping).get('r')!.searchable, false);
});
