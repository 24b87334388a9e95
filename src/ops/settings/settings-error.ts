/** Errors of runtime node settings; their code is in the API's error table (src/api/errors.ts). */

import { TroveError } from '../../engine/errors.ts';

/** Stable codes of settings failures. */
export type SettingsErrorCode =
  /** A key of a settings change is unknown, not dynamic, or its value is invalid; nothing was applied. */
  'invalid_setting';

/** A refused settings change, with a message naming every offending key. */
export class SettingsError extends TroveError<SettingsErrorCode> {
  constructor(
    code: SettingsErrorCode,
    message: string,
    /** The keys that were refused. */
    readonly keys: readonly string[],
  ) {
    super(code, message);
  }
}
