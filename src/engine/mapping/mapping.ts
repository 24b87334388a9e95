/** Field types a collection mapping can declare (PRODUCT.md section 2). */
export type FieldType =
  | 'text'
  | 'keyword'
  | 'long'
  | 'integer'
  | 'double'
  | 'float'
  | 'boolean'
  | 'date'
  | 'object';

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
  /** Children of an `object` field. */
  properties?: Record<string, FieldMapping>;
  /** Longest keyword indexed (longer values are stored but not indexed), ES `ignore_above`. */
  ignore_above?: number;
}

/** Dynamic-mapping policy: detect new fields (`true`), ignore them (`false`), or reject (`strict`). */
export type DynamicPolicy = true | false | 'strict';

/** A collection's mapping, as `PUT /{collection}` accepts it under `mappings`. */
export interface Mapping {
  dynamic?: DynamicPolicy;
  properties: Record<string, FieldMapping>;
}

/** A leaf field after flattening `object`s and multi-fields: its full dotted path and mapping. */
export interface FlatField {
  path: string;
  type: Exclude<FieldType, 'object'>;
  analyzer: AnalyzerName;
  inplace: boolean;
  ignoreAbove?: number;
}

/** Numeric field types (stored as float64 in columns; longs are exact up to 2^53). */
export const NUMERIC_TYPES: ReadonlySet<FieldType> = new Set(['long', 'integer', 'double', 'float']);

/** Types whose values live in numeric columns (numbers, dates as epoch millis, booleans as 0/1). */
export const COLUMN_NUMERIC_TYPES: ReadonlySet<FieldType> = new Set([
  'long',
  'integer',
  'double',
  'float',
  'date',
  'boolean',
]);

/** Flattens a mapping into leaf fields keyed by dotted path (multi-fields as `path.sub`). */
export function flattenMapping(mapping: Mapping): Map<string, FlatField> {
  const out = new Map<string, FlatField>();
  const walk = (props: Record<string, FieldMapping>, prefix: string): void => {
    for (const [name, field] of Object.entries(props)) {
      const path = prefix ? `${prefix}.${name}` : name;
      if (field.type === 'object') {
        walk(field.properties ?? {}, path);
        continue;
      }
      out.set(path, {
        path,
        type: field.type,
        analyzer: field.analyzer ?? (field.type === 'text' ? 'standard' : 'keyword'),
        inplace: field.inplace === true,
        ignoreAbove: field.ignore_above,
      });
      for (const [sub, subField] of Object.entries(field.fields ?? {})) {
        if (subField.type === 'object') continue;
        out.set(`${path}.${sub}`, {
          path: `${path}.${sub}`,
          type: subField.type,
          analyzer: subField.analyzer ?? (subField.type === 'text' ? 'standard' : 'keyword'),
          inplace: false,
          ignoreAbove: subField.ignore_above,
        });
      }
    }
  };
  walk(mapping.properties, '');
  return out;
}
