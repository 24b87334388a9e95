import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { BackgroundSampler } from './background-sampler.ts';

test('probes run in order on every tick; a failing probe is logged and the others still run', async () => {
  const calls: string[] = [];
  const lines: string[] = [];
  const logger = pino({ level: 'warn' }, new Writable({ write: (chunk: Buffer, _encoding, done) => (lines.push(chunk.toString()), done()) }));
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  const sampler = new BackgroundSampler(
    [
      { sample: () => void calls.push('first') },
      {
        sample: () => {
          calls.push('broken');
          throw new Error('unreadable');
        },
      },
      {
        sample: async () => {
          calls.push('slow');
          await gate;
        },
      },
    ],
    logger,
    60_000,
  );
  const first = sampler.tick();
  // A tick while the previous one runs joins it instead of starting another.
  assert.equal(sampler.tick(), first);
  release();
  await first;
  await sampler.tick();
  assert.deepEqual(calls, ['first', 'broken', 'slow', 'first', 'broken', 'slow']);
  assert.equal(lines.length, 2);
  assert.match(lines[0], /background sample failed/);
  await sampler.start();
  assert.equal(calls.length, 9);
  await sampler.stop();
});
