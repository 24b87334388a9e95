/**
 * Plain JSON document values: type test, copy, comparison and a short preview for error messages.
 * Keys are read with `Object.hasOwn` and written with `setKey`, so keys such as `__proto__` or
 * `constructor` in a document are ordinary fields.
 */

/** A JSON object (not null, not an array). */
export type JsonObject = Record<string, unknown>;

/** True for a JSON object (not null, not an array). */
export function isPlainObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Sets an own property, also when the key is `__proto__` (which plain assignment would treat as the prototype). */
export function setKey(target: JsonObject, key: string, value: unknown): void {
  if (key === '__proto__') {
    Object.defineProperty(target, key, { value, writable: true, enumerable: true, configurable: true });
  } else {
    target[key] = value;
  }
}

/** The own property `key` of an object, or undefined. */
export function getOwn(target: JsonObject, key: string): unknown {
  return Object.hasOwn(target, key) ? target[key] : undefined;
}

/** Deep copy of a JSON value. */
export function cloneJson<T>(value: T): T {
  if (typeof value !== 'object' || value === null) return value;
  if (Array.isArray(value)) {
    const copy = new Array<unknown>(value.length);
    for (let index = 0; index < value.length; index++) copy[index] = cloneJson(value[index]);
    return copy as T;
  }
  const copy: JsonObject = {};
  for (const key of Object.keys(value)) setKey(copy, key, cloneJson((value as JsonObject)[key]));
  return copy as T;
}

/** Deep equality of JSON values; object key order does not matter, array order does. */
export function jsonEqual(left: unknown, right: unknown): boolean {
  if (left === right) return true;
  if (typeof left !== 'object' || typeof right !== 'object' || left === null || right === null) {
    return false;
  }
  if (Array.isArray(left)) {
    if (!Array.isArray(right) || left.length !== right.length) return false;
    for (let index = 0; index < left.length; index++) {
      if (!jsonEqual(left[index], right[index])) return false;
    }
    return true;
  }
  if (Array.isArray(right)) return false;
  const leftKeys = Object.keys(left);
  if (leftKeys.length !== Object.keys(right).length) return false;
  for (const key of leftKeys) {
    if (!Object.hasOwn(right, key)) return false;
    if (!jsonEqual((left as JsonObject)[key], (right as JsonObject)[key])) return false;
  }
  return true;
}

const PREVIEW_LENGTH = 100;

/** A value as JSON for an error message, cut to about a hundred characters. */
export function previewJson(value: unknown): string {
  const text = value === undefined ? 'undefined' : JSON.stringify(value);
  return text.length > PREVIEW_LENGTH ? `${text.slice(0, PREVIEW_LENGTH)}...` : text;
}
