import { getOwn, isPlainObject, setKey } from '../mapping/json-value.ts';
import { reservedSegment } from '../mapping/limits.ts';
import type { FlatField } from '../mapping/mapping.ts';
import type { LeafReader } from '../segment/leaf-reader.ts';
import { findSlot, type PathSlot } from '../update/paths.ts';
import { spliceSource } from '../update/source-splice.ts';

/**
 * Reads a doc's stored `_source` and overlays the current values of its inplace columns: the
 * stored bytes keep the value of the last full write, the column holds the live one. The value
 * goes where update operators read it (paths.ts: own keys only, literal dotted keys honoured), so
 * no field path can reach `Object.prototype`.
 */
export function readSource(leaf: LeafReader, doc: number, inplaceFields: readonly FlatField[]): Record<string, unknown> {
  return readSourceAndText(leaf, doc, inplaceFields).source;
}

/** A document's `_source` as a value and as the JSON text responses show. */
export interface SourceAndText {
  source: Record<string, unknown>;
  /**
   * The stored text, byte for byte as sent; a top-level field holding an inplace field whose
   * column moved on is replaced by the JSON of its overlaid value (the rest stays as sent).
   */
  text: string;
}

/** `readSource` together with the text it was read from (see SourceAndText). */
export function readSourceAndText(leaf: LeafReader, doc: number, inplaceFields: readonly FlatField[]): SourceAndText {
  const stored = leaf.source(doc);
  const text = stored.toString('utf8');
  const source = JSON.parse(text) as Record<string, unknown>;
  let touched: Map<string, string | undefined> | null = null;
  for (const field of inplaceFields) {
    const column = leaf.inplaceColumn(field.path);
    if (!column) continue;
    touched ??= new Map();
    noteTopLevelKeys(source, field.path, touched);
    overlay(source, field, column.get(doc));
  }
  if (touched === null) return { source, text };
  const replacements = new Map<string, string | null>();
  for (const [key, before] of touched) {
    const after = Object.hasOwn(source, key) ? JSON.stringify(source[key]) : undefined;
    if (after !== before) replacements.set(key, after ?? null);
  }
  return { source, text: replacements.size === 0 ? text : spliceSource(stored, replacements).toString('utf8') };
}

/** The text of `readSourceAndText`, parsing nothing when the mapping has no inplace field. */
export function readSourceText(leaf: LeafReader, doc: number, inplaceFields: readonly FlatField[]): string {
  if (inplaceFields.length === 0) return leaf.source(doc).toString('utf8');
  return readSourceAndText(leaf, doc, inplaceFields).text;
}

/** Records the JSON of each top-level field `path` may reach (or create), before an overlay changes it. */
function noteTopLevelKeys(source: Record<string, unknown>, path: string, touched: Map<string, string | undefined>): void {
  const first = path.split('.', 1)[0]!;
  for (const key of [first, ...Object.keys(source).filter((key) => key !== first && (path === key || path.startsWith(`${key}.`)))]) {
    if (!touched.has(key)) touched.set(key, Object.hasOwn(source, key) ? JSON.stringify(source[key]) : undefined);
  }
}

/** Writes a column value (NaN: no value) into the source at the field's path. */
function overlay(source: Record<string, unknown>, field: FlatField, value: number): void {
  const slot = findSlot(source, field.path) ?? (Number.isNaN(value) ? null : newSlot(source, field.path));
  if (slot === null) return;
  if (Number.isNaN(value)) {
    delete slot.container[slot.key];
    return;
  }
  setKey(slot.container, slot.key, columnValueAsJson(field, slot.container[slot.key], value));
}

/**
 * A slot for a value the stored source lacks: missing or null objects on the way are created as
 * own keys; null when a scalar or an array is in the way, or a segment is a reserved name.
 */
function newSlot(source: Record<string, unknown>, path: string): PathSlot | null {
  if (reservedSegment(path) !== undefined) return null;
  const parts = path.split('.');
  let node = source;
  for (const part of parts.slice(0, -1)) {
    const next = getOwn(node, part);
    if (next === undefined || next === null) {
      const created: Record<string, unknown> = {};
      setKey(node, part, created);
      node = created;
    } else if (isPlainObject(next)) {
      node = next;
    } else {
      return null;
    }
  }
  return { container: node, key: parts[parts.length - 1]! };
}

/** The JSON form of a column value; a stored date string that denotes the same instant is kept as written. */
function columnValueAsJson(field: FlatField, stored: unknown, value: number): unknown {
  if (field.type === 'boolean') return value !== 0;
  if (field.type === 'date' && typeof stored === 'string') {
    return Date.parse(stored) === value ? stored : new Date(value).toISOString();
  }
  return value;
}
