/**
 * Typed errors raised by the engine. `code` is stable and is mapped to an HTTP status and an
 * Elasticsearch error `type` by the API's error table (src/api/errors.ts).
 */
export type EngineErrorCode =
  | 'version_conflict'
  | 'document_missing'
  | 'mapper_parsing'
  | 'strict_dynamic_mapping'
  | 'illegal_argument'
  | 'parsing'
  | 'action_request_validation'
  | 'corrupt_index'
  | 'shard_closed'
  /** The worker thread running the shard failed; the shard reopens from its WAL in a new worker. */
  | 'shard_worker_failed'
  | 'wal_failure'
  | 'fault_injected'
  /** A request would create more buckets than `search.max_buckets` allows. */
  | 'too_many_buckets'
  /** A `wildcard` or `regexp` pattern whose automaton would pass its state or work bound. */
  | 'too_complex_to_determinize'
  /** A query that cannot be built, such as `query_string` text that does not parse (ES query_shard_exception). */
  | 'query_shard'
  /** A scroll or point-in-time reader context that expired, was cleared, or died with its shard copy or node. */
  | 'search_context_missing'
  /** Opening a scroll or point-in-time reader context would pass the node's limit of open ones. */
  | 'too_many_scroll_contexts'
  /** Replicated records would leave a hole in a copy's history (the first new seq is not lastSeq + 1). */
  | 'replication_gap';

/**
 * The base of every typed failure in every layer: a stable `code` and a message meant for the API
 * user. The API's one error table maps each code to an HTTP status and an Elasticsearch type.
 */
export class TroveError<Code extends string = string> extends Error {
  constructor(
    readonly code: Code,
    message: string,
  ) {
    super(message);
    this.name = new.target.name;
  }
}

/** An engine failure with a stable code and a message meant for the API user. */
export class EngineError extends TroveError<EngineErrorCode> {}
