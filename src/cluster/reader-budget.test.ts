import assert from 'node:assert/strict';
import { test } from 'node:test';
import { EngineError } from '../engine/errors.ts';
import { ReaderBudget } from './reader-budget.ts';

const limits = { scroll: 3, pit: 1 };
const tooMany = (error: unknown): boolean => error instanceof EngineError && error.code === 'too_many_scroll_contexts';

test('the budget counts each copy of a group, per kind, and refuses past the limit', () => {
  const budget = new ReaderBudget(() => limits);
  for (const copy of ['c1', 'c2', 'c3']) budget.confirm(budget.reserve('scroll', copy, 60_000), 'group');
  assert.deepEqual(budget.counts(), { scroll: 3, pit: 0 });
  assert.throws(() => budget.reserve('scroll', 'c4', 60_000), (error) => tooMany(error) && /\[search\.max_open_scroll_context\]/.test((error as Error).message));
  budget.confirm(budget.reserve('pit', 'c1', 60_000), 'pit-group');
  assert.throws(() => budget.reserve('pit', 'c2', 60_000), (error) => tooMany(error) && /Point In Time contexts. Must be less than or equal to: \[1\]/.test((error as Error).message));
  budget.forget('c2', 'group');
  assert.deepEqual(budget.counts(), { scroll: 2, pit: 1 });
  budget.forgetCopy('c1', 'scroll');
  assert.deepEqual(budget.counts(), { scroll: 1, pit: 1 });
  budget.forgetCopy('c1');
  assert.deepEqual(budget.counts(), { scroll: 1, pit: 0 });
  const reserved = budget.reserve('scroll', 'c9', 60_000);
  budget.release(reserved);
  assert.deepEqual(budget.counts(), { scroll: 1, pit: 0 });
});

test('a context stops counting when its keep-alive passes, and a use renews it', async () => {
  const budget = new ReaderBudget(() => limits);
  budget.confirm(budget.reserve('pit', 'c1', 40), 'short');
  await new Promise((resolve) => setTimeout(resolve, 25));
  budget.touch('c1', 'short');
  await new Promise((resolve) => setTimeout(resolve, 25));
  assert.deepEqual(budget.counts(), { scroll: 0, pit: 1 }, 'renewed by the use');
  await new Promise((resolve) => setTimeout(resolve, 50));
  assert.deepEqual(budget.counts(), { scroll: 0, pit: 0 });
  budget.confirm(budget.reserve('pit', 'c1', 60_000), 'next');
});
