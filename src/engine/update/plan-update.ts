/**
 * Planning a partial update (`POST /{collection}/_update/{id}`): a pure, synchronous function
 * from the current source and the request to the new source and what the engine must write.
 *
 * `doc` is deep-merged first (objects merge recursively, arrays and scalars replace, keys are
 * taken literally as in Elasticsearch), then `ops` run in order, each seeing the previous one's
 * result. The input is never mutated, so a failure leaves the document unchanged by construction.
 *
 * Errors: a request without `doc` and `ops`, or with a `doc` that is not an object or `ops` that
 * is not an array, is action_request_validation; a `doc` value that does not fit its mapped type
 * is mapper_parsing (as Elasticsearch reports it); every failing op is illegal_argument, with
 * the op's position, name, field and the reason in the message.
 */
import { EngineError } from '../errors.ts';
import { coerceColumnValue } from '../mapping/field-value.ts';
import { fieldIndexOf, type FieldIndex } from '../mapping/field-index.ts';
import { cloneJson, getOwn, isPlainObject, jsonEqual, setKey, type JsonObject } from '../mapping/json-value.ts';
import type { FlatField } from '../mapping/mapping.ts';
import { checkFieldValue } from '../mapping/parse-document.ts';
import type { UpdateOperation } from '../shard/operations.ts';
import type { OperatorContext } from './operator-context.ts';
import { applyOperation } from './operators.ts';
import { readPath } from './paths.ts';

/** The body of a partial update as the planner needs it. */
export interface UpdateRequest {
  doc?: Record<string, unknown>;
  ops?: UpdateOperation[];
}

/** One column slot to write: an inplace field's final value (null = unset). */
export interface InplaceWrite {
  field: string;
  /** Dates as epoch millis, booleans as 0/1. */
  value: number | null;
}

/** The outcome of planning an update. */
export interface UpdatePlan {
  /** The new full source (a fresh copy; the input is never mutated). */
  source: Record<string, unknown>;
  /** False when the result equals the input, as reads show it (for detect_noop). */
  changed: boolean;
  /** True when something changed and every change is a value of an inplace field: only column slots need writing. */
  inplaceOnly: boolean;
  /** Final values of the inplace fields whose column value changed. */
  inplaceWrites: InplaceWrite[];
}

/** A path whose value differs between the old and the new source. */
interface ChangedPath {
  path: string;
  /** True when an object appeared, disappeared or replaced a non-object there. */
  structural: boolean;
}

/** Applies `doc` then `ops` to a copy of `current`; throws without side effects when any step fails. */
export function planUpdate(
  current: Record<string, unknown>,
  request: UpdateRequest,
  fields: ReadonlyMap<string, FlatField>,
  now: () => number = Date.now,
): UpdatePlan {
  const { doc, ops } = request;
  if (doc === undefined && ops === undefined) {
    throw new EngineError('action_request_validation', 'Validation Failed: 1: doc or ops is missing;');
  }
  if (doc !== undefined && !isPlainObject(doc)) {
    throw new EngineError('action_request_validation', 'Validation Failed: 1: [doc] must be an object;');
  }
  if (ops !== undefined && !Array.isArray(ops)) {
    throw new EngineError('action_request_validation', 'Validation Failed: 1: [ops] must be an array;');
  }
  const context: OperatorContext = { fields, index: fieldIndexOf(fields), now };
  const source = cloneJson(current);
  if (doc !== undefined) {
    checkFieldValue('', doc, fields);
    mergeDoc(source, doc);
  }
  if (ops !== undefined) {
    for (let position = 0; position < ops.length; position++) {
      applyOperation(source, ops[position] as UpdateOperation, position, context);
    }
  }
  return { source, ...summarizeChanges(current, source, context.index) };
}

/** What changed between the old and the new source, as reads show it, and the column writes. */
function summarizeChanges(current: JsonObject, source: JsonObject, index: FieldIndex): Omit<UpdatePlan, 'source'> {
  const inplaceWrites: InplaceWrite[] = [];
  for (const field of index.inplace) {
    const after = columnValue(source, field);
    if (columnValue(current, field) !== after) inplaceWrites.push({ field: field.path, value: after });
  }
  const written = new Set(inplaceWrites.map((write) => write.field));
  const changes: ChangedPath[] = [];
  collectChanges(current, source, '', changes);
  // Reads show an inplace field's column value, so a new spelling of the same value ("7" for 7) is no change.
  const visible = changes.filter(
    (change) => change.structural || index.leaves.get(change.path)?.inplace !== true || written.has(change.path),
  );
  const changed = visible.length > 0;
  const inplaceOnly = changed && visible.every((change) => !change.structural && written.has(change.path));
  return { changed, inplaceOnly, inplaceWrites };
}

/** Elasticsearch's partial-document merge: objects merge recursively, anything else replaces. */
function mergeDoc(target: JsonObject, patch: JsonObject): void {
  for (const key of Object.keys(patch)) {
    const incoming = patch[key];
    const existing = getOwn(target, key);
    if (isPlainObject(incoming) && isPlainObject(existing)) mergeDoc(existing, incoming);
    else setKey(target, key, cloneJson(incoming));
  }
}

function collectChanges(before: JsonObject, after: JsonObject, prefix: string, changes: ChangedPath[]): void {
  for (const key of Object.keys(before)) {
    const path = prefix === '' ? key : `${prefix}.${key}`;
    const left = before[key];
    const right = getOwn(after, key);
    if (isPlainObject(left) && isPlainObject(right)) {
      collectChanges(left, right, path, changes);
    } else if (!Object.hasOwn(after, key) || !jsonEqual(left, right)) {
      changes.push({ path, structural: isPlainObject(left) || isPlainObject(right) });
    }
  }
  for (const key of Object.keys(after)) {
    if (Object.hasOwn(before, key)) continue;
    changes.push({ path: prefix === '' ? key : `${prefix}.${key}`, structural: isPlainObject(after[key]) });
  }
}

/** The column value of an inplace field in a source (null when absent, null or empty). */
function columnValue(source: JsonObject, field: FlatField): number | null {
  let value = readPath(source, field.path);
  while (Array.isArray(value)) {
    const present = value.filter((element) => element !== null && element !== undefined);
    if (present.length > 1) {
      throw new EngineError('mapper_parsing', `inplace field [${field.path}] holds several values, it accepts a single value`);
    }
    value = present[0];
  }
  if (value === null || value === undefined) return null;
  return coerceColumnValue(field, value);
}
