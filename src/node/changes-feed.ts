/**
 * One open change feed: a readable stream of response text, produced on demand (so a slow client
 * holds back the reading of the log, and nothing piles up in memory). `normal` streams the
 * changes durable when it opened; `longpoll` waits for the first change; `continuous` and
 * `eventsource` stream until the client goes, the limit is reached or (without heartbeat) no
 * change came for `timeout` ms.
 *
 * While it waits, a feed holds one durable-seq listener per shard and one timer; both are
 * released when the wait ends, and a client that disconnects (the stream is destroyed) ends the
 * wait at once. `finish()` ends a feed gracefully, with a complete body (server shutdown).
 */
import { Readable } from 'node:stream';
import type { StoredDocument } from '../engine/shard/operations.ts';
import { encodeCursor } from './changes-cursor.ts';
import { currentDocJson, FRAMINGS, renderResult, type FeedMode } from './changes-format.ts';
import type { ChangeMerge, MergedChange, ShardChangeLog } from './changes-merge.ts';

/** What a feed needs of one shard (an engine `Shard` is one). */
export interface FeedShard extends ShardChangeLog {
  /** The live document, for `include_docs`. */
  get(id: string): StoredDocument | null;
  /** Calls `listener` after every group commit; returns the unsubscribe. */
  onDurable(listener: (durableSeq: number) => void): () => void;
}

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
  /** The collection's shards now, in shard order; throws when one is unavailable. */
  shards(): FeedShard[];
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
  private wake: (() => void) | null = null;
  /** Normal and longpoll feeds: per shard, the durable seq when the feed opened. */
  private readonly openedAt: number[] | undefined;
  private heldListeners = 0;
  private timerArmed = false;

  constructor(
    private readonly source: FeedSource,
    private readonly merge: ChangeMerge,
    private readonly options: ChangeFeedOptions,
    private readonly onClosed: (feed: ChangeFeed) => void,
  ) {
    super();
    this.contentType = FRAMINGS[options.mode].contentType;
    this.openedAt = options.mode === 'normal' || options.mode === 'longpoll' ? durablePositions(source.shards()) : undefined;
    this.producer = this.produce();
  }

  /** The cursor of the feed's current position. */
  get lastSeq(): string {
    return encodeCursor(this.source.fingerprint, this.merge.positions);
  }

  /** Listeners and timers this feed holds right now (for tests and stats). */
  heldResources(): { listeners: number; timers: number } {
    return { listeners: this.heldListeners, timers: this.timerArmed ? 1 : 0 };
  }

  /** Ends the feed at the next opportunity with a complete body (results so far, last_seq). */
  finish(): void {
    this.stopping = true;
    this.wake?.();
  }

  override _read(): void {
    if (!this.pulling) void this.pull();
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    this.aborted = true;
    this.stopping = true;
    this.wake?.();
    if (!this.pulling) void this.producer.return();
    this.onClosed(this);
    callback(error);
  }

  private async pull(): Promise<void> {
    this.pulling = true;
    try {
      for (;;) {
        const next = await this.producer.next();
        if (this.destroyed) return;
        if (next.done) {
          this.push(null);
          this.onClosed(this);
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
        const merged = this.merge.next(shards, until);
        if (merged !== null) {
          const seq = this.seqFor(count + 1);
          text += framing.row(this.render(merged, shards, seq), seq, count);
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
        if (bounded) until = durablePositions(shards);
        // Checked in the same turn as the subscription below, so no commit can slip between.
        if (this.merge.hasAvailable(shards)) continue;
        await this.waitForChange(shards, Math.min(timed ? deadline : Number.POSITIVE_INFINITY, nextHeartbeat) - now);
        if (bounded) until = durablePositions(shards);
      }
      if (this.aborted) return;
      yield text + framing.close(this.lastSeq, this.merge.pending(shards), count);
    } catch (error) {
      if (this.aborted) return;
      const line = framing.error(errorType(error), error instanceof Error ? error.message : String(error));
      if (line === null) throw error;
      yield text + line;
    }
  }

  /** Resolves after the next group commit of any shard, after `ms`, or when the feed stops. */
  private waitForChange(shards: readonly FeedShard[], ms: number): Promise<void> {
    return new Promise((resolve) => {
      const unsubscribes: Array<() => void> = [];
      const wake = (): void => {
        if (this.wake !== wake) return;
        this.wake = null;
        clearTimeout(timer);
        this.timerArmed = false;
        for (const unsubscribe of unsubscribes) unsubscribe();
        this.heldListeners = 0;
        resolve();
      };
      this.wake = wake;
      for (const shard of shards) unsubscribes.push(shard.onDurable(wake));
      this.heldListeners = unsubscribes.length;
      const timer = setTimeout(wake, Math.max(0, ms));
      this.timerArmed = true;
      if (this.stopping) wake();
    });
  }

  private render(merged: MergedChange, shards: readonly FeedShard[], seq: string | null): string {
    const { change, shard } = merged;
    const doc = this.options.includeDocs ? currentDocJson(change, shards[shard]!.get(change.id)) : undefined;
    return renderResult(change, seq, doc);
  }

  private seqFor(ordinal: number): string | null {
    return ordinal % this.options.seqInterval === 0 ? this.lastSeq : null;
  }
}

function durablePositions(shards: readonly FeedShard[]): number[] {
  return shards.map((shard) => shard.changeBounds().durableSeq);
}

function errorType(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : 'internal';
}
