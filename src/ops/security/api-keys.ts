/**
 * API keys over the coordinator: issuing (the key string is returned once, only its hash is
 * stored in the catalog), listing without secrets, revoking, and authenticating a presented key.
 * Authentication reads the coordinator's catalog view on every request, so a revocation applies
 * to the very next request; last-use times are batched (see last-used.ts).
 *
 * Roles are plain strings here: which routes a role opens is the HTTP layer's business
 * (src/api/roles.ts). This layer only knows `admin`, to keep one usable admin key: a revoke that
 * would leave no admin key for every namespace valid for at least `ADMIN_KEY_MARGIN_MS` more is
 * refused (see bootstrap.ts for the recovery when every admin key has expired anyway).
 */
import type { Logger } from 'pino';
import type { ApiKeyRecord } from '../../cluster/catalog.ts';
import type { Coordinator } from '../../cluster/coordinator.ts';
import { EngineError } from '../../engine/errors.ts';
import { generateApiKey, hashApiKey, issuedKeyId, keyMatchesHash, MAX_KEY_LENGTH } from './api-key-material.ts';
import { LastUsedRecorder } from './last-used.ts';
import { SecurityError } from './security-error.ts';

/** The role that may do everything, including managing keys. */
export const ADMIN_ROLE = 'admin';

/** Shortest lifetime a key may be given: one second. */
export const MIN_EXPIRES_IN_SECS = 1;
/** Longest lifetime a key may be given: ten years. */
export const MAX_EXPIRES_IN_SECS = 10 * 365 * 24 * 3600;
/** A revoke must leave an admin key for every namespace that stays valid at least this long. */
export const ADMIN_KEY_MARGIN_MS = 3_600_000;

/** Options of `ApiKeys`. */
export interface ApiKeysOptions {
  coordinator: Coordinator;
  logger: Logger;
  /** Clock, epoch millis (tests pin it). */
  now?: () => number;
  /** Interval between catalog writes of last-use times. */
  lastUsedFlushMs?: number;
}

/** What `create` needs; the caller has checked the role and namespace names. */
export interface NewApiKey {
  name: string;
  role: string;
  /** Namespaces the key is limited to; null or absent for every namespace. */
  namespaces?: readonly string[] | null;
  /** Lifetime in seconds; null or absent for a key that never expires. */
  expiresInSecs?: number | null;
}

/** An issued key: its record and the key string, which is never available again. */
export interface IssuedApiKey {
  record: ApiKeyRecord;
  key: string;
}

/** A key as listings show it: everything but the hash, with the freshest last-use time. */
export interface ApiKeyInfo {
  id: string;
  name: string;
  role: string;
  namespaces: string[] | null;
  createdAt: number;
  expiresAt: number | null;
  lastUsedAt: number | null;
  expired: boolean;
}

/** The outcome of presenting a key string. */
export type Authentication =
  | { ok: true; record: ApiKeyRecord }
  /** `keyId` is the id the key claims (safe to log), or null when it has none. */
  | { ok: false; reason: 'unknown' | 'expired'; keyId: string | null };

/** See the module comment. */
export class ApiKeys {
  private readonly lastUsed: LastUsedRecorder;
  private readonly now: () => number;
  private suppliedRevision = -1;
  private supplied: ApiKeyRecord[] = [];

  constructor(private readonly options: ApiKeysOptions) {
    this.now = options.now ?? Date.now;
    this.lastUsed = new LastUsedRecorder(options.coordinator, options.logger, options.lastUsedFlushMs);
    this.lastUsed.start();
  }

  /** Issues a new key; the returned key string is shown once and never stored. */
  async create(request: NewApiKey): Promise<IssuedApiKey> {
    const expiresInSecs = request.expiresInSecs ?? null;
    if (expiresInSecs !== null) requireValidLifetime(expiresInSecs);
    const { id, key } = generateApiKey();
    const createdAt = this.now();
    const record: ApiKeyRecord = {
      id,
      name: request.name,
      role: request.role,
      namespaces: request.namespaces ? [...new Set(request.namespaces)].sort() : null,
      hash: hashApiKey(key),
      origin: 'issued',
      createdAt,
      expiresAt: expiresInSecs === null ? null : createdAt + expiresInSecs * 1000,
      lastUsedAt: null,
    };
    return { record: await this.options.coordinator.createApiKey(record), key };
  }

  /** One key without its hash; `api_key_not_found` when no key has this id. */
  get(id: string): ApiKeyInfo {
    const record = this.options.coordinator.getApiKey(id);
    if (!record) throw new SecurityError('api_key_not_found', `no API key with id [${id}]`);
    return this.info(record);
  }

  /** Every key without its hash, oldest first. */
  list(): ApiKeyInfo[] {
    return this.options.coordinator
      .listApiKeys()
      .map((record) => this.info(record))
      .sort((left, right) => left.createdAt - right.createdAt || (left.id < right.id ? -1 : 1));
  }

  /**
   * Revokes a key at once. Refused when it would leave no admin key for every namespace valid for
   * at least another `ADMIN_KEY_MARGIN_MS`: without one, nobody could issue keys any more.
   */
  async revoke(id: string): Promise<ApiKeyInfo> {
    const record = this.options.coordinator.getApiKey(id);
    if (!record) throw new SecurityError('api_key_not_found', `no API key with id [${id}]`);
    const now = this.now();
    if (isUsableAdmin(record, now) && !this.options.coordinator.listApiKeys().some((other) => other.id !== id && isLastingAdmin(other, now))) {
      throw new SecurityError(
        'last_admin_key',
        `revoking API key [${id}] would leave no admin key for every namespace that is valid for at least another hour; create one before revoking this key`,
      );
    }
    const removed = await this.options.coordinator.deleteApiKey(id);
    if (!removed) throw new SecurityError('api_key_not_found', `no API key with id [${id}]`);
    return this.info(removed);
  }

  /** Checks a presented key string; on success notes its use (batched, see last-used.ts). */
  authenticate(key: string): Authentication {
    if (key.length > MAX_KEY_LENGTH) return { ok: false, reason: 'unknown', keyId: null };
    const keyId = issuedKeyId(key);
    let record: ApiKeyRecord | null = null;
    if (keyId !== null) {
      const candidate = this.options.coordinator.getApiKey(keyId);
      if (candidate !== null && keyMatchesHash(key, candidate.hash)) record = candidate;
    } else {
      record = this.suppliedKeys().find((candidate) => keyMatchesHash(key, candidate.hash)) ?? null;
    }
    if (record === null) return { ok: false, reason: 'unknown', keyId };
    const now = this.now();
    if (isExpired(record, now)) return { ok: false, reason: 'expired', keyId: record.id };
    this.lastUsed.note(record.id, now);
    return { ok: true, record };
  }

  /** Writes pending last-use times and stops the flush timer. */
  close(): Promise<void> {
    return this.lastUsed.close();
  }

  /** Writes pending last-use times now (tests; `close` does it too). */
  flushLastUsed(): Promise<void> {
    return this.lastUsed.flush();
  }

  private info(record: ApiKeyRecord): ApiKeyInfo {
    return {
      id: record.id,
      name: record.name,
      role: record.role,
      namespaces: record.namespaces === null ? null : [...record.namespaces],
      createdAt: record.createdAt,
      expiresAt: record.expiresAt,
      lastUsedAt: this.lastUsed.lastUsed(record.id, record.lastUsedAt),
      expired: isExpired(record, this.now()),
    };
  }

  /** Operator-supplied keys carry no id: they are the only ones matched by trying each. */
  private suppliedKeys(): ApiKeyRecord[] {
    const { coordinator } = this.options;
    if (this.suppliedRevision !== coordinator.revision) {
      this.supplied = coordinator.listApiKeys().filter((record) => record.origin === 'supplied');
      this.suppliedRevision = coordinator.revision;
    }
    return this.supplied;
  }
}

/** True when the key's lifetime has passed at `now`. */
export function isExpired(record: ApiKeyRecord, now: number): boolean {
  return record.expiresAt !== null && record.expiresAt <= now;
}

/** True for an admin key for every namespace that has not expired at `now`: it can issue and revoke any key. */
export function isUsableAdmin(record: ApiKeyRecord, now: number): boolean {
  return record.role === ADMIN_ROLE && record.namespaces === null && !isExpired(record, now);
}

/** True for a usable admin key that stays valid for at least `ADMIN_KEY_MARGIN_MS` after `now`. */
function isLastingAdmin(record: ApiKeyRecord, now: number): boolean {
  return isUsableAdmin(record, now) && (record.expiresAt === null || record.expiresAt >= now + ADMIN_KEY_MARGIN_MS);
}

/** Refuses (400) a lifetime that is not a whole number of seconds within the bounds (`Infinity`, `1e309`, `-1`, `1.5`). */
function requireValidLifetime(expiresInSecs: number): void {
  if (Number.isSafeInteger(expiresInSecs) && expiresInSecs >= MIN_EXPIRES_IN_SECS && expiresInSecs <= MAX_EXPIRES_IN_SECS) return;
  throw new EngineError(
    'illegal_argument',
    `[expires_in_secs] must be a whole number of seconds from ${MIN_EXPIRES_IN_SECS} to ${MAX_EXPIRES_IN_SECS} (ten years), got [${String(expiresInSecs)}]`,
  );
}
