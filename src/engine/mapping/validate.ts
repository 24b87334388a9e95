/**
 * Validation of a user-supplied `mappings` body (`PUT /{collection}`, `PUT /{collection}/_mapping`).
 *
 * Accepted: root keys `dynamic` (`true`, `false`, `"strict"`, or `"true"`/`"false"`) and
 * `properties`. Per field: `type` (one of the mapping field types; `object` when omitted and
 * `properties` is given), and by type: `analyzer` (text), `ignore_above` (keyword), `inplace`
 * (numeric, boolean, date), `fields` (multi-fields, on any leaf; no dots in their names, no
 * `inplace`, no nested `fields`), `properties` (object). Anything else is a mapper_parsing error
 * naming the parameter and the field, and so is a field or multi-field name with a reserved
 * segment (`__proto__`, `constructor`, `prototype`; see limits.ts). Field names containing dots
 * expand into objects, as in Elasticsearch: `{"a.b": {"type": "long"}}` is
 * `{"a": {"properties": {"b": {"type": "long"}}}}`.
 */
import { EngineError } from '../errors.ts';
import { getOwn, isPlainObject, previewJson, setKey, type JsonObject } from './json-value.ts';
import { assertDepth, assertNotReserved, assertValidFieldName, checkMappingLimits, METADATA_FIELDS } from './limits.ts';
import type { AnalyzerName, DynamicPolicy, FieldMapping, FieldType, Mapping } from './mapping.ts';
import { mergeFieldInto } from './merge.ts';

/** Mapping merge for `PUT _mapping` (implemented in merge.ts, offered here beside validation). */
export { mergeMappings } from './merge.ts';
/** Date parsing (implemented in date.ts, offered here beside validation). */
export { parseDate } from './date.ts';

/** Every field type, so that a type added to `FieldType` must be added here too. */
const FIELD_TYPES: Record<FieldType, true> = {
  text: true,
  keyword: true,
  long: true,
  integer: true,
  double: true,
  float: true,
  boolean: true,
  date: true,
  object: true,
};

/** Every analyzer the analysis module provides. */
const ANALYZERS: Record<AnalyzerName, true> = { standard: true, english: true, keyword: true, whitespace: true };

/** Field parameters and the types that accept each. */
const PARAMETER_TYPES: Record<string, ReadonlySet<FieldType>> = {
  analyzer: new Set(['text']),
  ignore_above: new Set(['keyword']),
  inplace: new Set(['long', 'integer', 'double', 'float', 'boolean', 'date']),
  fields: new Set(['text', 'keyword', 'long', 'integer', 'double', 'float', 'boolean', 'date']),
  properties: new Set(['object']),
};

/** Validates and normalizes a `mappings` body; throws mapper_parsing (or illegal_argument for the total-fields limit). */
export function validateMapping(mapping: unknown): Mapping {
  if (!isPlainObject(mapping)) {
    throw new EngineError('mapper_parsing', `Root mapping definition must be an object, got ${previewJson(mapping)}`);
  }
  const unsupported = Object.keys(mapping).filter((key) => key !== 'dynamic' && key !== 'properties');
  if (unsupported.length > 0) {
    const listed = unsupported.map((key) => `[${key} : ${previewJson(mapping[key])}]`).join(', ');
    throw new EngineError('mapper_parsing', `Root mapping definition has unsupported parameters: ${listed}`);
  }
  const result: Mapping = { properties: {} };
  if (Object.hasOwn(mapping, 'dynamic')) result.dynamic = parseDynamicPolicy(mapping.dynamic);
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
  return result;
}

function parseDynamicPolicy(value: unknown): DynamicPolicy {
  if (value === true || value === 'true') return true;
  if (value === false || value === 'false') return false;
  if (value === 'strict') return 'strict';
  throw new EngineError('mapper_parsing', `[dynamic] must be one of [true, false, strict], got ${previewJson(value)}`);
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
  if (isMultiField && type === 'object') {
    throw new EngineError('mapper_parsing', `multi-field [${path}] cannot be of type [object]`);
  }
  const field: FieldMapping = { type };
  for (const parameter of Object.keys(raw)) {
    if (parameter === 'type') continue;
    const value = raw[parameter];
    const allowedTypes = Object.hasOwn(PARAMETER_TYPES, parameter) ? PARAMETER_TYPES[parameter] : undefined;
    if (allowedTypes === undefined) {
      throw new EngineError('mapper_parsing', `unknown parameter [${parameter}] on mapper [${path}] of type [${type}]`);
    }
    if (!allowedTypes.has(type)) {
      throw new EngineError('mapper_parsing', `[${parameter}] is not allowed on field [${path}] of type [${type}]`);
    }
    if (isMultiField && (parameter === 'inplace' || parameter === 'fields')) {
      throw new EngineError('mapper_parsing', `[${parameter}] is not allowed on multi-field [${path}]`);
    }
    applyParameter(field, parameter, value, path, depth);
  }
  return field;
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
      if (typeof value !== 'boolean') {
        throw new EngineError('mapper_parsing', `[inplace] on field [${path}] must be a boolean, got ${previewJson(value)}`);
      }
      if (value) field.inplace = true;
      return;
    case 'fields':
      field.fields = parseMultiFields(value, path, depth);
      return;
    case 'properties':
      if (!isPlainObject(value)) {
        throw new EngineError('mapper_parsing', `[properties] of field [${path}] must be an object, got ${previewJson(value)}`);
      }
      field.properties = parseProperties(value, path, depth + 1);
      return;
  }
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
