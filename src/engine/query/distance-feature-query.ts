/**
 * The `distance_feature` query: every document holding a value of a `date`, `date_nanos` or
 * `geo_point` field, scored by how close its value lies to an `origin`:
 * `boost * pivot / (pivot + distance)` (so a document at the origin scores `boost`, one at the
 * pivot distance half of it). Dates take a date or date math origin and a time value pivot
 * (`7d`, `12h`, `90m`, `30s`, `500ms`); geo points take a point in any geo_point format and a
 * distance pivot (`1km`, `500m`), measured as the great-circle (`arc`) distance. A document with
 * several values is scored by the closest one.
 */
import { EngineError } from '../errors.ts';
import { arcDistance, decodePointTerm, GeoPointError, parseDistance, parseGeoPoint, type GeoPoint } from '../mapping/geo-point.ts';
import { DATE_TYPES, type FlatField } from '../mapping/mapping.ts';
import type { KeywordColumn, LeafReader, NumericColumn } from '../segment/leaf-reader.ts';
import { NO_MORE_DOCS } from '../segment/leaf-reader.ts';
import { MatchNoneQuery } from './basic-queries.ts';
import { checkKeys, describe, dslError, readString, type DslObject } from './dsl-reader.ts';
import { columnValue } from './field-queries.ts';
import { readBoost } from './parse-full-text.ts';
import type { HighlightTerms, Query, Weight } from './scorer.ts';
import { NO_SUB_QUERIES, Scorer, SimpleWeight } from './scorer.ts';
import type { SearchContext } from './search-context.ts';

/** Milliseconds per time unit of a time value. */
const TIME_UNITS: Record<string, number> = { nanos: 1e-6, micros: 1e-3, ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** A time value (`7d`, `1.5h`, `500ms`) in milliseconds; null when it is not one. */
export function parseTimeValue(value: unknown): number | null {
  if (typeof value !== 'string') return null;
  const match = /^\s*((?:\d+(?:\.\d*)?|\.\d+))\s*(nanos|micros|ms|s|m|h|d)\s*$/.exec(value);
  if (match === null) return null;
  return Number(match[1]) * TIME_UNITS[match[2]!]!;
}

/** Where a document's distance to the origin comes from. */
type DistanceSource =
  | { kind: 'date'; path: string; origin: number }
  | { kind: 'geo'; lat: string; lon: string; points: string; origin: GeoPoint };

/** Documents holding a value of the field, scored `boost * pivot / (pivot + distance)`. */
export class DistanceFeatureQuery implements Query {
  constructor(
    readonly source: DistanceSource,
    readonly pivot: number,
    readonly boost = 1,
  ) {}

  createWeight(_context: SearchContext, needsScores: boolean, boost: number): Weight {
    const query = this;
    const scale = needsScores ? boost * this.boost : 0;
    return new (class extends SimpleWeight {
      scorer(leaf: LeafReader): Scorer | null {
        const distance = query.leafDistance(leaf);
        return distance === null ? null : new DistanceFeatureScorer(leaf.maxDoc, distance, query.pivot, scale);
      }
    })();
  }

  /** The distance of a doc's closest value to the origin (NaN when it holds none), or null when no doc of the leaf has the field. */
  private leafDistance(leaf: LeafReader): ((doc: number) => number) | null {
    const source = this.source;
    if (source.kind === 'date') {
      const column = leaf.numericColumn(source.path);
      return column === null ? null : (doc) => closestDate(column, doc, source.origin);
    }
    const lat = leaf.numericColumn(source.lat);
    const lon = leaf.numericColumn(source.lon);
    if (lat === null || lon === null) return null;
    const points = leaf.keywordColumn(source.points);
    return (doc) => closestPoint(lat, lon, points, doc, source.origin);
  }

  extractTerms(_out: HighlightTerms): void {}

  subQueries(): readonly Query[] {
    return NO_SUB_QUERIES;
  }
}

/** The smallest |value − origin| of a doc's dates (NaN when it has none). */
function closestDate(column: NumericColumn, doc: number, origin: number): number {
  const count = column.count(doc);
  let best = NaN;
  for (let index = 0; index < count; index++) {
    const distance = Math.abs(column.value(doc, index) - origin);
    if (!(distance >= best)) best = distance;
  }
  return best;
}

/** The smallest arc distance from the origin to a doc's points (a single point from the columns, several from the points column). */
function closestPoint(lat: NumericColumn, lon: NumericColumn, points: KeywordColumn | null, doc: number, origin: GeoPoint): number {
  const count = lat.count(doc);
  if (count === 0) return NaN;
  if (count === 1 && lon.count(doc) === 1) return arcDistance(origin, { lat: lat.value(doc, 0), lon: lon.value(doc, 0) });
  if (points === null) return NaN;
  let best = NaN;
  const pairs = points.count(doc);
  for (let index = 0; index < pairs; index++) {
    const distance = arcDistance(origin, decodePointTerm(points.term(points.ordinal(doc, index))));
    if (!(distance >= best)) best = distance;
  }
  return best;
}

/** Every doc with a value, scored from its distance. */
class DistanceFeatureScorer extends Scorer {
  private distance = NaN;

  constructor(
    private readonly maxDoc: number,
    private readonly distanceOf: (doc: number) => number,
    private readonly pivot: number,
    private readonly scale: number,
  ) {
    super();
  }

  nextDoc(): number {
    return this.advance(this.doc + 1);
  }

  advance(target: number): number {
    for (let doc = target; doc < this.maxDoc; doc++) {
      const distance = this.distanceOf(doc);
      if (!Number.isNaN(distance)) {
        this.distance = distance;
        return (this.doc = doc);
      }
    }
    return (this.doc = NO_MORE_DOCS);
  }

  score(): number {
    return (this.scale * this.pivot) / (this.pivot + this.distance);
  }

  cost(): number {
    return this.maxDoc;
  }

  maxScore(): number {
    return this.scale;
  }
}

/** `{distance_feature: {field, origin, pivot, boost}}` on a date, date_nanos or geo_point field. */
export function parseDistanceFeature(body: DslObject, fields: ReadonlyMap<string, FlatField>, now: number): Query {
  checkKeys(body, ['field', 'origin', 'pivot', 'boost', '_name'], 'distance_feature');
  const missing = ['field', 'origin', 'pivot'].filter((key) => body[key] === undefined || body[key] === null);
  if (missing.length > 0) throw dslError(`[distance_feature] requires [${missing.join(', ')}]`);
  const path = readString(body.field, 'field', 'distance_feature');
  const boost = readBoost(body.boost, 'distance_feature');
  const field = fields.get(path);
  if (field === undefined) return new MatchNoneQuery();
  if (field.geo !== undefined) {
    let origin: GeoPoint;
    try {
      origin = parseGeoPoint(body.origin);
    } catch (error) {
      if (error instanceof GeoPointError) throw dslError(`[distance_feature] [origin] ${describe(body.origin)} ${error.message}`);
      throw error;
    }
    const pivot = parseDistance(body.pivot);
    if (pivot === null || pivot <= 0) throw dslError(`[distance_feature] failed to parse [pivot] ${describe(body.pivot)} as a distance (such as "1km")`);
    return new DistanceFeatureQuery({ kind: 'geo', ...field.geo, origin }, pivot, boost);
  }
  if (!DATE_TYPES.has(field.type)) {
    throw new EngineError(
      'illegal_argument',
      `Illegal data type of [${field.type}]!` + '[distance_feature] query can only be run on a date, date_nanos or geo_point field type!',
    );
  }
  if (!field.docValues && !field.searchable) throw new EngineError('illegal_argument', `Cannot search on field [${path}] since it is not indexed.`);
  const origin = columnValue(field, body.origin, false, now);
  if (origin === null) throw dslError(`[distance_feature] failed to parse [origin] ${describe(body.origin)} as a date of field [${path}]`);
  const pivot = parseTimeValue(body.pivot);
  if (pivot === null || pivot <= 0) throw dslError(`[distance_feature] failed to parse [pivot] ${describe(body.pivot)} as a time value (such as "7d")`);
  return new DistanceFeatureQuery({ kind: 'date', path: field.path, origin }, pivot, boost);
}
