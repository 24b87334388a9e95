/**
 * The searchable view of a shard copy whose collection makes writes visible on refresh (OpenSearch's
 * model, `index.visibility: refresh`). The view is a snapshot of the copy's leaves
 * (snapshot-leaf.ts) taken at the last refresh; searches, counts, reader contexts and non-realtime
 * gets read it, and a refresh replaces it by a new one. A replaced view is closed once the last
 * search holding it lets go. Refreshes come from the caller (`refresh()`) and every `intervalMs`
 * (none when it is not positive); a refresh with nothing new (no record applied, no leaf replaced
 * by an epoch or a merge) keeps the view it has. `waitFor` resolves once the view includes every
 * record applied when it was called (`refresh=wait_for`).
 *
 * In the default mode (`immediate`) nothing is held and nothing runs: the shard snapshots its
 * leaves for each search, as it always did.
 */
import type { LeafReader } from '../segment/leaf-reader.ts';
import type { SnapshotLeaf } from './snapshot-leaf.ts';

/** When writes become visible to search: at once (Trove's default) or on the next refresh. */
export type Visibility = 'immediate' | 'refresh';

/** What a view is made of: the snapshot leaves and the function that closes them. */
export interface OpenedSnapshot {
  leaves: SnapshotLeaf[];
  close: () => void;
}

/** What the views need of their shard. */
export interface ViewSource {
  /** A snapshot of the leaves as they are now. */
  open(): OpenedSnapshot;
  /** The seq of the last record applied (in memory) to the copy. */
  lastSeq(): number;
  /** The leaves the copy has now, in search order (compared by identity to see an epoch or merge). */
  leaves(): readonly LeafReader[];
}

/** A held view: its snapshot, how many searches hold it, and what it includes. */
interface HeldView {
  snapshot: OpenedSnapshot;
  /** The leaves it was taken of. */
  source: readonly LeafReader[];
  /** Every record up to this seq is in it. */
  seq: number;
  users: number;
  replaced: boolean;
}

/** A `waitFor` in progress. */
interface Waiter {
  seq: number;
  resolve: (included: boolean) => void;
  timer: NodeJS.Timeout;
}

/** The leaves of a view as one search holds them; `release` exactly once. */
export interface ViewLease {
  leaves: readonly SnapshotLeaf[];
  release: () => void;
}

/** See the module comment. */
export class RefreshedViews {
  private mode: Visibility = 'immediate';
  private intervalMs = 0;
  private view: HeldView | null = null;
  private timer: NodeJS.Timeout | null = null;
  private readonly waiters = new Set<Waiter>();
  private closed = false;
  private refreshes = 0;

  constructor(private readonly source: ViewSource) {}

  /** Whether searches read a refreshed view (mode `refresh`). */
  get active(): boolean {
    return this.view !== null;
  }

  /** How many refreshes replaced the view (stats). */
  get refreshCount(): number {
    return this.refreshes;
  }

  /**
   * Sets the mode and the periodic interval (ms; not positive: no periodic refresh). Entering
   * `refresh` takes a view of the copy as it is now; leaving it drops the view (searches holding it
   * finish on it) and answers every waiter.
   */
  configure(mode: Visibility, intervalMs: number): void {
    if (this.closed) return;
    const interval = Number.isFinite(intervalMs) && intervalMs > 0 ? Math.max(1, Math.round(intervalMs)) : 0;
    if (mode === this.mode && interval === this.intervalMs) return;
    this.mode = mode;
    this.intervalMs = interval;
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    if (mode === 'immediate') {
      this.drop();
      this.answerAll(true);
      return;
    }
    if (this.view === null) this.install();
    if (interval > 0) {
      this.timer = setInterval(() => this.refresh(), interval);
      this.timer.unref();
    }
  }

  /** The current view for one search (refresh mode only; check `active`). */
  acquire(): ViewLease {
    const view = this.view;
    if (view === null) throw new Error('no refreshed view: the copy makes writes visible at once');
    view.users++;
    let released = false;
    return {
      leaves: view.snapshot.leaves,
      release: () => {
        if (released) return;
        released = true;
        view.users--;
        if (view.replaced && view.users === 0) view.snapshot.close();
      },
    };
  }

  /**
   * Replaces the view by one of the copy as it is now, unless nothing changed since the last one;
   * answers whether it replaced it (false in immediate mode).
   */
  refresh(): boolean {
    const view = this.view;
    if (this.closed || view === null) return false;
    const leaves = this.source.leaves();
    if (view.seq === this.source.lastSeq() && sameLeaves(view.source, leaves)) return false;
    this.install();
    return true;
  }

  /**
   * Resolves true once the view includes every record applied now (at once when it already does,
   * or in immediate mode), false after `timeoutMs` or when the copy closes first.
   */
  waitFor(timeoutMs: number): Promise<boolean> {
    const seq = this.source.lastSeq();
    if (this.view === null || this.view.seq >= seq) return Promise.resolve(!this.closed);
    return new Promise((resolve) => {
      const waiter: Waiter = {
        seq,
        resolve,
        timer: setTimeout(() => {
          this.waiters.delete(waiter);
          resolve(false);
        }, Math.max(0, timeoutMs)),
      };
      this.waiters.add(waiter);
    });
  }

  /** Stops the periodic refresh, drops the view and answers every waiter false (the copy is closing). */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    this.drop();
    this.answerAll(false);
  }

  private install(): void {
    const source = [...this.source.leaves()];
    const seq = this.source.lastSeq();
    const snapshot = this.source.open();
    this.drop();
    this.view = { snapshot, source, seq, users: 0, replaced: false };
    this.refreshes++;
    for (const waiter of [...this.waiters]) {
      if (waiter.seq > seq) continue;
      this.waiters.delete(waiter);
      clearTimeout(waiter.timer);
      waiter.resolve(true);
    }
  }

  /** Retires the current view: closed now when no search holds it, else by its last one. */
  private drop(): void {
    const view = this.view;
    this.view = null;
    if (view === null) return;
    view.replaced = true;
    if (view.users === 0) view.snapshot.close();
  }

  private answerAll(included: boolean): void {
    for (const waiter of this.waiters) {
      clearTimeout(waiter.timer);
      waiter.resolve(included);
    }
    this.waiters.clear();
  }
}

function sameLeaves(left: readonly LeafReader[], right: readonly LeafReader[]): boolean {
  return left.length === right.length && left.every((leaf, index) => leaf === right[index]);
}
