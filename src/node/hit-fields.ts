/**
 * The `fields`, `docvalue_fields` and `stored_fields` of a search: per hit, a `fields` object of
 * value arrays read from the document's source under the mapping, as Elasticsearch's fields API
 * does — a multi-field (`title.keyword`) reads its parent's value, values are parsed by the field's
 * type (numbers as numbers, booleans as booleans, keywords as strings), dates print in the
 * request's `format` or as ISO 8601. `docvalue_fields` give what doc values hold (text fields have
 * none: 400): keyword values sorted and deduplicated, numbers sorted. `stored_fields` return the
 * fields mapped `store: true` (the source holds every value); `_none_` leaves out `_id` and
 * `_source` too. Patterns (`*`) select mapped fields.
 */
import { DatePattern } from '../engine/collect/date-pattern.ts';
import { EngineError } from '../engine/errors.ts';
import { DATE_TYPES, FieldMap, type FieldMapping, type FlatField, type Mapping } from '../engine/mapping/mapping.ts';
import { countTokens } from '../engine/mapping/parse-document.ts';
import { columnValue } from '../engine/query/field-queries.ts';
import { WildcardPattern } from '../engine/query/wildcard-pattern.ts';

/** One requested field (or pattern) with its optional date `format`. */
export interface FieldRequest {
  field: string;
  format?: string;
}

/** The hit fields a search asks for. */
export interface HitFieldsSpec {
  fields: FieldRequest[];
  docvalueFields: FieldRequest[];
  /** Null: not given; `none`: `_none_`; else the names and patterns listed. */
  storedFields: null | 'none' | string[];
}

function fieldRequests(value: unknown, name: string): FieldRequest[] {
  if (value === undefined) return [];
  const list = Array.isArray(value) ? value : [value];
  return list.map((entry) => {
    if (typeof entry === 'string') return { field: entry };
    if (entry !== null && typeof entry === 'object' && !Array.isArray(entry) && typeof (entry as { field?: unknown }).field === 'string') {
      const { field, format, ...rest } = entry as { field: string; format?: unknown };
      const unknown = Object.keys(rest).find((key) => key !== 'include_unmapped');
      if (unknown !== undefined) throw new EngineError('parsing', `[${name}] unknown field [${unknown}]`);
      if (format !== undefined && typeof format !== 'string') throw new EngineError('parsing', `[${name}] [format] must be a string`);
      return format === undefined ? { field } : { field, format };
    }
    throw new EngineError('parsing', `[${name}] entries must be a field name or {field, format}`);
  });
}

/**
 * Reads `fields`, `docvalue_fields` and `stored_fields` of a search body; `sourceRequested` says
 * whether `_source` was asked for explicitly. The number of `docvalue_fields` was bounded before,
 * by the searched collections' `index.max_docvalue_fields_search` (parseSearch, index-limits.ts).
 */
export function parseHitFields(body: Record<string, unknown>, sourceRequested: boolean): HitFieldsSpec {
  const docvalueFields = fieldRequests(body.docvalue_fields, 'docvalue_fields');
  let storedFields: HitFieldsSpec['storedFields'] = null;
  if (body.stored_fields !== undefined) {
    const names = Array.isArray(body.stored_fields) ? body.stored_fields : [body.stored_fields];
    if (!names.every((name): name is string => typeof name === 'string')) throw new EngineError('parsing', '[stored_fields] must be a field name or an array of them');
    storedFields = names.length === 1 && names[0] === '_none_' ? 'none' : names;
  }
  const spec: HitFieldsSpec = { fields: fieldRequests(body.fields, 'fields'), docvalueFields, storedFields };
  if (storedFields === 'none') {
    if (sourceRequested) throw new EngineError('illegal_argument', '[stored_fields] cannot be disabled if [_source] is requested');
    if (spec.fields.length > 0) throw new EngineError('illegal_argument', '[stored_fields] cannot be disabled when using the [fields] option');
  }
  return spec;
}

/** Whether the spec needs each hit's source. */
export function hitFieldsNeedSource(spec: HitFieldsSpec): boolean {
  return spec.fields.length > 0 || spec.docvalueFields.length > 0 || (Array.isArray(spec.storedFields) && spec.storedFields.length > 0);
}

/** Values at a dotted path of a source: through nested objects, arrays and dotted keys alike. */
export function sourceValues(source: unknown, path: string): unknown[] {
  const out: unknown[] = [];
  const visit = (node: unknown, segments: readonly string[]): void => {
    if (Array.isArray(node)) {
      for (const element of node) visit(element, segments);
      return;
    }
    if (segments.length === 0) {
      if (node !== null && node !== undefined) out.push(node);
      return;
    }
    if (node === null || typeof node !== 'object') return;
    const object = node as Record<string, unknown>;
    for (let take = 1; take <= segments.length; take++) {
      const key = segments.slice(0, take).join('.');
      if (Object.hasOwn(object, key)) visit(object[key], segments.slice(take));
    }
  };
  visit(source, path.split('.'));
  return out;
}

/** The source values of a mapped field; a multi-field's come from its parent. */
function fieldSourceValues(source: Record<string, unknown>, field: FlatField, fields: ReadonlyMap<string, FlatField>): unknown[] {
  const direct = sourceValues(source, field.path);
  if (direct.length > 0) return direct;
  const dot = field.path.lastIndexOf('.');
  return dot > 0 && fields.has(field.path.slice(0, dot)) ? sourceValues(source, field.path.slice(0, dot)) : [];
}

/** A source value as the field type reads it; null when it does not fit. */
function typedValue(field: FlatField, value: unknown, format: DatePattern | null): unknown {
  if (field.storage === 'text' || field.storage === 'keyword') {
    return typeof value === 'object' ? null : String(value);
  }
  if (field.type === 'token_count') return typeof value === 'object' ? null : countTokens(field, value);
  const number = columnValue(field, value, false, Date.now());
  if (number === null) return null;
  if (field.type === 'boolean') return number !== 0;
  if (DATE_TYPES.has(field.type)) return format === null ? new Date(number).toISOString() : format.format(number);
  return number;
}

/** Mapped fields a name or pattern selects. */
function selectFields(name: string, fields: ReadonlyMap<string, FlatField>): FlatField[] {
  if (!name.includes('*')) {
    const field = fields.get(name);
    if (field !== undefined && fields instanceof FieldMap && fields.aliases().has(name)) return [{ ...field, displayPath: name }];
    return field === undefined ? [] : [field];
  }
  const pattern = new WildcardPattern(name);
  return [...fields.values()].filter((field) => pattern.matches(field.path));
}

/** The mapping definition of a field path, or undefined (multi-fields included). */
function mappingOf(mapping: Mapping, path: string): FieldMapping | undefined {
  let properties: Record<string, FieldMapping> | undefined = mapping.properties;
  let found: FieldMapping | undefined;
  const segments = path.split('.');
  for (let index = 0; index < segments.length; index++) {
    const segment = segments[index]!;
    found = properties?.[segment] ?? found?.fields?.[segment];
    if (found === undefined) return undefined;
    properties = found.properties;
  }
  return found;
}

/** The `fields` object of one hit (undefined when empty). */
export function hitFieldValues(source: Record<string, unknown> | undefined, spec: HitFieldsSpec, fields: ReadonlyMap<string, FlatField>, mapping: Mapping): Record<string, unknown[]> | undefined {
  if (source === undefined) return undefined;
  const out: Record<string, unknown[]> = {};
  const add = (field: FlatField, format: string | undefined, docValues: boolean): void => {
    const pattern = format === undefined || !DATE_TYPES.has(field.type) ? null : DatePattern.parse(format, 'fields');
    const values = fieldSourceValues(source, field, fields)
      .map((value) => typedValue(field, value, pattern))
      .filter((value) => value !== null);
    if (docValues) {
      if (values.every((value) => typeof value === 'number')) (values as number[]).sort((left, right) => left - right);
      else if (field.storage === 'keyword') values.splice(0, values.length, ...[...new Set(values as string[])].sort());
    }
    if (values.length > 0) out[field.displayPath ?? field.path] = values;
  };
  for (const request of spec.fields) for (const field of selectFields(request.field, fields)) add(field, request.format, false);
  for (const request of spec.docvalueFields) {
    for (const field of selectFields(request.field, fields)) {
      if (field.storage === 'text' || !field.docValues) {
        if (request.field.includes('*')) continue;
        throw new EngineError(
          'illegal_argument',
          `Can't load fielddata on [${field.path}] because fielddata is unsupported on fields of type [${field.type}]. Use doc values instead (docvalue_fields need a field with doc values: keyword, numeric, date or boolean).`,
        );
      }
      add(field, request.format, true);
    }
  }
  if (Array.isArray(spec.storedFields)) {
    for (const name of spec.storedFields) for (const field of selectFields(name, fields)) if (mappingOf(mapping, field.path)?.store === true) add(field, undefined, false);
  }
  return Object.keys(out).length > 0 ? out : undefined;
}
