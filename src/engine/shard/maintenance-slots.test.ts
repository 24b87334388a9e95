import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { TaskSlots } from './maintenance-slots.ts';

test('at most `slots` tasks run at once, in arrival order, and a failing task frees its slot', async () => {
  const slots = new TaskSlots(2);
  let running = 0;
  let peak = 0;
  const started: number[] = [];
  const task = (index: number) => async () => {
    started.push(index);
    running += 1;
    peak = Math.max(peak, running);
    await sleep(5);
    running -= 1;
    if (index === 1) throw new Error('fails');
    return index;
  };
  const results = await Promise.allSettled(Array.from({ length: 7 }, (_, index) => slots.run(task(index))));
  assert.equal(peak, 2);
  assert.deepEqual(started, [0, 1, 2, 3, 4, 5, 6]);
  assert.equal(results[1]!.status, 'rejected');
  assert.deepEqual(results.filter((result) => result.status === 'fulfilled').map((result) => (result as PromiseFulfilledResult<number>).value), [0, 2, 3, 4, 5, 6]);
  assert.deepEqual(slots.stats(), { running: 0, waiting: 0 });
});
