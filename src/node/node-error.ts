/**
 * Typed errors raised by the node layer. Catalog failures keep the coordinator's code; the API's
 * error table maps every code (and every EngineError code) to an HTTP status and ES error type.
 */
import { TroveError } from '../engine/errors.ts';
import { CatalogError, type CatalogErrorCode } from '../cluster/catalog-error.ts';

/** Stable codes of node-layer failures. */
export type NodeErrorCode =
  | CatalogErrorCode
  /** The node is shutting down and accepts no new requests. */
  | 'node_closed'
  /** A change-feed `since` that is not a cursor of this collection. */
  | 'invalid_cursor'
  /** A change-feed cursor older than the retained history: the consumer must resynchronise. */
  | 'changes_expired';

/** A node-layer failure with a stable code and a message meant for the API user. */
export class NodeError extends TroveError<NodeErrorCode> {}

/** Re-raises a CatalogError as the NodeError with the same code and message; other errors pass. */
export function asNodeError(error: unknown): unknown {
  return error instanceof CatalogError ? new NodeError(error.code, error.message) : error;
}

/** The `index_not_found` error for a collection name, worded as Elasticsearch words it. */
export function collectionNotFound(name: string): NodeError {
  return new NodeError('index_not_found', `no such index [${name}]`);
}
