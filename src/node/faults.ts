/**
 * Fault injection for end-to-end tests (never set it in production). The node reads the
 * `TROVE_FAULTS` environment variable once at start-up: a comma list of points, some with an
 * argument after a colon.
 *
 * | point | effect |
 * |---|---|
 * | `compaction.fail_shard:<shard uuid>` | every compaction pass on that shard fails before it merges anything (`fault_injected`) |
 * | `compaction.crash_shard:<shard uuid>` | the process is killed (SIGKILL) once a compaction pass on that shard has begun merging and written its first segment file |
 * | `compaction.fail_node` | this node refuses compaction requests: its row of `POST /{collection}/_compact` fails |
 * | `replication.slow_position:<ms>` | this node answers a primary asking where its replica copies stand (`replica.position`) only after `<ms>` ms; it stays registered and serves everything else |
 * | `worker.exit_after_writes:<n>` | a shard worker thread exits at its n-th write request (once; the pool restarts it, see src/cluster/worker) |
 * | `trash.<operation>.<point>` | the process is killed (SIGKILL) when a trash delete, restore or purge reaches that point (list in src/trash/trash-faults.ts) |
 * | `trash.delete.fail_intent` | a trash failure point: the step throws `fault_injected` there, as a failed file operation would (list in src/trash/trash-faults.ts) |
 *
 * An unknown point stops the start, so a typo cannot silently disable a test's fault.
 */
import type { ShardFaultSpec } from '../engine/shard/fault-points.ts';
import { EngineError } from '../engine/errors.ts';
import { isTrashFailurePoint, isTrashFaultPoint, type TrashFailurePoint, type TrashFaultPoint } from '../trash/trash-faults.ts';

/** Name of the environment variable read at start-up. */
export const FAULTS_ENV = 'TROVE_FAULTS';

/** The fault points a node honours. */
export interface NodeFaults {
  /** The points as given, for the start-up warning; empty when none is set. */
  readonly active: readonly string[];
  /** True when compaction requests to this node must fail. */
  readonly failCompaction: boolean;
  /** How long this node delays its answers to `replica.position` (0: not delayed). */
  readonly replicaPositionDelayMs: number;
  /** The fault points armed on the shard with this UUID, if any point targets it. */
  shardFaults(shardUuid: string): ShardFaultSpec | undefined;
  /** Kills the process (SIGKILL, like `kill -9`) when the trash crash point is armed. */
  crashAt(point: TrashFaultPoint): void;
  /** Throws `fault_injected` when the trash failure point is armed. */
  failAt(point: TrashFailurePoint): void;
}

/** Parses a `TROVE_FAULTS` value; throws naming the first unknown point or missing argument. */
export function parseFaults(spec: string | undefined): NodeFaults {
  const active = (spec ?? '').split(',').map((part) => part.trim()).filter((part) => part !== '');
  const failShards = new Set<string>();
  const crashShards = new Set<string>();
  const crashPoints = new Set<string>();
  const failurePoints = new Set<string>();
  let failCompaction = false;
  let replicaPositionDelayMs = 0;
  for (const entry of active) {
    const separator = entry.indexOf(':');
    const point = separator < 0 ? entry : entry.slice(0, separator);
    const argument = separator < 0 ? '' : entry.slice(separator + 1);
    switch (point) {
      case 'compaction.fail_node':
        failCompaction = true;
        break;
      case 'replication.slow_position':
        replicaPositionDelayMs = positiveArgument(point, argument, 'a delay in ms', 3000);
        break;
      case 'worker.exit_after_writes':
        positiveArgument(point, argument, 'a positive count', 100);
        break;
      case 'compaction.fail_shard':
      case 'compaction.crash_shard':
        if (argument === '') throw new Error(`${FAULTS_ENV}: [${point}] needs a shard uuid, e.g. ${point}:<uuid>`);
        (point === 'compaction.fail_shard' ? failShards : crashShards).add(argument);
        break;
      default:
        if (isTrashFailurePoint(point)) failurePoints.add(point);
        else if (isTrashFaultPoint(point)) crashPoints.add(point);
        else throw new Error(`${FAULTS_ENV}: unknown fault point [${point}]`);
    }
  }
  return {
    active,
    failCompaction,
    replicaPositionDelayMs,
    crashAt(point: TrashFaultPoint): void {
      if (crashPoints.has(point)) process.kill(process.pid, 'SIGKILL');
    },
    failAt(point: TrashFailurePoint): void {
      if (failurePoints.has(point)) throw new EngineError('fault_injected', `injected failure at [${point}]`);
    },
    shardFaults(shardUuid: string): ShardFaultSpec | undefined {
      if (failShards.has(shardUuid)) return { failMerge: true };
      if (crashShards.has(shardUuid)) return { crashMidMerge: true };
      return undefined;
    },
  };
}

/** The positive integer argument of `point`; throws naming what it needs, with an example. */
function positiveArgument(point: string, argument: string, what: string, example: number): number {
  if (!/^[1-9]\d*$/.test(argument)) throw new Error(`${FAULTS_ENV}: [${point}] needs ${what}, e.g. ${point}:${example}`);
  return Number(argument);
}
