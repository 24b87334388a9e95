/**
 * Validation of a user-supplied `mappings` body (`PUT /{collection}`, `PUT /{collection}/_mapping`).
 *
 * Accepted: root keys `dynamic` (`true`, `false`, `"strict"`, or `"true"`/`"false"`),
 * `_source` (`enabled`, `includes`, `excludes`) and `properties`. Per field: `type` (one of the
 * mapping field types; `object` when omitted and `properties` is given), and the parameters of
 * PARAMETER_TYPES by type (`fields` are multi-fields: no dots in their names, no `inplace`,
 * `copy_to` or nested `fields`); `scaled_float` requires `scaling_factor`; a `null_value` must
 * fit the field's type; `ignore_malformed` is a boolean on numeric, date, ip and geo_point
 * fields; `index_prefixes` (`min_chars` 1..`max_chars`, `max_chars` ≤ 19), `index_phrases`,
 * `index_options` and `term_vector` are kept on text fields (Trove always indexes positions); `doc_values` on `binary` (off by default) gives it a column. Anything else is a mapper_parsing error
 * naming the parameter and the field, and so is a field or multi-field name with a reserved
 * segment (`__proto__`, `constructor`, `prototype`; see limits.ts). Field names containing dots
 * expand into objects, as in Elasticsearch: `{"a.b": {"type": "long"}}` is
 * `{"a": {"properties": {"b": {"type": "long"}}}}`. Range types take `format` (`date_range`),
 * `index`, `store`, `meta` and `doc_values`; an `alias` takes only `path`, which must name a
 * concrete field of the whole mapping (field-alias.ts; for `partial` bodies, after the merge).
 */
import { EngineError } from '../errors.ts';
import { parseDateFormat } from './date.ts';
import { cloneJson, getOwn, isPlainObject, previewJson, setKey, type JsonObject } from './json-value.ts';
import { assertDepth, assertNotReserved, assertValidFieldName, checkMappingLimits, METADATA_FIELDS } from './limits.ts';
import { flattenMapping, IGNORE_MALFORMED_TYPES, type AnalyzerName, type DynamicPolicy, type FieldMapping, type FieldType, type Mapping, type SourceOptions } from './mapping.ts';
import { checkFieldValue } from './parse-document.ts';
import { mergeFieldInto } from './merge.ts';
import { checkFieldAliases } from './field-alias.ts';
import { readDynamicTemplates } from './dynamic-templates.ts';

/** Mapping merge for `PUT _mapping` (implemented in merge.ts, offered here beside validation). */
export { mergeMappings } from './merge.ts';
/** Date parsing (implemented in date.ts, offered here beside validation). */
export { parseDate } from './date.ts';

/** Every field type, so that a type added to `FieldType` must be added here too. */
const FIELD_TYPES: Record<FieldType, true> = {
  text: true,
  match_only_text: true,
  keyword: true,
  wildcard: true,
  long: true,
  integer: true,
  short: true,
  byte: true,
  unsigned_long: true,
  double: true,
  float: true,
  half_float: true,
  scaled_float: true,
  boolean: true,
  date: true,
  date_nanos: true,
  ip: true,
  binary: true,
  geo_point: true,
  flattened: true,
  flat_object: true,
  integer_range: true,
  long_range: true,
  float_range: true,
  double_range: true,
  date_range: true,
  ip_range: true,
  alias: true,
  token_count: true,
  object: true,
  nested: true,
};

/** Every analyzer the analysis module provides. */
const ANALYZERS: Record<AnalyzerName, true> = { standard: true, english: true, keyword: true, whitespace: true };

/** The types that take mapping parameters (an alias takes only `path`). */
const LEAF_TYPES = (Object.keys(FIELD_TYPES) as FieldType[]).filter((type) => type !== 'object' && type !== 'nested' && type !== 'alias');
const RANGE_TYPES: FieldType[] = ['integer_range', 'long_range', 'float_range', 'double_range', 'date_range', 'ip_range'];
const except = (...excluded: FieldType[]): ReadonlySet<FieldType> => new Set(LEAF_TYPES.filter((type) => !excluded.includes(type)));

/** Field parameters and the types that accept each. */
const PARAMETER_TYPES: Record<string, ReadonlySet<FieldType>> = {
  analyzer: new Set(['text', 'match_only_text', 'token_count']),
  enable_position_increments: new Set(['token_count']),
  fielddata: new Set(['text', 'match_only_text']),
  ignore_above: new Set(['keyword', 'wildcard', 'flattened', 'flat_object']),
  inplace: new Set(['long', 'integer', 'double', 'float', 'boolean', 'date']),
  fields: except('binary', 'flattened', 'flat_object', 'geo_point', ...RANGE_TYPES),
  properties: new Set(['object', 'nested']),
  include_in_parent: new Set(['nested']),
  include_in_root: new Set(['nested']),
  scaling_factor: new Set(['scaled_float']),
  format: new Set(['date', 'date_nanos', 'date_range']),
  store: except(),
  meta: except(),
  index: except('binary'),
  doc_values: except('text', 'match_only_text'),
  null_value: except('text', 'match_only_text', 'binary', ...RANGE_TYPES),
  copy_to: except('binary', 'flattened', 'flat_object', 'geo_point', ...RANGE_TYPES),
  ignore_malformed: IGNORE_MALFORMED_TYPES,
  index_prefixes: new Set(['text', 'match_only_text']),
  index_phrases: new Set(['text', 'match_only_text']),
  index_options: new Set(['text']),
  term_vector: new Set(['text']),
  path: new Set(['alias']),
};

/** `index_options` and `term_vector` values Elasticsearch accepts on text fields. */
const INDEX_OPTIONS = ['docs', 'freqs', 'positions', 'offsets'];
const TERM_VECTORS = ['no', 'yes', 'with_positions', 'with_offsets', 'with_positions_offsets', 'with_positions_payloads', 'with_positions_offsets_payloads'];

/** Bounds of `index_prefixes` (as Elasticsearch: 1 ≤ min_chars ≤ max_chars ≤ 19; defaults 2 and 5). */
const PREFIX_CHARS_MIN = 1;
const PREFIX_CHARS_MAX = 19;

/** Parameters a multi-field may not carry. */
const TOP_LEVEL_ONLY = new Set(['inplace', 'fields', 'copy_to']);

/** Most entries of a field's `meta`, and the longest key and value (as Elasticsearch). */
const META_MAX_ENTRIES = 5;
const META_MAX_KEY_LENGTH = 20;
const META_MAX_VALUE_LENGTH = 50;

const SOURCE_KEYS = new Set(['enabled', 'includes', 'excludes']);

/** The keys a mapping's root takes. */
const ROOT_KEYS = new Set(['dynamic', 'properties', '_source', 'dynamic_templates', 'date_detection', 'numeric_detection']);

/**
 * Validates and normalizes a `mappings` body; throws mapper_parsing (or illegal_argument for the
 * total-fields limit). `partial`: the body updates an existing mapping (`PUT _mapping`), so its
 * field aliases are checked once merged (mergeMappings), not here.
 */
export function validateMapping(mapping: unknown, options: { partial?: boolean } = {}): Mapping {
  if (!isPlainObject(mapping)) {
    throw new EngineError('mapper_parsing', `Root mapping definition must be an object, got ${previewJson(mapping)}`);
  }
  const unsupported = Object.keys(mapping).filter((key) => !ROOT_KEYS.has(key));
  if (unsupported.length > 0) {
    const listed = unsupported.map((key) => `[${key} : ${previewJson(mapping[key])}]`).join(', ');
    throw new EngineError('mapper_parsing', `Root mapping definition has unsupported parameters: ${listed}`);
  }
  const result: Mapping = { properties: {} };
  if (Object.hasOwn(mapping, 'dynamic')) result.dynamic = parseDynamicPolicy(mapping.dynamic);
  if (Object.hasOwn(mapping, '_source')) result._source = parseSourceOptions(mapping._source);
  if (Object.hasOwn(mapping, 'dynamic_templates')) result.dynamic_templates = readDynamicTemplates(mapping.dynamic_templates, parseFieldDefinition);
  for (const key of ['date_detection', 'numeric_detection'] as const) {
    if (!Object.hasOwn(mapping, key)) continue;
    const value = mapping[key] === 'true' ? true : mapping[key] === 'false' ? false : mapping[key];
    if (typeof value !== 'boolean') throw new EngineError('mapper_parsing', `[${key}] must be a boolean, got ${previewJson(mapping[key])}`);
    result[key] = value;
  }
  const properties = getOwn(mapping, 'properties');
  if (properties !== undefined) {
    if (!isPlainObject(properties)) {
      throw new EngineError('mapper_parsing', `[properties] must be an object, got ${previewJson(properties)}`);
    }
    for (const name of Object.keys(properties)) {
      const rootName = name.split('.')[0] ?? name;
      if (METADATA_FIELDS.has(rootName)) {
        throw new EngineError('mapper_parsing', `Field [${rootName}] is a metadata field and cannot be mapped`);
      }
    }
    result.properties = parseProperties(properties, '', 1);
  }
  checkMappingLimits(result);
  if (options.partial !== true) checkFieldAliases(result);
  return result;
}

function parseSourceOptions(raw: unknown): SourceOptions {
  if (!isPlainObject(raw)) throw new EngineError('mapper_parsing', `[_source] must be an object, got ${previewJson(raw)}`);
  const options: SourceOptions = {};
  for (const key of Object.keys(raw)) {
    if (!SOURCE_KEYS.has(key)) throw new EngineError('mapper_parsing', `unknown parameter [${key}] on mapper [_source] of type [_source]`);
    const value = raw[key];
    if (key === 'enabled') {
      if (typeof value !== 'boolean') throw new EngineError('mapper_parsing', `[_source.enabled] must be a boolean, got ${previewJson(value)}`);
      options.enabled = value;
    } else {
      const list = typeof value === 'string' ? [value] : value;
      if (!Array.isArray(list) || !list.every((entry) => typeof entry === 'string' && entry !== '')) {
        throw new EngineError('mapper_parsing', `[_source.${key}] must be a list of field paths, got ${previewJson(value)}`);
      }
      options[key as 'includes' | 'excludes'] = list as string[];
    }
  }
  return options;
}

function parseDynamicPolicy(value: unknown): DynamicPolicy {
  if (value === true || value === 'true') return true;
  if (value === false || value === 'false') return false;
  if (value === 'strict' || value === 'strict_allow_templates') return value;
  throw new EngineError('mapper_parsing', `[dynamic] must be one of [true, false, strict, strict_allow_templates], got ${previewJson(value)}`);
}

/** Parses the children of an object (or the root); `depth` is the depth of those children. */
function parseProperties(raw: JsonObject, parentPath: string, depth: number): Record<string, FieldMapping> {
  const properties: Record<string, FieldMapping> = {};
  for (const name of Object.keys(raw)) {
    assertValidFieldName(name, parentPath);
    const segments = name.split('.');
    const path = parentPath === '' ? name : `${parentPath}.${name}`;
    const fieldDepth = depth + segments.length - 1;
    assertDepth(path, fieldDepth);
    let field = parseField(raw[name], path, fieldDepth, false);
    for (let segment = segments.length - 1; segment > 0; segment--) {
      const wrapper: FieldMapping = { type: 'object', properties: {} };
      setKey(wrapper.properties as JsonObject, segments[segment] as string, field);
      field = wrapper;
    }
    const head = segments[0] as string;
    mergeFieldInto(properties, head, field, parentPath === '' ? head : `${parentPath}.${head}`, 'mapper_parsing');
  }
  return properties;
}

/** One field definition at a dotted path, checked as in a mappings body (dynamic templates' mappings). */
export function parseFieldDefinition(raw: unknown, path: string): FieldMapping {
  return parseField(raw, path, path.split('.').length, false);
}

function parseField(raw: unknown, path: string, depth: number, isMultiField: boolean): FieldMapping {
  if (!isPlainObject(raw)) {
    throw new EngineError('mapper_parsing', `Expected an object for property [${path}], got ${previewJson(raw)}`);
  }
  const declared = getOwn(raw, 'type') ?? (Object.hasOwn(raw, 'properties') ? 'object' : undefined);
  if (declared === undefined) throw new EngineError('mapper_parsing', `No type specified for field [${path}]`);
  if (typeof declared !== 'string' || !Object.hasOwn(FIELD_TYPES, declared)) {
    throw new EngineError('mapper_parsing', `No handler for type [${String(declared)}] declared on field [${path}]`);
  }
  const type = declared as FieldType;
  if (isMultiField && (type === 'object' || type === 'nested' || type === 'geo_point' || type === 'alias' || RANGE_TYPES.includes(type))) {
    throw new EngineError('mapper_parsing', `multi-field [${path}] cannot be of type [${type}]`);
  }
  const field: FieldMapping = { type };
  for (const parameter of Object.keys(raw)) {
    if (parameter === 'type') continue;
    const value = raw[parameter];
    if (type === 'alias' && parameter !== 'path') {
      throw new EngineError('mapper_parsing', `Mapping definition for [${path}] has unsupported parameters:  [${parameter} : ${previewJson(value)}]`);
    }
    const allowedTypes = Object.hasOwn(PARAMETER_TYPES, parameter) ? PARAMETER_TYPES[parameter] : undefined;
    if (allowedTypes === undefined) {
      throw new EngineError('mapper_parsing', `unknown parameter [${parameter}] on mapper [${path}] of type [${type}]`);
    }
    if (!allowedTypes.has(type)) {
      throw new EngineError('mapper_parsing', `[${parameter}] is not allowed on field [${path}] of type [${type}]`);
    }
    if (isMultiField && TOP_LEVEL_ONLY.has(parameter)) {
      throw new EngineError('mapper_parsing', `[${parameter}] is not allowed on multi-field [${path}]`);
    }
    applyParameter(field, parameter, value, path, depth);
  }
  if (type === 'token_count' && field.analyzer === undefined) {
    throw new EngineError('mapper_parsing', `Analyzer must be set for field [${path}] but wasn't.`);
  }
  if (type === 'alias' && field.path === undefined) {
    throw new EngineError('mapper_parsing', `The [path] property must be specified for field [${path}].`);
  }
  if (type === 'scaled_float' && field.scaling_factor === undefined) {
    throw new EngineError('mapper_parsing', `Field [scaling_factor] is required for field [${path}] of type [scaled_float]`);
  }
  if (field.null_value !== undefined) checkNullValue(field, path);
  return field;
}

/** A `null_value` must be a value of the field's type (checked once the whole field is read, for `format`). */
function checkNullValue(field: FieldMapping, path: string): void {
  const flat = flattenMapping({ properties: { field } }).get('field')!;
  try {
    checkFieldValue('field', field.null_value, new Map([['field', { ...flat, nullValue: undefined }]]));
  } catch (error) {
    throw new EngineError('mapper_parsing', `[null_value] of field [${path}] does not fit its type: ${(error as Error).message}`);
  }
}

function readBooleanParameter(parameter: string, value: unknown, path: string): boolean {
  if (typeof value !== 'boolean') {
    throw new EngineError('mapper_parsing', `[${parameter}] on field [${path}] must be a boolean, got ${previewJson(value)}`);
  }
  return value;
}

function applyParameter(field: FieldMapping, parameter: string, value: unknown, path: string, depth: number): void {
  switch (parameter) {
    case 'analyzer': {
      if (typeof value !== 'string' || !Object.hasOwn(ANALYZERS, value)) {
        const name = typeof value === 'string' ? value : previewJson(value);
        throw new EngineError('mapper_parsing', `analyzer [${name}] has not been configured in mappings (field [${path}])`);
      }
      field.analyzer = value as AnalyzerName;
      return;
    }
    case 'ignore_above':
      if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) {
        throw new EngineError(
          'mapper_parsing',
          `[ignore_above] on field [${path}] must be a non-negative integer, got ${previewJson(value)}`,
        );
      }
      field.ignore_above = value;
      return;
    case 'inplace':
      if (readBooleanParameter(parameter, value, path)) field.inplace = true;
      return;
    case 'enable_position_increments':
      field.enable_position_increments = readBooleanParameter(parameter, value, path);
      return;
    case 'fielddata':
      field.fielddata = readBooleanParameter(parameter, value, path);
      return;
    case 'store':
    case 'index':
    case 'doc_values':
    case 'ignore_malformed':
    case 'index_phrases':
      field[parameter] = readBooleanParameter(parameter, value, path);
      return;
    case 'index_prefixes':
      field.index_prefixes = parseIndexPrefixes(value, path);
      return;
    case 'index_options':
    case 'term_vector': {
      const allowed = parameter === 'index_options' ? INDEX_OPTIONS : TERM_VECTORS;
      if (typeof value !== 'string' || !allowed.includes(value)) {
        throw new EngineError('mapper_parsing', `Unknown value [${String(value)}] for field [${parameter}] of [${path}]: expected one of [${allowed.join(', ')}]`);
      }
      field[parameter] = value;
      return;
    }
    case 'scaling_factor': {
      // A numeric string (`"100.0"`) is read as its number, as Elasticsearch does.
      const factor = typeof value === 'string' && value.trim() !== '' ? Number(value) : value;
      if (typeof factor !== 'number' || !Number.isFinite(factor) || factor <= 0) {
        throw new EngineError('mapper_parsing', `[scaling_factor] on field [${path}] must be a positive finite number, got ${previewJson(value)}`);
      }
      field.scaling_factor = factor;
      return;
    }
    case 'format':
      if (typeof value !== 'string' || value.split('||').some((part) => part === '')) {
        throw new EngineError('mapper_parsing', `[format] on field [${path}] must be a non-empty string of formats separated by ||, got ${previewJson(value)}`);
      }
      for (const part of value.split('||')) parseDateFormat(part, path);
      field.format = value;
      return;
    case 'meta':
      field.meta = parseMeta(value, path);
      return;
    case 'path':
      if (typeof value !== 'string' || value === '') {
        throw new EngineError('mapper_parsing', `[path] on field alias [${path}] must be a field path, got ${previewJson(value)}`);
      }
      field.path = value;
      return;
    case 'null_value':
      if (value !== null) field.null_value = cloneJson(value);
      return;
    case 'copy_to': {
      const targets = typeof value === 'string' ? [value] : value;
      if (!Array.isArray(targets) || !targets.every((target) => typeof target === 'string' && target !== '')) {
        throw new EngineError('mapper_parsing', `[copy_to] on field [${path}] must be a field name or a list of them, got ${previewJson(value)}`);
      }
      for (const target of targets as string[]) {
        assertNotReserved(target);
        if (target === path) throw new EngineError('mapper_parsing', `[copy_to] on field [${path}] cannot name the field itself`);
      }
      field.copy_to = [...new Set(targets as string[])];
      return;
    }
    case 'fields':
      field.fields = parseMultiFields(value, path, depth);
      return;
    case 'include_in_parent':
    case 'include_in_root':
      field[parameter] = readBooleanParameter(parameter, value, path);
      return;
    case 'properties':
      if (!isPlainObject(value)) {
        throw new EngineError('mapper_parsing', `[properties] of field [${path}] must be an object, got ${previewJson(value)}`);
      }
      field.properties = parseProperties(value, path, depth + 1);
      return;
  }
}

/** `index_prefixes`: an object with optional integer `min_chars` and `max_chars` within the Elasticsearch bounds. */
function parseIndexPrefixes(raw: unknown, path: string): { min_chars?: number; max_chars?: number } {
  if (!isPlainObject(raw)) throw new EngineError('mapper_parsing', `[index_prefixes] on field [${path}] must be an object, got ${previewJson(raw)}`);
  const prefixes: { min_chars?: number; max_chars?: number } = {};
  for (const key of Object.keys(raw)) {
    const value = raw[key];
    if (key !== 'min_chars' && key !== 'max_chars') {
      throw new EngineError('mapper_parsing', `unknown parameter [${key}] in [index_prefixes] of field [${path}]`);
    }
    if (typeof value !== 'number' || !Number.isInteger(value)) {
      throw new EngineError('mapper_parsing', `[index_prefixes.${key}] on field [${path}] must be an integer, got ${previewJson(value)}`);
    }
    prefixes[key] = value;
  }
  const min = prefixes.min_chars ?? 2;
  const max = prefixes.max_chars ?? 5;
  if (min < PREFIX_CHARS_MIN) throw new EngineError('mapper_parsing', `min_chars [${min}] must be greater than zero (field [${path}])`);
  if (max > PREFIX_CHARS_MAX) throw new EngineError('mapper_parsing', `max_chars [${max}] must be less than 20 (field [${path}])`);
  if (min > max) throw new EngineError('mapper_parsing', `min_chars [${min}] must be less than max_chars [${max}] (field [${path}])`);
  return prefixes;
}

function parseMeta(raw: unknown, path: string): Record<string, string> {
  if (!isPlainObject(raw)) throw new EngineError('mapper_parsing', `[meta] on field [${path}] must be an object, got ${previewJson(raw)}`);
  const keys = Object.keys(raw);
  if (keys.length > META_MAX_ENTRIES) {
    throw new EngineError('mapper_parsing', `[meta] can't have more than ${META_MAX_ENTRIES} entries, but got ${keys.length} on field [${path}]`);
  }
  const meta: Record<string, string> = {};
  for (const key of keys) {
    const value = raw[key];
    if (key.length > META_MAX_KEY_LENGTH) {
      throw new EngineError('mapper_parsing', `[meta] keys can't be longer than ${META_MAX_KEY_LENGTH} chars, but got [${key}] for field [${path}]`);
    }
    if (typeof value !== 'string') {
      throw new EngineError('mapper_parsing', `[meta] values can only be strings, but got ${previewJson(value)} for field [${path}]`);
    }
    if (value.length > META_MAX_VALUE_LENGTH) {
      throw new EngineError('mapper_parsing', `[meta] values can't be longer than ${META_MAX_VALUE_LENGTH} chars, but got [${value}] for field [${path}]`);
    }
    setKey(meta, key, value);
  }
  return meta;
}

function parseMultiFields(raw: unknown, parentPath: string, depth: number): Record<string, FieldMapping> {
  if (!isPlainObject(raw)) {
    throw new EngineError('mapper_parsing', `[fields] of field [${parentPath}] must be an object, got ${previewJson(raw)}`);
  }
  const fields: Record<string, FieldMapping> = {};
  for (const name of Object.keys(raw)) {
    if (name.trim().length === 0 || name.includes('.')) {
      throw new EngineError(
        'mapper_parsing',
        `multi-field name [${name}] of field [${parentPath}] must be non-empty and contain no dots`,
      );
    }
    assertNotReserved(name, `${parentPath}.${name}`);
    setKey(fields, name, parseField(raw[name], `${parentPath}.${name}`, depth, true));
  }
  return fields;
}
