/**
 * Which API key the CLI sends: `--api-key`, else the `TROVE_API_KEY` environment variable, else
 * the admin key a node's first start wrote to `<data>/bootstrap-admin.key` (`--data`, default
 * `./data`, the path `npm start` uses), so the quick start needs no key handling.
 */
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { API_KEY_ENV, bootstrapKeyPath } from '../ops/security/bootstrap.ts';

/** Default `--data` of CLI commands: the default `path.data` of `trove start`. */
export const DEFAULT_CLI_DATA_PATH = './data';

/** Inputs of `resolveApiKey`. */
export interface ApiKeySources {
  /** Value of `--api-key`. */
  apiKey?: string;
  /** Value of `--data` (relative to the working directory). */
  dataPath?: string;
  env?: Readonly<Record<string, string | undefined>>;
}

/** The key to send, or undefined when no source has one (the server may run without security). */
export async function resolveApiKey(sources: ApiKeySources): Promise<string | undefined> {
  if (sources.apiKey !== undefined && sources.apiKey !== '') return sources.apiKey;
  const fromEnv = (sources.env ?? process.env)[API_KEY_ENV];
  if (fromEnv !== undefined && fromEnv !== '') return fromEnv;
  try {
    const key = (await readFile(bootstrapKeyPath(resolve(sources.dataPath ?? DEFAULT_CLI_DATA_PATH)), 'utf8')).trim();
    return key === '' ? undefined : key;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

