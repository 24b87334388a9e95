import assert from 'node:assert/strict';
import { test } from 'node:test';
import { arcDistance, decodeGeohash, decodePointTerm, distanceBounds, encodePointTerm, GeoPointError, parseDistance, parseGeoPoint, planeDistance } from './geo-point.ts';

const PARIS = { lat: 48.8566, lon: 2.3522 };
const LONDON = { lat: 51.5074, lon: -0.1278 };

test('every accepted format spells the same point', () => {
  for (const value of [
    { lat: 48.8566, lon: 2.3522 },
    { lat: '48.8566', lon: '2.3522' },
    '48.8566,2.3522',
    ' 48.8566 , 2.3522 ',
    '48.8566,2.3522,30',
    [2.3522, 48.8566],
    [2.3522, 48.8566, 30],
    'POINT (2.3522 48.8566)',
    'point(2.3522 48.8566)',
    { type: 'Point', coordinates: [2.3522, 48.8566] },
  ]) {
    assert.deepEqual(parseGeoPoint(value), PARIS, JSON.stringify(value));
  }
});

test('geohashes decode to the centre of their cell', () => {
  const cell = decodeGeohash('u09tvw0f64r7');
  assert.ok(Math.abs(cell.lat - PARIS.lat) < 1e-6 && Math.abs(cell.lon - PARIS.lon) < 1e-6);
  assert.deepEqual(decodeGeohash('s'), { lat: 22.5, lon: 22.5 });
  assert.deepEqual(parseGeoPoint('S'), { lat: 22.5, lon: 22.5 }, 'upper case is read too');
  assert.throws(() => decodeGeohash('abc'), GeoPointError, 'a is not a geohash character');
  assert.throws(() => decodeGeohash('0123456789bcd'), GeoPointError, 'longer than 12 characters');
});

test('out-of-range and malformed points are refused with a reason', () => {
  const cases: [unknown, RegExp][] = [
    [{ lat: 90.5, lon: 0 }, /illegal latitude value \[90.5\]/],
    ['0,-180.5', /illegal longitude value \[-180.5\]/],
    [[181, 0], /illegal longitude/],
    [{ lat: 1 }, /missing \[lat\] or \[lon\]/],
    [{ lat: 1, lon: 2, height: 3 }, /unknown key \[height\]/],
    [{ lat: 'north', lon: 2 }, /\[lat\] that is not a number/],
    ['1,2,3,4', /"lat,lon"/],
    [[1, 2, 3, 4], /\[lon, lat\]/],
    [['1', '2'], /\[lon, lat\]/],
    ['POINT (1)', /geohash character/],
    [{ type: 'LineString', coordinates: [[1, 2]] }, /GeoJSON point/],
    [true, /not a point/],
  ];
  for (const [value, pattern] of cases) {
    assert.throws(() => parseGeoPoint(value), (error: unknown) => error instanceof GeoPointError && pattern.test(error.message), JSON.stringify(value));
  }
  assert.deepEqual(parseGeoPoint({ lat: 90, lon: -180 }), { lat: 90, lon: -180 }, 'the bounds themselves are points');
});

test('distances: haversine, plane, units', () => {
  const paris = arcDistance(PARIS, LONDON);
  assert.ok(paris > 343_000 && paris < 344_500, `Paris to London is about 343.9 km, got ${paris}`);
  assert.equal(arcDistance(PARIS, PARIS), 0);
  assert.ok(Math.abs(planeDistance(PARIS, LONDON) - paris) < 2_000, 'plane is close at short range');
  assert.ok(arcDistance({ lat: 0, lon: 179.5 }, { lat: 0, lon: -179.5 }) < 112_000, 'across the antimeridian');
  assert.ok(planeDistance({ lat: 0, lon: 179.5 }, { lat: 0, lon: -179.5 }) < 112_000, 'plane across the antimeridian');
  assert.equal(parseDistance('200km'), 200_000);
  assert.equal(parseDistance('1.5 mi'), 2_414.016);
  assert.equal(parseDistance('12'), 12);
  assert.equal(parseDistance(12), 12);
  assert.equal(parseDistance('3nmi'), 5_556);
  assert.equal(parseDistance('2ft'), 0.6096);
  for (const bad of ['12 parsecs', '-5km', 'km', '', null, -1, Infinity]) assert.equal(parseDistance(bad), null, String(bad));
});

test('distance bounds hold every point within the distance', () => {
  for (const center of [PARIS, { lat: 0, lon: 179.9 }, { lat: 89.5, lon: 10 }, { lat: -60, lon: -100 }]) {
    const meters = 150_000;
    const bounds = distanceBounds(center, meters);
    for (let step = 0; step < 360; step += 5) {
      // A point at the distance in direction `step` (destination formula on the sphere).
      const angle = (meters * 0.999999) / 6_371_008.7714;
      const bearing = (step * Math.PI) / 180;
      const lat1 = (center.lat * Math.PI) / 180;
      const lat2 = Math.asin(Math.sin(lat1) * Math.cos(angle) + Math.cos(lat1) * Math.sin(angle) * Math.cos(bearing));
      const lon2 = (center.lon * Math.PI) / 180 + Math.atan2(Math.sin(bearing) * Math.sin(angle) * Math.cos(lat1), Math.cos(angle) - Math.sin(lat1) * Math.sin(lat2));
      const point = { lat: (lat2 * 180) / Math.PI, lon: ((((lon2 * 180) / Math.PI + 540) % 360) - 180) };
      assert.ok(point.lat >= bounds.minLat && point.lat <= bounds.maxLat, `lat ${JSON.stringify({ center, step })}`);
      // Longitude bounds may pass ±180 (a circle across the antimeridian).
      const inside = [point.lon - 360, point.lon, point.lon + 360].some((lon) => lon >= bounds.minLon && lon <= bounds.maxLon);
      assert.ok(inside, `lon ${JSON.stringify({ center, step, point, bounds })}`);
    }
  }
});

test('point terms keep both coordinates exactly', () => {
  const point = { lat: -33.868820000000014, lon: 151.20929 };
  assert.deepEqual(decodePointTerm(encodePointTerm(point)), point);
});
