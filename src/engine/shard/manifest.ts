import { promises as fs } from 'node:fs';
import path from 'node:path';
import { EngineError } from '../errors.ts';
import type { SegmentMeta } from '../segment/segment-writer.ts';
import type { WalCheckpoint } from '../wal/wal.ts';

/** Version of the manifest format written (docs/formats/shard.md); version 1 (no `wal`) is still read. */
export const MANIFEST_FORMAT_VERSION = 2;

/** Whether this build reads a manifest of format `version`. */
export function isSupportedManifestVersion(version: unknown): boolean {
  return version === 1 || version === MANIFEST_FORMAT_VERSION;
}

/** A live segment and the generations of its mutable side files. */
export interface ManifestSegment {
  meta: SegmentMeta;
  liveDocsGen: number;
  inplaceGens: Record<string, number>;
  metaGen: number;
  /** Generation of the segment's field overlay file (absent or 0: none). */
  overlayGen?: number;
}

/** The shard's commit point: live segments and the WAL seq everything up to which they contain. */
export interface Manifest {
  formatVersion: number;
  shardUuid: string;
  checkpointSeq: number;
  /** Where the WAL records up to `checkpointSeq` lie, so that opening skips them (absent in format 1). */
  wal?: WalCheckpoint;
  nextSegmentNumber: number;
  segments: ManifestSegment[];
  epochs: number;
  merges: number;
  lastEpochAt: number | null;
}

const FILE = 'manifest.json';

/** Reads the manifest, or null for a new shard. */
export async function readManifest(dir: string): Promise<Manifest | null> {
  let text: string;
  try {
    text = await fs.readFile(path.join(dir, FILE), 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
  let manifest: Manifest;
  try {
    manifest = JSON.parse(text) as Manifest;
  } catch {
    throw new EngineError('corrupt_index', `manifest ${path.join(dir, FILE)} is not valid JSON`);
  }
  if (!isSupportedManifestVersion(manifest.formatVersion)) {
    throw new EngineError('corrupt_index', `manifest ${path.join(dir, FILE)} has unknown format version ${manifest.formatVersion}`);
  }
  return manifest;
}

/** Replaces the manifest atomically: temp file, fsync, rename, fsync of the directory. */
export async function writeManifest(dir: string, manifest: Manifest): Promise<void> {
  const temp = path.join(dir, `${FILE}.tmp`);
  const handle = await fs.open(temp, 'w');
  try {
    await handle.writeFile(JSON.stringify({ ...manifest, formatVersion: MANIFEST_FORMAT_VERSION }));
    await handle.sync();
  } finally {
    await handle.close();
  }
  await fs.rename(temp, path.join(dir, FILE));
  await syncDirectory(dir);
}

/** fsyncs a directory so renames and creations in it are durable. */
export async function syncDirectory(dir: string): Promise<void> {
  const handle = await fs.open(dir, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}
