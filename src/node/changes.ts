/**
 * The change feed of a collection (`GET|POST /{collection}/_changes`): every write, read from the
 * shards' retained write-ahead logs through a cursor. `ChangeFeeds.open` checks the request
 * (cursor, retention) before anything is written, so those failures are plain HTTP errors, and
 * hands back the feed as a stream of response text. It keeps every open feed, so the server can
 * end them gracefully when it stops and tests can see that none holds resources after its
 * client went away.
 */
import { decodeCursor, shardSetFingerprint } from './changes-cursor.ts';
import { ChangeFeed, type FeedShard, type FeedSource } from './changes-feed.ts';
import type { FeedMode } from './changes-format.ts';
import { ChangeMerge, checkRetained } from './changes-merge.ts';
import type { HostedCollection } from './local-shards.ts';
import { startedShard } from './node-context.ts';
import { NodeError } from './node-error.ts';

export type { FeedMode } from './changes-format.ts';
export { ChangeFeed } from './changes-feed.ts';

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

/** Changes read from one shard's log at a time. */
const READ_BATCH = 1000;

/** The open feeds of a node; see the module comment. */
export class ChangeFeeds {
  private readonly active = new Set<ChangeFeed>();
  private closed = false;

  /** Checks the request against the collection and opens the feed. */
  open(hosted: HostedCollection, request: ChangesRequest): ChangeFeed {
    if (this.closed) throw new NodeError('node_closed', 'the node is shutting down');
    const source = feedSource(hosted);
    const shards = source.shards();
    const positions = startPositions(request.since, shards, source.fingerprint);
    checkRetained(shards, positions);
    const limit = request.limit ?? Number.POSITIVE_INFINITY;
    const merge = new ChangeMerge(positions, Math.max(1, Math.min(READ_BATCH, limit)));
    const feed = new ChangeFeed(
      source,
      merge,
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
    return feed;
  }

  /** Feeds open now, with the durable-seq listeners and timers they hold. */
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

  /** Ends every open feed with a complete body and refuses new ones (server shutdown). */
  finishAll(): void {
    this.closed = true;
    for (const feed of this.active) feed.finish();
  }
}

function feedSource(hosted: HostedCollection): FeedSource {
  return {
    fingerprint: shardSetFingerprint(hosted.meta.shards.map((shard) => shard.uuid)),
    shards: (): FeedShard[] => hosted.meta.shards.map((_, shardId) => startedShard(hosted, shardId)),
  };
}

/** Per-shard starting positions for `since`. */
function startPositions(since: string | undefined, shards: readonly FeedShard[], fingerprint: number): number[] {
  if (since === undefined || since === '' || since === '0') return shards.map((shard) => shard.changeBounds().firstSeq - 1);
  if (since === 'now') return shards.map((shard) => shard.changeBounds().durableSeq);
  const positions = decodeCursor(since, fingerprint, shards.length);
  positions.forEach((position, shard) => {
    const { durableSeq } = shards[shard]!.changeBounds();
    if (position > durableSeq) {
      throw new NodeError(
        'invalid_cursor',
        `invalid change-feed cursor [${since}]: it is ahead of shard [${shard}]'s log (seq ${position}, the log ends at ${durableSeq})`,
      );
    }
  });
  return positions;
}
