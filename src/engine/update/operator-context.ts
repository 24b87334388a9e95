/**
 * What every update operator shares: the mapping it checks values against, the clock, and the
 * one way an operator writes a value into the document being built.
 */
import { EngineError } from '../errors.ts';
import type { FieldIndex } from '../mapping/field-index.ts';
import { previewJson, type JsonObject } from '../mapping/json-value.ts';
import type { FlatField } from '../mapping/mapping.ts';
import { checkFieldValue } from '../mapping/parse-document.ts';
import { writePath } from './paths.ts';

/** The collection's mapping and the clock, as the operators see them. */
export interface OperatorContext {
  fields: ReadonlyMap<string, FlatField>;
  index: FieldIndex;
  /** Server time in epoch millis (injectable for tests). */
  now: () => number;
}

/** An operator failure; the caller prefixes the op's position, name and field. */
export function operationError(reason: string): EngineError {
  return new EngineError('illegal_argument', reason);
}

/** A value in square brackets as error messages show it: `["abc"]`. */
export function shown(value: unknown): string {
  return `[${previewJson(value)}]`;
}

/** Writes `value` at `path` after checking it against the mapping (throws mapper_parsing when it does not fit). */
export function storeValue(document: JsonObject, path: string, value: unknown, context: OperatorContext): void {
  checkFieldValue(path, value, context.fields);
  writePath(document, path, value);
}
