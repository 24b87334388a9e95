/** The Trove version, read once from package.json. */
import { readFileSync } from 'node:fs';

/** Version of this Trove build (package.json `version`). */
export const TROVE_VERSION: string = (
  JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }
).version;
