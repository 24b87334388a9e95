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
  | 'wal_failure'
  | 'fault_injected';

/** An engine failure with a stable code and a message meant for the API user. */
export class EngineError extends Error {
  constructor(
    readonly code: EngineErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'EngineError';
  }
}
