/**
 * THE error table: every error code any layer can raise (engine, node, HTTP) with its
 * Elasticsearch `type` and HTTP status, and the rendering of any thrown value into an ES error
 * body `{error:{type, reason, root_cause:[{type, reason}], index?}, status}`.
 */
import { TroveError, type EngineErrorCode } from '../engine/errors.ts';
import type { NodeErrorCode } from '../node/node-error.ts';
import type { JobErrorCode } from '../jobs/job-error.ts';
import { TrashError, type TrashErrorCode } from '../trash/trash-error.ts';
import type { SecurityErrorCode } from '../ops/security/security-error.ts';
import type { SettingsErrorCode } from '../ops/settings/settings-error.ts';
import type { LaneErrorCode } from '../ops/lanes/lane-error.ts';

/** Error codes raised by the HTTP layer itself. */
export type ApiErrorCode =
  | 'invalid_json'
  | 'nesting_too_deep'
  | 'body_too_large'
  | 'document_too_large'
  | 'invalid_parameter'
  | 'invalid_body'
  | 'unsupported_media_type'
  | 'no_handler'
  | 'method_not_allowed'
  | 'malformed_bulk'
  | 'bad_request'
  | 'internal';

/** Every code the table maps. */
export type ErrorCode =
  | EngineErrorCode
  | NodeErrorCode
  | JobErrorCode
  | TrashErrorCode
  | SecurityErrorCode
  | SettingsErrorCode
  | LaneErrorCode
  | ApiErrorCode;

/** How one code appears to an HTTP client. */
export interface ErrorKind {
  /** Elasticsearch exception type, e.g. `index_not_found_exception`. */
  type: string;
  status: number;
}

/** The one table: code → ES type and HTTP status. Compile-time complete over `ErrorCode`. */
export const ERROR_TABLE: Readonly<Record<ErrorCode, ErrorKind>> = {
  // Engine (src/engine/errors.ts)
  version_conflict: { type: 'version_conflict_engine_exception', status: 409 },
  document_missing: { type: 'document_missing_exception', status: 404 },
  mapper_parsing: { type: 'mapper_parsing_exception', status: 400 },
  strict_dynamic_mapping: { type: 'strict_dynamic_mapping_exception', status: 400 },
  illegal_argument: { type: 'illegal_argument_exception', status: 400 },
  parsing: { type: 'parsing_exception', status: 400 },
  action_request_validation: { type: 'action_request_validation_exception', status: 400 },
  corrupt_index: { type: 'corrupt_index_exception', status: 500 },
  shard_closed: { type: 'index_shard_closed_exception', status: 503 },
  shard_worker_failed: { type: 'shard_worker_failure_exception', status: 503 },
  wal_failure: { type: 'translog_exception', status: 500 },
  fault_injected: { type: 'fault_injected_exception', status: 500 },
  too_many_buckets: { type: 'too_many_buckets_exception', status: 400 },
  too_complex_to_determinize: { type: 'too_complex_to_determinize_exception', status: 400 },
  query_shard: { type: 'query_shard_exception', status: 400 },
  replication_gap: { type: 'replication_gap_exception', status: 409 },
  search_context_missing: { type: 'search_context_missing_exception', status: 404 },
  too_many_scroll_contexts: { type: 'too_many_scroll_contexts_exception', status: 429 },
  // Catalog and node (src/cluster/catalog-error.ts, src/node/node-error.ts)
  index_not_found: { type: 'index_not_found_exception', status: 404 },
  resource_already_exists: { type: 'resource_already_exists_exception', status: 400 },
  invalid_index_name: { type: 'invalid_index_name_exception', status: 400 },
  invalid_alias_name: { type: 'invalid_alias_name_exception', status: 400 },
  alias_not_found: { type: 'aliases_not_found_exception', status: 404 },
  namespace_not_found: { type: 'namespace_not_found_exception', status: 404 },
  catalog_conflict: { type: 'concurrent_modification_exception', status: 409 },
  catalog_unavailable: { type: 'catalog_unavailable_exception', status: 503 },
  shard_unavailable: { type: 'unavailable_shards_exception', status: 503 },
  node_unavailable: { type: 'node_not_connected_exception', status: 503 },
  node_not_found: { type: 'resource_not_found_exception', status: 404 },
  too_many_shards: { type: 'validation_exception', status: 400 },
  node_closed: { type: 'node_closed_exception', status: 503 },
  // Jobs (src/jobs/job-error.ts)
  job_not_found: { type: 'resource_not_found_exception', status: 404 },
  job_interrupted: { type: 'job_interrupted_exception', status: 503 },
  invalid_cursor: { type: 'invalid_cursor_exception', status: 400 },
  changes_expired: { type: 'changes_expired_exception', status: 410 },
  // Trash (src/trash/trash-error.ts)
  trash_item_not_found: { type: 'resource_not_found_exception', status: 404 },
  trash_restore_conflict: { type: 'resource_already_exists_exception', status: 409 },
  trash_item_incomplete: { type: 'trash_item_incomplete_exception', status: 409 },
  trash_item_busy: { type: 'concurrent_modification_exception', status: 409 },
  trash_unavailable: { type: 'trash_unavailable_exception', status: 503 },
  // Security (src/ops/security/security-error.ts)
  security_unauthenticated: { type: 'security_exception', status: 401 },
  security_forbidden: { type: 'security_exception', status: 403 },
  api_key_not_found: { type: 'resource_not_found_exception', status: 404 },
  last_admin_key: { type: 'illegal_argument_exception', status: 400 },
  // Node settings and search lanes (src/ops/settings/settings-error.ts, src/ops/lanes/lane-error.ts)
  invalid_setting: { type: 'illegal_argument_exception', status: 400 },
  lane_full: { type: 'es_rejected_execution_exception', status: 429 },
  unknown_lane: { type: 'illegal_argument_exception', status: 400 },
  // HTTP layer
  invalid_json: { type: 'x_content_parse_exception', status: 400 },
  nesting_too_deep: { type: 'x_content_parse_exception', status: 400 },
  body_too_large: { type: 'content_too_long_exception', status: 413 },
  document_too_large: { type: 'illegal_argument_exception', status: 400 },
  invalid_parameter: { type: 'illegal_argument_exception', status: 400 },
  invalid_body: { type: 'x_content_parse_exception', status: 400 },
  unsupported_media_type: { type: 'media_type_header_exception', status: 406 },
  no_handler: { type: 'no_handler_found_exception', status: 400 },
  method_not_allowed: { type: 'method_not_allowed_exception', status: 405 },
  malformed_bulk: { type: 'illegal_argument_exception', status: 400 },
  bad_request: { type: 'illegal_argument_exception', status: 400 },
  internal: { type: 'exception', status: 500 },
};

/** An error raised by the HTTP layer; `index` names the collection concerned, if any. */
export class ApiError extends TroveError<ApiErrorCode> {
  constructor(
    code: ApiErrorCode,
    message: string,
    readonly index?: string,
  ) {
    super(code, message);
  }
}

/** One rendered error: the status and the ES error body. */
export interface RenderedError {
  status: number;
  body: {
    error: { type: string; reason: string; root_cause: Array<{ type: string; reason: string; index?: string }>; index?: string };
    status: number;
  };
}

/** The `{type, reason, index?}` object ES puts in bulk/mget items and `root_cause`. */
export interface ErrorCause {
  type: string;
  reason: string;
  index?: string;
}

/** Codes about a whole collection: their error bodies name it in `index`, as ES does. */
const COLLECTION_CODES: ReadonlySet<ErrorCode> = new Set<ErrorCode>(['index_not_found', 'resource_already_exists', 'invalid_index_name']);

/**
 * Maps any thrown value to its code, reason and collection; unknown errors become `internal`.
 * `collection` is the collection the request addressed, named in collection-level errors.
 */
export function classifyError(error: unknown, collection?: string): { code: ErrorCode; reason: string; index?: string } {
  if (error instanceof ApiError && error.index !== undefined) return { code: error.code, reason: error.message, index: error.index };
  if (error instanceof TroveError && Object.hasOwn(ERROR_TABLE, error.code)) {
    const code = error.code as ErrorCode;
    return { code, reason: error.message, index: COLLECTION_CODES.has(code) ? collection : undefined };
  }
  const fastifyError = error as { code?: unknown; statusCode?: unknown; message?: unknown };
  const message = typeof fastifyError?.message === 'string' ? fastifyError.message : String(error);
  switch (fastifyError?.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return { code: 'body_too_large', reason: 'Request body is larger than [http.max_content_length]' };
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
    case 'FST_ERR_CTP_INVALID_TYPE':
      return { code: 'unsupported_media_type', reason: 'Content-Type header is not supported' };
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return { code: 'invalid_json', reason: 'request body is required' };
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return { code: 'bad_request', reason: 'Request body size did not match Content-Length' };
    case 'FST_ERR_VALIDATION':
      return describeValidationFailure(error as ValidationFailure);
  }
  const status = typeof fastifyError?.statusCode === 'number' ? fastifyError.statusCode : 500;
  if (status >= 400 && status < 500) return { code: 'bad_request', reason: message };
  return { code: 'internal', reason: message };
}

/** Renders a code + reason as the ES cause object. */
export function errorCause(code: ErrorCode, reason: string, index?: string): ErrorCause {
  const cause: ErrorCause = { type: ERROR_TABLE[code].type, reason };
  if (index !== undefined) cause.index = index;
  return cause;
}

/** Renders any thrown value as an HTTP status and ES error body (see `classifyError`). */
export function renderError(error: unknown, collection?: string): RenderedError {
  const { code, reason, index } = classifyError(error, collection);
  const cause = errorCause(code, reason, index);
  const status = ERROR_TABLE[code].status;
  // Extra fields an error carries (a trash item's verify findings) sit beside type and reason, as ES puts `index`.
  const details = error instanceof TrashError ? error.details : {};
  return { status, body: { error: { ...details, ...cause, root_cause: [cause] }, status } };
}

/** The shape Fastify gives schema validation failures (ajv errors plus the request part). */
interface ValidationFailure {
  validationContext?: string;
  validation?: Array<{ instancePath: string; message?: string; params: Record<string, unknown> }>;
  message: string;
}

/** Turns the first ajv error into a reason that names the offending parameter or field. */
function describeValidationFailure(failure: ValidationFailure): { code: ApiErrorCode; reason: string } {
  const first = failure.validation?.[0];
  const context = failure.validationContext ?? 'body';
  if (first === undefined) return { code: context === 'body' ? 'invalid_body' : 'invalid_parameter', reason: failure.message };
  const path = first.instancePath.split('/').filter((part) => part !== '').join('.');
  const message = first.message ?? 'is invalid';
  const additional = first.params.additionalProperty;
  const missing = first.params.missingProperty;
  const allowed = first.params.allowedValues;
  const detail = Array.isArray(allowed) ? `${message}: ${allowed.join(', ')}` : message;
  if (context === 'body') {
    if (typeof additional === 'string') {
      return { code: 'invalid_body', reason: `unknown field [${join(path, additional)}] in the request body` };
    }
    if (typeof missing === 'string') {
      return { code: 'invalid_body', reason: `the request body is missing the required field [${join(path, missing)}]` };
    }
    if (path === '') return { code: 'invalid_body', reason: `the request body ${detail}` };
    return { code: 'invalid_body', reason: `field [${path}] of the request body ${detail}` };
  }
  const where = context === 'params' ? 'path parameter' : 'parameter';
  if (typeof additional === 'string') {
    return { code: 'invalid_parameter', reason: `request contains unrecognized parameter: [${additional}]` };
  }
  if (typeof missing === 'string') return { code: 'invalid_parameter', reason: `${where} [${missing}] is required` };
  return { code: 'invalid_parameter', reason: `${where} [${path}] ${detail}` };
}

function join(path: string, name: string): string {
  return path === '' ? name : `${path}.${name}`;
}
