/** Shared fixtures of the update tests (named *.test.ts so that builds leave it out; it holds no tests). */
import assert from 'node:assert/strict';
import { EngineError } from '../errors.ts';
import { flattenMapping, type Mapping } from '../mapping/mapping.ts';
import type { UpdateOperation } from '../shard/operations.ts';
import { planUpdate, type UpdatePlan } from './plan-update.ts';

/** A mapping with every field type, inplace and not, and an object. */
export const testMapping: Mapping = {
  properties: {
    title: { type: 'text', fields: { keyword: { type: 'keyword', ignore_above: 256 } } },
    tags: { type: 'keyword' },
    price: { type: 'long' },
    count: { type: 'integer' },
    score: { type: 'double' },
    ratio: { type: 'float' },
    views: { type: 'long', inplace: true },
    rating: { type: 'double', inplace: true },
    published: { type: 'date' },
    seen: { type: 'date', inplace: true },
    active: { type: 'boolean' },
    featured: { type: 'boolean', inplace: true },
    stats: {
      type: 'object',
      properties: { views: { type: 'long', inplace: true }, clicks: { type: 'long' }, last: { type: 'date' } },
    },
  },
};

/** The flattened test mapping. */
export const testFields = flattenMapping(testMapping);

/** The fixed clock of the tests: 2024-05-06T07:08:09.010Z. */
export const NOW = Date.UTC(2024, 4, 6, 7, 8, 9, 10);

/** Plans `ops` (and an optional `doc`) on a copy of `current` and checks that `current` is left untouched. */
export function plan(
  current: Record<string, unknown>,
  ops: UpdateOperation[] | undefined,
  doc?: Record<string, unknown>,
): UpdatePlan {
  const before = structuredClone(current);
  try {
    return planUpdate(current, { doc, ops }, testFields, () => NOW);
  } finally {
    assert.deepEqual(current, before, 'the input document must never be mutated');
  }
}

/** The new source after applying one op. */
export function apply(current: Record<string, unknown>, op: UpdateOperation): Record<string, unknown> {
  return plan(current, [op]).source;
}

/** Asserts that planning throws an EngineError with `code` whose message matches `pattern`. */
export function assertRejects(
  current: Record<string, unknown>,
  ops: UpdateOperation[] | undefined,
  code: string,
  pattern: RegExp,
  doc?: Record<string, unknown>,
): void {
  assert.throws(
    () => plan(current, ops, doc),
    (error: unknown) => {
      assert.ok(error instanceof EngineError, `expected an EngineError, got ${String(error)}`);
      assert.equal(error.code, code, error.message);
      assert.match(error.message, pattern);
      return true;
    },
  );
}
