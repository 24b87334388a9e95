/**
 * Reads kernel and system files (`/proc`, `/sys`, `/etc`) under a configurable root directory,
 * so that a unit test can point every host reader at a fake tree. Reads throw on failure with a
 * message that names the file; the fact layer (fact.ts) turns those into `{value: null, error}`.
 */
import { readFile, readdir, readlink, realpath } from 'node:fs/promises';
import { join, resolve } from 'node:path';

/** File access relative to a root directory (`/` on a real host). */
export class HostFiles {
  constructor(readonly root: string = '/') {}

  /** Absolute path of a host path under the root. */
  path(hostPath: string): string {
    return this.root === '/' ? hostPath : join(this.root, hostPath);
  }

  /** Whole file as text. */
  async text(hostPath: string): Promise<string> {
    try {
      return await readFile(this.path(hostPath), 'utf8');
    } catch (error) {
      throw new Error(`cannot read ${hostPath}: ${describeFsError(error)}`);
    }
  }

  /** First line of the file, trimmed (sysfs and procfs values). */
  async line(hostPath: string): Promise<string> {
    return (await this.text(hostPath)).split('\n')[0].trim();
  }

  /** The file's first line as an integer. */
  async integer(hostPath: string): Promise<number> {
    const line = await this.line(hostPath);
    const value = Number(line);
    if (line === '' || !Number.isFinite(value)) throw new Error(`${hostPath} does not hold a number: "${line}"`);
    return value;
  }

  /** Whether the file can be read. */
  async exists(hostPath: string): Promise<boolean> {
    try {
      await readFile(this.path(hostPath));
      return true;
    } catch {
      return false;
    }
  }

  /** Names in a directory, sorted. */
  async list(hostPath: string): Promise<string[]> {
    try {
      return (await readdir(this.path(hostPath))).sort();
    } catch (error) {
      throw new Error(`cannot list ${hostPath}: ${describeFsError(error)}`);
    }
  }

  /** Target of a symbolic link, as a host path (relative links resolved against the link's directory). */
  async link(hostPath: string): Promise<string> {
    try {
      const target = await readlink(this.path(hostPath));
      return resolve(hostPath, '..', target);
    } catch (error) {
      throw new Error(`cannot resolve ${hostPath}: ${describeFsError(error)}`);
    }
  }

  /** `key: value` lines (`/proc/meminfo`, `/proc/self/status`) as a map. */
  async keyValues(hostPath: string, separator = ':'): Promise<Map<string, string>> {
    const entries = new Map<string, string>();
    for (const line of (await this.text(hostPath)).split('\n')) {
      const at = line.indexOf(separator);
      if (at > 0) entries.set(line.slice(0, at).trim(), line.slice(at + separator.length).trim());
    }
    return entries;
  }
}

/** The canonical absolute path of a directory on the real file system, or the path itself when it cannot be resolved. */
export async function canonicalPath(path: string): Promise<string> {
  try {
    return await realpath(path);
  } catch {
    return resolve(path);
  }
}

/** `ENOENT` → "no such file", and so on, for error reasons. */
function describeFsError(error: unknown): string {
  const code = (error as NodeJS.ErrnoException)?.code;
  switch (code) {
    case 'ENOENT':
      return 'no such file';
    case 'EACCES':
    case 'EPERM':
      return 'permission denied';
    case 'EINVAL':
      return 'not supported by the device (EINVAL)';
    case 'ENOTDIR':
      return 'not a directory';
    default:
      return code ?? (error instanceof Error ? error.message : String(error));
  }
}
