/**
 * Lookup structure over a flattened mapping, built once per field map and cached: which dotted
 * paths are leaf fields, which are objects, and each leaf's multi-fields.
 */
import { FieldMap, type FlatField } from './mapping.ts';

/** The shape of a flattened mapping as document walking needs it. */
export interface FieldIndex {
  /** Leaf fields a document value can be written to, by dotted path (multi-fields excluded). */
  readonly leaves: ReadonlyMap<string, FlatField>;
  /** Paths of objects that contain at least one leaf. */
  readonly objects: ReadonlySet<string>;
  /** Multi-fields of each leaf that has some. */
  readonly subFields: ReadonlyMap<string, readonly FlatField[]>;
  /** The leaves mapped with `inplace: true`. */
  readonly inplace: readonly FlatField[];
  /** Paths of field aliases (a document may not hold a value there). */
  readonly aliases: ReadonlySet<string>;
}

const cache = new WeakMap<ReadonlyMap<string, FlatField>, FieldIndex>();

/** The index of a field map (built on first use, then cached for the same map object). */
export function fieldIndexOf(fields: ReadonlyMap<string, FlatField>): FieldIndex {
  let index = cache.get(fields);
  if (index === undefined) {
    index = buildFieldIndex(fields);
    cache.set(fields, index);
  }
  return index;
}

function buildFieldIndex(fields: ReadonlyMap<string, FlatField>): FieldIndex {
  const leaves = new Map<string, FlatField>();
  const objects = new Set<string>();
  const subFields = new Map<string, FlatField[]>();
  const inplace: FlatField[] = [];
  for (const [path, field] of fields) {
    const lastDot = path.lastIndexOf('.');
    const parent = lastDot < 0 ? undefined : fields.get(path.slice(0, lastDot));
    if (parent !== undefined) {
      const siblings = subFields.get(parent.path);
      if (siblings === undefined) subFields.set(parent.path, [field]);
      else siblings.push(field);
      continue;
    }
    leaves.set(path, field);
    if (field.inplace) inplace.push(field);
    for (let dot = path.indexOf('.'); dot >= 0; dot = path.indexOf('.', dot + 1)) {
      objects.add(path.slice(0, dot));
    }
  }
  const aliases = new Set(fields instanceof FieldMap ? fields.aliases().keys() : []);
  for (const alias of aliases) {
    for (let dot = alias.indexOf('.'); dot >= 0; dot = alias.indexOf('.', dot + 1)) objects.add(alias.slice(0, dot));
  }
  return { leaves, objects, subFields, inplace, aliases };
}

/**
 * The shortest proper prefix of `path` that is a leaf field, or undefined: no value can live at
 * `path` then (this covers multi-field paths such as `title.keyword`, whose parent is a leaf).
 */
export function leafAncestor(index: FieldIndex, path: string): FlatField | undefined {
  for (let dot = path.indexOf('.'); dot >= 0; dot = path.indexOf('.', dot + 1)) {
    const field = index.leaves.get(path.slice(0, dot));
    if (field !== undefined) return field;
  }
  return undefined;
}
