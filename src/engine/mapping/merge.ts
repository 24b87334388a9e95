/**
 * Merging mappings (`PUT /{collection}/_mapping`): new fields are added, existing fields keep
 * their type, analyzer and `inplace` flag. As in Elasticsearch, a parameter left out of the
 * update means its default, so re-sending a field without its analyzer conflicts when the field
 * has a non-default one. `ignore_above` may change (the update's value, or none, wins);
 * multi-fields and object properties merge recursively; `dynamic` changes only when given.
 */
import { EngineError, type EngineErrorCode } from '../errors.ts';
import { cloneJson, getOwn, setKey } from './json-value.ts';
import { checkMappingLimits } from './limits.ts';
import type { FieldMapping, Mapping } from './mapping.ts';

/** `current` extended by `update` (both validated); throws illegal_argument on a conflicting change. */
export function mergeMappings(current: Mapping, update: Mapping): Mapping {
  const merged: Mapping = { ...current, properties: cloneJson(current.properties) };
  if (update.dynamic !== undefined) merged.dynamic = update.dynamic;
  for (const name of Object.keys(update.properties)) {
    mergeFieldInto(merged.properties, name, cloneJson(update.properties[name] as FieldMapping), name, 'illegal_argument');
  }
  checkMappingLimits(merged);
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
  if (existing.type === 'object') {
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
  if (incoming.ignore_above === undefined) delete existing.ignore_above;
  else existing.ignore_above = incoming.ignore_above;
  const subFields = incoming.fields ?? {};
  for (const sub of Object.keys(subFields)) {
    if (existing.fields === undefined) existing.fields = {};
    mergeFieldInto(existing.fields, sub, subFields[sub] as FieldMapping, `${path}.${sub}`, code);
  }
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
