/** Shared pieces of the model-based shard tests: a seeded generator and the maintenance steps. */
import type { Shard } from './shard.ts';

/** A small seeded pseudo-random generator (mulberry32) for the model-based tests: numbers in [0, 1). */
export function prng(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let value = state;
    value = Math.imul(value ^ (value >>> 15), value | 1);
    value ^= value + Math.imul(value ^ (value >>> 7), value | 61);
    return ((value ^ (value >>> 14)) >>> 0) / 4294967296;
  };
}

/** A step that is not a write. */
export type MaintenanceStep = 'epoch' | 'merge' | 'reopen' | 'crash';

/** Runs a maintenance step and returns the shard to go on with (reopened for `reopen` and `crash`). */
export async function maintenanceStep(step: MaintenanceStep, shard: Shard, open: () => Promise<Shard>): Promise<Shard> {
  switch (step) {
    case 'epoch':
      await shard.epoch();
      return shard;
    case 'merge':
      await shard.forceMerge({ maxSegments: 1 });
      return shard;
    case 'reopen':
      await shard.close();
      return open();
    case 'crash':
      // Drop the shard without closing it (no final sync, no close); an in-process "crash"
      // cannot kill a merge midway, so let background work finish first. crash.test.ts
      // covers real kills.
      await shard.waitForMaintenance();
      return open();
  }
}
