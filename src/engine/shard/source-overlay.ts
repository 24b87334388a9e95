import { getOwn, isPlainObject, setKey } from '../mapping/json-value.ts';
import { reservedSegment } from '../mapping/limits.ts';
import type { FlatField } from '../mapping/mapping.ts';
import type { LeafReader } from '../segment/leaf-reader.ts';
import { findSlot, type PathSlot } from '../update/paths.ts';

/**
 * Reads a doc's stored `_source` and overlays the current values of its inplace columns: the
 * stored bytes keep the value of the last full write, the column holds the live one. The value
 * goes where update operators read it (paths.ts: own keys only, literal dotted keys honoured), so
 * no field path can reach `Object.prototype`.
 */
export function readSource(leaf: LeafReader, doc: number, inplaceFields: readonly FlatField[]): Record<string, unknown> {
  const source = JSON.parse(leaf.source(doc).toString('utf8')) as Record<string, unknown>;
  for (const field of inplaceFields) {
    const column = leaf.inplaceColumn(field.path);
    if (!column) continue;
    overlay(source, field, column.get(doc));
  }
  return source;
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
