/**
 * Holds of a shard copy's files for file-based recovery: while a hold lasts, the copy's
 * maintenance section is taken (no epoch, merge or WAL trim replaces the manifest or removes a
 * file) and the listed files stay as they are; writes and searches go on, and the WAL only grows
 * past the listed lengths. Copying exactly the listed bytes gives a directory that opens as the
 * copy did up to the listed seq (docs/formats/shard.md, "File copies").
 */
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { EngineError } from '../errors.ts';
import type { WriteAheadLog } from '../wal/wal.ts';
import type { Maintenance } from './maintenance.ts';
import type { Manifest } from './manifest.ts';

/** How long a hold lasts when nobody releases it. */
export const HOLD_TIMEOUT_MS = 5 * 60_000;

/** What a hold lists (the shard handle's `FileCopyHold`). */
export interface HeldFiles {
  hold: number;
  /** Paths relative to the shard directory, with the bytes to copy from the start of each. */
  files: Array<{ path: string; bytes: number }>;
  /** Highest seq the listed files hold durably. */
  seq: number;
}

const MANIFEST_FILE = 'manifest.json';

/** The holds of one shard copy. */
export class FileHolds {
  /** Ends each hold in progress, by number. */
  private readonly releases = new Map<number, () => void>();
  private nextHold = 1;
  private closed = false;

  constructor(
    private readonly dir: string,
    private readonly wal: WriteAheadLog,
    private readonly maintenance: Maintenance,
  ) {}

  /** Takes the maintenance section (after the epoch or merge running now), lists the files and keeps it until released. */
  hold(): Promise<HeldFiles> {
    return new Promise((resolve, reject) => {
      const held = this.maintenance.exclusive(async () => {
        if (this.closed) throw new EngineError('shard_closed', 'the shard closed before its files could be held');
        const listing = await this.list();
        const hold = this.nextHold++;
        await new Promise<void>((end) => {
          const timer = setTimeout(() => this.release(hold), HOLD_TIMEOUT_MS);
          timer.unref();
          this.releases.set(hold, () => {
            clearTimeout(timer);
            end();
          });
          resolve({ hold, ...listing });
        });
      });
      held.catch(reject);
    });
  }

  /** Ends a hold; an unknown (ended or never given) hold is ignored. */
  release(hold: number): void {
    const end = this.releases.get(hold);
    this.releases.delete(hold);
    end?.();
  }

  /** Ends every hold and refuses new ones (the shard is closing). */
  close(): void {
    this.closed = true;
    for (const hold of [...this.releases.keys()]) this.release(hold);
  }

  /** The manifest as it is on disk, the files of its segments, the WAL files to their durable length. */
  private async list(): Promise<Omit<HeldFiles, 'hold'>> {
    const files: HeldFiles['files'] = [];
    const manifestText = await readIfPresent(path.join(this.dir, MANIFEST_FILE));
    if (manifestText !== null) {
      files.push({ path: MANIFEST_FILE, bytes: manifestText.length });
      const manifest = JSON.parse(manifestText.toString('utf8')) as Manifest;
      for (const entry of manifest.segments) {
        const segment = path.posix.join('segments', entry.meta.name);
        for (const file of await listTree(path.join(this.dir, segment), segment)) files.push(file);
      }
    }
    const walFiles = this.wal.durableFiles();
    for (const file of walFiles) files.push({ path: path.posix.join('wal', file.name), bytes: file.bytes });
    return { files, seq: walFiles.at(-1)?.lastSeq ?? 0 };
  }
}

async function readIfPresent(file: string): Promise<Buffer | null> {
  try {
    return await fs.readFile(file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
}

/** Every file under `dir`, with its size, named relative to the shard directory (`prefix` names `dir`). */
async function listTree(dir: string, prefix: string): Promise<HeldFiles['files']> {
  const files: HeldFiles['files'] = [];
  for (const entry of await fs.readdir(dir, { withFileTypes: true })) {
    const relative = path.posix.join(prefix, entry.name);
    if (entry.isDirectory()) files.push(...(await listTree(path.join(dir, entry.name), relative)));
    else if (entry.isFile()) files.push({ path: relative, bytes: (await fs.stat(path.join(dir, entry.name))).size });
  }
  return files.sort((a, b) => a.path.localeCompare(b.path));
}
