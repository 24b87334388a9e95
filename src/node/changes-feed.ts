/**
 * One open change feed: a readable stream of response text, produced on demand (so a slow client
 * holds back the reading of the log, and nothing piles up in memory). `normal` streams the
 * changes durable when it opened; `longpoll` waits for the first change; `continuous` and
 * `eventsource` stream until the client goes, the limit is reached or (without heartbeat) no
 * change came for `timeout` ms.
 *
 * While it waits, a feed holds one `waitForChanges` call per shard and one timer, all tied to one
 * AbortController that is aborted as soon as the wait ends (a shard answered, the timer fired, or
 * the feed stopped), which ends the other shards' waits and clears the timer. A client that
 * disconnects (the stream is destroyed) ends the wait at once; the feed reports itself closed
 * once none of its shard waits is outstanding. `finish()` ends a feed gracefully, with a complete
 * body (server shutdown).
 */
import { Readable } from 'node:stream';
import type { ChangeBounds, ShardHandle } from '../cluster/shard-handle.ts';
import { encodeCursor } from './changes-cursor.ts';
import { currentDocJson, FRAMINGS, renderResult, type FeedMode } from './changes-format.ts';
import { readBounds, type ChangeLogHandle, type ChangeMerge, type MergedChange } from './changes-merge.ts';

/** What a feed needs of one shard's handle. */
export type FeedShardHandle = ChangeLogHandle & Pick<ShardHandle, 'get' | 'waitForChanges'>;

/** Parameters of one feed, validated. */
export interface ChangeFeedOptions {
  mode: FeedMode;
  /** Most results to write (`Infinity` for no limit). */
  limit: number;
  /** `longpoll`: longest wait; `continuous`/`eventsource` without heartbeat: longest idle time. */
  timeoutMs: number;
  /** Interval of keep-alive output while idle, or null for none. */
  heartbeatMs: number | null;
  includeDocs: boolean;
  /** Write `seq` on every n-th result only (1 = every result). */
  seqInterval: number;
}

/** How a feed reaches its collection. */
export interface FeedSource {
  /** The collection's shards now, in shard order; throws `shard_unavailable` when one is unavailable. */
  shards(): FeedShardHandle[];
  /** Fingerprint of the collection's shard set, written into every cursor. */
  fingerprint: number;
}

/** Text buffered before it is handed to the stream. */
const CHUNK_CHARS = 64 * 1024;

/** See the module comment. */
export class ChangeFeed extends Readable {
  /** Content-Type of the response. */
  readonly contentType: string;
  private readonly producer: AsyncGenerator<string, void, void>;
  private pulling = false;
  private stopping = false;
  private aborted = false;
  /** The body is complete or the stream destroyed: closed once no shard wait is outstanding. */
  private ended = false;
  private released = false;
  /** Aborts the current wait, if the feed is waiting. */
  private wait: AbortController | null = null;
  /** Normal and longpoll feeds: per shard, the durable seq when the feed opened. */
  private readonly openedAt: readonly number[] | undefined;
  private waitsOutstanding = 0;
  private timerArmed = false;
  /** The first chunk of a normal feed, produced before the response started (`prime`). */
  private primed: IteratorResult<string, void> | null = null;

  /** `durableAtOpen`: per shard, the durable seq read when the feed was opened. */
  constructor(
    private readonly source: FeedSource,
    private readonly merge: ChangeMerge,
    durableAtOpen: readonly number[],
    private readonly options: ChangeFeedOptions,
    private readonly onClosed: (feed: ChangeFeed) => void,
  ) {
    super();
    this.contentType = FRAMINGS[options.mode].contentType;
    this.openedAt = options.mode === 'normal' || options.mode === 'longpoll' ? [...durableAtOpen] : undefined;
    this.producer = this.produce();
  }

  /** The cursor of the feed's current position. */
  get lastSeq(): string {
    return encodeCursor(this.source.fingerprint, this.merge.positions);
  }

  /** Shard waits outstanding (`listeners`) and timers this feed holds right now (for tests and stats). */
  heldResources(): { listeners: number; timers: number } {
    return { listeners: this.waitsOutstanding, timers: this.timerArmed ? 1 : 0 };
  }

  /**
   * Normal feeds: produces the first chunk before the response starts, so that what fails while
   * reading it (a cursor whose changes the log trimmed since it was checked) is a plain error
   * response, not a body cut off after its headers.
   */
  async prime(): Promise<void> {
    if (this.options.mode === 'normal') this.primed = await this.producer.next();
  }

  /** Ends the feed at the next opportunity with a complete body (results so far, last_seq). */
  finish(): void {
    this.stopping = true;
    this.wait?.abort();
  }

  override _read(): void {
    if (!this.pulling) void this.pull();
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    this.aborted = true;
    this.stopping = true;
    this.wait?.abort();
    if (!this.pulling) void this.producer.return();
    this.ended = true;
    this.closeWhenReleased();
    callback(error);
  }

  private async pull(): Promise<void> {
    this.pulling = true;
    try {
      for (;;) {
        const next = this.primed ?? (await this.producer.next());
        this.primed = null;
        if (this.destroyed) {
          void this.producer.return();
          return;
        }
        if (next.done) {
          this.push(null);
          this.ended = true;
          this.closeWhenReleased();
          return;
        }
        if (!this.push(next.value)) return;
      }
    } catch (error) {
      this.destroy(error as Error);
    } finally {
      this.pulling = false;
    }
  }

  private async *produce(): AsyncGenerator<string, void, void> {
    const { mode, limit, timeoutMs, heartbeatMs } = this.options;
    const framing = FRAMINGS[mode];
    let shards = this.source.shards();
    // Normal and longpoll feeds end at what was durable when they opened (longpoll: when it woke),
    // however fast writers go; the streaming styles follow the log.
    const bounded = this.openedAt !== undefined;
    let until = this.openedAt;
    const idleTimeout = mode === 'continuous' || mode === 'eventsource';
    const timed = mode === 'longpoll' || heartbeatMs === null;
    let deadline = Date.now() + timeoutMs;
    let nextHeartbeat = heartbeatMs === null ? Number.POSITIVE_INFINITY : Date.now() + heartbeatMs;
    let count = 0;
    let text = framing.open;
    try {
      while (count < limit && !this.stopping) {
        const merged = await this.merge.next(shards, until);
        if (merged !== null) {
          const seq = this.seqFor(count + 1);
          text += framing.row(await this.render(merged, shards, seq), seq, count);
          count++;
          if (idleTimeout) deadline = Date.now() + timeoutMs;
          if (text.length >= CHUNK_CHARS) {
            yield text;
            text = '';
          }
          continue;
        }
        if (mode === 'normal' || (mode === 'longpoll' && count > 0)) break;
        if (text !== '') {
          yield text;
          text = '';
          continue;
        }
        const now = Date.now();
        if (timed && now >= deadline) break;
        if (now >= nextHeartbeat) {
          nextHeartbeat = now + heartbeatMs!;
          yield framing.heartbeat;
          continue;
        }
        shards = this.source.shards();
        const bounds = await readBounds(shards);
        if (bounded) until = durableSeqs(bounds);
        // A commit after these bounds were read is not missed: a shard's wait answers at once for
        // a change past the position it is given.
        if (this.merge.hasAvailable(bounds)) continue;
        await this.waitForChange(shards, Math.min(timed ? deadline : Number.POSITIVE_INFINITY, nextHeartbeat) - Date.now());
        if (bounded && !this.stopping) until = durableSeqs(await readBounds(shards));
      }
      if (this.aborted) return;
      yield text + framing.close(this.lastSeq, this.merge.pending(await readBounds(shards)), count);
    } catch (error) {
      if (this.aborted) return;
      const line = framing.error(errorType(error), error instanceof Error ? error.message : String(error));
      if (line === null) throw error;
      yield text + line;
    }
  }

  /** Resolves once any shard has a durable change past the feed's position, after `ms`, or when the feed stops. */
  private async waitForChange(shards: readonly FeedShardHandle[], ms: number): Promise<void> {
    if (this.stopping) return;
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), Math.max(0, ms));
    this.timerArmed = true;
    const stopped = new Promise<void>((resolve) => {
      const release = (): void => {
        clearTimeout(timer);
        this.timerArmed = false;
        resolve();
      };
      controller.signal.addEventListener('abort', release, { once: true });
    });
    this.wait = controller;
    const positions = this.merge.positions;
    const waits = shards.map((shard, index) => this.waitOn(shard, positions[index]!, Math.max(0, ms), controller.signal));
    try {
      await Promise.race([stopped, ...waits]);
    } finally {
      this.wait = null;
      controller.abort();
    }
  }

  /** One shard's wait, counted in `heldResources` until it settles. */
  private async waitOn(shard: FeedShardHandle, position: number, ms: number, signal: AbortSignal): Promise<void> {
    this.waitsOutstanding++;
    try {
      await shard.waitForChanges(position, ms, signal);
    } finally {
      this.waitsOutstanding--;
      this.closeWhenReleased();
    }
  }

  /** Reports the feed closed once it has ended and no shard wait of it is outstanding. */
  private closeWhenReleased(): void {
    if (!this.ended || this.released || this.waitsOutstanding > 0) return;
    this.released = true;
    this.onClosed(this);
  }

  private async render(merged: MergedChange, shards: readonly FeedShardHandle[], seq: string | null): Promise<string> {
    const { change, shard } = merged;
    const doc = this.options.includeDocs ? currentDocJson(change, await shards[shard]!.get(change.id)) : undefined;
    return renderResult(change, seq, doc);
  }

  private seqFor(ordinal: number): string | null {
    return ordinal % this.options.seqInterval === 0 ? this.lastSeq : null;
  }
}

function durableSeqs(bounds: readonly ChangeBounds[]): number[] {
  return bounds.map((bound) => bound.durableSeq);
}

function errorType(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : 'internal';
}
