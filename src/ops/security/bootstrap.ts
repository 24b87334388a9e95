/**
 * The first start's admin key, and the recovery when no admin key is left. When the catalog holds
 * no API key, the node creates an admin key: the value of `TROVE_API_KEY` if it is set, otherwise
 * a generated one written once to `<path.data>/bootstrap-admin.key` (mode 0600) for the operator,
 * the CLI and the quick start. Only the key's hash goes to the catalog; the log names the file,
 * never the key.
 *
 * When keys exist but none is a valid admin key for every namespace (they all expired, say), a
 * start with `TROVE_API_KEY` set creates an admin key [`recovery-admin`] from it; without it the
 * start logs how to recover. Revokes cannot cause this (api-keys.ts refuses them), expiry can.
 *
 * The file is written before the hash is stored: a crash in between leaves no key in the catalog,
 * so the next start simply makes a new one, whereas the other order could lock everyone out.
 */
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { writeFileAtomic } from '../../engine/directory/atomic-file.ts';
import type { Coordinator } from '../../cluster/coordinator.ts';
import type { ApiKeyRecord } from '../../cluster/catalog.ts';
import { generateApiKey, generateKeyId, hashApiKey, invalidSuppliedKeyReason, issuedKeyId, keyMatchesHash } from './api-key-material.ts';
import { ADMIN_ROLE, isUsableAdmin } from './api-keys.ts';

/** File name of the generated first-start key under `path.data`. */
export const BOOTSTRAP_KEY_FILE = 'bootstrap-admin.key';
/** Environment variable that supplies the first-start admin key (and the CLI's key). */
export const API_KEY_ENV = 'TROVE_API_KEY';
/** Name the first-start key is listed under. */
export const BOOTSTRAP_KEY_NAME = 'bootstrap-admin';
/** Name of the admin key a start with `TROVE_API_KEY` creates when no valid admin key remains. */
export const RECOVERY_KEY_NAME = 'recovery-admin';

/** Options of `ensureBootstrapKey`. */
export interface BootstrapOptions {
  coordinator: Coordinator;
  dataPath: string;
  /** Value of `TROVE_API_KEY`, if set. */
  suppliedKey?: string;
  logger: Logger;
  now?: () => number;
}

/**
 * What `ensureBootstrapKey` did: `existing` (a valid admin key exists), `supplied` / `generated`
 * (first key), `recovered` (admin key made from `TROVE_API_KEY` as none was valid), `no_admin`
 * (none is valid and no key was supplied: the log says how to recover).
 */
export type BootstrapOutcome = 'existing' | 'supplied' | 'generated' | 'recovered' | 'no_admin';

/** A supplied key that cannot be used; the node does not start. */
export class BootstrapKeyError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'BootstrapKeyError';
  }
}

/** Path of the generated first-start key file. */
export function bootstrapKeyPath(dataPath: string): string {
  return join(dataPath, BOOTSTRAP_KEY_FILE);
}

/** Creates the first admin key when the catalog holds none, or recovers one (see the module comment). */
export async function ensureBootstrapKey(options: BootstrapOptions): Promise<BootstrapOutcome> {
  const supplied = options.suppliedKey === undefined || options.suppliedKey === '' ? undefined : options.suppliedKey;
  const records = options.coordinator.listApiKeys();
  if (records.length === 0) return createFirstKey(options, supplied);
  const now = (options.now ?? Date.now)();
  if (records.some((record) => isUsableAdmin(record, now))) {
    if (supplied !== undefined) {
      options.logger.info(`${API_KEY_ENV} is only used when no valid admin API key exists; this cluster has one`);
    }
    return 'existing';
  }
  return recoverAdminKey(options, supplied, now);
}

/** An admin record for every namespace that never expires, holding only the key's hash. */
function adminRecord(key: string, id: string, name: string, now: number): ApiKeyRecord {
  return {
    id,
    name,
    role: ADMIN_ROLE,
    namespaces: null,
    hash: hashApiKey(key),
    origin: issuedKeyId(key) === null ? 'supplied' : 'issued',
    createdAt: now,
    expiresAt: null,
    lastUsedAt: null,
  };
}

/** Refuses (stops the start) a supplied key that is too weak. */
function requireUsableSuppliedKey(key: string): void {
  const invalid = invalidSuppliedKeyReason(key);
  if (invalid !== null) throw new BootstrapKeyError(`${API_KEY_ENV} cannot be used as an API key: ${invalid}`);
}

/** The first key: from `TROVE_API_KEY`, else generated and written to the bootstrap file. */
async function createFirstKey(options: BootstrapOptions, supplied: string | undefined): Promise<BootstrapOutcome> {
  const { coordinator, logger } = options;
  const now = (options.now ?? Date.now)();
  if (supplied !== undefined) {
    requireUsableSuppliedKey(supplied);
    if (await coordinator.createFirstApiKey(adminRecord(supplied, issuedKeyId(supplied) ?? generateKeyId(), BOOTSTRAP_KEY_NAME, now))) {
      logger.info(`created the admin API key [${BOOTSTRAP_KEY_NAME}] from ${API_KEY_ENV}`);
      return 'supplied';
    }
    return 'existing';
  }

  const path = bootstrapKeyPath(options.dataPath);
  const { id, key } = generateApiKey();
  await writeFileAtomic(path, `${key}\n`, { mode: 0o600 });
  if (!(await coordinator.createFirstApiKey(adminRecord(key, id, BOOTSTRAP_KEY_NAME, now)))) {
    // Another node of the cluster created the first key in the meantime: this one is void.
    await rm(path, { force: true });
    return 'existing';
  }
  logger.warn(
    { path },
    `security is on and no API key existed: created the admin API key [${BOOTSTRAP_KEY_NAME}], written once to ${path} (readable by this user only); send it as "Authorization: Bearer <key>"`,
  );
  return 'generated';
}

/** Keys exist but no valid admin key: create one from `TROVE_API_KEY`, or log how to. */
async function recoverAdminKey(options: BootstrapOptions, supplied: string | undefined, now: number): Promise<BootstrapOutcome> {
  const { coordinator, logger } = options;
  if (supplied === undefined) {
    logger.warn(
      `no admin API key for every namespace is valid any more (they expired or were revoked): start a node with ${API_KEY_ENV} set to a new key of at least 24 characters to create the admin key [${RECOVERY_KEY_NAME}]`,
    );
    return 'no_admin';
  }
  requireUsableSuppliedKey(supplied);
  const issuedId = issuedKeyId(supplied);
  if ((issuedId !== null && coordinator.getApiKey(issuedId) !== null) || coordinator.listApiKeys().some((record) => keyMatchesHash(supplied, record.hash))) {
    throw new BootstrapKeyError(`${API_KEY_ENV} is a key this cluster already holds (expired or limited); supply a new key to create the admin key [${RECOVERY_KEY_NAME}]`);
  }
  await coordinator.createApiKey(adminRecord(supplied, issuedId ?? generateKeyId(), RECOVERY_KEY_NAME, now));
  logger.warn(`no admin API key for every namespace was valid: created the admin API key [${RECOVERY_KEY_NAME}] from ${API_KEY_ENV}`);
  return 'recovered';
}
