import { test } from 'node:test';
import assert from 'node:assert/strict';
import { flattenMapping } from '../mapping/mapping.ts';
import { validateMapping } from '../mapping/validate.ts';
import { MatchNoneQuery } from './basic-queries.ts';
import { DistanceFeatureQuery, parseTimeValue } from './distance-feature-query.ts';
import { parseQuery } from './parse-query.ts';

const fields = flattenMapping(validateMapping({ properties: { when: { type: 'date', format: 'yyyy/MM/dd' }, place: { type: 'geo_point' }, n: { type: 'long' } } }));

test('time values in milliseconds', () => {
  assert.equal(parseTimeValue('7d'), 7 * 86_400_000);
  assert.equal(parseTimeValue('1.5h'), 5_400_000);
  assert.equal(parseTimeValue('500ms'), 500);
  assert.equal(parseTimeValue('90m'), 5_400_000);
  assert.equal(parseTimeValue('7'), null);
  assert.equal(parseTimeValue('1w'), null);
  assert.equal(parseTimeValue(7), null);
});

test('distance_feature reads its origin in the field format and its pivot by field type', () => {
  const date = parseQuery({ distance_feature: { field: 'when', origin: '2024/01/02', pivot: '1d' } }, fields) as DistanceFeatureQuery;
  assert.deepEqual(date.source, { kind: 'date', path: 'when', origin: Date.UTC(2024, 0, 2) });
  assert.equal(date.pivot, 86_400_000);
  const geo = parseQuery({ distance_feature: { field: 'place', origin: '1,2', pivot: '2km', boost: 3 } }, fields) as DistanceFeatureQuery;
  assert.equal(geo.source.kind, 'geo');
  assert.equal(geo.pivot, 2000);
  assert.equal(geo.boost, 3);
  assert.ok(parseQuery({ distance_feature: { field: 'nope', origin: 'now', pivot: '1d' } }, fields) instanceof MatchNoneQuery);
  assert.throws(() => parseQuery({ distance_feature: { field: 'n', origin: 1, pivot: '1d' } }, fields), /Illegal data type of \[long\]/);
  assert.throws(() => parseQuery({ distance_feature: { field: 'place', origin: '100,0', pivot: '1km' } }, fields), /\[origin\]/);
});
