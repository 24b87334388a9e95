/**
 * Files of a shard directory: the inventory recorded when a shard enters the trash (every file its
 * manifest references, its WAL files and the manifest itself), the same inventory of a live
 * shard's segments (its WAL files come from the open log), and read-only access that leaves file
 * times alone (`O_NOATIME`), which verification relies on.
 */
import { constants } from 'node:fs';
import { open, readdir, stat, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { readManifest, type Manifest } from '../shard/manifest.ts';
import { crc32c } from './checksum.ts';

/** One file of a shard directory as an inventory recorded it. */
export interface ShardFileEntry {
  /** Path relative to the shard directory, `/`-separated. */
  path: string;
  bytes: number;
  /** CRC32C of the whole file, for files without a checksum of their own (the shard manifest). */
  crc32c?: number;
  /**
   * The active WAL file of a live shard: writes may append past `bytes` while it is verified, so
   * it may be longer, and only its first `bytes` (its durable frames) are checked.
   */
  appendOnly?: boolean;
}

/** Name of the shard manifest inside a shard directory. */
export const SHARD_MANIFEST_FILE = 'manifest.json';

/** What `inventoryShard` found. */
export interface ShardInventory {
  files: ShardFileEntry[];
  segments: number;
  bytes: number;
  manifest: Manifest | null;
}

const NOATIME = constants.O_NOATIME ?? 0;
let noAtimeRefused = false;

/**
 * Opens a file for reading without updating its access time. `O_NOATIME` is refused (EPERM) for
 * files another user owns; then the file is opened normally.
 */
export async function openReadOnly(path: string): Promise<FileHandle> {
  if (NOATIME !== 0 && !noAtimeRefused) {
    try {
      return await open(path, constants.O_RDONLY | NOATIME);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EPERM') throw error;
      noAtimeRefused = true;
    }
  }
  return open(path, constants.O_RDONLY);
}

/** Reads a whole file (or its first `limit` bytes) without touching its access time. */
export async function readWholeFile(path: string, limit = Number.POSITIVE_INFINITY): Promise<Buffer> {
  const handle = await openReadOnly(path);
  try {
    const size = Math.min((await handle.stat()).size, limit);
    const buffer = Buffer.allocUnsafe(size);
    let filled = 0;
    while (filled < size) {
      const { bytesRead } = await handle.read(buffer, filled, size - filled, filled);
      if (bytesRead === 0) break;
      filled += bytesRead;
    }
    return filled === size ? buffer : buffer.subarray(0, filled);
  } finally {
    await handle.close();
  }
}

const CHUNK_BYTES = 1024 * 1024;

/** CRC32C of bytes `[0, end)` of an open file, read in chunks (awaiting between them). */
export async function crcOfRange(handle: FileHandle, end: number): Promise<number> {
  const buffer = Buffer.allocUnsafe(Math.min(CHUNK_BYTES, Math.max(end, 1)));
  let crc = 0;
  for (let offset = 0; offset < end; ) {
    const { bytesRead } = await handle.read(buffer, 0, Math.min(buffer.length, end - offset), offset);
    if (bytesRead === 0) throw new Error(`unexpected end of file at byte ${offset}`);
    crc = crc32c(buffer.subarray(0, bytesRead), crc);
    offset += bytesRead;
  }
  return crc >>> 0;
}

async function sizeOf(path: string): Promise<number> {
  return (await stat(path)).size;
}

/**
 * Inventories a closed shard directory. Segment directories its manifest does not reference
 * (garbage a merge left for removal) are not part of the shard and are left out.
 */
export async function inventoryShard(dir: string): Promise<ShardInventory> {
  const { files, manifest } = await inventorySegments(dir);
  const walDir = join(dir, 'wal');
  const walNames = (await readdir(walDir).catch(() => [] as string[])).filter((name) => name.endsWith('.wal')).sort();
  for (const name of walNames) files.push({ path: `wal/${name}`, bytes: await sizeOf(join(walDir, name)) });
  return {
    files,
    segments: manifest?.segments.length ?? 0,
    bytes: files.reduce((sum, file) => sum + file.bytes, 0),
    manifest,
  };
}

/**
 * The shard manifest and every file of the segments it references (not the WAL). A live shard
 * calls it only while no epoch or merge can replace the manifest or remove segment files.
 */
export async function inventorySegments(dir: string): Promise<{ files: ShardFileEntry[]; manifest: Manifest | null }> {
  const files: ShardFileEntry[] = [];
  const manifest = await readManifest(dir);
  if (manifest !== null) {
    const manifestPath = join(dir, SHARD_MANIFEST_FILE);
    const bytes = await readWholeFile(manifestPath);
    files.push({ path: SHARD_MANIFEST_FILE, bytes: bytes.length, crc32c: crc32c(bytes) });
    for (const segment of manifest.segments) {
      const segmentDir = join(dir, 'segments', segment.meta.name);
      for (const name of (await readdir(segmentDir)).sort()) {
        files.push({ path: `segments/${segment.meta.name}/${name}`, bytes: await sizeOf(join(segmentDir, name)) });
      }
    }
  }
  return { files, manifest };
}
