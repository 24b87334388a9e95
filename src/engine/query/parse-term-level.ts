/** DSL parsers of the term-level queries: term, terms, range, exists, ids, prefix. */
import { normalizeTerm } from '../analysis/analyzer.ts';
import { EngineError } from '../errors.ts';
import type { FlatField } from '../mapping/mapping.ts';
import { IdsQuery, MatchAllQuery, MatchNoneQuery } from './basic-queries.ts';
import { ExistsQuery, KeywordRangeQuery, NumericRangeQuery, NumericSetQuery, type ExistsSource } from './column-queries.ts';
import { checkKeys, describe, dslError, expectObject, isDslObject, readBoolean, readEnum, readString, singleEntry, type DslObject } from './dsl-reader.ts';
import { isInvertedField, requireColumnValue } from './field-queries.ts';
import { PrefixQuery, TermRangeQuery, TermSetQuery, type TermBounds } from './multi-term-query.ts';
import { readBoost } from './parse-full-text.ts';
import { exactLongRange, exactLongTerm } from './exact-long-queries.ts';
import { BooleanQuery } from './boolean-query.ts';
import { assertSearchable, keywordBounds, keywordTerm, supportsTermPatterns } from './typed-values.ts';
import { parseDateValue } from './date-math.ts';
import { readTimeZone } from './time-zone.ts';
import type { Query } from './scorer.ts';
import { exactValueQuery } from './field-queries.ts';
import { caseInsensitiveQuery, readCaseInsensitive } from './case-insensitive.ts';
import { bitmapQueryValues } from './roaring-bitmap.ts';
import { rangeExistsColumn, rangeFieldRangeQuery } from './range-field-queries.ts';

/** Most values a `terms` or `ids` query may list (ES index.max_terms_count). */
export const MAX_TERMS_COUNT = 65_536;

/** Metadata fields every document has, so `exists` on them matches every document (as in OpenSearch). */
export const METADATA_FIELDS_OF_EVERY_DOCUMENT: ReadonlySet<string> = new Set(['_id', '_index', '_seq_no', '_version', '_primary_term']);

/** The `_id` a value of an `ids` query or of a `term`/`terms` query on `_id` names. */
function idValue(value: unknown, owner: string): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  throw dslError(`[${owner}] values of [_id] must be strings, got ${describe(value)}`);
}

const float = new Float64Array(1);
const bits = new BigInt64Array(float.buffer);

/** The smallest double greater than `value`. */
export function nextUp(value: number): number {
  if (Number.isNaN(value) || value === Infinity) return value;
  if (value === 0) return Number.MIN_VALUE;
  float[0] = value;
  bits[0] = value > 0 ? bits[0]! + 1n : bits[0]! - 1n;
  return float[0]!;
}

/** The largest double smaller than `value`. */
export function nextDown(value: number): number {
  return -nextUp(-value);
}

/** The illegal_argument error for a `terms` or `ids` query listing more than MAX_TERMS_COUNT values. */
function tooManyTerms(owner: string, count: number): EngineError {
  return new EngineError(
    'illegal_argument',
    `[${owner}] The number of terms [${count}] used in the query has exceeded the allowed maximum of [${MAX_TERMS_COUNT}] (the limit set by [index.max_terms_count])`,
  );
}

/** `{term: {field: value | {value, boost}}}`. */
export function parseTerm(body: DslObject, fields: ReadonlyMap<string, FlatField>, now: number): Query {
  const [path, value] = singleEntry(body, 'term');
  const options = isDslObject(value) ? value : { value };
  checkKeys(options, ['value', 'boost', 'case_insensitive', '_name'], 'term');
  if (options.value === undefined || options.value === null) throw dslError('[term] requires a value');
  const caseInsensitive = readCaseInsensitive(options, 'term');
  const boost = readBoost(options.boost, 'term');
  if (path === '_id') return new IdsQuery([idValue(options.value, 'term')], boost);
  const field = fields.get(path);
  if (field !== undefined && caseInsensitive) return caseInsensitiveQuery(field, field.keyPrefix ?? '', options.value, false, boost, 'term');
  return field === undefined ? new MatchNoneQuery() : exactValueQuery(field, options.value, boost, 'term', now);
}

/** `{terms: {field: [values], boost}}`. */
export function parseTerms(body: DslObject, fields: ReadonlyMap<string, FlatField>, now: number): Query {
  // As in ES, `terms` has no `case_insensitive` (nor other options next to the field).
  if (body.case_insensitive !== undefined && !Array.isArray(body.case_insensitive)) throw dslError('[terms] query does not support [case_insensitive]');
  const entries = Object.entries(body).filter(([key]) => key !== 'boost' && key !== '_name' && key !== 'value_type');
  if (entries.length !== 1) throw dslError(`[terms] query requires exactly one field, found ${entries.length}`);
  const [path, values] = entries[0]!;
  const valueType = body.value_type === undefined ? 'default' : readEnum(body.value_type, ['default', 'bitmap'] as const, 'value_type', 'terms');
  if (valueType === 'bitmap') return bitmapTermsQuery(path, values, fields.get(path), readBoost(body.boost, 'terms'));
  if (!Array.isArray(values)) throw dslError(`[terms] values of field [${path}] must be an array (terms lookup is not supported)`);
  if (values.length > MAX_TERMS_COUNT) throw tooManyTerms('terms', values.length);
  const boost = readBoost(body.boost, 'terms');
  if (path === '_id') return new IdsQuery([...new Set(values.map((value) => idValue(value, 'terms')))], boost);
  const field = fields.get(path);
  if (field === undefined) return new MatchNoneQuery();
  assertSearchable(field);
  if (field.range !== undefined || (field.type === 'ip' && values.some((value) => typeof value === 'string' && value.includes('/')))) {
    const clauses = values.map((value) => exactValueQuery(field, value, 1, 'terms', now));
    return new BooleanQuery({ must: [], should: clauses, filter: [], mustNot: [] }, 1, boost);
  }
  if (field.storage === 'keyword') {
    return new TermSetQuery(field.path, [...new Set(values.map((value) => keywordTerm(field, value, 'terms')))], boost);
  }
  if (isInvertedField(field)) {
    const terms = values.map((value) => {
      if (typeof value !== 'string' && typeof value !== 'number' && typeof value !== 'boolean') {
        throw dslError(`[terms] values of field [${path}] must be strings, numbers or booleans, got ${describe(value)}`);
      }
      return String(value);
    });
    return new TermSetQuery(field.path, [...new Set(terms)], boost);
  }
  const exact = values.map((value) => exactLongTerm(field, value, 1, 'terms'));
  if (exact.every((query) => query === null)) return new NumericSetQuery(field.path, values.map((value) => requireColumnValue(field, value, 'terms', now)), boost);
  const column = values.filter((_, index) => exact[index] === null).map((value) => requireColumnValue(field, value, 'terms', now));
  const clauses = exact.filter((query): query is Query => query !== null);
  if (column.length > 0) clauses.push(new NumericSetQuery(field.path, column));
  return new BooleanQuery({ must: [], should: clauses, filter: [], mustNot: [] }, 1, boost);
}

/** `terms` with `value_type: bitmap`: the integers of a serialised roaring bitmap, on an `integer` field. */
function bitmapTermsQuery(path: string, value: unknown, field: FlatField | undefined, boost: number): Query {
  const values = bitmapQueryValues(value, path);
  if (field === undefined) return new MatchNoneQuery();
  assertSearchable(field);
  if (field.type !== 'integer') throw dslError(`[terms] query with [value_type: bitmap] supports only fields of type [integer], but [${path}] is of type [${field.type}]`);
  return new NumericSetQuery(field.path, values, boost);
}

interface RangeBounds {
  lower: unknown;
  upper: unknown;
  includeLower: boolean;
  includeUpper: boolean;
}

function readRangeBounds(options: DslObject): RangeBounds {
  const bounds: RangeBounds = { lower: undefined, upper: undefined, includeLower: true, includeUpper: true };
  if (options.from !== undefined && options.from !== null) bounds.lower = options.from;
  if (options.to !== undefined && options.to !== null) bounds.upper = options.to;
  if (options.include_lower !== undefined) bounds.includeLower = readBoolean(options.include_lower, 'include_lower', 'range');
  if (options.include_upper !== undefined) bounds.includeUpper = readBoolean(options.include_upper, 'include_upper', 'range');
  for (const [key, lower, inclusive] of [['gt', true, false], ['gte', true, true], ['lt', false, false], ['lte', false, true]] as const) {
    const value = options[key];
    if (value === undefined || value === null) continue;
    if (lower) {
      bounds.lower = value;
      bounds.includeLower = inclusive;
    } else {
      bounds.upper = value;
      bounds.includeUpper = inclusive;
    }
  }
  return bounds;
}

/** `{range: {field: {gt, gte, lt, lte, from, to, include_lower, include_upper, format, time_zone, boost}}}`. */
export function parseRange(body: DslObject, fields: ReadonlyMap<string, FlatField>, now: number): Query {
  const [path, value] = singleEntry(body, 'range');
  const options = expectObject(value, 'range');
  checkKeys(options, ['gt', 'gte', 'lt', 'lte', 'from', 'to', 'include_lower', 'include_upper', 'format', 'time_zone', 'boost', 'relation', '_name'], 'range');
  if (options.format !== undefined) readString(options.format, 'format', 'range');
  const relation = options.relation === undefined ? 'intersects' : readEnum(options.relation, ['intersects', 'contains', 'within'] as const, 'relation', 'range');
  const zone = readTimeZone(options.time_zone, 'range');
  const boost = readBoost(options.boost, 'range');
  const bounds = readRangeBounds(options);
  const field = fields.get(path);
  if (field === undefined) return new MatchNoneQuery();
  assertSearchable(field);
  if (field.range !== undefined) {
    const format = options.format === undefined ? undefined : (options.format as string);
    return rangeFieldRangeQuery(field, bounds, relation, { format, zone, now, owner: 'range' }, boost);
  }
  if (isInvertedField(field)) {
    const text = (bound: unknown): string | null => {
      if (bound === undefined) return null;
      if (typeof bound === 'string' || typeof bound === 'number' || typeof bound === 'boolean') return String(bound);
      throw dslError(`[range] bound of field [${path}] must be a string or number, got ${describe(bound)}`);
    };
    const termBounds: TermBounds = {
      lower: text(bounds.lower),
      upper: text(bounds.upper),
      includeLower: bounds.includeLower,
      includeUpper: bounds.includeUpper,
    };
    return field.storage === 'keyword'
      ? new KeywordRangeQuery(field.path, keywordBounds(field, termBounds, 'range'), boost)
      : new TermRangeQuery(field.path, termBounds, boost);
  }
  const exactRange = exactLongRange(field, bounds, boost);
  if (exactRange !== null) return exactRange;
  // Date math rounds the lower bound up for gt and the upper bound up for lte (like ES); dates
  // without an offset and rounding are on the wall clock of `time_zone`.
  const columnBound = (value: unknown, roundUp: boolean): number => {
    const zoned = field.type === 'date' && !zone.isUtc ? parseDateValue(value, roundUp, now, zone) : null;
    return zoned ?? requireColumnValue(field, value, 'range', now, roundUp);
  };
  let min = -Infinity;
  let max = Infinity;
  if (bounds.lower !== undefined) {
    const lower = columnBound(bounds.lower, !bounds.includeLower);
    min = bounds.includeLower ? lower : nextUp(lower);
  }
  if (bounds.upper !== undefined) {
    const upper = columnBound(bounds.upper, bounds.includeUpper);
    max = bounds.includeUpper ? upper : nextDown(upper);
  }
  return new NumericRangeQuery(field.path, min, max, boost);
}

/** `{exists: {field, boost}}`; an object path checks every field below it. */
export function parseExists(body: DslObject, fields: ReadonlyMap<string, FlatField>): Query {
  checkKeys(body, ['field', 'boost', '_name'], 'exists');
  if (body.field === undefined) throw dslError('[exists] must be provided with a [field]');
  const path = readString(body.field, 'field', 'exists');
  const boost = readBoost(body.boost, 'exists');
  if (METADATA_FIELDS_OF_EVERY_DOCUMENT.has(path)) return new MatchAllQuery(boost);
  const direct = fields.get(path);
  if (direct?.keyPrefix !== undefined) return new PrefixQuery(direct.path, direct.keyPrefix, boost);
  if (direct !== undefined && existsSourceOf(direct) === null) throw dslError(`[exists] field [${path}] of type [${direct.type}] is not indexed and has no doc values`);
  const targets = direct !== undefined ? [direct] : [...fields.values()].filter((field) => field.path.startsWith(`${path}.`));
  const sources = targets.map(existsSourceOf).filter((source): source is ExistsSource => source !== null);
  return sources.length === 0 ? new MatchNoneQuery() : new ExistsQuery(sources, boost);
}

/** Where `exists` finds a field's values: its norms, its column, a geo_point's latitudes, a binary field's presence marks; null when nowhere. */
function existsSourceOf(field: FlatField): ExistsSource | null {
  if (field.geo !== undefined) return { field: field.geo.lat, kind: 'numeric' };
  if (field.range !== undefined) return rangeExistsColumn(field.range);
  if (field.presencePath !== undefined) return { field: field.presencePath, kind: 'keyword' };
  if (field.storage === 'none') return null;
  return { field: field.path, kind: field.storage === 'text' ? 'norms' : field.storage === 'keyword' ? 'keyword' : 'numeric' };
}

/** `{ids: {values: [...], boost}}`. */
export function parseIds(body: DslObject): Query {
  checkKeys(body, ['values', 'boost', 'type', '_name'], 'ids');
  if (!Array.isArray(body.values)) throw dslError('[ids] [values] must be an array');
  if (body.values.length > MAX_TERMS_COUNT) throw tooManyTerms('ids', body.values.length);
  const ids = body.values.map((value) => idValue(value, 'ids'));
  return new IdsQuery(ids, readBoost(body.boost, 'ids'));
}

/** `{prefix: {field: value | {value, boost, rewrite}}}` on text and keyword fields. */
export function parsePrefix(body: DslObject, fields: ReadonlyMap<string, FlatField>): Query {
  const [path, value] = singleEntry(body, 'prefix');
  const options = isDslObject(value) ? value : { value };
  checkKeys(options, ['value', 'boost', 'rewrite', 'case_insensitive', '_name'], 'prefix');
  const prefix = readString(options.value, 'value', 'prefix');
  if (options.rewrite !== undefined) readString(options.rewrite, 'rewrite', 'prefix');
  const caseInsensitive = readCaseInsensitive(options, 'prefix');
  const boost = readBoost(options.boost, 'prefix');
  const field = fields.get(path);
  if (field === undefined) return new MatchNoneQuery();
  if (caseInsensitive) return caseInsensitiveQuery(field, field.keyPrefix ?? '', prefix, true, boost, 'prefix');
  assertSearchable(field);
  if (!supportsTermPatterns(field)) {
    throw dslError(`[prefix] Can only use prefix queries on keyword and text fields - not on [${path}] which is of type [${field.type}]`);
  }
  return new PrefixQuery(field.path, `${field.keyPrefix ?? ''}${normalizeTerm(field.analyzer, prefix)}`, boost);
}
