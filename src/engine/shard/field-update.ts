/**
 * Field-level updates (docs/architecture.md, "Field overlays"): an update is planned on the
 * top-level fields it names only, read from the document's stored text (or its overlay), and
 * written as a `fields` WAL record carrying the new text of each changed top-level field.
 */
import { getOwn, isPlainObject, jsonEqual, setKey } from '../mapping/json-value.ts';
import type { FlatField } from '../mapping/mapping.ts';
import { findSlot } from '../update/paths.ts';
import type { DocLocation } from './leaf-set.ts';
import type { UpdateOp } from './operations.ts';

/**
 * The top-level fields an update reads and writes, or null when it cannot be planned per field:
 * no `doc` and no `ops`, a path that is not a string, or a top-level key with a dot (a literal
 * dotted key may hold values of a field another key holds too).
 */
export function updateKeys(op: UpdateOp): Set<string> | null {
  const keys = new Set<string>();
  if (op.doc !== undefined) {
    if (!isPlainObject(op.doc)) return null;
    for (const key of Object.keys(op.doc)) keys.add(key);
  }
  for (const operation of op.ops ?? []) {
    if (typeof operation?.field !== 'string') return null;
    keys.add(operation.field.split('.')[0]!);
    if (operation.op === 'rename') {
      if (typeof operation.value !== 'string') return null;
      keys.add(operation.value.split('.')[0]!);
    }
  }
  if (keys.size === 0) return null;
  for (const key of keys) if (key.includes('.') || key === '') return null;
  return keys;
}

/**
 * Whether `copy_to` links a field under one of the keys with a field outside them (either way):
 * then the update is planned on the whole document, whose other fields feed the same targets.
 */
export function copiesAcrossKeys(keys: ReadonlySet<string>, fields: ReadonlyMap<string, FlatField>): boolean {
  for (const field of fields.values()) {
    if (!field.copyTo) continue;
    const sourceInside = keys.has(field.path.split('.')[0]!);
    for (const target of field.copyTo) if (sourceInside || keys.has(target.split('.')[0]!)) return true;
  }
  return false;
}

/**
 * Whether a field under one of the keys has `ignore_malformed`: then the update is planned on the
 * whole document, whose `_ignored` list names fields under every key.
 */
export function ignoresMalformedUnder(keys: ReadonlySet<string>, fields: ReadonlyMap<string, FlatField>): boolean {
  for (const field of fields.values()) if (field.ignoreMalformed === true && keys.has(field.path.split('.')[0]!)) return true;
  return false;
}

/** The current JSON texts of the named top-level fields of a doc: its overlay's, else the stored source's. */
export function readFieldTexts(location: DocLocation, keys: ReadonlySet<string>): Map<string, string> {
  const { leaf, doc } = location;
  const texts = new Map<string, string>();
  const overlaid = leaf.overlay.textsOf(doc);
  const fromSource: string[] = [];
  for (const key of keys) {
    if (overlaid?.has(key)) {
      const text = overlaid.get(key)!;
      if (text !== null) texts.set(key, text);
    } else {
      fromSource.push(key);
    }
  }
  for (const [key, text] of leaf.overlay.baseTexts(doc, fromSource)) texts.set(key, text);
  return texts;
}

/**
 * The partial document an update is planned on: the fields' values, with the current column
 * values of the inplace fields under them (as reads show them, see source-overlay.ts).
 */
export function partialState(location: DocLocation, texts: ReadonlyMap<string, string>, keys: ReadonlySet<string>, inplace: readonly FlatField[]): Record<string, unknown> {
  const state = parseTexts(texts);
  for (const field of inplace) {
    if (!keys.has(field.path.split('.')[0]!)) continue;
    const column = location.leaf.inplaceColumn(field.path);
    if (!column) continue;
    const value = column.get(location.doc);
    const slot = findSlot(state, field.path);
    if (Number.isNaN(value)) {
      if (slot) delete slot.container[slot.key];
    } else if (slot) {
      const stored = slot.container[slot.key];
      if (!(field.type === 'date' && typeof stored === 'string' && Date.parse(stored) === value)) {
        setKey(slot.container, slot.key, field.type === 'boolean' ? value !== 0 : value);
      }
    } else {
      throw new FieldPlanUnavailable();
    }
  }
  return state;
}

/** Thrown when an inplace column holds a value the stored text has no slot for: the update is planned on the whole document. */
export class FieldPlanUnavailable extends Error {}

/** The changed top-level fields: new JSON text (the old text when the value is equal), or null for a removed one. */
export function fieldReplacements(before: Record<string, unknown>, texts: ReadonlyMap<string, string>, after: Record<string, unknown>): Map<string, string | null> {
  const replacements = new Map<string, string | null>();
  for (const key of Object.keys(before)) {
    if (!Object.hasOwn(after, key) && texts.has(key)) replacements.set(key, null);
  }
  for (const key of Object.keys(after)) {
    const value = getOwn(after, key);
    if (Object.hasOwn(before, key) && jsonEqual(getOwn(before, key), value)) continue;
    replacements.set(key, JSON.stringify(value));
  }
  return replacements;
}

/** The object of top-level fields given as JSON texts. */
export function parseTexts(texts: ReadonlyMap<string, string>): Record<string, unknown> {
  const object: Record<string, unknown> = {};
  for (const [key, text] of texts) setKey(object, key, JSON.parse(text));
  return object;
}
