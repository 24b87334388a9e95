/** Plain-data write operations a shard accepts and the results it returns. */

/** One partial-update operator, see PRODUCT.md 4.3. */
export interface UpdateOperation {
  op: string;
  field: string;
  value?: unknown;
}

/**
 * Elasticsearch's external versioning (`version_type=external|external_gte`): the document's
 * version becomes `version`, which must be greater than (`external`) or at least
 * (`external_gte`) the current version, else the write is a version conflict.
 */
export interface ExternalVersion {
  version: number;
  type: 'external' | 'external_gte';
}

/** Index (create or overwrite) a whole document. */
export interface IndexOp {
  kind: 'index';
  id: string;
  source: Record<string, unknown>;
  /**
   * The JSON text `source` was parsed from (a bulk line), stored in the WAL as it is instead of a
   * re-serialisation of `source`.
   */
  sourceText?: Uint8Array;
  /** The JSON text `source` was parsed from (a single-document write), stored as it is; a string, so that it crosses every transport. */
  sourceJson?: string;
  /** `create` fails with version_conflict when the id exists. */
  opType?: 'index' | 'create';
  ifSeqNo?: number;
  ifPrimaryTerm?: number;
  externalVersion?: ExternalVersion;
}

/** Delete a document by id. */
export interface DeleteOp {
  kind: 'delete';
  id: string;
  ifSeqNo?: number;
  ifPrimaryTerm?: number;
  externalVersion?: ExternalVersion;
}

/** Partial update: `doc` deep-merged first, then `ops` in order; atomic. */
export interface UpdateOp {
  kind: 'update';
  id: string;
  doc?: Record<string, unknown>;
  ops?: UpdateOperation[];
  upsert?: Record<string, unknown>;
  docAsUpsert?: boolean;
  /** Default true: an update that changes nothing returns `noop` and writes nothing. */
  detectNoop?: boolean;
  ifSeqNo?: number;
  ifPrimaryTerm?: number;
  /** Return the updated `_source` in the result (reads the stored document; off by default). */
  returnSource?: boolean;
}

/** Any write a shard accepts. */
export type WriteOp = IndexOp | DeleteOp | UpdateOp;

/** Outcome of one write, in Elasticsearch terms. */
export interface WriteResult {
  id: string;
  result: 'created' | 'updated' | 'deleted' | 'not_found' | 'noop';
  seqNo: number;
  version: number;
  primaryTerm: number;
  /** For updates with `returnSource` (and upserts): the document after the update. */
  source?: Record<string, unknown>;
  /** `source` as the JSON text the response shows (stored bytes as sent), when known. */
  sourceText?: string;
  /** For updates: true when only inplace column slots were written (no re-index). */
  inplace?: boolean;
  /** For updates: true when written as a field overlay (only the changed top-level fields, no re-index). */
  fields?: boolean;
}

/** A live document as `GET _doc` returns it: `_source` has inplace column values overlaid. */
export interface StoredDocument {
  id: string;
  source: Record<string, unknown>;
  /** `source` as the JSON text responses show: the stored bytes as sent (see readSourceAndText). */
  sourceText?: string;
  seqNo: number;
  version: number;
  primaryTerm: number;
}

/** One entry of the retained write log, the raw material of the change feed. */
export interface ChangeEntry {
  seq: number;
  /** Commit time, epoch millis. */
  timestamp: number;
  op: 'index' | 'update' | 'delete';
  id: string;
  version: number;
}
