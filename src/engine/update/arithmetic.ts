/**
 * The arithmetic operators `incr`, `mul`, `min` and `max`.
 *
 * The field's type comes from the mapping when the field is mapped, else from its current value.
 * On a mapped numeric field the current value is read as the index reads it (a numeric string
 * counts); the operator's `value` must be a JSON number, and an integer on `long`/`integer`
 * fields. A missing or null field counts as absent: `incr` starts from 0, `mul` yields 0,
 * `min`/`max` take the value. `min`/`max` on a `date` field take a date (ISO 8601 or epoch millis)
 * and compare as dates, writing the winner as given; on an unmapped field a string value makes
 * them compare as dates. When the current value already wins, nothing is written.
 *
 * Overflow is an error: outside [-2^31, 2^31-1] on `integer`; beyond ±(2^53-1) on `long`, since
 * longs are held as float64 and are exact only up to 2^53 (this also covers ±(2^63-1)); beyond
 * the float32 range on `float`; a non-finite result anywhere; and on an unmapped field, an
 * integer result past 2^53 from exact (safe) integer operands, since exactness would be lost.
 */
import { parseDate } from '../mapping/date.ts';
import { coerceColumnValue, FLOAT_MAX, INTEGER_MAX, INTEGER_MIN } from '../mapping/field-value.ts';
import type { JsonObject } from '../mapping/json-value.ts';
import { NUMERIC_TYPES, type FlatField } from '../mapping/mapping.ts';
import { operationError, shown, storeValue, type OperatorContext } from './operator-context.ts';
import { readPath } from './paths.ts';

/** The arithmetic operator names. */
export type ArithmeticOperator = 'incr' | 'mul' | 'min' | 'max';

/** Applies one arithmetic operator to `field` of `document`. */
export function applyArithmetic(
  document: JsonObject,
  op: ArithmeticOperator,
  field: string,
  value: unknown,
  context: OperatorContext,
): void {
  const leaf = context.index.leaves.get(field);
  const current = readPath(document, field);
  const bound = op === 'min' || op === 'max';
  if (bound && (leaf?.type === 'date' || (leaf === undefined && typeof value === 'string'))) {
    applyDateBound(document, op, field, value, current, leaf, context);
    return;
  }
  if (leaf !== undefined && !NUMERIC_TYPES.has(leaf.type)) {
    throw operationError(`field is mapped as [${leaf.type}], ${op} needs a numeric field`);
  }
  const operand = numericOperand(value, leaf);
  const base = currentNumber(current, leaf);
  let result: number;
  switch (op) {
    case 'incr':
      result = (base ?? 0) + operand;
      break;
    case 'mul':
      result = base === undefined ? 0 : base * operand;
      break;
    case 'min':
      if (base !== undefined && base <= operand) return;
      result = operand;
      break;
    case 'max':
      if (base !== undefined && base >= operand) return;
      result = operand;
      break;
  }
  checkResult(result, base ?? 0, operand, leaf);
  storeValue(document, field, result, context);
}

function numericOperand(value: unknown, leaf: FlatField | undefined): number {
  if (typeof value !== 'number' || !Number.isFinite(value)) throw operationError(`value ${shown(value)} is not numeric`);
  if ((leaf?.type === 'long' || leaf?.type === 'integer') && !Number.isInteger(value)) {
    throw operationError(`value ${shown(value)} is not an integer, the field is mapped as [${leaf.type}]`);
  }
  return value;
}

/** The field's current number; undefined when missing or null. */
function currentNumber(current: unknown, leaf: FlatField | undefined): number | undefined {
  if (current === undefined || current === null) return undefined;
  if (typeof current === 'number' && leaf === undefined) return current;
  if (leaf !== undefined && (typeof current === 'number' || typeof current === 'string')) {
    const number = coerceOrNull(leaf, current);
    if (number !== undefined) return number ?? undefined;
  }
  throw operationError(`field value ${shown(current)} is not numeric`);
}

/**
 * The column value of a stored scalar, null when it counts as missing, undefined when it does not
 * fit. Read leniently: a value stored before longs had to be exact is still a number (the
 * operator's result is then refused as an overflow).
 */
function coerceOrNull(leaf: FlatField, value: unknown): number | null | undefined {
  try {
    return coerceColumnValue(leaf, value, false);
  } catch {
    return undefined;
  }
}

function checkResult(result: number, base: number, operand: number, leaf: FlatField | undefined): void {
  if (!Number.isFinite(result)) throw operationError(`overflow: the result is not a finite number`);
  switch (leaf?.type) {
    case 'integer':
      if (result > INTEGER_MAX || result < INTEGER_MIN) {
        throw operationError(`overflow: result [${result}] is outside the range of [integer] (-2^31 to 2^31-1)`);
      }
      return;
    case 'long':
      if (!Number.isSafeInteger(result)) {
        throw operationError(
          `overflow: result [${result}] is outside the exact range of [long] (longs are exact up to ±(2^53-1))`,
        );
      }
      return;
    case 'float':
      if (Math.abs(result) > FLOAT_MAX) throw operationError(`overflow: result [${result}] is outside the range of [float]`);
      return;
    case undefined:
      if (Number.isSafeInteger(base) && Number.isSafeInteger(operand) && !Number.isSafeInteger(result)) {
        throw operationError(`overflow: integer result [${result}] is beyond ±(2^53-1) and would lose exactness`);
      }
      return;
  }
}

function applyDateBound(
  document: JsonObject,
  op: 'min' | 'max',
  field: string,
  value: unknown,
  current: unknown,
  leaf: FlatField | undefined,
  context: OperatorContext,
): void {
  const candidate = parseDate(value);
  if (candidate === null || (typeof value !== 'string' && typeof value !== 'number')) {
    throw operationError(`value ${shown(value)} is not a date (expected ISO 8601 or epoch millis)`);
  }
  if (current !== undefined && current !== null) {
    const existing = typeof current === 'string' || typeof current === 'number' ? currentDate(current, leaf) : null;
    if (existing === null) throw operationError(`field value ${shown(current)} is not a date`);
    if (op === 'min' ? existing <= candidate : existing >= candidate) return;
  }
  storeValue(document, field, value, context);
}

function currentDate(current: string | number, leaf: FlatField | undefined): number | null {
  if (leaf === undefined) return parseDate(current);
  return coerceOrNull(leaf, current) ?? null;
}
