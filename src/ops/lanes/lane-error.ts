/** Errors of search lanes; their codes are in the API's error table (src/api/errors.ts). */

import { TroveError } from '../../engine/errors.ts';

/** Stable codes of lane failures. */
export type LaneErrorCode =
  /** The lane runs `max_concurrent` searches and holds `max_queue` waiting ones (HTTP 429). */
  | 'lane_full'
  /** The `lane` parameter names a lane no setting defines. */
  | 'unknown_lane';

/** A search refused by its lane, with a message meant for the API user. */
export class LaneError extends TroveError<LaneErrorCode> {}
