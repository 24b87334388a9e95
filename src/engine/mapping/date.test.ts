import assert from 'node:assert/strict';
import { test } from 'node:test';
import { looksLikeIsoDate, parseDate } from './date.ts';
import { parseDate as parseDateFromValidate } from './validate.ts';

test('ISO dates, date-times, fractions and zones', () => {
  assert.equal(parseDate('2024-03-05'), Date.UTC(2024, 2, 5));
  assert.equal(parseDate('2024-03-05T10:20:30Z'), Date.UTC(2024, 2, 5, 10, 20, 30));
  assert.equal(parseDate('2024-03-05T10:20:30'), Date.UTC(2024, 2, 5, 10, 20, 30));
  assert.equal(parseDate('2024-03-05T10:20'), Date.UTC(2024, 2, 5, 10, 20));
  assert.equal(parseDate('2024-03-05T10'), Date.UTC(2024, 2, 5, 10));
  assert.equal(parseDate('2024-03-05T10:20:30.5Z'), Date.UTC(2024, 2, 5, 10, 20, 30, 500));
  assert.equal(parseDate('2024-03-05T10:20:30.123456789Z'), Date.UTC(2024, 2, 5, 10, 20, 30, 123));
  assert.equal(parseDate('2024-03-05T10:20:30,25Z'), Date.UTC(2024, 2, 5, 10, 20, 30, 250));
  assert.equal(parseDate('2024-03-05T10:20:30+02:00'), Date.UTC(2024, 2, 5, 8, 20, 30));
  assert.equal(parseDate('2024-03-05T10:20:30-0130'), Date.UTC(2024, 2, 5, 11, 50, 30));
  assert.equal(parseDate('2024-03-05T10:20:30+05'), Date.UTC(2024, 2, 5, 5, 20, 30));
  assert.equal(parseDate('2024-03'), Date.UTC(2024, 2, 1));
  assert.equal(parseDate('2024'), Date.UTC(2024, 0, 1), 'a four-digit string is a year, as in Elasticsearch');
  assert.equal(parseDate('1969-12-31T23:59:59.999Z'), -1);
  assert.equal(parseDate('0001-01-01'), -62_135_596_800_000);
  assert.equal(parseDate('2000-02-29'), Date.UTC(2000, 1, 29));
});

test('the years before 100 are not shifted to the 1900s', () => {
  const expected = new Date(0);
  expected.setUTCFullYear(50, 5, 15);
  assert.equal(parseDate('0050-06-15'), expected.getTime());
});

test('epoch millis as numbers and numeric strings', () => {
  assert.equal(parseDate(1_700_000_000_000), 1_700_000_000_000);
  assert.equal(parseDate('1700000000000'), 1_700_000_000_000);
  assert.equal(parseDate('-5000'), -5000);
  assert.equal(parseDate(12.7), 12);
  assert.equal(parseDate(0), 0);
});

test('values that are not dates', () => {
  for (const value of [
    'hello',
    '2024-13-01',
    '2023-02-29',
    '2024-04-31',
    '2024-01-01T24:00',
    '2024-01-01T10:60',
    '2024-01-01 10:00',
    '2024-01-01T10:00:00+19:00',
    '2024-1-1',
    '',
    true,
    null,
    undefined,
    {},
    [],
    Number.NaN,
    Number.POSITIVE_INFINITY,
    1e20,
  ]) {
    assert.equal(parseDate(value), null, `${String(value)} is not a date`);
  }
});

test('dynamic date detection needs at least year-month-day', () => {
  assert.equal(looksLikeIsoDate('2024-03-05'), true);
  assert.equal(looksLikeIsoDate('2024-03-05T10:00:00Z'), true);
  assert.equal(looksLikeIsoDate('2024'), false);
  assert.equal(looksLikeIsoDate('2024-03'), false);
  assert.equal(looksLikeIsoDate('2024-03-45'), false);
  assert.equal(looksLikeIsoDate('1700000000000'), false);
  assert.equal(looksLikeIsoDate('hello world'), false);
});

test('validate.ts exposes the same parseDate', () => {
  assert.equal(parseDateFromValidate, parseDate);
});
