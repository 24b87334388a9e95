/**
 * Query values of the field types that index something other than the value as written: `ip`
 * fields (16-byte address terms, CIDR blocks as term ranges), the keys of `flattened` fields
 * (`key\0value` terms of the field's companion), and the checks that a field may be queried at
 * all (`index: false`, `binary`).
 */
import { EngineError } from '../errors.ts';
import { cidrTermRange, encodeIp } from '../mapping/ip.ts';
import type { FlatField } from '../mapping/mapping.ts';
import { describe, dslError } from './dsl-reader.ts';
import type { TermBounds } from './multi-term-query.ts';

/** The field's path as the user named it (a flattened key view answers for `field.key`). */
export function shownPath(field: FlatField): string {
  return field.displayPath ?? field.path;
}

/** Throws the Elasticsearch error for a query on a field that is neither indexed nor a numeric column with doc values (`index: false`, `binary`). */
export function assertSearchable(field: FlatField): void {
  if (field.type === 'binary') throw new EngineError('illegal_argument', `Binary fields do not support searching (field [${shownPath(field)}])`);
  if (field.type === 'geo_point') {
    throw new EngineError('illegal_argument', `Geo fields do not support exact searching, use dedicated geo queries instead: [${shownPath(field)}]`);
  }
  // Numeric and date values live in columns, so with doc values a field answers term, terms, range
  // and exists without an index, as OpenSearch answers such fields from their doc values.
  if (field.searchable || (field.storage === 'numeric' && field.docValues)) return;
  throw new EngineError('illegal_argument', `Cannot search on field [${shownPath(field)}] since it is not indexed.`);
}

/**
 * Throws the error for sorting or aggregating on a text field: Elasticsearch's (which points to
 * `fielddata=true`), or, for a field mapped with `fielddata: true`, that Trove accepts that
 * parameter without loading field data.
 */
export function refuseTextFieldData(field: FlatField, path: string): never {
  if (field.fielddata === true) {
    throw new EngineError(
      'illegal_argument',
      `Trove does not load field data for text fields: [${path}] is mapped with fielddata=true, which is accepted but not applied. Please use a keyword field (such as a keyword multi-field) instead.`,
    );
  }
  throw new EngineError(
    'illegal_argument',
    `Text fields are not optimised for operations that require per-document field data like aggregations and sorting, so these operations are disabled by default. Please use a keyword field instead. Alternatively, set fielddata=true on [${path}] in order to load field data by uninverting the inverted index.`,
  );
}

/**
 * Throws the Elasticsearch error for sorting or aggregating on a field without doc values
 * (`doc_values: false`, `binary`), and the 400 for a key of a flattened field (only the whole
 * field has doc values).
 */
export function assertDocValues(field: FlatField, path: string): void {
  if (field.keyPrefix !== undefined) {
    throw dslError(`sorting and aggregating on a key of a flattened field are not supported (field [${path}]); use the whole flattened field`);
  }
  if (!field.docValues) {
    throw new EngineError(
      'illegal_argument',
      `Can't load fielddata on [${path}] because fielddata is unsupported on fields of type [${field.type}]. Use doc values instead.`,
    );
  }
}

/** Whether a field's terms may be matched by patterns (prefix, wildcard, regexp, fuzzy): text and keyword-like, not `ip`. */
export function supportsTermPatterns(field: FlatField): boolean {
  return (field.storage === 'text' || field.storage === 'keyword') && field.type !== 'ip';
}

/** The term a query value stands for in a keyword-like field: the address term of an `ip`, the keyed term of a flattened key. */
export function keywordTerm(field: FlatField, value: unknown, owner: string): string {
  if (typeof value !== 'string' && typeof value !== 'number' && typeof value !== 'boolean') {
    throw dslError(`[${owner}] value of field [${shownPath(field)}] must be a string, number or boolean, got ${describe(value)}`);
  }
  if (field.type === 'ip') {
    const term = typeof value === 'string' ? encodeIp(value) : null;
    if (term === null) throw dslError(`[${owner}] '${String(value)}' is not an IP string literal (field [${shownPath(field)}]).`);
    return term;
  }
  return `${field.keyPrefix ?? ''}${String(value)}`;
}

/** The term range of a CIDR block value (`10.0.0.0/8`) of an `ip` field; null for other values and fields. */
export function cidrBounds(field: FlatField, value: unknown, owner: string): TermBounds | null {
  if (field.type !== 'ip' || typeof value !== 'string' || !value.includes('/')) return null;
  const range = cidrTermRange(value);
  if (range === null) throw dslError(`[${owner}] '${value}' is not a valid CIDR block (field [${shownPath(field)}]).`);
  return { lower: range.lower, upper: range.upper, includeLower: true, includeUpper: true };
}

/**
 * Range bounds of a keyword-like field in its terms: addresses for `ip`, and for a flattened
 * key the bounds stay within that key's terms (`key\0` up to, not including, `key\1`).
 */
export function keywordBounds(field: FlatField, bounds: TermBounds, owner: string): TermBounds {
  const term = (bound: string | null): string | null => (bound === null ? null : keywordTerm(field, bound, owner));
  const result: TermBounds = { ...bounds, lower: term(bounds.lower), upper: term(bounds.upper) };
  const prefix = field.keyPrefix;
  if (prefix !== undefined && prefix !== '') {
    if (result.lower === null) {
      result.lower = prefix;
      result.includeLower = true;
    }
    if (result.upper === null) {
      result.upper = `${prefix.slice(0, -1)}\u0001`;
      result.includeUpper = false;
    }
  }
  return result;
}
