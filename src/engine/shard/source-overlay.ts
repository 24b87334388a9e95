import type { FlatField } from '../mapping/mapping.ts';
import type { LeafReader } from '../segment/leaf-reader.ts';

/**
 * Reads a doc's stored `_source` and overlays the current values of its inplace columns: the
 * stored bytes keep the value of the last full write, the column holds the live one.
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

function overlay(source: Record<string, unknown>, field: FlatField, value: number): void {
  const parts = field.path.split('.');
  let node: Record<string, unknown> = source;
  for (let index = 0; index < parts.length - 1; index++) {
    const next = node[parts[index]!];
    if (next === undefined || next === null) {
      if (Number.isNaN(value)) return;
      node = node[parts[index]!] = {};
    } else if (typeof next === 'object' && !Array.isArray(next)) {
      node = next as Record<string, unknown>;
    } else {
      return;
    }
  }
  const key = parts[parts.length - 1]!;
  if (Number.isNaN(value)) {
    delete node[key];
    return;
  }
  const stored = node[key];
  if (field.type === 'boolean') node[key] = value !== 0;
  else if (field.type === 'date') {
    if (typeof stored === 'string') {
      if (Date.parse(stored) !== value) node[key] = new Date(value).toISOString();
    } else node[key] = value;
  } else node[key] = value;
}
