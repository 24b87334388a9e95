/**
 * Typed errors raised by coordinators. Like EngineError, `code` is stable; the node layer passes
 * these codes on and the API's error table maps them to an HTTP status and an ES error type.
 */

import { TroveError } from '../engine/errors.ts';
export type CatalogErrorCode =
  | 'index_not_found'
  | 'resource_already_exists'
  | 'invalid_index_name'
  /** An alias name that breaks the naming rules or is taken by a collection. */
  | 'invalid_alias_name'
  /** An alias a request names does not exist. */
  | 'alias_not_found'
  | 'namespace_not_found'
  | 'illegal_argument'
  /** A compare-and-set lost against a concurrent change; re-read and retry. */
  | 'catalog_conflict'
  /** The catalog could not be persisted or read, or the coordinator is closed. */
  | 'catalog_unavailable'
  /** A shard copy a request needs is not open (unassigned, still opening, failed to open, or closed). */
  | 'shard_unavailable'
  /** A create or restore would put more shard copies on a node than `cluster.max_shards_per_node`. */
  | 'too_many_shards'
  /** Another node of the cluster did not answer a call (down, paused, cut off, or too slow). */
  | 'node_unavailable'
  /** No node of the cluster has this id or name. */
  | 'node_not_found';

/** A catalog operation that was refused or failed; the catalog is unchanged. */
export class CatalogError extends TroveError<CatalogErrorCode> {}
