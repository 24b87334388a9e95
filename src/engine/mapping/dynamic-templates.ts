/**
 * Dynamic templates (`mappings.dynamic_templates`): an ordered list of named rules choosing the
 * mapping of a field that dynamic mapping introduces. A rule matches on the field's name
 * (`match` / `unmatch`, `*` wildcards, or regular expressions with `match_pattern: regex`), its
 * dotted path (`path_match` / `path_unmatch`, `*` wildcards) and the JSON type of its value
 * (`match_mapping_type`: `string`, `long`, `double`, `boolean`, `date` for strings that look like
 * dates, `object`, or `*`); each condition may be one pattern or a list of them. The first rule
 * that matches gives the mapping, in which `{name}` is replaced by the field's name and
 * `{dynamic_type}` by the type dynamic mapping would pick (`text`, `long`, `double`, `boolean`,
 * `date`, `object`); without a `type` the field takes that type.
 */
import { EngineError } from '../errors.ts';
import { isPlainObject, previewJson, setKey, type JsonObject } from './json-value.ts';
import type { FieldMapping } from './mapping.ts';

/** The JSON types `match_mapping_type` names. */
export const MATCH_MAPPING_TYPES = ['string', 'long', 'double', 'boolean', 'date', 'object', 'binary', '*'] as const;

/** A JSON type `match_mapping_type` names. */
export type MatchMappingType = (typeof MATCH_MAPPING_TYPES)[number];

/** The conditions and mapping of one dynamic template, as given (shown back by GET _mapping). */
export interface DynamicTemplateBody {
  match?: string | string[];
  unmatch?: string | string[];
  path_match?: string | string[];
  path_unmatch?: string | string[];
  match_mapping_type?: MatchMappingType | MatchMappingType[];
  match_pattern?: 'simple' | 'regex';
  mapping: JsonObject;
}

/** One entry of `dynamic_templates`: `{name: body}`. */
export type DynamicTemplate = Record<string, DynamicTemplateBody>;

/** The type dynamic mapping picks for each JSON type (`{dynamic_type}`). */
const DYNAMIC_TYPES: Record<Exclude<MatchMappingType, '*'>, string> = {
  string: 'text',
  long: 'long',
  double: 'double',
  boolean: 'boolean',
  date: 'date',
  object: 'object',
  binary: 'binary',
};

const PATTERN_KEYS = ['match', 'unmatch', 'path_match', 'path_unmatch'] as const;
const TEMPLATE_KEYS = new Set<string>([...PATTERN_KEYS, 'match_mapping_type', 'match_pattern', 'mapping']);

/** Reads a field definition (validate.ts's parser), so that a template's mapping is checked like any field. */
export type FieldDefinitionReader = (raw: unknown, path: string) => FieldMapping;

/** Validates `dynamic_templates`; each template's mapping is checked once with sample substitutions. */
export function readDynamicTemplates(raw: unknown, readField: FieldDefinitionReader): DynamicTemplate[] {
  if (!Array.isArray(raw)) throw new EngineError('mapper_parsing', `Dynamic template syntax error. An array of named objects is expected, got ${previewJson(raw)}`);
  const templates: DynamicTemplate[] = [];
  for (const entry of raw) {
    if (!isPlainObject(entry) || Object.keys(entry).length !== 1) {
      throw new EngineError('mapper_parsing', `A dynamic template must be defined with a name, got ${previewJson(entry)}`);
    }
    const name = Object.keys(entry)[0]!;
    const body = entry[name];
    if (!isPlainObject(body)) throw new EngineError('mapper_parsing', `dynamic template [${name}] must be an object, got ${previewJson(body)}`);
    for (const key of Object.keys(body)) {
      if (!TEMPLATE_KEYS.has(key)) throw new EngineError('mapper_parsing', `Illegal dynamic template parameter: [${key}]`);
    }
    for (const key of PATTERN_KEYS) {
      const value = body[key];
      if (value !== undefined && typeof value !== 'string' && !(Array.isArray(value) && value.every((item) => typeof item === 'string'))) {
        throw new EngineError('mapper_parsing', `[${key}] of dynamic template [${name}] must be a string or a list of strings, got ${previewJson(value)}`);
      }
    }
    const types = body.match_mapping_type === undefined ? [] : Array.isArray(body.match_mapping_type) ? body.match_mapping_type : [body.match_mapping_type];
    for (const type of types) {
      if (typeof type !== 'string' || !(MATCH_MAPPING_TYPES as readonly string[]).includes(type)) {
        throw new EngineError('mapper_parsing', `No field type matched on [${String(type)}], possible values are [${MATCH_MAPPING_TYPES.filter((t) => t !== '*').join(', ')}]`);
      }
    }
    if (body.match_pattern !== undefined && body.match_pattern !== 'simple' && body.match_pattern !== 'regex') {
      throw new EngineError('mapper_parsing', `Illegal match_pattern value [${String(body.match_pattern)}] for dynamic template [${name}]`);
    }
    if (body.match_pattern === 'regex') {
      for (const pattern of [body.match, body.unmatch].flat()) {
        if (typeof pattern !== 'string') continue;
        try {
          new RegExp(pattern);
        } catch {
          throw new EngineError('mapper_parsing', `Invalid regular expression [${pattern}] in dynamic template [${name}]`);
        }
      }
    }
    if (!isPlainObject(body.mapping)) throw new EngineError('mapper_parsing', `template [${name}] must have a mapping object, got ${previewJson(body.mapping)}`);
    const sampleType = types.find((type) => type !== '*') ?? 'string';
    try {
      readField(withDefaultType(substitute(body.mapping, `__dynamic__${name}`, DYNAMIC_TYPES[sampleType as Exclude<MatchMappingType, '*'>]) as JsonObject, DYNAMIC_TYPES[sampleType as Exclude<MatchMappingType, '*'>]), `__dynamic__${name}`);
    } catch (error) {
      if (!(error instanceof EngineError)) throw error;
      throw new EngineError(
        'mapper_parsing',
        `dynamic template [${name}] has invalid content [${previewJson(body)}], attempted to validate it with the following match_mapping_type: [${sampleType}], caused by [${error.message}]`,
      );
    }
    templates.push({ [name]: body as unknown as DynamicTemplateBody });
  }
  return templates;
}

/** `current`'s templates with those of `update` replacing same-named ones in place and the others appended (as OpenSearch merges them). */
export function mergeDynamicTemplates(current: readonly DynamicTemplate[] | undefined, update: readonly DynamicTemplate[]): DynamicTemplate[] {
  const merged = [...(current ?? [])];
  for (const template of update) {
    const name = Object.keys(template)[0]!;
    const at = merged.findIndex((existing) => Object.keys(existing)[0] === name);
    if (at >= 0) merged[at] = template;
    else merged.push(template);
  }
  return merged;
}

/** `*` wildcard match of a whole string. */
function simpleMatch(pattern: string, text: string): boolean {
  const parts = pattern.split('*');
  if (parts.length === 1) return pattern === text;
  if (!text.startsWith(parts[0]!) || !text.endsWith(parts[parts.length - 1]!)) return false;
  if (text.length < parts[0]!.length + parts[parts.length - 1]!.length) return false;
  let at = parts[0]!.length;
  const end = text.length - parts[parts.length - 1]!.length;
  for (const part of parts.slice(1, -1)) {
    const found = text.indexOf(part, at);
    if (found < 0 || found + part.length > end) return false;
    at = found + part.length;
  }
  return true;
}

/** Whether any of the patterns (one or a list) matches `text`; `regex`: as regular expressions over the whole text. */
function anyMatches(patterns: string | string[], text: string, regex: boolean): boolean {
  for (const pattern of Array.isArray(patterns) ? patterns : [patterns]) {
    if (regex ? new RegExp(`^(?:${pattern})$`).test(text) : simpleMatch(pattern, text)) return true;
  }
  return false;
}

/** Whether a template applies to a new field. */
function templateMatches(body: DynamicTemplateBody, name: string, path: string, type: Exclude<MatchMappingType, '*'>): boolean {
  const regex = body.match_pattern === 'regex';
  if (body.match !== undefined && !anyMatches(body.match, name, regex)) return false;
  if (body.unmatch !== undefined && anyMatches(body.unmatch, name, regex)) return false;
  if (body.path_match !== undefined && !anyMatches(body.path_match, path, false)) return false;
  if (body.path_unmatch !== undefined && anyMatches(body.path_unmatch, path, false)) return false;
  if (body.match_mapping_type !== undefined) {
    const types = Array.isArray(body.match_mapping_type) ? body.match_mapping_type : [body.match_mapping_type];
    if (!types.includes('*') && !types.includes(type)) return false;
  }
  return true;
}

/** `{name}` and `{dynamic_type}` replaced in every key and string of a template mapping. */
function substitute(value: unknown, name: string, dynamicType: string): unknown {
  if (typeof value === 'string') return value.replaceAll('{name}', name).replaceAll('{dynamic_type}', dynamicType);
  if (Array.isArray(value)) return value.map((item) => substitute(item, name, dynamicType));
  if (!isPlainObject(value)) return value;
  const out: JsonObject = {};
  for (const key of Object.keys(value)) setKey(out, substitute(key, name, dynamicType) as string, substitute(value[key], name, dynamicType));
  return out;
}

/** A template mapping without `type` takes the dynamic type (without `type` but with `properties`, an object). */
function withDefaultType(mapping: JsonObject, dynamicType: string): JsonObject {
  if (mapping.type !== undefined || Object.hasOwn(mapping, 'properties')) return mapping;
  return { type: dynamicType, ...mapping };
}

/**
 * The raw mapping the first matching template gives a new field (`name` its last segment, `path`
 * its dotted path, `type` the JSON type of its value), or null when no template matches.
 */
export function templateMappingFor(templates: readonly DynamicTemplate[] | undefined, name: string, path: string, type: Exclude<MatchMappingType, '*'>): JsonObject | null {
  for (const template of templates ?? []) {
    const body = Object.values(template)[0]!;
    if (!templateMatches(body, name, path, type)) continue;
    return withDefaultType(substitute(body.mapping, name, DYNAMIC_TYPES[type]) as JsonObject, DYNAMIC_TYPES[type]);
  }
  return null;
}
