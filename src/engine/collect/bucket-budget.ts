/**
 * The bucket limit of one search (ES `search.max_buckets`): every bucket an aggregation creates,
 * at any nesting level, is counted while it is built, on each shard (its partial) and again on the
 * coordinating node (the rendered response, empty histogram buckets included), and the request
 * fails as soon as the count passes the limit, before the work and memory for the rest is spent.
 */
import { EngineError } from '../errors.ts';

/** Most buckets one search may create (ES `search.max_buckets`). */
export const MAX_BUCKETS = 65_535;

/** Counts the buckets one request builds; refuses the first one past the limit. */
export class BucketBudget {
  private used = 0;

  constructor(private readonly limit = MAX_BUCKETS) {}

  /** Counts `count` more buckets; throws the too-many-buckets error once the total passes the limit. */
  consume(count: number): void {
    this.used += count;
    if (this.used > this.limit) throw tooManyBuckets(this.limit, this.used);
  }
}

/**
 * The too-many-buckets error. Its code is `illegal_argument` (400) until the error table has a
 * `too_many_buckets` code rendered as ES's `too_many_buckets_exception`.
 */
function tooManyBuckets(limit: number, count: number): EngineError {
  return new EngineError(
    'too_many_buckets',
    `Trying to create too many buckets. Must be less than or equal to: [${limit}] but was [${count}]. This limit can be set by changing the [search.max_buckets] cluster level setting.`,
  );
}
