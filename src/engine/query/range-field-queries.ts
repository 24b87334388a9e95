/**
 * Queries on range fields (`integer_range` … `ip_range`, see mapping/range-field.ts): `range`
 * with `relation` `intersects` (the default), `within` (the document's range lies inside the
 * query's) or `contains` (the document's range holds the query's), and `term` (a value inside a
 * document's range; for `ip_range` also a CIDR block, which the range must intersect). Both are
 * constant-score filters: candidates come from a range over the low-bound column (its range
 * index when the leaf has one), then each candidate's ranges are checked exactly, a single range
 * from the bound columns and several from the pairs column.
 */
import { cidrTermRange, encodeIp } from '../mapping/ip.ts';
import type { FlatField } from '../mapping/mapping.ts';
import {
  decodeRangePair,
  elementField,
  lowBoundWindow,
  openBound,
  rangeMatches,
  stepBound,
  type InclusiveRange,
  type RangeBound,
  type RangePaths,
  type RangeRelation,
  type RangeType,
} from '../mapping/range-field.ts';
import type { KeywordColumn, LeafReader } from '../segment/leaf-reader.ts';
import { ColumnQuery, KeywordRangeQuery, NumericRangeQuery } from './column-queries.ts';
import { parseDateValue } from './date-math.ts';
import { describe, dslError } from './dsl-reader.ts';
import { requireColumnValue } from './field-queries.ts';
import { GeoCheckScorer } from './geo-queries.ts';
import type { Query, Scorer } from './scorer.ts';
import type { TimeZone } from './time-zone.ts';

/** Docs of a range field holding a range in `relation` to the query range. */
export class RangeFieldQuery extends ColumnQuery {
  constructor(
    readonly paths: RangePaths,
    readonly type: RangeType,
    readonly range: InclusiveRange,
    readonly relation: RangeRelation,
    boost = 1,
  ) {
    super(boost);
  }

  /** The scorer of one leaf, or null when no doc of it can match. */
  leafScorer(leaf: LeafReader, constantScore: number): Scorer | null {
    if (this.range.from > this.range.to) return null;
    const window = lowBoundWindow(this.range, this.relation, this.type);
    const { paths } = this;
    let candidates: Scorer | null;
    let bounds: (doc: number) => InclusiveRange | null;
    if (paths.keyword) {
      const from = leaf.keywordColumn(paths.from);
      const to = leaf.keywordColumn(paths.to);
      if (from === null || to === null) return null;
      const termBounds = { lower: window.from as string, upper: window.to as string, includeLower: true, includeUpper: true };
      candidates = new KeywordRangeQuery(paths.from, termBounds).leafScorer(leaf, 0);
      bounds = (doc) => (from.count(doc) === 1 && to.count(doc) === 1 ? { from: from.term(from.ordinal(doc, 0)), to: to.term(to.ordinal(doc, 0)) } : null);
    } else {
      const from = leaf.numericColumn(paths.from);
      const to = leaf.numericColumn(paths.to);
      if (from === null || to === null) return null;
      candidates = new NumericRangeQuery(paths.from, window.from as number, window.to as number).leafScorer(leaf, 0);
      bounds = (doc) => (from.count(doc) === 1 && to.count(doc) === 1 ? { from: from.value(doc, 0), to: to.value(doc, 0) } : null);
    }
    if (candidates === null) return null;
    const pairs = leaf.keywordColumn(paths.pairs);
    return new GeoCheckScorer(candidates, constantScore, (doc) => this.docMatches(doc, bounds, pairs));
  }

  /** Whether one of the doc's ranges stands in the relation (a single range from the bound columns, several from the pairs column). */
  private docMatches(doc: number, bounds: (doc: number) => InclusiveRange | null, pairs: KeywordColumn | null): boolean {
    const single = bounds(doc);
    if (single !== null) return rangeMatches(single, this.range, this.relation);
    if (pairs === null) return false;
    const count = pairs.count(doc);
    for (let index = 0; index < count; index++) {
      if (rangeMatches(decodeRangePair(pairs.term(pairs.ordinal(doc, index)), this.paths.keyword), this.range, this.relation)) return true;
    }
    return false;
  }
}

/** The bounds of a `range` query as the DSL gives them (undefined: open). */
export interface QueryRangeBounds {
  lower: unknown;
  upper: unknown;
  includeLower: boolean;
  includeUpper: boolean;
}

/** How the bounds of a query on a range field are read: the query's `format` and `time_zone` (dates), and `now` for date math. */
export interface RangeBoundOptions {
  format?: string;
  zone: TimeZone;
  now: number;
  owner: string;
}

/** One bound of a query in the field's bound type (addresses as terms, dates as epoch millis; `roundUp` for date math). */
function queryBound(field: FlatField, value: unknown, roundUp: boolean, options: RangeBoundOptions): RangeBound {
  const element = elementField(field);
  if (element.type === 'ip') {
    const term = typeof value === 'string' ? encodeIp(value) : null;
    if (term === null) throw dslError(`[${options.owner}] '${typeof value === 'string' ? value : describe(value)}' is not an IP string literal (field [${field.path}]).`);
    return term;
  }
  if (element.type === 'date') {
    if (options.format !== undefined) element.dateFormats = options.format.split('||');
    if (!options.zone.isUtc) {
      const zoned = parseDateValue(value, roundUp, options.now, options.zone);
      if (zoned !== null) return zoned;
    }
  }
  return requireColumnValue(element, value, options.owner, options.now, roundUp);
}

/** `range` on a range field: the query's bounds made inclusive in the field's bound type. */
export function rangeFieldRangeQuery(field: FlatField, bounds: QueryRangeBounds, relation: RangeRelation, options: RangeBoundOptions, boost: number): Query {
  const type = field.type as RangeType;
  let from = openBound(type, true);
  let to = openBound(type, false);
  if (bounds.lower !== undefined) {
    const lower = queryBound(field, bounds.lower, !bounds.includeLower, options);
    from = bounds.includeLower ? lower : stepBound(type, lower, true);
  }
  if (bounds.upper !== undefined) {
    const upper = queryBound(field, bounds.upper, bounds.includeUpper, options);
    to = bounds.includeUpper ? upper : stepBound(type, upper, false);
  }
  return new RangeFieldQuery(field.range!, type, { from, to }, relation, boost);
}

/** `term` on a range field: the documents whose ranges hold the value (for `ip_range`, a CIDR block intersects them). */
export function rangeFieldTermQuery(field: FlatField, value: unknown, options: RangeBoundOptions, boost: number): Query {
  const type = field.type as RangeType;
  if (type === 'ip_range' && typeof value === 'string' && value.includes('/')) {
    const cidr = cidrTermRange(value);
    if (cidr === null) throw dslError(`[${options.owner}] '${value}' is not a valid CIDR block (field [${field.path}]).`);
    return new RangeFieldQuery(field.range!, type, { from: cidr.lower, to: cidr.upper }, 'intersects', boost);
  }
  const point = queryBound(field, value, false, options);
  return new RangeFieldQuery(field.range!, type, { from: point, to: point }, 'intersects', boost);
}

/** The column `exists` reads for a range field (its low bounds). */
export function rangeExistsColumn(paths: RangePaths): { field: string; kind: 'keyword' | 'numeric' } {
  return { field: paths.from, kind: paths.keyword ? 'keyword' : 'numeric' };
}
