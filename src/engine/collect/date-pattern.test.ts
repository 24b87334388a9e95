import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DatePattern } from './date-pattern.ts';
import { TimeZone } from '../query/time-zone.ts';

const AT = Date.UTC(2015, 0, 1, 12, 10, 30, 123);

test('fractions of a second from S to SSSSSSSSS read to the millisecond and print padded', () => {
  const micros = DatePattern.parse('yyyy-MM-dd HH:mm:ss.SSSSSS', 'format');
  assert.equal(micros.parse('2015-01-01 12:10:30.123456'), AT);
  assert.equal(micros.format(AT), '2015-01-01 12:10:30.123000');
  assert.equal(micros.parse('2015-01-01 12:10:30.123'), null, 'the width is exact');
  assert.equal(DatePattern.parse('ss.S', 'format').format(AT), '30.1');
  assert.throws(() => DatePattern.parse('ss.SSSSSSSSSS', 'format'), /pattern \[SSSSSSSSSS\] is not supported/);
});

test('X, XX and XXX read any offset or Z and print the zone offset', () => {
  const nanos = DatePattern.parse("uuuu-MM-dd'T'HH:mm:ss.SSSSSSSSSX", 'fields');
  assert.equal(nanos.format(AT), '2015-01-01T12:10:30.123000000Z');
  assert.equal(nanos.parse('2015-01-01T13:10:30.123456789+01'), AT);
  assert.equal(nanos.parse('2015-01-01T11:40:30.123000000-00:30'), AT);
  const zoned = DatePattern.parse("yyyy-MM-dd'T'HH:mmXXX", 'format');
  assert.equal(zoned.format(Date.UTC(2015, 0, 1, 12, 10), TimeZone.parse('+05:30', 'time_zone')), '2015-01-01T17:40+05:30');
  assert.equal(DatePattern.parse('HH:mmXX', 'format').format(Date.UTC(2015, 0, 1, 12, 10), TimeZone.parse('-02:00', 'time_zone')), '10:10-0200');
});

test('named pattern formats, with or without strict_', () => {
  assert.equal(DatePattern.parse('basic_date', 'format').parse('20150101'), Date.UTC(2015, 0, 1));
  assert.equal(DatePattern.parse('strict_basic_date', 'format').format(AT), '20150101');
  assert.equal(DatePattern.parse('basic_date_time', 'format').parse('20150101T121030.123Z'), AT);
  assert.equal(DatePattern.parse('date_hour_minute_second', 'format').format(AT), '2015-01-01T12:10:30');
  assert.equal(DatePattern.parse('strict_year_month', 'format').parse('2015-01'), Date.UTC(2015, 0, 1));
  assert.equal(DatePattern.parse('strict_date', 'format').format(AT), '2015-01-01');
  assert.equal(DatePattern.parse('iso8601', 'format').format(AT), '2015-01-01T12:10:30.123Z');
  assert.throws(() => DatePattern.parse('basic_week_date', 'format'), /is not supported/);
});
