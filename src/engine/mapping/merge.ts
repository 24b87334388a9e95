/**
 * Merging mappings (`PUT /{collection}/_mapping`): new fields are added, existing fields keep
 * their type, analyzer and `inplace` flag. As in Elasticsearch, a parameter left out of the
 * update means its default, so re-sending a field without its analyzer conflicts when the field
 * has a non-default one. `index`, `doc_values`, `store`, `scaling_factor`, `format`,
 * `null_value`, `index_prefixes` and `index_phrases` may not change either; `ignore_above`,
 * `meta`, `copy_to` and `ignore_malformed` may (the update's
 * value, or none, wins); multi-fields and object properties merge recursively; `dynamic` and the
 * root `_source` change only when given.
 */
import { EngineError, type EngineErrorCode } from '../errors.ts';
import { cloneJson, getOwn, setKey } from './json-value.ts';
import { checkMappingLimits } from './limits.ts';
import { checkFieldAliases } from './field-alias.ts';
import { mergeDynamicTemplates } from './dynamic-templates.ts';
import type { FieldMapping, Mapping } from './mapping.ts';

/** `current` extended by `update` (both validated); throws illegal_argument on a conflicting change. */
export function mergeMappings(current: Mapping, update: Mapping): Mapping {
  const merged: Mapping = { ...current, properties: cloneJson(current.properties) };
  if (update.dynamic !== undefined) merged.dynamic = update.dynamic;
  if (update.date_detection !== undefined) merged.date_detection = update.date_detection;
  if (update.numeric_detection !== undefined) merged.numeric_detection = update.numeric_detection;
  if (update.dynamic_templates !== undefined) merged.dynamic_templates = mergeDynamicTemplates(current.dynamic_templates, update.dynamic_templates);
  if (update._source !== undefined) {
    const before = current._source?.enabled !== false;
    const after = update._source.enabled !== false;
    if (before !== after) {
      throw new EngineError('illegal_argument', `Cannot update parameter [enabled] from [${before}] to [${after}] (mapper [_source])`);
    }
    merged._source = cloneJson(update._source);
  }
  for (const name of Object.keys(update.properties)) {
    mergeFieldInto(merged.properties, name, cloneJson(update.properties[name] as FieldMapping), name, 'illegal_argument');
  }
  checkMappingLimits(merged);
  checkFieldAliases(merged);
  return merged;
}

/**
 * Adds `incoming` under `name` in `properties`, or merges it into the field already there
 * (mutating that field); a conflict throws with `code`.
 */
export function mergeFieldInto(
  properties: Record<string, FieldMapping>,
  name: string,
  incoming: FieldMapping,
  path: string,
  code: EngineErrorCode,
): void {
  const existing = getOwn(properties, name) as FieldMapping | undefined;
  if (existing === undefined) {
    setKey(properties, name, incoming);
    return;
  }
  if (existing.type !== incoming.type) {
    throw new EngineError(code, `mapper [${path}] cannot be changed from type [${existing.type}] to [${incoming.type}]`);
  }
  if (existing.type === 'alias') {
    existing.path = incoming.path;
    return;
  }
  if (existing.type === 'nested') {
    checkUnchanged(path, 'include_in_parent', existing.include_in_parent === true, incoming.include_in_parent === true, code);
    checkUnchanged(path, 'include_in_root', existing.include_in_root === true, incoming.include_in_root === true, code);
  }
  if (existing.type === 'object' || existing.type === 'nested') {
    const children = incoming.properties ?? {};
    if (existing.properties === undefined) existing.properties = {};
    for (const child of Object.keys(children)) {
      mergeFieldInto(existing.properties, child, children[child] as FieldMapping, `${path}.${child}`, code);
    }
    return;
  }
  const defaultAnalyzer = existing.type === 'text' ? 'standard' : 'keyword';
  checkUnchanged(path, 'analyzer', existing.analyzer ?? defaultAnalyzer, incoming.analyzer ?? defaultAnalyzer, code);
  checkUnchanged(path, 'inplace', existing.inplace === true, incoming.inplace === true, code);
  checkUnchanged(path, 'index', existing.index !== false, incoming.index !== false, code);
  const docValuesOf = (field: FieldMapping): boolean => (field.type === 'binary' ? field.doc_values === true : field.doc_values !== false);
  checkUnchanged(path, 'doc_values', docValuesOf(existing), docValuesOf(incoming), code);
  checkUnchanged(path, 'index_phrases', existing.index_phrases === true, incoming.index_phrases === true, code);
  checkUnchanged(path, 'index_options', existing.index_options ?? 'positions', incoming.index_options ?? 'positions', code);
  checkUnchanged(path, 'term_vector', existing.term_vector ?? 'no', incoming.term_vector ?? 'no', code);
  checkUnchanged(path, 'index_prefixes', JSON.stringify(existing.index_prefixes ?? null), JSON.stringify(incoming.index_prefixes ?? null), code);
  checkUnchanged(path, 'store', existing.store === true, incoming.store === true, code);
  replaceUpdatable(existing, incoming, 'fielddata');
  checkUnchanged(path, 'scaling_factor', String(existing.scaling_factor), String(incoming.scaling_factor), code);
  checkUnchanged(path, 'format', existing.format ?? 'strict_date_optional_time||epoch_millis', incoming.format ?? 'strict_date_optional_time||epoch_millis', code);
  checkUnchanged(path, 'null_value', JSON.stringify(existing.null_value ?? null), JSON.stringify(incoming.null_value ?? null), code);
  replaceUpdatable(existing, incoming, 'ignore_above');
  replaceUpdatable(existing, incoming, 'meta');
  replaceUpdatable(existing, incoming, 'copy_to');
  replaceUpdatable(existing, incoming, 'ignore_malformed');
  const subFields = incoming.fields ?? {};
  for (const sub of Object.keys(subFields)) {
    if (existing.fields === undefined) existing.fields = {};
    mergeFieldInto(existing.fields, sub, subFields[sub] as FieldMapping, `${path}.${sub}`, code);
  }
}

/** Sets an updatable parameter to the update's value, or removes it when the update leaves it out. */
function replaceUpdatable<K extends 'ignore_above' | 'meta' | 'copy_to' | 'ignore_malformed' | 'fielddata'>(existing: FieldMapping, incoming: FieldMapping, parameter: K): void {
  if (incoming[parameter] === undefined) delete existing[parameter];
  else existing[parameter] = incoming[parameter];
}

function checkUnchanged(
  path: string,
  parameter: string,
  before: string | boolean,
  after: string | boolean,
  code: EngineErrorCode,
): void {
  if (before !== after) {
    throw new EngineError(code, `mapper [${path}] cannot change parameter [${parameter}] from [${before}] to [${after}]`);
  }
}
