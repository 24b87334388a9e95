/**
 * Crash and failure points of the trash, for tests only. They are armed like every other fault
 * point, through the `TROVE_FAULTS` environment variable read once at start-up (src/node/faults.ts).
 * When the code reaches an armed crash point the process kills itself with SIGKILL, exactly like
 * `kill -9` at that instant: crash tests arm a point, send the request, restart the node without
 * the variable and check that the item is either fully live or fully in the trash. An armed
 * failure point throws `fault_injected` instead, as a failed file operation (EMFILE, ENOSPC) would:
 * the step must clean up after itself and the node go on.
 */

/** Every crash point, in the order an operation reaches them. */
export const TRASH_FAULT_POINTS = [
  /** Delete: every node wrote its intent; the catalog still holds the collections. */
  'trash.delete.after_prepare',
  /** Delete: the catalog change is durable; no shard directory has moved yet. */
  'trash.delete.after_commit',
  /** Delete: the first shard directory moved into the trash, the others not yet. */
  'trash.delete.mid_move',
  /** Restore: every node marked the item `restoring`; the catalog does not hold it yet. */
  'trash.restore.after_prepare',
  /** Restore: the catalog holds the collections again; no shard directory has moved back yet. */
  'trash.restore.after_commit',
  /** Restore: the first shard directory moved back, the others not yet. */
  'trash.restore.mid_move',
  /** Purge: the item directory was renamed away (the purge's commit point); nothing removed yet. */
  'trash.purge.after_commit',
  /** Purge: the first shard directory of the item was removed, the others not yet. */
  'trash.purge.mid_remove',
] as const;

/** Every failure point. */
export const TRASH_FAILURE_POINTS = [
  /** Delete: the item directory was made; recording the intent in it fails. */
  'trash.delete.fail_intent',
] as const;

/** Name of a failure point. */
export type TrashFailurePoint = (typeof TRASH_FAILURE_POINTS)[number];

/** True for the name of a trash failure point. */
export function isTrashFailurePoint(name: string): name is TrashFailurePoint {
  return (TRASH_FAILURE_POINTS as readonly string[]).includes(name);
}

/** Name of a crash point. */
export type TrashFaultPoint = (typeof TRASH_FAULT_POINTS)[number];

/** True for the name of a trash crash point. */
export function isTrashFaultPoint(name: string): name is TrashFaultPoint {
  return (TRASH_FAULT_POINTS as readonly string[]).includes(name);
}

/** How the trash reaches its crash points; the node's fault set (src/node/faults.ts) implements it. */
export interface TrashFaults {
  /** Kills the process when `point` is armed; otherwise does nothing. */
  crashAt(point: TrashFaultPoint): void;
  /** Throws `fault_injected` when `point` is armed; otherwise does nothing. */
  failAt(point: TrashFailurePoint): void;
}

/** No point armed (unit tests, tools). */
export const NO_TRASH_FAULTS: TrashFaults = { crashAt: () => undefined, failAt: () => undefined };
