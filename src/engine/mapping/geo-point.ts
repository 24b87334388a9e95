/**
 * Geo points: the formats a `geo_point` value (and a point in a geo query) is written in, their
 * ranges, distances and distance units.
 *
 * Accepted, as Elasticsearch: an object `{"lat": 41.12, "lon": -71.34}` (numbers or numeric
 * strings), a GeoJSON point `{"type": "Point", "coordinates": [-71.34, 41.12]}`, a string
 * `"41.12,-71.34"` (lat,lon), an array `[-71.34, 41.12]` (lon, lat), a WKT string
 * `"POINT (-71.34 41.12)"` and a geohash string (decoded to the centre of its cell). A third
 * coordinate (elevation) is accepted and dropped. Latitudes lie within −90..90 and longitudes
 * within −180..180.
 *
 * A field's points are held in two hidden numeric columns (latitudes, longitudes); a document
 * with several points also keeps them as `lat,lon` terms in a keyword column, because each
 * column sorts its values apart and the pairs would be lost.
 */

/** A point in degrees. */
export interface GeoPoint {
  lat: number;
  lon: number;
}

/** Mean radius of the Earth in meters (the value Elasticsearch's distances use). */
export const EARTH_MEAN_RADIUS = 6_371_008.7714;

const GEOHASH_ALPHABET = '0123456789bcdefghjkmnpqrstuvwxyz';
const NUMBER_TEXT = /^\s*[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?\s*$/;
const WKT_POINT = /^\s*point\s*\(\s*(\S+)\s+(\S+)(?:\s+(\S+))?\s*\)\s*$/i;

/** Thrown by `parseGeoPoint` for a value that is not a point: `reason` completes "value [...] ...". */
export class GeoPointError extends Error {}

function coordinate(value: unknown, name: string): number {
  const number = typeof value === 'number' ? value : typeof value === 'string' && NUMBER_TEXT.test(value) ? Number(value) : NaN;
  if (!Number.isFinite(number)) throw new GeoPointError(`has a [${name}] that is not a number`);
  return number;
}

/** Checks the ranges of a point (lat −90..90, lon −180..180) and returns it. */
export function checkGeoRange(point: GeoPoint): GeoPoint {
  if (point.lat < -90 || point.lat > 90) throw new GeoPointError(`has an illegal latitude value [${point.lat}] (it must lie within -90 and 90)`);
  if (point.lon < -180 || point.lon > 180) throw new GeoPointError(`has an illegal longitude value [${point.lon}] (it must lie within -180 and 180)`);
  return point;
}

/** Whether an array stands for one point (`[lon, lat]` or `[lon, lat, z]`) rather than a list of points. */
export function isCoordinateArray(value: readonly unknown[]): boolean {
  return (value.length === 2 || value.length === 3) && value.every((entry) => typeof entry === 'number');
}

/** The point a value spells in any accepted format, range-checked; throws GeoPointError otherwise. */
export function parseGeoPoint(value: unknown): GeoPoint {
  if (Array.isArray(value)) {
    if (!isCoordinateArray(value)) throw new GeoPointError('is not a point: an array point is [lon, lat] with two numbers');
    return checkGeoRange({ lon: value[0] as number, lat: value[1] as number });
  }
  if (typeof value === 'string') return checkGeoRange(parseGeoString(value));
  if (value !== null && typeof value === 'object') {
    const object = value as Record<string, unknown>;
    if (Object.hasOwn(object, 'type') || Object.hasOwn(object, 'coordinates')) {
      const coordinates = object.coordinates;
      if (typeof object.type !== 'string' || object.type.toLowerCase() !== 'point' || !Array.isArray(coordinates) || !isCoordinateArray(coordinates)) {
        throw new GeoPointError('is not a GeoJSON point ({"type": "Point", "coordinates": [lon, lat]})');
      }
      return checkGeoRange({ lon: coordinates[0] as number, lat: coordinates[1] as number });
    }
    const unknown = Object.keys(object).filter((key) => key !== 'lat' && key !== 'lon' && key !== 'z');
    if (unknown.length > 0) throw new GeoPointError(`has the unknown key [${unknown[0]}] (a point object has [lat] and [lon])`);
    if (object.lat === undefined || object.lon === undefined) throw new GeoPointError('is missing [lat] or [lon]');
    return checkGeoRange({ lat: coordinate(object.lat, 'lat'), lon: coordinate(object.lon, 'lon') });
  }
  throw new GeoPointError('is not a point (expected an object, a string or an array)');
}

function parseGeoString(text: string): GeoPoint {
  const wkt = WKT_POINT.exec(text);
  if (wkt !== null) return { lon: coordinate(wkt[1], 'lon'), lat: coordinate(wkt[2], 'lat') };
  if (text.includes(',')) {
    const parts = text.split(',');
    if (parts.length !== 2 && parts.length !== 3) throw new GeoPointError('is not a point: a string point is "lat,lon"');
    return { lat: coordinate(parts[0], 'lat'), lon: coordinate(parts[1], 'lon') };
  }
  return decodeGeohash(text);
}

/** The centre of a geohash cell (1 to 12 characters); throws GeoPointError for another string. */
export function decodeGeohash(hash: string): GeoPoint {
  if (hash.length === 0 || hash.length > 12) throw new GeoPointError('is not a point: not "lat,lon", WKT or a geohash of 1 to 12 characters');
  let latLow = -90;
  let latHigh = 90;
  let lonLow = -180;
  let lonHigh = 180;
  let even = true;
  for (const char of hash.toLowerCase()) {
    const bits = GEOHASH_ALPHABET.indexOf(char);
    if (bits < 0) throw new GeoPointError(`is not a point: [${char}] is not a geohash character`);
    for (let bit = 4; bit >= 0; bit--) {
      const on = ((bits >> bit) & 1) === 1;
      if (even) {
        const middle = (lonLow + lonHigh) / 2;
        if (on) lonLow = middle;
        else lonHigh = middle;
      } else {
        const middle = (latLow + latHigh) / 2;
        if (on) latLow = middle;
        else latHigh = middle;
      }
      even = !even;
    }
  }
  return { lat: (latLow + latHigh) / 2, lon: (lonLow + lonHigh) / 2 };
}

/** The term a point of a multi-point document is kept as in its field's points column. */
export function encodePointTerm(point: GeoPoint): string {
  return `${point.lat},${point.lon}`;
}

/** The point of a term written by `encodePointTerm`. */
export function decodePointTerm(term: string): GeoPoint {
  const comma = term.indexOf(',');
  return { lat: Number(term.slice(0, comma)), lon: Number(term.slice(comma + 1)) };
}

const RADIANS = Math.PI / 180;

/** Great-circle distance in meters (haversine, as Elasticsearch's `arc`). */
export function arcDistance(from: GeoPoint, to: GeoPoint): number {
  const dLat = (to.lat - from.lat) * RADIANS;
  const dLon = (to.lon - from.lon) * RADIANS;
  const h = Math.sin(dLat / 2) ** 2 + Math.cos(from.lat * RADIANS) * Math.cos(to.lat * RADIANS) * Math.sin(dLon / 2) ** 2;
  return 2 * EARTH_MEAN_RADIUS * Math.asin(Math.min(1, Math.sqrt(h)));
}

/** Distance in meters on a plane tangent at the mid latitude (Elasticsearch's `plane`: fast, inexact far away and near the poles). */
export function planeDistance(from: GeoPoint, to: GeoPoint): number {
  let dLon = to.lon - from.lon;
  if (dLon > 180) dLon -= 360;
  else if (dLon < -180) dLon += 360;
  const x = dLon * RADIANS * Math.cos(((from.lat + to.lat) / 2) * RADIANS);
  const y = (to.lat - from.lat) * RADIANS;
  return Math.sqrt(x * x + y * y) * EARTH_MEAN_RADIUS;
}

/** Meters per distance unit, by every name Elasticsearch accepts. */
const DISTANCE_UNITS: Record<string, number> = {
  in: 0.0254,
  inch: 0.0254,
  yd: 0.9144,
  yards: 0.9144,
  ft: 0.3048,
  feet: 0.3048,
  km: 1000,
  kilometers: 1000,
  NM: 1852,
  nmi: 1852,
  nauticalmiles: 1852,
  mm: 0.001,
  millimeters: 0.001,
  cm: 0.01,
  centimeters: 0.01,
  mi: 1609.344,
  miles: 1609.344,
  m: 1,
  meters: 1,
};

/** A distance in meters from a number (meters) or a string such as `"200km"`, `"12 mi"`, `"5"`; null when it is not one. */
export function parseDistance(value: unknown): number | null {
  if (typeof value === 'number') return Number.isFinite(value) && value >= 0 ? value : null;
  if (typeof value !== 'string') return null;
  const match = /^\s*((?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?)\s*([A-Za-z]*)\s*$/.exec(value);
  if (match === null) return null;
  const unit = match[2] === '' ? 'm' : match[2]!;
  const meters = Object.hasOwn(DISTANCE_UNITS, unit) ? DISTANCE_UNITS[unit] : undefined;
  return meters === undefined ? null : Number(match[1]) * meters;
}

/** Latitude and longitude bounds of every point within `meters` of `center` (lon bounds may pass ±180). */
export function distanceBounds(center: GeoPoint, meters: number): { minLat: number; maxLat: number; minLon: number; maxLon: number } {
  // A little slack: the bounds only pre-filter; the exact distance decides.
  const angle = (meters / EARTH_MEAN_RADIUS) * 1.000001 + 1e-9;
  const minLat = center.lat - angle / RADIANS;
  const maxLat = center.lat + angle / RADIANS;
  if (minLat <= -90 || maxLat >= 90 || angle >= Math.PI / 2) return { minLat: Math.max(minLat, -90), maxLat: Math.min(maxLat, 90), minLon: -180, maxLon: 180 };
  const ratio = Math.sin(angle) / Math.cos(center.lat * RADIANS);
  if (ratio >= 1) return { minLat, maxLat, minLon: -180, maxLon: 180 };
  const dLon = Math.asin(ratio) / RADIANS;
  return { minLat, maxLat, minLon: center.lon - dLon, maxLon: center.lon + dLon };
}
