/**
 * Typed errors of the trash. Like NodeError, `code` is stable and the API's error table maps it to
 * an HTTP status and an Elasticsearch error type; `details` become extra fields of the error
 * body (for example the verify findings of an incomplete item).
 */

import { TroveError } from '../engine/errors.ts';

/** Stable codes of trash failures. */
export type TrashErrorCode =
  /** No node holds a trash item with this id. */
  | 'trash_item_not_found'
  /** A restore would collide with the live catalog (a name is taken, a namespace is gone). */
  | 'trash_restore_conflict'
  /** A restore found shards missing or damaged; `details.findings` lists them. */
  | 'trash_item_incomplete'
  /** Another delete, restore or purge of the same item is in progress. */
  | 'trash_item_busy'
  /** A node that holds part of the item could not take part in the operation. */
  | 'trash_unavailable';

/** A trash operation that was refused or failed; the item and the catalog are unchanged. */
export class TrashError extends TroveError<TrashErrorCode> {
  constructor(
    code: TrashErrorCode,
    message: string,
    readonly details: Readonly<Record<string, unknown>> = {},
  ) {
    super(code, message);
  }
}

/** The `trash_item_not_found` error for an item id. */
export function trashItemNotFound(itemId: string): TrashError {
  return new TrashError('trash_item_not_found', `no trash item [${itemId}]`);
}
