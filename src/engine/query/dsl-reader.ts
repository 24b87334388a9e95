/**
 * Validation helpers for the JSON query and aggregation DSL. Every failure is an
 * EngineError('parsing') whose message names the query (or aggregation) and the offending key,
 * in Elasticsearch's style: `[match] unknown field [foo]`.
 */
import { EngineError } from '../errors.ts';

/** A JSON object as received in a request body. */
export type DslObject = Record<string, unknown>;

/** A parsing error about the named DSL element. */
export function dslError(message: string): EngineError {
  return new EngineError('parsing', message);
}

/** Whether the value is a plain JSON object (not an array or null). */
export function isDslObject(value: unknown): value is DslObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The value as an object, or a parsing error naming `owner`. */
export function expectObject(value: unknown, owner: string): DslObject {
  if (!isDslObject(value)) throw dslError(`[${owner}] expected an object, got ${describe(value)}`);
  return value;
}

/** The only key of an object and its value (`{field: {...}}` and `{type: {...}}` shapes). */
export function singleEntry(value: DslObject, owner: string): [string, unknown] {
  const keys = Object.keys(value);
  if (keys.length === 0) throw dslError(`[${owner}] requires exactly one key, found none`);
  if (keys.length > 1) {
    throw dslError(`[${owner}] query doesn't support multiple fields, found [${keys[0]}] and [${keys[1]}]`);
  }
  return [keys[0]!, value[keys[0]!]];
}

/** Rejects keys outside `allowed`. */
export function checkKeys(value: DslObject, allowed: readonly string[], owner: string): void {
  for (const key of Object.keys(value)) {
    if (!allowed.includes(key)) throw dslError(`[${owner}] unknown field [${key}]`);
  }
}

/** A finite number (numeric strings accepted, like Elasticsearch). */
export function readNumber(value: unknown, name: string, owner: string): number {
  const number = typeof value === 'string' && value.trim() !== '' ? Number(value) : value;
  if (typeof number !== 'number' || !Number.isFinite(number)) {
    throw dslError(`[${owner}] [${name}] must be a number, got ${describe(value)}`);
  }
  return number;
}

/** An integer within [min, max]. */
export function readInteger(value: unknown, name: string, owner: string, min = 0, max = 2 ** 31 - 1): number {
  const number = readNumber(value, name, owner);
  if (!Number.isInteger(number) || number < min || number > max) {
    throw dslError(`[${owner}] [${name}] must be an integer between ${min} and ${max}, got ${describe(value)}`);
  }
  return number;
}

/** A boolean (the strings "true"/"false" accepted). */
export function readBoolean(value: unknown, name: string, owner: string): boolean {
  if (value === true || value === 'true') return true;
  if (value === false || value === 'false') return false;
  throw dslError(`[${owner}] [${name}] must be a boolean, got ${describe(value)}`);
}

/** A string. */
export function readString(value: unknown, name: string, owner: string): string {
  if (typeof value !== 'string') throw dslError(`[${owner}] [${name}] must be a string, got ${describe(value)}`);
  return value;
}

/** A scalar query value (string, number or boolean) as text. */
export function readScalarText(value: unknown, name: string, owner: string): string {
  if (typeof value === 'string') return value;
  if ((typeof value === 'number' && Number.isFinite(value)) || typeof value === 'boolean') return String(value);
  throw dslError(`[${owner}] [${name}] must be a string, number or boolean, got ${describe(value)}`);
}

/** One of the allowed string values. */
export function readEnum<T extends string>(value: unknown, allowed: readonly T[], name: string, owner: string): T {
  const text = typeof value === 'string' ? value.toLowerCase() : value;
  if (typeof text !== 'string' || !(allowed as readonly string[]).includes(text)) {
    throw dslError(`[${owner}] [${name}] must be one of [${allowed.join(', ')}], got ${describe(value)}`);
  }
  return text as T;
}

/** A value or array of values as an array. */
export function asArray(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [value];
}

/** Short description of a JSON value for error messages. */
export function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') return 'an object';
  if (typeof value === 'string') return `[${value.length > 64 ? `${value.slice(0, 64)}...` : value}]`;
  return `[${String(value)}]`;
}

/**
 * Resolves an Elasticsearch minimum_should_match spec against the number of optional clauses:
 * integers ("3", "-2"), percentages ("75%", "-25%"), and conditionals ("3<90%", "2<-25% 9<-3").
 */
export function resolveMinimumShouldMatch(spec: unknown, optionalCount: number, owner: string): number {
  if (typeof spec === 'number') {
    if (!Number.isInteger(spec)) throw dslError(`[${owner}] [minimum_should_match] must be an integer, got [${spec}]`);
    return clampMinimum(spec < 0 ? optionalCount + spec : spec);
  }
  if (typeof spec !== 'string') {
    throw dslError(`[${owner}] [minimum_should_match] must be a number or string, got ${describe(spec)}`);
  }
  const text = spec.trim();
  if (text.includes('<')) {
    let result = optionalCount;
    for (const part of text.split(/\s+/)) {
      const match = /^(\d+)<(.+)$/.exec(part);
      if (match === null) throw dslError(`[${owner}] invalid [minimum_should_match] [${spec}]`);
      if (optionalCount <= Number(match[1])) return result;
      result = simpleMinimum(match[2]!, optionalCount, spec, owner);
    }
    return result;
  }
  return simpleMinimum(text, optionalCount, spec, owner);
}

function simpleMinimum(text: string, optionalCount: number, spec: string, owner: string): number {
  const match = /^(-?\d+)(%?)$/.exec(text);
  if (match === null) throw dslError(`[${owner}] invalid [minimum_should_match] [${spec}]`);
  const number = Number(match[1]);
  if (match[2] === '%') {
    const computed = (optionalCount * number) / 100;
    return clampMinimum(computed < 0 ? optionalCount + Math.trunc(computed) : Math.trunc(computed));
  }
  return clampMinimum(number < 0 ? optionalCount + number : number);
}

function clampMinimum(value: number): number {
  return value <= 0 ? 0 : value;
}
