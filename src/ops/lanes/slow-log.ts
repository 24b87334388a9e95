/**
 * The search slow log: a search whose `took` reaches `node.search.slow_threshold_ms` is logged
 * at `warn` under the `slowlog` target with its lane, target collections, took, queue wait and
 * request body (cut to `MAX_LOGGED_SOURCE` characters), and counted as slow. `0` logs every
 * search, `-1` turns the slow log off. The threshold is read per search, so a settings change
 * applies to the next search.
 */
import type { Logger } from 'pino';

/** Longest request body, in characters, that a slow-log line carries. */
export const MAX_LOGGED_SOURCE = 4096;

/** One finished search, as the slow log sees it. */
export interface SearchRecord {
  lane: string;
  /** The search target: a collection, a comma list, a wildcard or `_all`. */
  collection: string;
  /** The request body (query, aggregations, ...). */
  body: unknown;
  took: number;
  queueMs: number;
  timedOut: boolean;
}

/** See the module comment. */
export class SlowLog {
  constructor(
    private readonly threshold: () => number,
    private readonly logger: Logger,
  ) {}

  /** Logs the search if it is slow; returns whether it was. */
  observe(search: SearchRecord): boolean {
    const threshold = this.threshold();
    if (threshold < 0 || search.took < threshold) return false;
    if (this.logger.isLevelEnabled('warn')) {
      let source = JSON.stringify(search.body ?? {});
      if (source.length > MAX_LOGGED_SOURCE) source = `${source.slice(0, MAX_LOGGED_SOURCE)}...`;
      this.logger.warn(
        {
          lane: search.lane,
          collection: search.collection,
          took: search.took,
          queue_ms: search.queueMs,
          timed_out: search.timedOut,
          threshold_ms: threshold,
          source,
        },
        `slow search on [${search.collection}]: took ${search.took}ms`,
      );
    }
    return true;
  }
}
