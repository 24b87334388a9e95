/**
 * Dotted paths inside a document. `a.b.c` names `c` in the object `b` in the object `a`, but a
 * literal key containing dots that exists at some level is honoured too: with
 * `{"a": {"b.c": 1}}` or `{"a.b.c": 1}` the path `a.b.c` names that value. Lookup prefers the
 * whole remaining path as a literal key, then the shortest prefix that holds an object.
 * Missing objects on the way are created as nested objects when writing; a value in the way that
 * is not an object (a scalar, null or an array) stops the write. Keys are only ever read as own
 * properties and written with `setKey`, and no write creates a path with a reserved segment
 * (`__proto__`, `constructor`, `prototype`), so a path can never reach `Object.prototype`.
 */
import { EngineError } from '../errors.ts';
import { isPlainObject, setKey, type JsonObject } from '../mapping/json-value.ts';
import { reservedSegment } from '../mapping/limits.ts';

/** Where a path's value lives: the object that holds it and the key within that object. */
export interface PathSlot {
  container: JsonObject;
  key: string;
}

/** True for a well-formed dotted path: non-empty segments, no leading, trailing or doubled dot. */
export function isValidPath(path: string): boolean {
  return path.length > 0 && !path.startsWith('.') && !path.endsWith('.') && !path.includes('..');
}

/** The slot of an existing value at `path`, or null when the document has none. */
export function findSlot(root: JsonObject, path: string): PathSlot | null {
  if (Object.hasOwn(root, path)) return { container: root, key: path };
  for (let dot = path.indexOf('.'); dot >= 0; dot = path.indexOf('.', dot + 1)) {
    const prefix = path.slice(0, dot);
    if (!Object.hasOwn(root, prefix)) continue;
    const child = root[prefix];
    if (!isPlainObject(child)) continue;
    const slot = findSlot(child, path.slice(dot + 1));
    if (slot !== null) return slot;
  }
  return null;
}

/** The value at `path`, or undefined when absent. */
export function readPath(root: JsonObject, path: string): unknown {
  const slot = findSlot(root, path);
  return slot === null ? undefined : slot.container[slot.key];
}

/** Throws illegal_argument when a segment of `path` is a reserved name (`__proto__`, `constructor`, `prototype`). */
export function assertUnreservedPath(path: string): void {
  const segment = reservedSegment(path);
  if (segment !== undefined) {
    throw new EngineError('illegal_argument', `field [${path}] is not allowed: [${segment}] is a reserved name`);
  }
}

/**
 * The slot for writing `path`: the existing one, or a new one after creating the missing
 * objects. Throws illegal_argument when a non-object value is in the way or a segment of the path
 * is a reserved name.
 */
export function ensureSlot(root: JsonObject, path: string): PathSlot {
  assertUnreservedPath(path);
  const existing = findSlot(root, path);
  if (existing !== null) return existing;
  return createSlot(root, path, '');
}

function createSlot(node: JsonObject, path: string, walked: string): PathSlot {
  let blocker: string | undefined;
  for (let dot = path.indexOf('.'); dot >= 0; dot = path.indexOf('.', dot + 1)) {
    const prefix = path.slice(0, dot);
    if (!Object.hasOwn(node, prefix)) continue;
    const child = node[prefix];
    const childPath = walked === '' ? prefix : `${walked}.${prefix}`;
    if (isPlainObject(child)) return createSlot(child, path.slice(dot + 1), childPath);
    blocker ??= childPath;
  }
  if (blocker !== undefined) {
    const fullPath = walked === '' ? path : `${walked}.${path}`;
    throw new EngineError('illegal_argument', `cannot create [${fullPath}]: [${blocker}] is not an object`);
  }
  const dot = path.indexOf('.');
  if (dot < 0) return { container: node, key: path };
  const head = path.slice(0, dot);
  const created: JsonObject = {};
  setKey(node, head, created);
  return createSlot(created, path.slice(dot + 1), walked === '' ? head : `${walked}.${head}`);
}

/** Writes `value` at `path`, creating missing objects. */
export function writePath(root: JsonObject, path: string, value: unknown): void {
  const slot = ensureSlot(root, path);
  setKey(slot.container, slot.key, value);
}

/** Removes the value at `path`; returns false when there was none. */
export function removePath(root: JsonObject, path: string): boolean {
  const slot = findSlot(root, path);
  if (slot === null) return false;
  delete slot.container[slot.key];
  return true;
}
