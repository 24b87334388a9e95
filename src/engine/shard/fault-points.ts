/**
 * Test-only fault points of a shard as plain data (they cross to worker threads and are set from
 * `TROVE_FAULTS`), and the engine hooks they arm.
 */
import { EngineError } from '../errors.ts';
import type { ShardFaults } from './maintenance.ts';

/** Fault points armed on one shard. */
export interface ShardFaultSpec {
  /** Every merge pass fails before it merges anything (`fault_injected`). */
  failMerge?: boolean;
  /** The process is killed (SIGKILL) once a merge pass has written its first segment file. */
  crashMidMerge?: boolean;
}

/** The engine hooks for a spec; undefined when nothing is armed. */
export function shardFaultHooks(uuid: string, spec: ShardFaultSpec | undefined): ShardFaults | undefined {
  if (spec?.failMerge) {
    return {
      beforeMerge: () => {
        throw new EngineError('fault_injected', `injected failure of the compaction pass on shard [${uuid}]`);
      },
    };
  }
  if (spec?.crashMidMerge) {
    let merging = false;
    return {
      beforeMerge: () => {
        merging = true;
      },
      afterSegmentFile: () => {
        if (merging) process.kill(process.pid, 'SIGKILL');
      },
    };
  }
  return undefined;
}
