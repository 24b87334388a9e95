import { exactCompanionPath, isExactIntegerType } from './exact-long.ts';
import { isRangeType, rangePathsOf, type RangePaths } from './range-field.ts';
import type { DynamicTemplate } from './dynamic-templates.ts';

/** Field types a collection mapping can declare (PRODUCT.md section 2, docs/api.md "Field types"). */
export type FieldType =
  | 'text'
  | 'match_only_text'
  | 'keyword'
  | 'wildcard'
  | 'long'
  | 'integer'
  | 'short'
  | 'byte'
  | 'unsigned_long'
  | 'double'
  | 'float'
  | 'half_float'
  | 'scaled_float'
  | 'boolean'
  | 'date'
  | 'date_nanos'
  | 'ip'
  | 'binary'
  | 'geo_point'
  | 'flattened'
  | 'flat_object'
  | 'integer_range'
  | 'long_range'
  | 'float_range'
  | 'double_range'
  | 'date_range'
  | 'ip_range'
  | 'alias'
  | 'token_count'
  | 'object'
  | 'nested';

/** Analyzer names understood by the analysis module. */
export type AnalyzerName = 'standard' | 'english' | 'keyword' | 'whitespace';

/** Mapping of one field; `properties` only for `object`, `fields` holds multi-fields such as `.keyword`. */
export interface FieldMapping {
  type: FieldType;
  /** Analyzer for `text` fields (default `standard`), used at index and query time. */
  analyzer?: AnalyzerName;
  /** Fixed-width column slot that update operators overwrite in O(1) (numeric, boolean, date only). */
  inplace?: boolean;
  /** Sub-fields indexed from the same value, e.g. `{keyword: {type: 'keyword'}}`. */
  fields?: Record<string, FieldMapping>;
  /** Children of an `object` or `nested` field. */
  properties?: Record<string, FieldMapping>;
  /** `nested`: its fields are also indexed on the document itself, as an object's are (ES `include_in_parent` / `include_in_root`). */
  include_in_parent?: boolean;
  include_in_root?: boolean;
  /** Longest keyword indexed (longer values are stored but not indexed), ES `ignore_above`. */
  ignore_above?: number;
  /** `scaled_float`: values are held as round(value × factor) / factor. */
  scaling_factor?: number;
  /** Date formats of a `date` / `date_nanos` field, `||`-separated (ES `format`). */
  format?: string;
  /** Kept for `stored_fields` compatibility; the source always holds the value. */
  store?: boolean;
  /** Free metadata about the field (ES `meta`: string values). */
  meta?: Record<string, string>;
  /** False: the field cannot be queried (still in the source, and sortable with doc values). */
  index?: boolean;
  /** False: the field cannot be sorted on or aggregated. */
  doc_values?: boolean;
  /** Value indexed in place of an explicit JSON `null`. */
  null_value?: unknown;
  /** Other fields each value is also indexed into. */
  copy_to?: string[];
  /** Numeric, date, ip and geo_point fields: a value that does not parse is skipped (listed in `_ignored`) instead of refusing the document. */
  ignore_malformed?: boolean;
  /** `text` / `match_only_text`: accepted and kept (Elasticsearch's prefix index; Trove answers prefixes from the terms). */
  index_prefixes?: { min_chars?: number; max_chars?: number };
  /** `text` / `match_only_text`: accepted and kept (Elasticsearch's shingle index; Trove answers phrases from positions). */
  index_phrases?: boolean;
  /** `text`: accepted and kept (`docs` … `offsets`); Trove indexes positions whatever it says, and highlights by re-analysis. */
  index_options?: string;
  /** `text`: accepted and kept (Elasticsearch's term vectors); Trove builds none. */
  term_vector?: string;
  /** `alias`: the dotted path of the concrete field the alias stands for. */
  path?: string;
  /** `text`: accepted and kept (Elasticsearch's uninverted field data); sorting and aggregating on a text field stay a 400 in Trove. */
  fielddata?: boolean;
  /** `token_count`: count positions (stop words removed by the analyzer still count; the default) rather than tokens. */
  enable_position_increments?: boolean;
}

/** The root `_source` options of a mapping: whether and which parts of documents come back. */
export interface SourceOptions {
  enabled?: boolean;
  includes?: string[];
  excludes?: string[];
}

/** Dynamic-mapping policy: detect new fields (`true`), ignore them (`false`), or reject (`strict`). */
export type DynamicPolicy = true | false | 'strict' | 'strict_allow_templates';

/** A collection's mapping, as `PUT /{collection}` accepts it under `mappings`. */
export interface Mapping {
  dynamic?: DynamicPolicy;
  /** Root `_source` options (absent: whole documents come back). */
  _source?: SourceOptions;
  /** Rules choosing the mapping of fields dynamic mapping introduces (dynamic-templates.ts). */
  dynamic_templates?: DynamicTemplate[];
  /** False: dynamic mapping never reads a string as a date (default true). */
  date_detection?: boolean;
  /** True: dynamic mapping reads a numeric string as a `long` or `double` (default false). */
  numeric_detection?: boolean;
  properties: Record<string, FieldMapping>;
  /**
   * The index setting `index.mapping.ignore_malformed`, kept with the mapping so that every
   * holder of it flattens fields alike: the default `ignore_malformed` of the fields that take
   * one. Set from the settings at creation, never from a mappings body; `shownMapping` hides it.
   */
  indexIgnoreMalformed?: boolean;
}

/** The mapping as GET _mapping and GET /{collection} show it (without what the index settings put there). */
export function shownMapping(mapping: Mapping): Omit<Mapping, 'indexIgnoreMalformed'> {
  if (mapping.indexIgnoreMalformed === undefined) return mapping;
  const { indexIgnoreMalformed: _setting, ...shown } = mapping;
  return shown;
}

/** Types whose fields take `ignore_malformed` (and follow `index.mapping.ignore_malformed`). */
export const IGNORE_MALFORMED_TYPES: ReadonlySet<FieldType> = new Set<FieldType>([
  'long',
  'integer',
  'short',
  'byte',
  'unsigned_long',
  'double',
  'float',
  'half_float',
  'scaled_float',
  'date',
  'date_nanos',
  'ip',
  'geo_point',
]);

/**
 * How a field's values are held: an inverted index with positions (`text`), an inverted index
 * plus ordinal doc values (`keyword`, also a `binary` field with doc values), a float64 column
 * (`numeric`), or not in the field itself (`none`: a `binary` field without doc values, whose
 * value lives in the source and a presence mark, and a `geo_point`, whose points live in its
 * hidden companions).
 */
export type FieldStorage = 'text' | 'keyword' | 'numeric' | 'none';

/** A leaf field after flattening `object`s and multi-fields: its full dotted path and mapping. */
export interface FlatField {
  path: string;
  type: Exclude<FieldType, 'object' | 'nested'>;
  analyzer: AnalyzerName;
  inplace: boolean;
  ignoreAbove?: number;
  /** How values are held (derived from the type). */
  storage: FieldStorage;
  /** False for `index: false` and `binary`: a query on the field is a 400 (a `geo_point` takes only geo queries). */
  searchable: boolean;
  /** False for `doc_values: false`, `binary` without `doc_values: true` and `geo_point`: sorting and aggregating on the field is a 400. */
  docValues: boolean;
  scalingFactor?: number;
  /** Date formats (`format` split on `||`); absent: `strict_date_optional_time||epoch_millis`. */
  dateFormats?: readonly string[];
  nullValue?: unknown;
  copyTo?: readonly string[];
  /**
   * Set on the hidden companion of a `flattened` field (which indexes `key\0value` terms) and on
   * the views of one of its keys (`field.key`): the term prefix of that key, `''` for the companion.
   */
  keyPrefix?: string;
  /** The path a user named, when it differs from `path` (a key of a `flattened` field). */
  displayPath?: string;
  /** `long` and `unsigned_long` fields: the hidden companion holding the exact terms of values beyond ±(2^53 − 1) (exact-long.ts). */
  exactPath?: string;
  /** `index_options: offsets` on a text field: the unified highlighter takes its values whatever their length (`index.highlight.max_analyzed_offset`). */
  offsets?: boolean;
  /** A value that does not parse is skipped and the field named in the document's `_ignored` (ES `ignore_malformed`). */
  ignoreMalformed?: boolean;
  /** `geo_point` fields: the hidden companions of their points (geo-point.ts). */
  geo?: GeoPaths;
  /** `binary` fields without doc values: the hidden keyword companion marking the docs that hold a value (for `exists`). */
  presencePath?: string;
  /** Range fields (`integer_range` … `ip_range`): the hidden companions of their bounds (range-field.ts). */
  range?: RangePaths;
  /** `text` fields mapped with `fielddata: true` (which Trove accepts without building field data). */
  fielddata?: boolean;
  /** `token_count` fields without `enable_position_increments: false`: the count is of positions (gaps left by stop words included). */
  countPositions?: boolean;
}

/** The hidden companions of a `geo_point` field. */
export interface GeoPaths {
  /** Numeric column of the latitudes. */
  lat: string;
  /** Numeric column of the longitudes. */
  lon: string;
  /** Keyword column of `lat,lon` terms, written for docs holding several points (their columns are sorted apart, so pairs come from here). */
  points: string;
}

/** Numeric field types (stored as float64 in columns; longs are exact up to 2^53). */
export const NUMERIC_TYPES: ReadonlySet<FieldType> = new Set([
  'long',
  'integer',
  'short',
  'byte',
  'unsigned_long',
  'double',
  'float',
  'half_float',
  'scaled_float',
]);

/** Types whose values live in numeric columns (numbers, dates as epoch millis, booleans as 0/1). */
export const COLUMN_NUMERIC_TYPES: ReadonlySet<FieldType> = new Set([...NUMERIC_TYPES, 'date', 'date_nanos', 'boolean', 'token_count']);

/** Types indexed as keywords (inverted index and ordinal doc values). */
export const KEYWORD_TYPES: ReadonlySet<FieldType> = new Set(['keyword', 'wildcard', 'ip', 'flattened', 'flat_object']);

/** The `flattened` types: an object indexed as keyword values, also by dotted key path. */
export const FLATTENED_TYPES: ReadonlySet<FieldType> = new Set(['flattened', 'flat_object']);

/** Date types (values are epoch millis in columns). */
export const DATE_TYPES: ReadonlySet<FieldType> = new Set(['date', 'date_nanos']);

/** How values of a type are held. */
export function storageOf(type: Exclude<FieldType, 'object' | 'nested'>): FieldStorage {
  if (type === 'text' || type === 'match_only_text') return 'text';
  if (KEYWORD_TYPES.has(type)) return 'keyword';
  if (COLUMN_NUMERIC_TYPES.has(type)) return 'numeric';
  return 'none';
}

/** The hidden keyword field that lists, per document, the fields whose malformed values were skipped (`_ignored`). */
export const IGNORED_FIELD = '_ignored';

/** The `_ignored` companion: a keyword field every mapping has (written only by documents that skipped a value). */
const IGNORED_COMPANION: FlatField = {
  path: IGNORED_FIELD,
  type: 'keyword',
  analyzer: 'keyword',
  inplace: false,
  storage: 'keyword',
  searchable: true,
  docValues: true,
};

/** Path of the hidden field holding the `key\0value` terms of a flattened field. */
export function keyedCompanionPath(path: string): string {
  return `${path}\u0000keyed`;
}

/** Separator between a key and its value in a flattened field's keyed terms. */
export const KEYED_SEPARATOR = '\u0000';

/**
 * Leaf fields by dotted path. `get` also answers the hidden companions (the keyed terms of a
 * `flattened` field, the exact terms of a long, the columns of a `geo_point`, the presence marks
 * of a `binary` field, `_ignored`), which iteration leaves out so that field patterns, highlighting and field
 * listings never show them, field aliases (`get` answers the target field itself), and the keys of `flattened` fields: `tags.color`, with `tags`
 * flattened, is a keyword view of the companion restricted to the key `color`.
 */
export class FieldMap extends Map<string, FlatField> {
  readonly #flattenedPaths: string[] = [];
  readonly #keyViews = new Map<string, FlatField>();
  readonly #companions = new Map<string, FlatField>();
  readonly #aliases = new Map<string, string>();

  /** Adds a field alias: `get(path)` answers the field at `target` (iteration leaves aliases out). */
  addAlias(path: string, target: string): void {
    this.#aliases.set(path, target);
  }

  /** The field aliases: alias path → target path. */
  aliases(): ReadonlyMap<string, string> {
    return this.#aliases;
  }

  /** Adds a hidden companion field (found by `get`, not iterated). */
  addCompanion(field: FlatField): void {
    this.#companions.set(field.path, field);
  }

  /** The hidden companion fields, which segments store like any other. */
  companions(): IterableIterator<FlatField> {
    return this.#companions.values();
  }

  override set(path: string, field: FlatField): this {
    if (FLATTENED_TYPES.has(field.type)) this.#flattenedPaths.push(path);
    return super.set(path, field);
  }

  override get(path: string): FlatField | undefined {
    const direct = super.get(path) ?? this.#companions.get(path);
    if (direct !== undefined) return direct;
    const target = this.#aliases.get(path);
    if (target !== undefined) return super.get(target);
    if (this.#flattenedPaths.length === 0) return direct;
    const cached = this.#keyViews.get(path);
    if (cached !== undefined) return cached;
    for (const root of this.#flattenedPaths) {
      if (path.length <= root.length + 1 || !path.startsWith(root) || path.charCodeAt(root.length) !== 46 /* . */) continue;
      const owner = super.get(root)!;
      const view: FlatField = {
        ...owner,
        path: keyedCompanionPath(root),
        type: 'keyword',
        keyPrefix: `${path.slice(root.length + 1)}${KEYED_SEPARATOR}`,
        displayPath: path,
      };
      if (this.#keyViews.size < 10_000) this.#keyViews.set(path, view);
      return view;
    }
    return undefined;
  }
}

/**
 * The fields a segment writes: the mapped leaves and multi-fields, and the hidden companions of a
 * FieldMap that `holds` (some source has values of it), so that a segment of documents without
 * flattened fields, longs beyond 2^53, geo points, binary values or skipped values carries no
 * empty companion.
 */
export function segmentFieldList(fields: ReadonlyMap<string, FlatField>, holds: (path: string) => boolean): FlatField[] {
  if (!(fields instanceof FieldMap)) return [...fields.values()];
  return [...fields.values(), ...[...fields.companions()].filter((field) => holds(field.path))];
}

/**
 * The leaf view of one field mapping at `path`; `multiField` fields are never inplace.
 * `ignoreMalformedDefault` is the index's `index.mapping.ignore_malformed`.
 */
export function flatField(path: string, field: FieldMapping, multiField = false, ignoreMalformedDefault = false): FlatField {
  const type = field.type as Exclude<FieldType, 'object' | 'nested'>;
  // A binary field with doc values keeps its base64 text in a keyword column (never searchable).
  const storage = type === 'binary' && field.doc_values === true ? 'keyword' : storageOf(type);
  const flat: FlatField = {
    path,
    type,
    analyzer: field.analyzer ?? (storage === 'text' ? 'standard' : 'keyword'),
    inplace: !multiField && field.inplace === true,
    ignoreAbove: field.ignore_above,
    storage,
    searchable: type === 'geo_point' ? field.index !== false : storage !== 'none' && type !== 'binary' && field.index !== false,
    docValues: storage !== 'none' && storage !== 'text' && field.doc_values !== false,
  };
  if ((field.ignore_malformed ?? (ignoreMalformedDefault && IGNORE_MALFORMED_TYPES.has(type))) === true) flat.ignoreMalformed = true;
  if (type === 'geo_point') flat.geo = { lat: `${path}\u0000lat`, lon: `${path}\u0000lon`, points: `${path}\u0000points` };
  if (type === 'binary' && storage === 'none') flat.presencePath = `${path}\u0000present`;
  if (type === 'token_count' && field.enable_position_increments !== false) flat.countPositions = true;
  if (field.fielddata === true) flat.fielddata = true;
  if (isRangeType(type)) {
    flat.range = rangePathsOf(path, type);
    flat.searchable = field.index !== false;
  }
  if (field.scaling_factor !== undefined) flat.scalingFactor = field.scaling_factor;
  if (field.format !== undefined) flat.dateFormats = field.format.split('||');
  if (field.null_value !== undefined) flat.nullValue = field.null_value;
  if (field.copy_to !== undefined && !multiField) flat.copyTo = field.copy_to;
  if (isExactIntegerType(type) && !flat.inplace) flat.exactPath = exactCompanionPath(path);
  if (field.index_options === 'offsets') flat.offsets = true;
  return flat;
}

/**
 * The hidden keyword companion of a field (`exactPath` of a long, the keyed terms of a flattened
 * field, the points of a geo_point, the presence marks of a binary field), or its numeric one
 * (`numeric`: the latitudes or longitudes of a geo_point).
 */
function companionOf(owner: FlatField, path: string, keyPrefix?: string, numeric = false): FlatField {
  const companion: FlatField = numeric
    ? { ...owner, path, type: 'double', storage: 'numeric', analyzer: 'keyword', inplace: false, docValues: true, searchable: true }
    : { ...owner, path, type: 'keyword', storage: 'keyword', analyzer: 'keyword', inplace: false, docValues: true };
  delete companion.exactPath;
  delete companion.copyTo;
  delete companion.nullValue;
  delete companion.geo;
  delete companion.presencePath;
  delete companion.ignoreMalformed;
  delete companion.range;
  if (keyPrefix !== undefined) companion.keyPrefix = keyPrefix;
  return companion;
}

/** Adds the hidden companions a leaf field needs (none for most types). */
function addCompanions(out: FieldMap, flat: FlatField): void {
  if (FLATTENED_TYPES.has(flat.type)) out.addCompanion(companionOf(flat, keyedCompanionPath(flat.path), ''));
  if (flat.exactPath !== undefined) out.addCompanion(companionOf(flat, flat.exactPath));
  if (flat.presencePath !== undefined) out.addCompanion(companionOf(flat, flat.presencePath));
  if (flat.geo !== undefined) {
    out.addCompanion(companionOf(flat, flat.geo.lat, undefined, true));
    out.addCompanion(companionOf(flat, flat.geo.lon, undefined, true));
    out.addCompanion(companionOf(flat, flat.geo.points));
  }
  if (flat.range !== undefined) {
    out.addCompanion(companionOf(flat, flat.range.from, undefined, !flat.range.keyword));
    out.addCompanion(companionOf(flat, flat.range.to, undefined, !flat.range.keyword));
    out.addCompanion(companionOf(flat, flat.range.pairs));
  }
}

/** Flattens a mapping into leaf fields keyed by dotted path (multi-fields as `path.sub`). */
export function flattenMapping(mapping: Mapping): FieldMap {
  const out = new FieldMap();
  const ignoreMalformedDefault = mapping.indexIgnoreMalformed === true;
  const walk = (props: Record<string, FieldMapping>, prefix: string): void => {
    for (const [name, field] of Object.entries(props)) {
      const path = prefix ? `${prefix}.${name}` : name;
      if (field.type === 'object' || (field.type === 'nested' && (field.include_in_parent === true || field.include_in_root === true))) {
        walk(field.properties ?? {}, path);
        continue;
      }
      // A nested object's fields are searchable only through nested queries, which Trove does not
      // run: they stay in the source, unindexed, so that other queries do not see them (as in ES).
      if (field.type === 'nested') continue;
      if (field.type === 'alias') {
        if (field.path !== undefined) out.addAlias(path, field.path);
        continue;
      }
      const flat = flatField(path, field, false, ignoreMalformedDefault);
      out.set(path, flat);
      addCompanions(out, flat);
      for (const [sub, subField] of Object.entries(field.fields ?? {})) {
        if (subField.type === 'object') continue;
        const multi = flatField(`${path}.${sub}`, subField, true, ignoreMalformedDefault);
        out.set(multi.path, multi);
        addCompanions(out, multi);
      }
    }
  };
  walk(mapping.properties, '');
  out.addCompanion(IGNORED_COMPANION);
  return out;
}
