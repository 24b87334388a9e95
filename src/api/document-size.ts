/**
 * `indexing.max_document_bytes`: the largest document a write takes. It is checked on the bytes the
 * client sent, before anything parses them: the body of a single-document write (`_doc`, `_create`,
 * `_update`, content-types.ts) and each index, create or update line of `_bulk` (bulk-body.ts, where
 * a line over the limit fails its item only).
 */
import { ApiError } from './errors.ts';

/** The setting, as error messages name it. */
export const MAX_DOCUMENT_BYTES_SETTING = 'indexing.max_document_bytes';

/** The error of a document of `bytes` bytes when it passes `limit`; null when it fits. */
export function oversizedDocument(bytes: number, limit: number): ApiError | null {
  if (bytes <= limit) return null;
  return new ApiError('document_too_large', `document of [${bytes}] bytes exceeds [${MAX_DOCUMENT_BYTES_SETTING}] of [${limit}] bytes`);
}
