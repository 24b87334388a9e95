/**
 * The eleven partial-update operators (PRODUCT.md 4.3), applied one at a time to a private copy
 * of the document. Every failure is EngineError('illegal_argument') whose message names the op's
 * position, the op, the field and the reason, e.g.
 * `ops[2] (incr on [stats.views]): field value ["abc"] is not numeric`.
 *
 * Values are written as given, like Elasticsearch keeps `_source`: `set` of `"12"` on a `long`
 * field is accepted (the index coerces it to 12) and `_source` keeps `"12"`; values that the
 * mapped type cannot coerce are rejected. A null field counts as missing. A `field` or rename
 * target with a reserved segment (`__proto__`, `constructor`, `prototype`) is refused.
 */
import { EngineError } from '../errors.ts';
import { coerceColumnValue } from '../mapping/field-value.ts';
import { cloneJson, isPlainObject, jsonEqual, type JsonObject } from '../mapping/json-value.ts';
import type { UpdateOperation } from '../shard/operations.ts';
import { applyArithmetic } from './arithmetic.ts';
import { operationError, shown, storeValue, type OperatorContext } from './operator-context.ts';
import { assertUnreservedPath, findSlot, isValidPath, readPath, removePath } from './paths.ts';

/** The operator names, in the order the documentation lists them. */
export const UPDATE_OPERATORS = [
  'set',
  'unset',
  'incr',
  'mul',
  'min',
  'max',
  'toggle',
  'append',
  'add_to_set',
  'rename',
  'current_date',
] as const;

/** One of the eleven operator names. */
export type UpdateOperatorName = (typeof UPDATE_OPERATORS)[number];

const OPERATOR_NAMES: ReadonlySet<string> = new Set(UPDATE_OPERATORS);

/** Operators that need a `value`. */
const NEEDS_VALUE: ReadonlySet<string> = new Set(['set', 'incr', 'mul', 'min', 'max', 'append', 'add_to_set', 'rename']);

const OPERATION_KEYS: ReadonlySet<string> = new Set(['op', 'field', 'value']);

/** Checks the shape of `ops[position]` (an object, a known op, a valid unreserved field, known keys, a value where one is needed); throws illegal_argument naming the op. */
export function checkOperation(operation: UpdateOperation, position: number): void {
  const label = `ops[${position}]`;
  if (!isPlainObject(operation)) {
    throw operationError(`${label}: an operation must be an object with [op], [field] and, for most ops, [value]`);
  }
  const { op, field } = operation;
  if (typeof op !== 'string' || !OPERATOR_NAMES.has(op)) {
    throw operationError(`${label}: unknown op ${shown(op)}, expected one of [${UPDATE_OPERATORS.join(', ')}]`);
  }
  if (typeof field !== 'string' || !isValidPath(field)) {
    throw operationError(`${label} (${op}): [field] must be a dotted field path, got ${shown(field)}`);
  }
  try {
    assertUnreservedPath(field);
    for (const key of Object.keys(operation)) {
      if (!OPERATION_KEYS.has(key)) throw operationError(`unknown key [${key}], an operation has [op], [field] and [value]`);
    }
    if (NEEDS_VALUE.has(op) && !Object.hasOwn(operation, 'value')) throw operationError(`[value] is required`);
  } catch (error) {
    if (error instanceof EngineError) throw new EngineError('illegal_argument', `${label} (${op} on [${field}]): ${error.message}`);
    throw error;
  }
}

/** Applies `ops[position]` to `document` (mutated in place); throws illegal_argument naming the op on failure. */
export function applyOperation(
  document: JsonObject,
  operation: UpdateOperation,
  position: number,
  context: OperatorContext,
): void {
  checkOperation(operation, position);
  const { op, field } = operation;
  try {
    runOperator(document, op as UpdateOperatorName, field, operation.value, context);
  } catch (error) {
    if (error instanceof EngineError) {
      throw new EngineError('illegal_argument', `ops[${position}] (${op} on [${field}]): ${error.message}`);
    }
    throw error;
  }
}

function runOperator(
  document: JsonObject,
  op: UpdateOperatorName,
  field: string,
  value: unknown,
  context: OperatorContext,
): void {
  switch (op) {
    case 'set':
      storeValue(document, field, cloneJson(value), context);
      return;
    case 'unset':
      removePath(document, field);
      return;
    case 'incr':
    case 'mul':
    case 'min':
    case 'max':
      applyArithmetic(document, op, field, value, context);
      return;
    case 'toggle':
      applyToggle(document, field, context);
      return;
    case 'append':
    case 'add_to_set':
      applyPush(document, field, cloneJson(value), op === 'add_to_set', context);
      return;
    case 'rename':
      applyRename(document, field, value, context);
      return;
    case 'current_date':
      applyCurrentDate(document, field, value, context);
      return;
  }
}

function applyToggle(document: JsonObject, field: string, context: OperatorContext): void {
  const leaf = context.index.leaves.get(field);
  if (leaf !== undefined && leaf.type !== 'boolean') {
    throw operationError(`field is mapped as [${leaf.type}], toggle needs a boolean field`);
  }
  const current = readPath(document, field);
  let next = true;
  if (typeof current === 'boolean') {
    next = !current;
  } else if (current !== undefined && current !== null) {
    if (leaf === undefined || typeof current !== 'string') throw operationError(`field value ${shown(current)} is not a boolean`);
    next = coerceColumnValue(leaf, current) !== 1;
  }
  storeValue(document, field, next, context);
}

function applyPush(document: JsonObject, field: string, element: unknown, unique: boolean, context: OperatorContext): void {
  const current = readPath(document, field);
  let next: unknown[];
  if (current === undefined || current === null) {
    next = [element];
  } else if (Array.isArray(current)) {
    if (unique && current.some((existing) => jsonEqual(existing, element))) return;
    next = [...current, element];
  } else {
    if (unique && jsonEqual(current, element)) return;
    next = [current, element];
  }
  storeValue(document, field, next, context);
}

function applyRename(document: JsonObject, field: string, target: unknown, context: OperatorContext): void {
  if (typeof target !== 'string' || !isValidPath(target)) {
    throw operationError(`value must be the new field name as a dotted path, got ${shown(target)}`);
  }
  assertUnreservedPath(target);
  if (target === field || target.startsWith(`${field}.`) || field.startsWith(`${target}.`)) {
    throw operationError(`cannot rename [${field}] to [${target}]: the paths overlap`);
  }
  const slot = findSlot(document, field);
  if (slot === null) return;
  const moved = slot.container[slot.key];
  checkRenameMapping(field, target, moved, context);
  delete slot.container[slot.key];
  storeValue(document, target, moved, context);
}

/**
 * A rename may not give a moved value a mapped field of another type, nor move an inplace field's
 * value to a field that is not inplace. Only fields that hold a value in `moved` count.
 */
function checkRenameMapping(source: string, target: string, moved: unknown, context: OperatorContext): void {
  const below = `${source}.`;
  for (const [path, sourceField] of context.fields) {
    if (path !== source && !path.startsWith(below)) continue;
    if (path !== source && (!isPlainObject(moved) || readPath(moved, path.slice(below.length)) === undefined)) continue;
    const targetPath = target + path.slice(source.length);
    const targetField = context.fields.get(targetPath);
    if (targetField !== undefined && targetField.type !== sourceField.type) {
      throw operationError(`target [${targetPath}] is mapped as [${targetField.type}] but [${path}] is [${sourceField.type}]`);
    }
    if (sourceField.inplace && targetField?.inplace !== true) {
      throw operationError(
        `[${path}] is an inplace field and [${targetPath}] is not; ` +
          'an inplace field can only be renamed to an inplace field',
      );
    }
  }
}

function applyCurrentDate(document: JsonObject, field: string, form: unknown, context: OperatorContext): void {
  if (form !== undefined && form !== 'date' && form !== 'timestamp') {
    throw operationError(`value must be "date" or "timestamp", got ${shown(form)}`);
  }
  const leaf = context.index.leaves.get(field);
  if (leaf !== undefined && leaf.type !== 'date' && form !== 'timestamp') {
    throw operationError(`field is mapped as [${leaf.type}], not [date]; use value "timestamp" to store epoch millis`);
  }
  const millis = context.now();
  storeValue(document, field, form === 'timestamp' ? millis : new Date(millis).toISOString(), context);
}
