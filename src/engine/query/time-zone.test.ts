import { test } from 'node:test';
import assert from 'node:assert/strict';
import { addDateUnitsIn, floorDateIn, parseDateValue, parseIsoDate } from './date-math.ts';
import { TimeZone } from './time-zone.ts';

const utc = Date.UTC;
const paris = TimeZone.parse('Europe/Paris', 'test');

test('offsets: fixed, IANA with DST, and unknown zones', () => {
  assert.equal(TimeZone.parse('+01:00', 'test').offsetAt(0), 3_600_000);
  assert.equal(TimeZone.parse('-0530', 'test').id, '-05:30');
  assert.equal(TimeZone.parse('UTC', 'test').isUtc, true);
  assert.equal(TimeZone.parse('UTC+01:00', 'test').offsetAt(0), 3_600_000);
  assert.equal(TimeZone.parse('GMT-5', 'test').id, '-05:00');
  assert.equal(TimeZone.parse('+00:00', 'test').isUtc, true);
  assert.equal(paris.offsetAt(utc(2024, 0, 15)), 3_600_000);
  assert.equal(paris.offsetAt(utc(2024, 6, 15)), 7_200_000);
  // The spring change: 01:00Z is the first instant in summer time.
  assert.equal(paris.offsetAt(utc(2024, 2, 31, 0, 59, 59, 999)), 3_600_000);
  assert.equal(paris.offsetAt(utc(2024, 2, 31, 1)), 7_200_000);
  assert.equal(TimeZone.parse('Asia/Kolkata', 'test').offsetTextAt(0), '+05:30');
  for (const bad of ['Mars/Olympus', '+25:00', 'nowhere']) {
    assert.throws(() => TimeZone.parse(bad, 'range'), /unknown time zone/);
  }
});

test('wall-clock readings in gaps and overlaps resolve like java.time', () => {
  // 02:30 does not exist on 2024-03-31 in Paris: it moves forward by the gap, to 03:30 CEST.
  assert.equal(paris.toUtc(utc(2024, 2, 31, 2, 30)), utc(2024, 2, 31, 1, 30));
  // 02:30 happens twice on 2024-10-27: the earlier instant (CEST).
  assert.equal(paris.toUtc(utc(2024, 9, 27, 2, 30)), utc(2024, 9, 27, 0, 30));
  assert.equal(paris.toUtc(utc(2024, 9, 27, 12)), utc(2024, 9, 27, 11));
});

test('rounding and calendar arithmetic on the wall clock of a zone', () => {
  // A day is 23 hours on the spring change and 25 on the autumn one.
  const springDay = floorDateIn(utc(2024, 2, 31, 12), 'day', paris);
  assert.equal(springDay, utc(2024, 2, 30, 23));
  assert.equal(addDateUnitsIn(springDay, 'day', 1, paris) - springDay, 23 * 3_600_000);
  const autumnDay = floorDateIn(utc(2024, 9, 27, 12), 'day', paris);
  assert.equal(addDateUnitsIn(autumnDay, 'day', 1, paris) - autumnDay, 25 * 3_600_000);
  assert.equal(floorDateIn(utc(2024, 4, 15, 12), 'month', paris), utc(2024, 3, 30, 22));
  // The repeated hour of New York's autumn change is two distinct hours.
  const newYork = TimeZone.parse('America/New_York', 'test');
  assert.equal(floorDateIn(utc(2024, 10, 3, 5, 30), 'hour', newYork), utc(2024, 10, 3, 5));
  assert.equal(floorDateIn(utc(2024, 10, 3, 6, 30), 'hour', newYork), utc(2024, 10, 3, 6));
  // Half-hour offsets round hours on the local clock.
  assert.equal(floorDateIn(utc(2024, 0, 1, 10, 10), 'hour', TimeZone.parse('+05:30', 'test')), utc(2024, 0, 1, 9, 30));
});

test('dates without an offset and date math read in the zone', () => {
  const now = utc(2024, 2, 31, 23, 30); // 01:30 on April 1st in Paris
  assert.equal(parseDateValue('now/d', false, now, paris), utc(2024, 2, 31, 22));
  assert.equal(parseDateValue('now/d', true, now, paris), utc(2024, 3, 1, 22) - 1);
  assert.equal(parseDateValue('now/d', false, now), utc(2024, 2, 31), 'UTC by default');
  assert.equal(parseIsoDate('2024-01-15T10:00:00', false, paris), utc(2024, 0, 15, 9));
  assert.equal(parseIsoDate('2024-01-15T10:00:00Z', false, paris), utc(2024, 0, 15, 10), 'an explicit offset wins');
  assert.equal(parseDateValue('2024-03-31', true, 0, paris), utc(2024, 2, 31, 22) - 1);
  assert.equal(parseDateValue('2024-03-30||+1d', false, 0, paris), utc(2024, 2, 30, 23));
  assert.equal(parseDateValue(1_700_000_000_000, false, 0, paris), 1_700_000_000_000, 'epoch millis are instants');
});
