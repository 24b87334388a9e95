/**
 * The first start's admin key. When the catalog holds no API key, the node creates an admin key:
 * the value of `TROVE_API_KEY` if it is set, otherwise a generated one written once to
 * `<path.data>/bootstrap-admin.key` (mode 0600) for the operator, the CLI and the quick start.
 * Only the key's hash goes to the catalog; the log names the file, never the key.
 *
 * The file is written before the hash is stored: a crash in between leaves no key in the catalog,
 * so the next start simply makes a new one, whereas the other order could lock everyone out.
 */
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { writeFileAtomic } from '../../engine/directory/atomic-file.ts';
import type { Coordinator } from '../../cluster/coordinator.ts';
import { generateApiKey, generateKeyId, hashApiKey, invalidSuppliedKeyReason, issuedKeyId } from './api-key-material.ts';
import { ADMIN_ROLE } from './api-keys.ts';

/** File name of the generated first-start key under `path.data`. */
export const BOOTSTRAP_KEY_FILE = 'bootstrap-admin.key';
/** Environment variable that supplies the first-start admin key (and the CLI's key). */
export const API_KEY_ENV = 'TROVE_API_KEY';
/** Name the first-start key is listed under. */
export const BOOTSTRAP_KEY_NAME = 'bootstrap-admin';

/** Options of `ensureBootstrapKey`. */
export interface BootstrapOptions {
  coordinator: Coordinator;
  dataPath: string;
  /** Value of `TROVE_API_KEY`, if set. */
  suppliedKey?: string;
  logger: Logger;
  now?: () => number;
}

/** What `ensureBootstrapKey` did. */
export type BootstrapOutcome = 'existing' | 'supplied' | 'generated';

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

/** Creates the first admin key when the catalog holds none (see the module comment). */
export async function ensureBootstrapKey(options: BootstrapOptions): Promise<BootstrapOutcome> {
  const { coordinator, logger } = options;
  const supplied = options.suppliedKey === undefined || options.suppliedKey === '' ? undefined : options.suppliedKey;
  if (coordinator.listApiKeys().length > 0) {
    if (supplied !== undefined) {
      logger.info(`${API_KEY_ENV} is only used on the first start, when no API key exists; this cluster already has keys`);
    }
    return 'existing';
  }
  const now = (options.now ?? Date.now)();
  const record = (key: string, id: string) => ({
    id,
    name: BOOTSTRAP_KEY_NAME,
    role: ADMIN_ROLE,
    namespaces: null,
    hash: hashApiKey(key),
    origin: issuedKeyId(key) === null ? ('supplied' as const) : ('issued' as const),
    createdAt: now,
    expiresAt: null,
    lastUsedAt: null,
  });

  if (supplied !== undefined) {
    const invalid = invalidSuppliedKeyReason(supplied);
    if (invalid !== null) throw new BootstrapKeyError(`${API_KEY_ENV} cannot be used as an API key: ${invalid}`);
    if (await coordinator.createFirstApiKey(record(supplied, issuedKeyId(supplied) ?? generateKeyId()))) {
      logger.info(`created the admin API key [${BOOTSTRAP_KEY_NAME}] from ${API_KEY_ENV}`);
      return 'supplied';
    }
    return 'existing';
  }

  const path = bootstrapKeyPath(options.dataPath);
  const { id, key } = generateApiKey();
  await writeFileAtomic(path, `${key}\n`, { mode: 0o600 });
  if (!(await coordinator.createFirstApiKey(record(key, id)))) {
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
