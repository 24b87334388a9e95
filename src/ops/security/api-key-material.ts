/**
 * API key strings and their hashes. A key Trove issues reads `trove_<id>_<secret>`: 16 hex digits
 * of id (so a request's key is found without scanning) and 32 random bytes of secret in base64url.
 * Only `sha256:<hex>` of the whole string is ever stored; presented keys are hashed the same way
 * and compared in constant time. A SHA-256 is enough here: the keys are 256-bit random values,
 * not passwords, so there is nothing for a slow hash to protect against.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/** Prefix of every key Trove issues. */
export const ISSUED_KEY_PREFIX = 'trove_';

const ISSUED_KEY = /^trove_([0-9a-f]{16})_[A-Za-z0-9_-]{43}$/;
const HASH_PREFIX = 'sha256:';

/** Characters an operator-supplied key may use: the RFC 6750 bearer token alphabet. */
const SUPPLIED_KEY = /^[A-Za-z0-9._~+/=-]+$/;
/** Shortest operator-supplied key accepted (`TROVE_API_KEY`). */
export const MIN_SUPPLIED_KEY_LENGTH = 24;
/** Longest key string considered at all; longer bearer tokens are refused without hashing. */
export const MAX_KEY_LENGTH = 512;

/** A freshly generated key: its id and the full key string (shown to the caller once). */
export interface GeneratedKey {
  id: string;
  key: string;
}

/** Generates a new random key id (16 hex digits). */
export function generateKeyId(): string {
  return randomBytes(8).toString('hex');
}

/** Generates a new key: a random id and a 256-bit random secret. */
export function generateApiKey(): GeneratedKey {
  const id = generateKeyId();
  return { id, key: `${ISSUED_KEY_PREFIX}${id}_${randomBytes(32).toString('base64url')}` };
}

/** The id embedded in a key Trove issued, or null for any other string. */
export function issuedKeyId(key: string): string | null {
  const match = ISSUED_KEY.exec(key);
  return match === null ? null : match[1];
}

/** Why a key an operator supplies is unusable, or null when it is acceptable. */
export function invalidSuppliedKeyReason(key: string): string | null {
  if (key.length < MIN_SUPPLIED_KEY_LENGTH) return `it must be at least ${MIN_SUPPLIED_KEY_LENGTH} characters long`;
  if (key.length > MAX_KEY_LENGTH) return `it must be at most ${MAX_KEY_LENGTH} characters long`;
  if (!SUPPLIED_KEY.test(key)) return 'it may only contain letters, digits and the characters . _ ~ + / = -';
  return null;
}

/** The stored form of a key: `sha256:<hex>`. */
export function hashApiKey(key: string): string {
  return HASH_PREFIX + createHash('sha256').update(key, 'utf8').digest('hex');
}

/** True when `key` hashes to `storedHash`; the digests are compared in constant time. */
export function keyMatchesHash(key: string, storedHash: string): boolean {
  if (!storedHash.startsWith(HASH_PREFIX)) return false;
  const expected = Buffer.from(storedHash.slice(HASH_PREFIX.length), 'hex');
  const actual = createHash('sha256').update(key, 'utf8').digest();
  return expected.length === actual.length && timingSafeEqual(expected, actual);
}
