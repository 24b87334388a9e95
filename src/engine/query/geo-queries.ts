/**
 * The geo queries on `geo_point` fields: `geo_bounding_box` and `geo_distance`. Both are
 * constant-score filters. Candidates come from a range over the field's latitude column (its
 * range index when the leaf has one), then each candidate is checked exactly: its longitude range
 * and, for a distance, the haversine (`arc`) or plane distance to the centre. A document with
 * several points matches when one of them does; its pairs are read from the points column.
 */
import { EngineError } from '../errors.ts';
import { arcDistance, checkGeoRange, decodePointTerm, distanceBounds, GeoPointError, parseDistance, parseGeoPoint, planeDistance, type GeoPoint } from '../mapping/geo-point.ts';
import type { FlatField, GeoPaths } from '../mapping/mapping.ts';
import type { KeywordColumn, LeafReader, NumericColumn } from '../segment/leaf-reader.ts';
import { NO_MORE_DOCS } from '../segment/leaf-reader.ts';
import { MatchNoneQuery } from './basic-queries.ts';
import { NumericRangeQuery } from './column-queries.ts';
import { checkKeys, describe, dslError, expectObject, isDslObject, readBoolean, readEnum, readNumber, readString, type DslObject } from './dsl-reader.ts';
import { readBoost } from './parse-full-text.ts';
import type { HighlightTerms, Query, Weight } from './scorer.ts';
import { NO_SUB_QUERIES, Scorer, SimpleWeight } from './scorer.ts';
import type { SearchContext } from './search-context.ts';

/** Which points a geo query keeps: a latitude band (the pre-filter) and the exact test. */
interface GeoFilter {
  minLat: number;
  maxLat: number;
  matches(point: GeoPoint): boolean;
}

/** Docs of a geo_point field with a point passing a filter. */
export class GeoPointQuery implements Query {
  constructor(
    readonly paths: GeoPaths,
    readonly filter: GeoFilter,
    readonly boost = 1,
  ) {}

  createWeight(_context: SearchContext, needsScores: boolean, boost: number): Weight {
    const query = this;
    const constantScore = needsScores ? boost * this.boost : 0;
    return new (class extends SimpleWeight {
      scorer(leaf: LeafReader): Scorer | null {
        return query.leafScorer(leaf, constantScore);
      }
    })();
  }

  /** The scorer of one leaf, or null when no doc of it can match. */
  leafScorer(leaf: LeafReader, constantScore: number): Scorer | null {
    const lat = leaf.numericColumn(this.paths.lat);
    const lon = leaf.numericColumn(this.paths.lon);
    if (lat === null || lon === null) return null;
    const candidates = new NumericRangeQuery(this.paths.lat, this.filter.minLat, this.filter.maxLat).leafScorer(leaf, 0);
    if (candidates === null) return null;
    const points = leaf.keywordColumn(this.paths.points);
    return new GeoCheckScorer(candidates, constantScore, (doc) => docMatches(doc, lat, lon, points, this.filter));
  }

  extractTerms(_out: HighlightTerms): void {}

  subQueries(): readonly Query[] {
    return NO_SUB_QUERIES;
  }
}

/** Whether one of the doc's points passes the filter (a single point from the columns, several from the points column). */
function docMatches(doc: number, lat: NumericColumn, lon: NumericColumn, points: KeywordColumn | null, filter: GeoFilter): boolean {
  if (lat.count(doc) === 1 && lon.count(doc) === 1) return filter.matches({ lat: lat.value(doc, 0), lon: lon.value(doc, 0) });
  if (points === null) return false;
  const count = points.count(doc);
  for (let index = 0; index < count; index++) {
    if (filter.matches(decodePointTerm(points.term(points.ordinal(doc, index))))) return true;
  }
  return false;
}

/** The candidates of a scorer that pass an exact check, each with a constant score (geo and range field queries). */
export class GeoCheckScorer extends Scorer {
  constructor(
    private readonly candidates: Scorer,
    private readonly constantScore: number,
    private readonly check: (doc: number) => boolean,
  ) {
    super();
  }

  nextDoc(): number {
    return this.settle(this.candidates.nextDoc());
  }

  advance(target: number): number {
    return this.settle(this.candidates.advance(target));
  }

  private settle(first: number): number {
    let doc = first;
    while (doc !== NO_MORE_DOCS && !this.check(doc)) doc = this.candidates.nextDoc();
    return (this.doc = doc);
  }

  score(): number {
    return this.constantScore;
  }

  cost(): number {
    return this.candidates.cost();
  }

  maxScore(): number {
    return this.constantScore;
  }
}

const VALIDATION_METHODS = ['strict', 'ignore_malformed', 'coerce'] as const;
type ValidationMethod = (typeof VALIDATION_METHODS)[number];

/** The options of a geo query next to its field, and the field's entry. */
function splitGeoOptions(body: DslObject, options: readonly string[], owner: string): { path: string; value: unknown } {
  const fieldKeys = Object.keys(body).filter((key) => !options.includes(key));
  if (fieldKeys.length !== 1) throw dslError(`[${owner}] requires exactly one field, found ${fieldKeys.length}`);
  return { path: fieldKeys[0]!, value: body[fieldKeys[0]!] };
}

/** The geo_point field a geo query names; null for an unmapped field with `ignore_unmapped`. */
function geoField(path: string, fields: ReadonlyMap<string, FlatField>, ignoreUnmapped: boolean, owner: string): FlatField | null {
  const field = fields.get(path);
  if (field === undefined) {
    if (ignoreUnmapped) return null;
    throw new EngineError('illegal_argument', `[${owner}] failed to find geo field [${path}]`);
  }
  if (field.geo === undefined) throw new EngineError('illegal_argument', `[${owner}] field [${path}] is of type [${field.type}], but only geo_point fields are supported`);
  if (!field.searchable && !field.docValues) throw new EngineError('illegal_argument', `Cannot search on field [${path}] since it is not indexed.`);
  return field;
}

/** A point of a query in any geo_point format; `strict` checks its ranges, `coerce` normalises them. */
function queryPoint(value: unknown, method: ValidationMethod, owner: string, name: string): GeoPoint {
  try {
    if (method === 'strict') return parseGeoPoint(value);
    const point = parseLoosePoint(value);
    return method === 'coerce' ? normalizePoint(point) : point;
  } catch (error) {
    if (error instanceof GeoPointError) throw dslError(`[${owner}] [${name}] ${describe(value)} ${error.message}`);
    throw error;
  }
}

/** A point without the range check (`validation_method` other than strict). */
function parseLoosePoint(value: unknown): GeoPoint {
  try {
    return parseGeoPoint(value);
  } catch (error) {
    if (!(error instanceof GeoPointError) || !/illegal (latitude|longitude)/.test(error.message)) throw error;
    if (Array.isArray(value)) return { lon: value[0] as number, lat: value[1] as number };
    if (isDslObject(value) && value.lat !== undefined) return { lat: Number(value.lat), lon: Number(value.lon) };
    if (typeof value === 'string' && value.includes(',')) {
      const [lat, lon] = value.split(',');
      return { lat: Number(lat), lon: Number(lon) };
    }
    throw error;
  }
}

/** `value` brought into (−period/2, period/2] by whole periods. */
function centered(value: number, period: number): number {
  let rest = value % period;
  if (rest <= 0) rest += period;
  return rest > period / 2 ? rest - period : rest;
}

/** A longitude outside −180..180 wrapped into (−180, 180]. */
function wrapLon(lon: number): number {
  return lon >= -180 && lon <= 180 ? lon : centered(lon, 360);
}

/** A point with its latitude folded over the poles (which turns its longitude by 180°) and its longitude wrapped (`coerce`). */
export function normalizePoint(point: GeoPoint): GeoPoint {
  let lat = centered(point.lat, 360);
  let lon = point.lon;
  if (lat > 90 || lat < -90) {
    lat = (lat > 90 ? 180 : -180) - lat;
    lon += 180;
  }
  return checkGeoRange({ lat, lon: wrapLon(lon) });
}

/** `{geo_bounding_box: {field: {top_left, bottom_right} | {top_right, bottom_left} | {top, left, bottom, right} | {wkt}, validation_method, ignore_unmapped, type, boost}}`. */
export function parseGeoBoundingBox(body: DslObject, fields: ReadonlyMap<string, FlatField>): Query {
  const owner = 'geo_bounding_box';
  const optionKeys = ['validation_method', 'ignore_unmapped', 'type', 'boost', '_name'];
  const { path, value } = splitGeoOptions(body, optionKeys, owner);
  const method = readMethod(body.validation_method, owner);
  if (body.type !== undefined) readEnum(body.type, ['memory', 'indexed'] as const, 'type', owner);
  const ignoreUnmapped = body.ignore_unmapped === undefined ? false : readBoolean(body.ignore_unmapped, 'ignore_unmapped', owner);
  const boost = readBoost(body.boost, owner);
  const box = readBox(expectObject(value, owner), method, owner);
  const field = geoField(path, fields, ignoreUnmapped, owner);
  if (field === null) return new MatchNoneQuery();
  if (box.top < box.bottom) throw dslError(`[${owner}] top is below bottom corner: ${box.top} vs. ${box.bottom}`);
  const crossesDateline = box.left > box.right;
  return new GeoPointQuery(
    field.geo!,
    {
      minLat: box.bottom,
      maxLat: box.top,
      matches: (point) =>
        point.lat >= box.bottom && point.lat <= box.top && (crossesDateline ? point.lon >= box.left || point.lon <= box.right : point.lon >= box.left && point.lon <= box.right),
    },
    boost,
  );
}

interface Box {
  top: number;
  left: number;
  bottom: number;
  right: number;
}

function readMethod(value: unknown, owner: string): ValidationMethod {
  if (value === undefined) return 'strict';
  return readEnum(typeof value === 'string' ? value.toLowerCase() : value, VALIDATION_METHODS, 'validation_method', owner);
}

/** The edges of a box given by two corners, four edges or a WKT `BBOX (left, right, top, bottom)`. */
function readBox(spec: DslObject, method: ValidationMethod, owner: string): Box {
  checkKeys(spec, ['top_left', 'bottom_right', 'top_right', 'bottom_left', 'top', 'left', 'bottom', 'right', 'wkt'], owner);
  const edges: Partial<Box> = {};
  const corner = (name: string, vertical: 'top' | 'bottom', horizontal: 'left' | 'right'): void => {
    if (spec[name] === undefined) return;
    const point = queryPoint(spec[name], method, owner, name);
    edges[vertical] = point.lat;
    edges[horizontal] = point.lon;
  };
  corner('top_left', 'top', 'left');
  corner('bottom_right', 'bottom', 'right');
  corner('top_right', 'top', 'right');
  corner('bottom_left', 'bottom', 'left');
  for (const edge of ['top', 'left', 'bottom', 'right'] as const) {
    if (spec[edge] !== undefined) edges[edge] = readNumber(spec[edge], edge, owner);
  }
  if (spec.wkt !== undefined) {
    const wkt = /^\s*bbox\s*\(\s*([^,\s]+)\s*,\s*([^,\s]+)\s*,\s*([^,\s]+)\s*,\s*([^,\s]+)\s*\)\s*$/i.exec(readString(spec.wkt, 'wkt', owner));
    if (wkt === null) throw dslError(`[${owner}] [wkt] must be BBOX (minLon, maxLon, maxLat, minLat), got ${describe(spec.wkt)}`);
    [edges.left, edges.right, edges.top, edges.bottom] = wkt.slice(1, 5).map((part, index) => readNumber(part, ['left', 'right', 'top', 'bottom'][index]!, owner));
  }
  const missing = (['top', 'left', 'bottom', 'right'] as const).filter((edge) => edges[edge] === undefined);
  if (missing.length > 0) throw dslError(`[${owner}] the box is missing its [${missing.join(', ')}] (give top_left and bottom_right, top_right and bottom_left, or top, left, bottom and right)`);
  const box = edges as Box;
  if (method === 'strict') {
    for (const edge of ['top', 'bottom'] as const) if (box[edge] < -90 || box[edge] > 90) throw dslError(`[${owner}] illegal latitude value [${box[edge]}] for [${edge}]`);
    for (const edge of ['left', 'right'] as const) if (box[edge] < -180 || box[edge] > 180) throw dslError(`[${owner}] illegal longitude value [${box[edge]}] for [${edge}]`);
  }
  return box;
}

/** `{geo_distance: {distance, distance_type, field: point, validation_method, ignore_unmapped, boost}}`. */
export function parseGeoDistance(body: DslObject, fields: ReadonlyMap<string, FlatField>): Query {
  const owner = 'geo_distance';
  const optionKeys = ['distance', 'distance_type', 'validation_method', 'ignore_unmapped', 'boost', '_name', 'optimize_bbox', 'unit'];
  const { path, value } = splitGeoOptions(body, optionKeys, owner);
  if (body.distance === undefined) throw dslError(`[${owner}] requires a [distance]`);
  let meters = parseDistance(body.distance);
  if (meters === null) throw dslError(`[${owner}] failed to parse [distance] ${describe(body.distance)}: expected a number and a unit such as km, m, mi, yd, ft, in, cm, mm, nmi`);
  if (typeof body.distance === 'number' && body.unit !== undefined) {
    const unit = parseDistance(`1${readString(body.unit, 'unit', owner)}`);
    if (unit === null) throw dslError(`[${owner}] unknown [unit] ${describe(body.unit)}`);
    meters *= unit;
  }
  const type = body.distance_type === undefined ? 'arc' : readEnum(body.distance_type, ['arc', 'plane'] as const, 'distance_type', owner);
  const method = readMethod(body.validation_method, owner);
  if (body.optimize_bbox !== undefined) readString(body.optimize_bbox, 'optimize_bbox', owner);
  const ignoreUnmapped = body.ignore_unmapped === undefined ? false : readBoolean(body.ignore_unmapped, 'ignore_unmapped', owner);
  const boost = readBoost(body.boost, owner);
  const center = queryPoint(value, method, owner, path);
  const field = geoField(path, fields, ignoreUnmapped, owner);
  if (field === null) return new MatchNoneQuery();
  const bounds = distanceBounds(center, meters);
  const distance = type === 'arc' ? arcDistance : planeDistance;
  // The plane approximation is measured at the mid latitude: only the latitude band bounds it.
  const lonBounded = type === 'arc' && bounds.minLon >= -180 && bounds.maxLon <= 180;
  const limit = meters;
  return new GeoPointQuery(
    field.geo!,
    {
      minLat: bounds.minLat,
      maxLat: bounds.maxLat,
      matches: (point) => (!lonBounded || (point.lon >= bounds.minLon && point.lon <= bounds.maxLon)) && distance(center, point) <= limit,
    },
    boost,
  );
}
