/**
 * Dynamic mapping: the fields a document introduces, typed the way Elasticsearch types them.
 *
 * - string → `date` when it is an ISO 8601 date with at least year-month-day, else `text` with a
 *   `keyword` multi-field (`ignore_above: 256`);
 * - integer number → `long` (`double` beyond the long range), other number → `double`
 *   (Elasticsearch picks `float`; Trove keeps the precision). JSON `1.0` parses to the integer 1,
 *   so it maps as `long`;
 * - boolean → `boolean`; object → `object` with its children; arrays take the type of their first
 *   non-null element; nulls and empty arrays introduce nothing.
 *
 * Dotted keys expand into objects (`{"a.b": 1}` maps `a` as an object with `b`). A new field name
 * with a reserved segment (`__proto__`, `constructor`, `prototype`) is refused. The mapping's
 * `dynamic_templates` (dynamic-templates.ts) come first: the first that matches a new field gives
 * its mapping. Only the root
 * `dynamic` policy exists: `true` (default) adds, `false` ignores (the values stay in `_source`,
 * unindexed), `strict` rejects the document.
 */
import { EngineError } from '../errors.ts';
import { looksLikeIsoDate } from './date.ts';
import { cloneJson, getOwn, isPlainObject, setKey, type JsonObject } from './json-value.ts';
import { assertDepth, assertNotMetadataField, assertValidFieldName, checkMappingLimits } from './limits.ts';
import type { DynamicPolicy, FieldMapping, Mapping } from './mapping.ts';
import { templateMappingFor, type DynamicTemplate, type MatchMappingType } from './dynamic-templates.ts';
import { parseFieldDefinition } from './validate.ts';
import { checkFieldAliases } from './field-alias.ts';

/** Longest keyword the dynamic `.keyword` multi-field indexes, as in Elasticsearch. */
export const DYNAMIC_KEYWORD_IGNORE_ABOVE = 256;

/** 2^63 (the float64 nearest to 2^63-1): integers beyond it do not fit a `long` and map as `double`. */
const LONG_LIMIT = 9_223_372_036_854_775_808;

/** What one walk over a document does with unknown fields. */
interface WalkState {
  policy: DynamicPolicy;
  /** False for the read-only detection pass; true for the pass that adds fields. */
  add: boolean;
  /** Set by the detection pass when some field is new. */
  found: boolean;
  /** The mapping's dynamic templates (the first that matches a new field maps it). */
  templates?: readonly DynamicTemplate[];
  /** Whether strings that look like dates map as dates (`date_detection`), and numeric strings as numbers (`numeric_detection`). */
  detection?: Detection;
}

/** The root `date_detection` and `numeric_detection` of a mapping. */
interface Detection {
  dates: boolean;
  numbers: boolean;
}

const INTEGER_STRING = /^[+-]?\d+$/;
const DECIMAL_STRING = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$/;

/**
 * The mapping extended with the fields `source` introduces, or null when it introduces none (or
 * the policy is `dynamic: false`). Throws strict_dynamic_mapping under `dynamic: strict`, and the
 * limit errors when the new mapping would be too large or too deep.
 */
export function dynamicMappingUpdate(mapping: Mapping, source: Record<string, unknown>): Mapping | null {
  for (const key of Object.keys(source)) assertNotMetadataField(key);
  const policy = mapping.dynamic ?? true;
  const readAs: Detection = { dates: mapping.date_detection !== false, numbers: mapping.numeric_detection === true };
  const detection: WalkState = { policy, add: false, found: false, templates: mapping.dynamic_templates, detection: readAs };
  walkObject(mapping.properties, source, '', 1, detection);
  if (!detection.found || policy === false) return null;
  const updated: Mapping = { ...mapping, properties: cloneJson(mapping.properties) };
  walkObject(updated.properties, source, '', 1, { policy, add: true, found: false, templates: mapping.dynamic_templates, detection: readAs });
  checkMappingLimits(updated);
  if (mapping.dynamic_templates !== undefined) checkFieldAliases(updated);
  return updated;
}

/** Walks the keys of one object of the document; `depth` is the depth of its children. */
function walkObject(
  properties: Record<string, FieldMapping>,
  object: JsonObject,
  parentPath: string,
  depth: number,
  state: WalkState,
): void {
  for (const key of Object.keys(object)) {
    walkField(properties, key, object[key], parentPath, depth, state);
    if (state.found) return;
  }
}

function walkField(
  properties: Record<string, FieldMapping>,
  name: string,
  value: unknown,
  parentPath: string,
  depth: number,
  state: WalkState,
): void {
  const dot = name.indexOf('.');
  if (dot > 0 && dot < name.length - 1) {
    // A dotted key is the object path it spells: {"a.b": v} is {"a": {"b": v}}.
    const wrapper: JsonObject = {};
    setKey(wrapper, name.slice(dot + 1), value);
    walkField(properties, name.slice(0, dot), wrapper, parentPath, depth, state);
    return;
  }
  const path = parentPath === '' ? name : `${parentPath}.${name}`;
  const existing = getOwn(properties, name) as FieldMapping | undefined;
  if (existing !== undefined) {
    if (existing.type === 'object' || existing.type === 'nested') walkChildren(existing, value, path, depth, state);
    return;
  }
  const sample = firstNonNull(value);
  if (sample === undefined) return;
  // `strict_allow_templates` refuses a new field as `strict` does unless a dynamic template maps it.
  const allowed = state.policy === 'strict_allow_templates' && templateFieldMapping(jsonTypeOf(sample, state.detection ?? { dates: true, numbers: false }), name, path, state.templates) !== null;
  if ((state.policy === 'strict' || state.policy === 'strict_allow_templates') && !allowed) {
    throw new EngineError(
      'strict_dynamic_mapping',
      `mapping set to ${state.policy}, dynamic introduction of [${name}] within [${parentPath || '_doc'}] is not allowed`,
    );
  }
  if (state.policy === false) return;
  assertValidFieldName(name, parentPath);
  assertDepth(path, depth);
  if (!state.add) {
    state.found = true;
    return;
  }
  const type = jsonTypeOf(sample, state.detection ?? { dates: true, numbers: false });
  const field = templateFieldMapping(type, name, path, state.templates) ?? inferFieldMapping(type);
  setKey(properties, name, field);
  if (field.type === 'object') walkChildren(field, value, path, depth, state);
}

/** Walks every object held by `value` (an object or an array of them) into an object field. */
function walkChildren(field: FieldMapping, value: unknown, path: string, depth: number, state: WalkState): void {
  if (Array.isArray(value)) {
    for (const element of value) {
      walkChildren(field, element, path, depth, state);
      if (state.found) return;
    }
    return;
  }
  if (!isPlainObject(value)) return;
  let properties = field.properties;
  if (properties === undefined) {
    properties = {};
    if (state.add) field.properties = properties;
  }
  walkObject(properties, value, path, depth + 1, state);
}

/** The first value that is not null, looking into (nested) arrays; undefined when there is none. */
function firstNonNull(value: unknown): unknown {
  if (value === null || value === undefined) return undefined;
  if (!Array.isArray(value)) return value;
  for (const element of value) {
    const found = firstNonNull(element);
    if (found !== undefined) return found;
  }
  return undefined;
}

/** The JSON type of a value as `match_mapping_type` names it (strings read as dates or numbers as `detection` allows). */
function jsonTypeOf(sample: unknown, detection: Detection): Exclude<MatchMappingType, '*'> {
  if (typeof sample === 'string') {
    if (detection.dates && looksLikeIsoDate(sample)) return 'date';
    if (detection.numbers && INTEGER_STRING.test(sample) && Math.abs(Number(sample)) <= LONG_LIMIT) return 'long';
    if (detection.numbers && DECIMAL_STRING.test(sample) && Number.isFinite(Number(sample))) return 'double';
    return 'string';
  }
  if (typeof sample === 'number') return Number.isInteger(sample) && Math.abs(sample) <= LONG_LIMIT ? 'long' : 'double';
  if (typeof sample === 'boolean') return 'boolean';
  return 'object';
}

/** The mapping a dynamic template gives a new field, checked like a mappings body; null when no template matches. */
function templateFieldMapping(type: Exclude<MatchMappingType, '*'>, name: string, path: string, templates: readonly DynamicTemplate[] | undefined): FieldMapping | null {
  if (templates === undefined || templates.length === 0) return null;
  const raw = templateMappingFor(templates, name, path, type);
  if (raw === null) return null;
  const field = parseFieldDefinition(raw, path);
  if (field.type === 'object' && field.properties === undefined) field.properties = {};
  return field;
}

/** The mapping dynamic mapping gives a value of a JSON type when no template matches. */
function inferFieldMapping(type: Exclude<MatchMappingType, '*'>): FieldMapping {
  if (type === 'string') return { type: 'text', fields: { keyword: { type: 'keyword', ignore_above: DYNAMIC_KEYWORD_IGNORE_ABOVE } } };
  if (type === 'object') return { type: 'object', properties: {} };
  return { type };
}
