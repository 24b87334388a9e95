/**
 * Errors of the security layer: failed authentication (401), missing role or namespace (403),
 * and API key management. Their codes are in the API's error table (src/api/errors.ts).
 */

import { TroveError } from '../../engine/errors.ts';

/** Stable codes of security failures. */
export type SecurityErrorCode =
  /** No key, a malformed Authorization header, an unknown, revoked or expired key. */
  | 'security_unauthenticated'
  /** The key is valid but lacks the role or namespace the request needs. */
  | 'security_forbidden'
  /** No API key has this id. */
  | 'api_key_not_found'
  /** Revoking this key would leave the cluster without a usable admin key. */
  | 'last_admin_key';

/** A security failure with a stable code; its message never contains key material. */
export class SecurityError extends TroveError<SecurityErrorCode> {}
