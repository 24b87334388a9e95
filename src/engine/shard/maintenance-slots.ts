/**
 * How many epochs and merges run at once in one thread, whatever the number of shards it hosts.
 * Each one holds a few descriptors while it writes (segment files, the manifest, directory fsyncs):
 * with hundreds of shards reaching `epoch.max_docs` in the same bulk request, running them all at
 * once took the process past its open-file limit (EMFILE) on a node that had descriptors to spare
 * at rest. Tasks beyond the slots wait their turn, in order; writes and searches do not wait.
 */

/** Epochs and merges that run at once in one thread. */
export const MAINTENANCE_SLOTS_PER_THREAD = 4;

/** A counting semaphore over `slots` concurrent tasks, first come first served. */
export class TaskSlots {
  private running = 0;
  private readonly waiting: Array<() => void> = [];

  constructor(readonly slots: number) {}

  /** Runs `task` once a slot is free; the slot is released when it settles. */
  async run<T>(task: () => Promise<T>): Promise<T> {
    if (this.running >= this.slots) await new Promise<void>((resolve) => this.waiting.push(resolve));
    else this.running += 1;
    try {
      return await task();
    } finally {
      const next = this.waiting.shift();
      if (next !== undefined) next();
      else this.running -= 1;
    }
  }

  /** Tasks running and waiting now. */
  stats(): { running: number; waiting: number } {
    return { running: this.running, waiting: this.waiting.length };
  }
}

/** The slots of this thread (every worker thread loads its own copy of this module). */
export const maintenanceSlots = new TaskSlots(MAINTENANCE_SLOTS_PER_THREAD);
