/**
 * The change-feed service: opens a collection's change feed (the route of
 * src/api/routes/changes.ts) and holds the node's open feeds (`changeFeeds`), which the node and
 * the HTTP server end gracefully when they stop. Opening a feed is refused once the node closes,
 * but a feed is not an in-flight request: it is finished, not waited for.
 */
import type { Router } from '../cluster/router.ts';
import type { NodeCounters } from '../ops/stats/node-counters.ts';
import { ChangeFeeds, type ChangeFeed, type ChangesRequest } from './changes.ts';
import { shardSetFingerprint } from './changes-cursor.ts';
import type { RequestTracker } from './request-tracker.ts';

/** The change feeds of the node; see the module comment. */
export class ChangeFeedService {
  /** Open change feeds (ended gracefully by the node's `close` and the server's `preClose`). */
  readonly changeFeeds = new ChangeFeeds();

  constructor(
    private readonly router: Router,
    private readonly requests: RequestTracker,
    private readonly counters: NodeCounters,
  ) {}

  /** `GET|POST /{collection}/_changes`: checks the cursor, then opens the feed (a stream of response text). */
  async open(collection: string, request: ChangesRequest): Promise<ChangeFeed> {
    this.requests.refuseWhenClosing();
    const hosted = this.router.collection(collection);
    const source = {
      fingerprint: shardSetFingerprint(hosted.meta.shards.map((shard) => shard.uuid)),
      shards: () => hosted.meta.shards.map((_, shardId) => this.router.primary(hosted, shardId)),
    };
    const feed = await this.changeFeeds.open(source, request);
    this.counters.recordChangesRequest(request.feed ?? 'normal');
    return feed;
  }
}
