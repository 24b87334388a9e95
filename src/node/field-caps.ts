/**
 * `_field_caps`: the capabilities of fields across the collections a target selects, in
 * Elasticsearch's shape. Each collection's mapping gives its fields (objects, leaves and
 * multi-fields, by dotted path) with their type, whether they can be queried (`searchable`) and
 * sorted or aggregated (`aggregatable`, from doc values), and their `meta`; the metadata fields
 * every document has come with them. Fields are merged by name and type: where collections give a
 * name different types, each type lists its `indices`; where they disagree on searchable or
 * aggregatable, the entry is false and names the collections that are not. `include_unmapped`
 * adds an `unmapped` entry for the collections lacking a field; an `index_filter` keeps the
 * collections holding at least one matching document.
 */
import type { CollectionMeta } from '../cluster/catalog.ts';
import { EngineError } from '../engine/errors.ts';
import { isPlainObject } from '../engine/mapping/json-value.ts';
import { flatField, flattenMapping, type FieldMapping } from '../engine/mapping/mapping.ts';
import { resolveCollections, type ResolveOptions } from './collections.ts';
import type { NodeContext } from './node-context.ts';

/** One field of one collection. */
interface FieldCapability {
  type: string;
  searchable: boolean;
  aggregatable: boolean;
  meta?: Record<string, string>;
}

/** One type of a field in the response. */
export interface FieldTypeCaps {
  type: string;
  searchable: boolean;
  aggregatable: boolean;
  indices?: string[];
  non_searchable_indices?: string[];
  non_aggregatable_indices?: string[];
  meta?: Record<string, string[]>;
}

/** The response of `_field_caps`. */
export interface FieldCapsResponse {
  indices: string[];
  fields: Record<string, Record<string, FieldTypeCaps>>;
}

/** A parsed `_field_caps` request. */
export interface FieldCapsRequest {
  /** Names or `*` patterns. */
  fields: string[];
  includeUnmapped: boolean;
  /** Query DSL: only collections with a document it matches answer. */
  indexFilter?: Record<string, unknown>;
}

/** Whether a collection holds a document the query matches (a count of the collection). */
export type CollectionMatcher = (collection: string, query: Record<string, unknown>) => Promise<boolean>;

/** The metadata fields of every collection, as Elasticsearch reports them. */
const METADATA_FIELDS: readonly FieldCapability[] = [
  { type: '_id', searchable: true, aggregatable: true },
  { type: '_index', searchable: true, aggregatable: true },
  { type: '_routing', searchable: true, aggregatable: false },
  { type: '_seq_no', searchable: true, aggregatable: true },
  { type: '_version', searchable: false, aggregatable: true },
  { type: '_source', searchable: false, aggregatable: false },
  { type: '_field_names', searchable: true, aggregatable: false },
  { type: '_ignored', searchable: true, aggregatable: false },
];

/** Most names or patterns one request may list. */
const MAX_FIELD_PATTERNS = 1024;

/** Parses `fields` (query string, comma list) and the body (`fields`, `index_filter`); no field at all is ES's validation error. */
export function parseFieldCapsRequest(queryFields: string | undefined, includeUnmapped: boolean, body: unknown): FieldCapsRequest {
  const fields = splitFields(queryFields);
  let indexFilter: Record<string, unknown> | undefined;
  if (body !== undefined && body !== null) {
    if (!isPlainObject(body)) throw new EngineError('parsing', 'the _field_caps body must be a JSON object');
    for (const [key, value] of Object.entries(body)) {
      if (key === 'fields') {
        if (typeof value === 'string') fields.push(...splitFields(value));
        else if (Array.isArray(value) && value.every((field) => typeof field === 'string')) fields.push(...value.flatMap((field: string) => splitFields(field)));
        else throw new EngineError('parsing', '[fields] must be a string or an array of strings');
      } else if (key === 'index_filter') {
        if (!isPlainObject(value)) throw new EngineError('parsing', '[index_filter] must be a query object');
        indexFilter = value;
      } else {
        throw new EngineError('parsing', `[field_caps_request] unknown field [${key}]`);
      }
    }
  }
  if (fields.length === 0) throw new EngineError('action_request_validation', 'Validation Failed: 1: no fields specified;');
  if (fields.length > MAX_FIELD_PATTERNS) throw new EngineError('illegal_argument', `[fields] lists ${fields.length} names, more than ${MAX_FIELD_PATTERNS}`);
  return indexFilter === undefined ? { fields, includeUnmapped } : { fields, includeUnmapped, indexFilter };
}

function splitFields(list: string | undefined): string[] {
  if (list === undefined) return [];
  return list
    .split(',')
    .map((field) => field.trim())
    .filter((field) => field !== '');
}

/** The capabilities of the fields `request` names in the collections `target` selects. */
export async function fieldCapabilities(
  context: NodeContext,
  target: string,
  request: FieldCapsRequest,
  matches: CollectionMatcher,
  options: ResolveOptions = {},
): Promise<FieldCapsResponse> {
  const collections = resolveCollections(context, target, options)
    .map((hosted) => hosted.meta)
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const selected: CollectionMeta[] = [];
  for (const meta of collections) {
    if (request.indexFilter === undefined || (await matches(meta.name, request.indexFilter))) selected.push(meta);
  }
  const matchers = request.fields.map(fieldMatcher);
  const wanted = (name: string): boolean => matchers.some((match) => match(name));
  const perCollection = selected.map((meta) => ({ name: meta.name, fields: collectionFields(meta, wanted) }));
  const names = new Set<string>();
  for (const { fields } of perCollection) for (const name of fields.keys()) names.add(name);
  const fields: FieldCapsResponse['fields'] = {};
  for (const name of [...names].sort()) {
    const byType = new Map<string, Array<{ index: string; capability: FieldCapability }>>();
    const unmapped: string[] = [];
    for (const { name: index, fields: mapped } of perCollection) {
      const capability = mapped.get(name);
      if (capability === undefined) {
        unmapped.push(index);
        continue;
      }
      const group = byType.get(capability.type) ?? [];
      group.push({ index, capability });
      byType.set(capability.type, group);
    }
    if (request.includeUnmapped && unmapped.length > 0) {
      byType.set('unmapped', unmapped.map((index) => ({ index, capability: { type: 'unmapped', searchable: false, aggregatable: false } })));
    }
    const entry: Record<string, FieldTypeCaps> = {};
    for (const [type, group] of [...byType].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) entry[type] = mergeType(type, group, byType.size > 1);
    fields[name] = entry;
  }
  return { indices: selected.map((meta) => meta.name), fields };
}

/** One type's entry over the collections that give the field that type. */
function mergeType(type: string, group: ReadonlyArray<{ index: string; capability: FieldCapability }>, withIndices: boolean): FieldTypeCaps {
  const searchable = group.every(({ capability }) => capability.searchable);
  const aggregatable = group.every(({ capability }) => capability.aggregatable);
  const caps: FieldTypeCaps = { type, searchable, aggregatable };
  if (withIndices) caps.indices = group.map(({ index }) => index);
  if (!searchable && group.some(({ capability }) => capability.searchable)) {
    caps.non_searchable_indices = group.filter(({ capability }) => !capability.searchable).map(({ index }) => index);
  }
  if (!aggregatable && group.some(({ capability }) => capability.aggregatable)) {
    caps.non_aggregatable_indices = group.filter(({ capability }) => !capability.aggregatable).map(({ index }) => index);
  }
  const meta = new Map<string, Set<string>>();
  for (const { capability } of group) {
    for (const [key, value] of Object.entries(capability.meta ?? {})) {
      const values = meta.get(key) ?? new Set<string>();
      values.add(value);
      meta.set(key, values);
    }
  }
  if (meta.size > 0) caps.meta = Object.fromEntries([...meta].sort(([a], [b]) => (a < b ? -1 : 1)).map(([key, values]) => [key, [...values].sort()]));
  return caps;
}

/** A field name or `*` pattern as a predicate. */
function fieldMatcher(pattern: string): (name: string) => boolean {
  if (!pattern.includes('*')) return (name) => name === pattern;
  const parts = pattern.split('*');
  return (name) => {
    if (!name.startsWith(parts[0]!) || !name.endsWith(parts[parts.length - 1]!)) return false;
    if (name.length < parts[0]!.length + parts[parts.length - 1]!.length) return false;
    let at = parts[0]!.length;
    const end = name.length - parts[parts.length - 1]!.length;
    for (const part of parts.slice(1, -1)) {
      const found = name.indexOf(part, at);
      if (found === -1 || found + part.length > end) return false;
      at = found + part.length;
    }
    return true;
  };
}

/** The fields of one collection that `wanted` accepts, by dotted path: metadata fields, objects, leaves and multi-fields. */
function collectionFields(meta: CollectionMeta, wanted: (name: string) => boolean): Map<string, FieldCapability> {
  const out = new Map<string, FieldCapability>();
  for (const capability of METADATA_FIELDS) if (wanted(capability.type)) out.set(capability.type, capability);
  const flat = flattenMapping(meta.mapping);
  // Fields under a `nested` object are not in the flattened mapping (nothing indexes them): their
  // capabilities are read from their own mappings, as OpenSearch reports them.
  const leaf = (path: string, field: FieldMapping, nested: boolean): void => {
    const view = nested && field.type !== 'alias' ? flatField(path, field) : flat.get(path);
    if (view === undefined || !wanted(path)) return;
    // A field alias shows its target's type.
    const capability: FieldCapability = { type: field.type === 'alias' ? view.type : field.type, searchable: view.searchable, aggregatable: view.docValues };
    if (field.meta !== undefined && Object.keys(field.meta).length > 0) capability.meta = field.meta;
    out.set(path, capability);
  };
  const walk = (properties: Record<string, FieldMapping>, prefix: string, nested: boolean): void => {
    for (const [name, field] of Object.entries(properties)) {
      const path = prefix === '' ? name : `${prefix}.${name}`;
      if (field.type === 'object' || field.type === 'nested') {
        if (wanted(path)) out.set(path, { type: field.type, searchable: false, aggregatable: false });
        walk(field.properties ?? {}, path, nested || (field.type === 'nested' && field.include_in_parent !== true && field.include_in_root !== true));
        continue;
      }
      leaf(path, field, nested);
      for (const [sub, subField] of Object.entries(field.fields ?? {})) if (subField.type !== 'object') leaf(`${path}.${sub}`, subField, nested);
    }
  };
  walk(meta.mapping.properties, '', false);
  return out;
}
