/**
 * Crash-safe file replacement: write a temporary file beside the target, fsync it, rename it over
 * the target, fsync the directory. After a crash at any point the target holds either the old or
 * the new content in full, never a mix.
 */
import { open, rename, rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

/** Suffix of the temporary file; a leftover one is an interrupted write and may be deleted. */
export const TEMP_SUFFIX = '.tmp';

/** Options of `writeFileAtomic`. */
export interface AtomicWriteOptions {
  /** Test hook run after the temporary file is durable and before the rename; throwing aborts the write there. */
  beforeRename?: () => void;
  /** Permission bits of the new file (default 0o600: owner only); set on the temporary file before any data is written. */
  mode?: number;
}

/** Makes a directory's entries (creations, renames) durable. */
export async function fsyncDirectory(directory: string): Promise<void> {
  const handle = await open(directory, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** Atomically replaces `path` with `data` (see the module comment). */
export async function writeFileAtomic(path: string, data: string | Uint8Array, options: AtomicWriteOptions = {}): Promise<void> {
  const temp = join(dirname(path), `${basename(path)}${TEMP_SUFFIX}`);
  const mode = options.mode ?? 0o600;
  const handle = await open(temp, 'w', mode);
  try {
    // A leftover temporary file keeps its old permissions when reopened: set them explicitly.
    await handle.chmod(mode);
    await handle.writeFile(data);
    await handle.sync();
  } finally {
    await handle.close();
  }
  options.beforeRename?.();
  await rename(temp, path);
  await fsyncDirectory(dirname(path));
}

/** Deletes the temporary file an interrupted `writeFileAtomic(path)` may have left. */
export async function removeInterruptedWrite(path: string): Promise<void> {
  await rm(join(dirname(path), `${basename(path)}${TEMP_SUFFIX}`), { force: true });
}
