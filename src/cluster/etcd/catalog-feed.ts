/**
 * Keeps a `CatalogView` in step with etcd through ONE watch on the cluster prefix, resumed from
 * the last revision applied. When etcd cancels the watch (its start revision was compacted away),
 * the feed reads the whole prefix again and reports the difference as one event. Callers wait for
 * "the view has applied revision R" with `waitFor`.
 */
import type { Logger } from 'pino';
import type { Etcd3, IWatchResponse, Watcher } from 'etcd3';
import type { CatalogEvent } from '../catalog.ts';
import { CatalogView } from './catalog-view.ts';
import { prefixRangeEnd, type EtcdLayout } from './etcd-layout.ts';

const RESYNC_MIN_DELAY_MS = 100;
const RESYNC_MAX_DELAY_MS = 2_000;
const WATCH_CANCEL_TIMEOUT_MS = 2_000;

/**
 * etcd3's watch reconnection delay (`faultHandling.watchBackoff`): 100 ms doubling up to 2 s.
 * Its default grows to 30 s, which delays the watch's return after an etcd outage and leaves a
 * timer that keeps a closed client's process alive that long.
 */
export class WatchBackoff {
  constructor(private readonly attempt = 0) {}

  get duration(): number {
    return Math.min(RESYNC_MIN_DELAY_MS * 2 ** this.attempt, RESYNC_MAX_DELAY_MS);
  }

  next(): WatchBackoff {
    return new WatchBackoff(this.attempt + 1);
  }
}

interface Waiter {
  ready: () => boolean;
  resolve: (ready: boolean) => void;
  timer: NodeJS.Timeout;
}

/** The watch that feeds the view (see the module comment). */
export class CatalogFeed {
  readonly view: CatalogView;
  private watcher: Watcher | null = null;
  /** Since when the catalog watch has been disconnected (epoch millis), or null while it is connected. */
  disconnectedSince: number | null = null;
  private waiters = new Set<Waiter>();
  private resyncing = false;
  private stopped = false;

  constructor(
    private readonly client: Etcd3,
    private readonly layout: EtcdLayout,
    /** Called after every update of the view with the catalog events it produced (maybe none). */
    private readonly onUpdate: (events: CatalogEvent[]) => void,
    private readonly logger?: Logger,
  ) {
    this.view = new CatalogView(layout, logger);
  }

  /** Reads the whole prefix into the view, then starts the watch after that revision. */
  async start(): Promise<void> {
    await this.reload();
    this.watch();
  }

  /** Resolves true once `ready()` holds after some view update, false after `timeoutMs` or on stop. */
  waitFor(ready: () => boolean, timeoutMs: number): Promise<boolean> {
    if (ready()) return Promise.resolve(true);
    if (this.stopped || timeoutMs <= 0) return Promise.resolve(false);
    return new Promise((resolve) => {
      const waiter: Waiter = {
        ready,
        resolve,
        timer: setTimeout(() => {
          this.waiters.delete(waiter);
          resolve(false);
        }, timeoutMs),
      };
      this.waiters.add(waiter);
    });
  }

  /** Resolves true once the view has applied etcd revision `revision`. */
  waitForRevision(revision: number, timeoutMs: number): Promise<boolean> {
    return this.waitFor(() => this.view.appliedRevision >= revision, timeoutMs);
  }

  /** Stops the watch; pending waits resolve false. */
  async stop(): Promise<void> {
    this.stopped = true;
    for (const waiter of this.waiters) {
      clearTimeout(waiter.timer);
      waiter.resolve(false);
    }
    this.waiters.clear();
    const watcher = this.watcher;
    this.watcher = null;
    if (watcher === null) return;
    // Cancelling waits for etcd's answer: bounded, for an etcd that does not answer.
    await Promise.race([watcher.cancel().catch(() => undefined), new Promise((resolve) => setTimeout(resolve, WATCH_CANCEL_TIMEOUT_MS).unref())]);
  }

  private async reload(): Promise<void> {
    const response = await this.client.kv.range({ key: Buffer.from(this.layout.prefix), range_end: prefixRangeEnd(this.layout.prefix) });
    const event = this.view.load(response.kvs, Number(response.header.revision));
    this.settle(event === null ? [] : [event]);
  }

  private watch(): void {
    if (this.stopped) return;
    const watcher = this.client
      .watch()
      .prefix(this.layout.prefix)
      .startRevision(String(this.view.appliedRevision + 1))
      .watcher();
    this.watcher = watcher;
    watcher.on('data', (response: IWatchResponse) => {
      if (this.watcher !== watcher) return;
      this.disconnectedSince = null;
      this.settle(this.view.apply(response.events));
    });
    // etcd3 moves its resume point to the creation response's header revision, which would skip
    // events of a catch-up that a second disconnection interrupts: resume from what was applied.
    watcher.on('connected', () => {
      this.disconnectedSince = null;
      const request = (watcher as unknown as { request?: { start_revision?: number | string } }).request;
      if (request) request.start_revision = this.view.appliedRevision + 1;
    });
    watcher.on('disconnected', (error: Error) => {
      this.disconnectedSince ??= Date.now();
      if (!this.stopped) this.logger?.warn({ err: error }, 'etcd catalog watch disconnected; it resumes from the last revision seen');
    });
    watcher.on('error', (error: Error) => {
      if (this.watcher !== watcher || this.stopped) return;
      this.logger?.warn({ err: error }, 'etcd canceled the catalog watch (compaction); reloading the catalog');
      void this.resync();
    });
  }

  /**
   * Full reload after etcd canceled the watch (etcd3 has already dropped it: cancelling it again
   * would wait forever for an answer); retries until it succeeds or the feed stops.
   */
  private async resync(): Promise<void> {
    if (this.resyncing) return;
    this.resyncing = true;
    this.watcher = null;
    let delay = RESYNC_MIN_DELAY_MS;
    while (!this.stopped) {
      try {
        await this.reload();
        break;
      } catch (error) {
        this.logger?.warn({ err: error }, 'cannot reload the catalog from etcd; retrying');
        await new Promise((resolve) => setTimeout(resolve, delay));
        delay = Math.min(delay * 2, RESYNC_MAX_DELAY_MS);
      }
    }
    this.resyncing = false;
    this.watch();
  }

  private settle(events: CatalogEvent[]): void {
    this.onUpdate(events);
    for (const waiter of this.waiters) {
      if (!waiter.ready()) continue;
      clearTimeout(waiter.timer);
      this.waiters.delete(waiter);
      waiter.resolve(true);
    }
  }
}
