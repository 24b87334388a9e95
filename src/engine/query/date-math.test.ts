import { test } from 'node:test';
import assert from 'node:assert/strict';
import { addDateUnits, floorDate, parseDateValue, parseIsoDate } from './date-math.ts';

const utc = Date.UTC;
const NOW = utc(2024, 2, 15, 13, 45, 30, 250); // Friday 2024-03-15T13:45:30.250Z

test('ISO dates parse in UTC, partial dates round down or up', () => {
  assert.equal(parseIsoDate('2020-01-15'), utc(2020, 0, 15));
  assert.equal(parseIsoDate('2020-01-15T10:20:30Z'), utc(2020, 0, 15, 10, 20, 30));
  assert.equal(parseIsoDate('2020-01-15T10:20:30.5'), utc(2020, 0, 15, 10, 20, 30, 500));
  assert.equal(parseIsoDate('2020-01-15T10:20+02:00'), utc(2020, 0, 15, 8, 20));
  assert.equal(parseIsoDate('2020-01-15T10:20:30-0130'), utc(2020, 0, 15, 11, 50, 30));
  assert.equal(parseIsoDate('2020'), utc(2020, 0, 1));
  assert.equal(parseIsoDate('2020-02', true), utc(2020, 2, 1) - 1);
  assert.equal(parseIsoDate('2020-01-15', true), utc(2020, 0, 16) - 1);
  assert.equal(parseIsoDate('2020-02-30'), null);
  assert.equal(parseIsoDate('2020-13-01'), null);
  assert.equal(parseIsoDate('15/01/2020'), null);
  assert.equal(parseIsoDate('0099-06-01'), new Date('0099-06-01T00:00:00Z').getTime(), 'years below 100 are not shifted to the 1900s');
});

test('epoch millis, numbers and date math', () => {
  assert.equal(parseDateValue(1_600_000_000_000, false, NOW), 1_600_000_000_000);
  assert.equal(parseDateValue('1600000000000', false, NOW), 1_600_000_000_000);
  assert.equal(parseDateValue('now', false, NOW), NOW);
  assert.equal(parseDateValue('now-1d', false, NOW), NOW - 86_400_000);
  assert.equal(parseDateValue('now-1d/d', false, NOW), utc(2024, 2, 14));
  assert.equal(parseDateValue('now-1d/d', true, NOW), utc(2024, 2, 15) - 1);
  assert.equal(parseDateValue('now/w', false, NOW), utc(2024, 2, 11), 'weeks start on Monday');
  assert.equal(parseDateValue('now+1M/M', false, NOW), utc(2024, 3, 1));
  assert.equal(parseDateValue('now-2y', false, NOW), utc(2022, 2, 15, 13, 45, 30, 250));
  assert.equal(parseDateValue('now+90m', false, NOW), NOW + 90 * 60_000);
  assert.equal(parseDateValue('now-3h+30s', false, NOW), NOW - 3 * 3_600_000 + 30_000);
  assert.equal(parseDateValue('2020-01-31||+1M', false, NOW), utc(2020, 1, 29), 'month math clamps to the last day');
  assert.equal(parseDateValue('2020-01-15||/M', true, NOW), utc(2020, 1, 1) - 1);
  assert.equal(parseDateValue('now-1x', false, NOW), null);
  assert.equal(parseDateValue('now/', false, NOW), null);
  assert.equal(parseDateValue('tomorrow', false, NOW), null);
  assert.equal(parseDateValue({}, false, NOW), null);
});

test('calendar floors and steps', () => {
  const millis = utc(2023, 7, 17, 9, 30);
  assert.equal(floorDate(millis, 'quarter'), utc(2023, 6, 1));
  assert.equal(floorDate(millis, 'year'), utc(2023, 0, 1));
  assert.equal(floorDate(millis, 'hour'), utc(2023, 7, 17, 9));
  assert.equal(floorDate(utc(1969, 11, 31, 23, 59), 'day'), utc(1969, 11, 31), 'negative epochs floor downwards');
  assert.equal(addDateUnits(utc(2023, 10, 1), 'quarter', 1), utc(2024, 1, 1));
  assert.equal(addDateUnits(utc(2024, 1, 29), 'year', 1), utc(2025, 1, 28));
  assert.equal(addDateUnits(utc(2024, 0, 1), 'week', 2), utc(2024, 0, 15));
});

test('rounding down to a calendar unit keeps years below 100 (Date.UTC shifts them to the 1900s)', () => {
  const year50 = new Date('0050-03-17T10:00:00Z').getTime();
  assert.equal(floorDate(year50, 'month'), new Date('0050-03-01T00:00:00Z').getTime());
  assert.equal(floorDate(year50, 'year'), new Date('0050-01-01T00:00:00Z').getTime());
  assert.equal(floorDate(year50, 'quarter'), new Date('0050-01-01T00:00:00Z').getTime());
  assert.equal(floorDate(year50, 'week'), new Date('0050-03-14T00:00:00Z').getTime(), 'a Thursday rounds to its Monday');
});
