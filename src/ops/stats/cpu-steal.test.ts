import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { HostFiles } from '../host/host-files.ts';
import { CpuStealSampler, parseCpuTicks } from './cpu-steal.ts';

let root: string;

/** Writes an aggregate cpu line with the given cumulative steal and other ticks. */
async function writeStat(steal: number, other: number): Promise<void> {
  await writeFile(join(root, 'proc/stat'), `cpu  ${other} 0 0 0 0 0 0 ${steal} 0 0\ncpu0 1 0 0 0 0 0 0 0 0 0\n`);
}

before(async () => {
  root = await mkdtemp(join(tmpdir(), 'trove-steal-'));
  await mkdir(join(root, 'proc'));
});

after(async () => {
  await rm(root, { recursive: true, force: true });
});

test('parseCpuTicks sums the first eight columns (guest time is already in user)', () => {
  assert.deepEqual(parseCpuTicks('cpu  100 1 20 300 4 0 5 10 7 0\n'), { steal: 10, total: 440 });
  assert.throws(() => parseCpuTicks('cpu0 1 2 3\n'), /no aggregate cpu line/);
  assert.throws(() => parseCpuTicks('cpu  1 2 3 4\n'), /no steal column/);
});

test('samples give the current value, tick-weighted 1m and 5m averages and a 5 minute trend', async () => {
  const sampler = new CpuStealSampler(new HostFiles(root));
  const start = 1_000_000;
  await writeStat(0, 0);
  await sampler.sample(start);
  // Minute by minute: 10% steal for four minutes (100 ticks each), then 50% (1000 ticks).
  let steal = 0;
  let other = 0;
  for (let minute = 1; minute <= 4; minute++) {
    steal += 10;
    other += 90;
    await writeStat(steal, other);
    await sampler.sample(start + minute * 60_000);
  }
  steal += 500;
  other += 500;
  await writeStat(steal, other);
  await sampler.sample(start + 5 * 60_000);

  const now = start + 5 * 60_000;
  const figures = await sampler.read(now);
  assert.equal(figures.current, 50);
  assert.equal(figures.avg_1m, 50);
  // (4 × 10 + 500) steal ticks over (4 × 100 + 1000) ticks.
  assert.equal(figures.avg_5m, 38.57);
  assert.deepEqual(figures.trend.map((sample) => sample.value), [10, 10, 10, 10, 50]);
  assert.equal(figures.trend[0].t, start + 60_000);

  // Samples older than five minutes leave the trend.
  steal += 0;
  other += 100;
  await writeStat(steal, other);
  await sampler.sample(start + 6 * 60_000);
  const later = await sampler.read(start + 6 * 60_000);
  assert.deepEqual(later.trend.map((sample) => sample.value), [10, 10, 10, 50, 0]);
  assert.equal(later.current, 0);
});

test('before the first interval the current value is read live; an unreadable file is a reason', async () => {
  const sampler = new CpuStealSampler(new HostFiles(root));
  await writeStat(0, 0);
  await sampler.sample(0);
  await writeStat(25, 75);
  const early = await sampler.read(1);
  assert.equal(early.current, 25);
  assert.deepEqual(early.trend, []);

  const missing = new CpuStealSampler(new HostFiles(join(root, 'nothing')));
  await missing.sample(0);
  const figures = await missing.read(0);
  assert.equal(figures.current, null);
  assert.match(figures.error ?? '', /cannot read \/proc\/stat: no such file/);
});
