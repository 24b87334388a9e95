/**
 * The change feed of a collection (`GET|POST /{collection}/_changes`): every write, read from the
 * shards' retained write-ahead logs through a cursor. `ChangeFeeds.open` checks the request
 * (cursor, retention) before anything is written, so those failures are plain HTTP errors, and
 * hands back the feed as a stream of response text. It keeps every open feed, so the server can
 * end them gracefully when it stops and tests can see that none holds resources after its
 * client went away.
 */
import { once } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import type { ChangeBounds } from '../cluster/shard-handle.ts';
import { decodeCursor } from './changes-cursor.ts';
import { ChangeFeed, type FeedSource } from './changes-feed.ts';
import type { FeedMode } from './changes-format.ts';
import { ChangeMerge, checkRetained, readBounds } from './changes-merge.ts';
import { NodeError } from './node-error.ts';

export type { FeedMode } from './changes-format.ts';
export type { FeedShardHandle, FeedSource } from './changes-feed.ts';
export { ChangeFeed } from './changes-feed.ts';
export { shardSetFingerprint } from './changes-cursor.ts';

/** Parameters of a change-feed request (PRODUCT.md 4.5), already typed. */
export interface ChangesRequest {
  /** Cursor: absent or `0` = oldest retained change, `now` = the end, else a `seq`/`last_seq`. */
  since?: string;
  /** Most results (default: no limit). */
  limit?: number;
  /** Default `normal`. */
  feed?: FeedMode;
  /** Default 60 000 ms. */
  timeoutMs?: number;
  /** Keep-alive interval while idle (default none). */
  heartbeatMs?: number | null;
  includeDocs?: boolean;
  /** Write `seq` only on every n-th result (default 1: on every result). */
  seqInterval?: number;
}

/** Longest wait of `longpoll` (and idle time of `continuous` without heartbeat) by default. */
export const DEFAULT_FEED_TIMEOUT_MS = 60_000;

/** Longest a graceful stop waits for open feeds to write their last line. */
const FINISH_WAIT_MS = 5000;

/** Changes read from one shard's log at a time. */
const READ_BATCH = 1000;

/** The open feeds of a node; see the module comment. */
export class ChangeFeeds {
  private readonly active = new Set<ChangeFeed>();
  private closed = false;

  /** Checks the request against the collection's shards (cursor, retention), then opens the feed. */
  async open(source: FeedSource, request: ChangesRequest): Promise<ChangeFeed> {
    this.refuseWhenClosed();
    const shards = source.shards();
    const cursor = cursorOf(request.since, source.fingerprint, shards.length);
    // One reading of the bounds serves every check, and is where normal and longpoll feeds end.
    const bounds = await readBounds(shards);
    const positions = startPositions(request.since, cursor, bounds);
    checkRetained(bounds, positions);
    // finishAll may have run while the bounds were read.
    this.refuseWhenClosed();
    const limit = request.limit ?? Number.POSITIVE_INFINITY;
    const merge = new ChangeMerge(positions, Math.max(1, Math.min(READ_BATCH, limit)));
    const feed = new ChangeFeed(
      source,
      merge,
      bounds.map((bound) => bound.durableSeq),
      {
        mode: request.feed ?? 'normal',
        limit,
        timeoutMs: request.timeoutMs ?? DEFAULT_FEED_TIMEOUT_MS,
        heartbeatMs: request.heartbeatMs ?? null,
        includeDocs: request.includeDocs ?? false,
        seqInterval: Math.max(1, request.seqInterval ?? 1),
      },
      (closed) => this.active.delete(closed),
    );
    this.active.add(feed);
    try {
      await feed.prime();
    } catch (error) {
      feed.destroy();
      throw error;
    }
    return feed;
  }

  /** Feeds open now, with the shard waits (`listeners`) and timers they hold. */
  heldResources(): { feeds: number; listeners: number; timers: number } {
    let listeners = 0;
    let timers = 0;
    for (const feed of this.active) {
      const held = feed.heldResources();
      listeners += held.listeners;
      timers += held.timers;
    }
    return { feeds: this.active.size, listeners, timers };
  }

  /**
   * Ends every open feed with a complete body and refuses new ones (server shutdown). Resolves
   * once every feed's stream has closed (at most `FINISH_WAIT_MS`), so that the server closes
   * connections that are idle by then.
   */
  async finishAll(): Promise<void> {
    this.closed = true;
    const closing = [...this.active].map((feed) => (feed.closed ? undefined : once(feed, 'close').catch(() => undefined)));
    for (const feed of this.active) feed.finish();
    const timeout = new AbortController();
    const expired = sleep(FINISH_WAIT_MS, undefined, { ref: false, signal: timeout.signal }).catch(() => undefined);
    await Promise.race([Promise.all(closing), expired]);
    timeout.abort();
  }

  private refuseWhenClosed(): void {
    if (this.closed) throw new NodeError('node_closed', 'the node is shutting down');
  }
}

/** The positions a `since` cursor carries, or null when `since` names the start or the end of the logs. */
function cursorOf(since: string | undefined, fingerprint: number, shardCount: number): number[] | null {
  if (since === undefined || since === '' || since === '0' || since === 'now') return null;
  return decodeCursor(since, fingerprint, shardCount);
}

/** Per-shard starting positions for `since`, given the shards' bounds when the feed opens. */
function startPositions(since: string | undefined, cursor: number[] | null, bounds: readonly ChangeBounds[]): number[] {
  if (cursor === null) return bounds.map((bound) => (since === 'now' ? bound.durableSeq : bound.firstSeq - 1));
  cursor.forEach((position, shard) => {
    const { durableSeq } = bounds[shard]!;
    if (position > durableSeq) {
      throw new NodeError(
        'invalid_cursor',
        `invalid change-feed cursor [${since}]: it is ahead of shard [${shard}]'s log (seq ${position}, the log ends at ${durableSeq})`,
      );
    }
  });
  return cursor;
}
