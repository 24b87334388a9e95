/**
 * API key strings and their hashes. A key Trove issues reads `trove_<id>_<secret>`: 16 hex digits
 * of id (so a request's key is found without scanning) and 32 random bytes of secret in base64url.
 * Only a salted hash of the whole string is ever stored: `hmac-sha256:<salt>:<digest>`, the
 * HMAC-SHA-256 of the key under a random 16-byte salt of its own (base64url), so equal keys never
 * store equal hashes and a leaked catalog cannot be matched against precomputed tables. Presented
 * keys are hashed with the stored salt and compared in constant time. A fast keyed hash is enough:
 * issued keys are 256-bit random values and supplied ones at least 24 characters, not passwords,
 * and every request pays for one. Records written before salting hold `sha256:<hex>` (unsalted);
 * they keep matching, so an upgrade invalidates no key.
 */
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/** Prefix of every key Trove issues. */
export const ISSUED_KEY_PREFIX = 'trove_';

const ISSUED_KEY = /^trove_([0-9a-f]{16})_[A-Za-z0-9_-]{43}$/;
/** Prefix of the salted form every new record gets: `hmac-sha256:<salt>:<hex digest>`. */
const SALTED_PREFIX = 'hmac-sha256:';
const SALT_BYTES = 16;
/** The salted form, and the unsalted `sha256:<hex digest>` form of records written by earlier versions. */
const SALTED_HASH = /^hmac-sha256:([A-Za-z0-9_-]{22}):([0-9a-f]{64})$/;
const LEGACY_HASH = /^sha256:([0-9a-f]{64})$/;

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

/** The stored form of a key: `hmac-sha256:<salt>:<hex>` under a fresh random salt. */
export function hashApiKey(key: string): string {
  const salt = randomBytes(SALT_BYTES).toString('base64url');
  return `${SALTED_PREFIX}${salt}:${saltedDigest(key, salt).toString('hex')}`;
}

/** True when `key` hashes to `storedHash` (salted or legacy form); digests are compared in constant time. */
export function keyMatchesHash(key: string, storedHash: string): boolean {
  const salted = SALTED_HASH.exec(storedHash);
  if (salted !== null) return digestsEqual(Buffer.from(salted[2], 'hex'), saltedDigest(key, salted[1]));
  const legacy = LEGACY_HASH.exec(storedHash);
  if (legacy !== null) return digestsEqual(Buffer.from(legacy[1], 'hex'), createHash('sha256').update(key, 'utf8').digest());
  return false;
}

/** HMAC-SHA-256 of the key under the salt (the salt's base64url text is the HMAC key). */
function saltedDigest(key: string, salt: string): Buffer {
  return createHmac('sha256', salt).update(key, 'utf8').digest();
}

function digestsEqual(expected: Buffer, actual: Buffer): boolean {
  return expected.length === actual.length && timingSafeEqual(expected, actual);
}
