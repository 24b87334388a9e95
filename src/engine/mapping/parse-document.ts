/**
 * Document parsing: walks a document's `_source` against the flattened mapping and collects the
 * values each mapped field indexes. Analysis of text values is the caller's job.
 *
 * Rules: arrays are allowed everywhere (nested arrays are flattened); null values are skipped;
 * objects are walked with dotted paths, and a literal dotted key (`{"a.b": 1}`) means the same as
 * `{"a": {"b": 1}}`; fields that are not mapped are skipped (they stay in the stored source); a
 * value that does not fit its mapped type, an object where a leaf is mapped, or a concrete value
 * where an object is mapped throws mapper_parsing. An `inplace` field holds at most one value.
 * A `null` (alone or in an array) indexes the field's `null_value` when it has one; each value
 * is also indexed into the field's `copy_to` targets (mapped leaves; others are skipped). A
 * `flattened` field takes any JSON below it: every scalar is indexed as a keyword value of the
 * field and as `key\0value` in its keyed companion (`key` the dotted path below the field).
 * A `binary` value is checked (base64); with doc values its text goes into a keyword column, else
 * an empty term into its presence companion (for `exists`). A `geo_point` takes one point in any
 * format of geo-point.ts or an array of them (addGeoValues). A field with `ignore_malformed`
 * skips a value that does not fit instead of refusing the document, and the document's hidden
 * `_ignored` keyword field names it. A range field takes one range or an array of them
 * (range-field.ts, addRangeValues); a value at the path of a field alias is refused.
 * New writes parse with `strictNumbers` (a `long` must be a safe integer); the WAL replay of a
 * shard parses without it, so that a document admitted before that rule never stops a shard opening.
 */
import { analyze } from '../analysis/analyzer.ts';
import { EngineError } from '../errors.ts';
import { checkBinaryValue, coerceColumnValue, coerceStringValue, fieldValueError } from './field-value.ts';
import { fieldIndexOf, leafAncestor, type FieldIndex } from './field-index.ts';
import { isPlainObject, type JsonObject } from './json-value.ts';
import { assertNotMetadataField } from './limits.ts';
import { encodeExact, EXACT_INTEGER_TYPES, exactIntegerLiterals, integerOfText, isExactIntegerType, isUnsafeLong } from './exact-long.ts';
import { DEPTH_LIMIT } from './limits.ts';
import { FLATTENED_TYPES, IGNORED_FIELD, KEYED_SEPARATOR, keyedCompanionPath, type FlatField } from './mapping.ts';
import { encodePointTerm, GeoPointError, isCoordinateArray, parseGeoPoint, type GeoPoint } from './geo-point.ts';
import { encodeRangePair, parseRangeValue, type InclusiveRange } from './range-field.ts';

/** The values a document contributes to each mapped field, grouped by how they are indexed. */
export interface ParsedDocument {
  /** Text field path → the string values (analysis is done by the caller). */
  text: Map<string, string[]>;
  /** Keyword field path (including multi-fields like `title.keyword`) → values, except those longer than `ignore_above`. */
  keyword: Map<string, string[]>;
  /** Numeric, date and boolean field path → values (dates as epoch millis, booleans as 0/1). */
  numeric: Map<string, number[]>;
}

/** How a document is parsed: the rules of new writes, or the leniency of replaying older ones. */
export interface ParseOptions {
  /**
   * Refuse a `long` value that is not a safe integer (it would be rounded). Pass true when admitting
   * a new write; leave it false (the default) when replaying the WAL, whose documents older
   * versions accepted.
   */
  strictNumbers?: boolean;
  /**
   * The document's JSON text: integers beyond 2^53 in it keep their exact digits in `long`
   * fields (exact-long.ts). Without it such a number is refused when `strictNumbers` is set.
   */
  sourceText?: string | Uint8Array;
}

/** One walk over a document: the mapping index, where values go (null: only check), the number rule. */
interface Walk {
  index: FieldIndex;
  parsed: ParsedDocument | null;
  strictNumbers: boolean;
  sourceText?: string | Uint8Array;
  /** The unsafe integer literals of `sourceText` by path, read on first need; consumed as values are. */
  literals?: Map<string, string[]>;
}

/** Collects the indexed values of a document; throws mapper_parsing when a value does not fit its mapped type. */
export function parseDocument(source: Record<string, unknown>, fields: ReadonlyMap<string, FlatField>, options: ParseOptions = {}): ParsedDocument {
  const parsed: ParsedDocument = { text: new Map(), keyword: new Map(), numeric: new Map() };
  const index = fieldIndexOf(fields);
  for (const key of Object.keys(source)) assertNotMetadataField(key);
  walkObject(source, '', { index, parsed, strictNumbers: options.strictNumbers === true, sourceText: options.sourceText });
  return parsed;
}

/**
 * Checks that `value`, stored at dotted `path` of a document (`''` for the whole document),
 * fits the mapping as a new write (`strictNumbers`); throws the mapper_parsing error
 * `parseDocument` would throw.
 */
export function checkFieldValue(path: string, value: unknown, fields: ReadonlyMap<string, FlatField>): void {
  const walk: Walk = { index: fieldIndexOf(fields), parsed: null, strictNumbers: true };
  if (path === '') {
    if (!isPlainObject(value)) throw new EngineError('mapper_parsing', 'a document must be a JSON object');
    for (const key of Object.keys(value)) assertNotMetadataField(key);
    walkObject(value, '', walk);
  } else {
    const dot = path.indexOf('.');
    assertNotMetadataField(dot < 0 ? path : path.slice(0, dot));
    walkValue(path, value, walk);
  }
}

function walkObject(object: JsonObject, prefix: string, walk: Walk): void {
  for (const key of Object.keys(object)) {
    walkValue(prefix === '' ? key : `${prefix}.${key}`, object[key], walk);
  }
}

function walkValue(path: string, value: unknown, walk: Walk): void {
  const { index } = walk;
  const leaf = index.leaves.get(path);
  if (leaf !== undefined && value === null) value = leaf.nullValue;
  if (value === null || value === undefined) return;
  if (leaf !== undefined) {
    if (FLATTENED_TYPES.has(leaf.type)) {
      addFlattenedValues(leaf, value, '', 1, walk);
      return;
    }
    if (leaf.geo !== undefined) {
      addGeoValues(leaf, value, walk);
      return;
    }
    if (leaf.range !== undefined) {
      addRangeValues(leaf, value, walk);
      return;
    }
    const count = addLeafValues(leaf, value, index.subFields.get(path), walk, 0);
    if (leaf.inplace && count > 1) {
      throw fieldValueError(leaf, value, 'has several values, an inplace field holds a single value');
    }
    return;
  }
  if (index.aliases.has(path)) throw new EngineError('mapper_parsing', `Cannot write to a field alias [${path}].`);
  if (index.objects.has(path)) {
    if (Array.isArray(value)) {
      for (const element of value) walkValue(path, element, walk);
    } else if (isPlainObject(value)) {
      walkObject(value, path, walk);
    } else {
      throw new EngineError(
        'mapper_parsing',
        `object mapping for [${path}] tried to parse field [${path}] as object, but found a concrete value`,
      );
    }
    return;
  }
  const owner = leafAncestor(index, path);
  if (owner !== undefined && FLATTENED_TYPES.has(owner.type)) {
    addFlattenedValues(owner, value, path.slice(owner.path.length + 1), 2, walk);
    return;
  }
  if (owner !== undefined) {
    throw new EngineError(
      'mapper_parsing',
      `Could not add a value for field [${path}]: existing mapping for [${owner.path}] ` +
        `must be of type object but found [${owner.type}]`,
    );
  }
}

/** Adds every scalar of `value` (flattening arrays) to the leaf and its multi-fields; returns the running value count. */
function addLeafValues(leaf: FlatField, value: unknown, subFields: readonly FlatField[] | undefined, walk: Walk, count: number): number {
  if (value === null) value = leaf.nullValue;
  if (value === null || value === undefined) return count;
  if (Array.isArray(value)) {
    for (const element of value) count = addLeafValues(leaf, element, subFields, walk, count);
    return count;
  }
  if (typeof value === 'object') {
    if (leaf.ignoreMalformed === true) {
      markIgnored(leaf, walk);
      return count;
    }
    throw fieldValueError(leaf, value, 'is an object, the field is not mapped as [object]');
  }
  const exact = exactIntegerOf(value, leaf.path, walk);
  if (addScalarOrIgnore(leaf, value, walk, exact)) count++;
  if (subFields !== undefined) {
    for (const subField of subFields) addScalarOrIgnore(subField, value, walk, exact);
  }
  if (leaf.copyTo !== undefined) {
    for (const target of leaf.copyTo) {
      const targetLeaf = walk.index.leaves.get(target);
      if (targetLeaf === undefined || FLATTENED_TYPES.has(targetLeaf.type)) continue;
      addScalarOrIgnore(targetLeaf, value, walk, exact);
      for (const subField of walk.index.subFields.get(target) ?? []) addScalarOrIgnore(subField, value, walk, exact);
    }
  }
  return count;
}

/**
 * The exact integer of a scalar beyond ±(2^53 − 1): a numeric string's digits, or a JSON number's
 * digits read back from the document text (consumed in text order for `path`); null otherwise.
 */
function exactIntegerOf(value: unknown, path: string, walk: Walk): bigint | null {
  if (typeof value === 'string') {
    const exact = value.length >= 16 ? integerOfText(value) : null;
    return exact !== null && isUnsafeLong(exact) ? exact : null;
  }
  if (typeof value !== 'number' || !Number.isInteger(value) || Number.isSafeInteger(value) || walk.sourceText === undefined) return null;
  if (walk.literals === undefined) {
    const text = typeof walk.sourceText === 'string' ? walk.sourceText : Buffer.from(walk.sourceText).toString('utf8');
    walk.literals = exactIntegerLiterals(text);
  }
  const list = walk.literals.get(path);
  const position = list === undefined ? -1 : list.findIndex((literal) => Number(literal) === value);
  if (position < 0) return null;
  return BigInt(list!.splice(position, 1)[0]!);
}

/** Indexes every scalar below a flattened field, by its key path (`''` at the field itself). */
function addFlattenedValues(leaf: FlatField, value: unknown, key: string, depth: number, walk: Walk): void {
  if (value === null) value = leaf.nullValue;
  if (value === null || value === undefined) return;
  if (depth > DEPTH_LIMIT) {
    throw fieldValueError(leaf, value, `is nested deeper than the flattened depth limit [${DEPTH_LIMIT}]`);
  }
  if (Array.isArray(value)) {
    for (const element of value) addFlattenedValues(leaf, element, key, depth, walk);
    return;
  }
  if (isPlainObject(value)) {
    for (const child of Object.keys(value)) {
      if (child === '') throw fieldValueError(leaf, value, 'has an empty key');
      addFlattenedValues(leaf, value[child], key === '' ? child : `${key}.${child}`, depth + 1, walk);
    }
    return;
  }
  const text = coerceStringValue(leaf, value);
  if (leaf.ignoreAbove !== undefined && text.length > leaf.ignoreAbove) return;
  if (walk.parsed === null) return;
  append(walk.parsed.keyword, leaf.path, text);
  if (key !== '') append(walk.parsed.keyword, keyedCompanionPath(leaf.path), `${key}${KEYED_SEPARATOR}${text}`);
}

/** Names the field in the document's `_ignored` (once). */
function markIgnored(field: FlatField, walk: Walk): void {
  if (walk.parsed === null) return;
  const list = walk.parsed.keyword.get(IGNORED_FIELD);
  if (list === undefined) walk.parsed.keyword.set(IGNORED_FIELD, [field.path]);
  else if (!list.includes(field.path)) list.push(field.path);
}

/** `addScalar`, except that a field with `ignore_malformed` skips a value that does not fit (and names the field in `_ignored`). */
function addScalarOrIgnore(field: FlatField, value: unknown, walk: Walk, exact: bigint | null): boolean {
  if (field.ignoreMalformed !== true) return addScalar(field, value, walk, exact);
  try {
    return addScalar(field, value, walk, exact);
  } catch (error) {
    if (!(error instanceof EngineError) || error.code !== 'mapper_parsing') throw error;
    markIgnored(field, walk);
    return false;
  }
}

/**
 * Indexes the points of a geo_point value (one point in any format, or an array of them): their
 * latitudes and longitudes in the field's numeric companions and, when there are several, the
 * `lat,lon` pairs in its points companion. A malformed point is refused, or skipped with
 * `ignore_malformed` (the field's other points are kept).
 */
function addGeoValues(leaf: FlatField, value: unknown, walk: Walk): void {
  const points: GeoPoint[] = [];
  const visit = (item: unknown, depth: number): void => {
    if (item === null) item = leaf.nullValue;
    if (item === null || item === undefined) return;
    if (Array.isArray(item) && !isCoordinateArray(item) && depth === 0) {
      for (const element of item) visit(element, depth + 1);
      return;
    }
    try {
      points.push(parseGeoPoint(item));
    } catch (error) {
      if (!(error instanceof GeoPointError)) throw error;
      if (leaf.ignoreMalformed !== true) throw fieldValueError(leaf, item, error.message);
      markIgnored(leaf, walk);
    }
  };
  visit(value, 0);
  if (walk.parsed === null || points.length === 0 || leaf.geo === undefined) return;
  for (const point of points) {
    append(walk.parsed.numeric, leaf.geo.lat, point.lat);
    append(walk.parsed.numeric, leaf.geo.lon, point.lon);
    if (points.length > 1) append(walk.parsed.keyword, leaf.geo.points, encodePointTerm(point));
  }
}

/**
 * Indexes the ranges of a range field's value (one range, or an array of them): their bounds in
 * the field's bound columns and, when there are several, the `low|high` pairs in its pairs column.
 */
function addRangeValues(leaf: FlatField, value: unknown, walk: Walk): void {
  const ranges: InclusiveRange[] = [];
  const visit = (item: unknown, depth: number): void => {
    if (item === null || item === undefined) return;
    if (Array.isArray(item) && depth === 0) {
      for (const element of item) visit(element, depth + 1);
      return;
    }
    ranges.push(parseRangeValue(leaf, item));
  };
  visit(value, 0);
  const paths = leaf.range;
  if (walk.parsed === null || ranges.length === 0 || paths === undefined) return;
  for (const range of ranges) {
    if (paths.keyword) {
      append(walk.parsed.keyword, paths.from, range.from as string);
      append(walk.parsed.keyword, paths.to, range.to as string);
    } else {
      append(walk.parsed.numeric, paths.from, range.from as number);
      append(walk.parsed.numeric, paths.to, range.to as number);
    }
    if (ranges.length > 1) append(walk.parsed.keyword, paths.pairs, encodeRangePair(range));
  }
}

/**
 * Coerces one scalar for a field and records it; returns false when the value counts as missing.
 * `exact` is the value's exact integer when it lies beyond ±(2^53 − 1) (see `exactIntegerOf`).
 */
function addScalar(field: FlatField, value: unknown, walk: Walk, exact: bigint | null = null): boolean {
  const { parsed } = walk;
  if (exact !== null && field.exactPath !== undefined && isExactIntegerType(field.type)) {
    const range = EXACT_INTEGER_TYPES[field.type];
    if (exact < range.min || exact > range.max) throw fieldValueError(field, value, `is out of range for ${range.named}`);
    if (parsed !== null) {
      append(parsed.numeric, field.path, Number(exact));
      append(parsed.keyword, field.exactPath, encodeExact(field.type, exact));
    }
    return true;
  }
  if (field.geo !== undefined) {
    addGeoValues(field, value, walk);
    return true;
  }
  if (field.type === 'binary') {
    checkBinaryValue(field, value);
    if (parsed !== null) append(parsed.keyword, field.presencePath ?? field.path, field.presencePath === undefined ? (value as string) : '');
    return true;
  }
  if (field.storage === 'text' || field.storage === 'keyword') {
    const text = coerceStringValue(field, exact !== null && typeof value === 'number' ? exact.toString() : value);
    if (field.storage === 'keyword' && field.ignoreAbove !== undefined && text.length > field.ignoreAbove) return true;
    if (parsed !== null) append(field.storage === 'text' ? parsed.text : parsed.keyword, field.path, text);
    return true;
  }
  const number = field.type === 'token_count' ? countTokens(field, value) : coerceColumnValue(field, value, walk.strictNumbers);
  if (number === null) return false;
  if (parsed !== null) append(parsed.numeric, field.path, number);
  return true;
}

/** The number of tokens (or positions, see `countPositions`) a `token_count` field's analyzer makes of a value. */
export function countTokens(field: FlatField, value: unknown): number {
  if (typeof value !== 'string' && typeof value !== 'number' && typeof value !== 'boolean') throw fieldValueError(field, value, 'is not a string, number or boolean');
  const tokens = analyze(field.analyzer, String(value));
  if (!field.countPositions || tokens.length === 0) return tokens.length;
  return tokens[tokens.length - 1]!.position + 1;
}

function append<T>(values: Map<string, T[]>, path: string, value: T): void {
  const list = values.get(path);
  if (list === undefined) values.set(path, [value]);
  else list.push(value);
}
