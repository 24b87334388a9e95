/**
 * The recovery rule applied when a log is opened (docs/formats/wal.md, "Recovery"): keep the
 * longest intact run of records, truncate at the first torn or corrupt frame, delete what follows.
 */
import fs from 'node:fs';
import path from 'node:path';
import { WalFile, fsyncDirectorySync, parseWalFileName, type WalCheckpoint, type WalFileCheckpoint } from './wal-file.ts';

/**
 * Opens the log files in `dir` (which must exist), oldest first, applying the recovery rule; a
 * file that `checkpoint` covers is verified only past it. The result is never empty: a directory
 * without a usable file gets a new one starting at seq 1.
 */
export function recoverLogFiles(dir: string, checkpoint?: WalCheckpoint): WalFile[] {
  // The checkpoint comes from a manifest on disk: entries of any other shape are ignored.
  const entries: unknown[] = Array.isArray(checkpoint?.files) ? checkpoint.files : [];
  const checkpoints = new Map<unknown, WalFileCheckpoint>();
  for (const entry of entries) {
    if (typeof entry === 'object' && entry !== null) checkpoints.set((entry as WalFileCheckpoint).name, entry as WalFileCheckpoint);
  }
  const names = fs
    .readdirSync(dir)
    .filter((name) => parseWalFileName(name) !== null)
    .sort();
  const files: WalFile[] = [];
  const discarded: string[] = [];
  let firstDiscardedName = names.length;
  try {
    for (let position = 0; position < names.length; position++) {
      const file = WalFile.openExisting(dir, names[position]!);
      if (file === null) {
        firstDiscardedName = position;
        break;
      }
      const previous = files[files.length - 1];
      if (previous !== undefined && file.firstSeq !== previous.lastSeq + 1) {
        if (file.firstSeq <= previous.lastSeq) {
          file.close();
          firstDiscardedName = position;
          break;
        }
        // A gap after an intact file: the older files are leftovers of an interrupted removal.
        for (const older of files) {
          older.close();
          discarded.push(older.path);
        }
        files.length = 0;
      }
      files.push(file);
      const intact = file.scan(checkpoints.get(names[position]!));
      // Only the newest file keeps a descriptor of its own: older ones are read through the cache.
      previous?.releaseDescriptor();
      if (!intact) {
        firstDiscardedName = position + 1;
        break;
      }
    }
  } catch (error) {
    for (const file of files) file.close();
    throw error;
  }
  for (let position = firstDiscardedName; position < names.length; position++) {
    discarded.push(path.join(dir, names[position]!));
  }
  for (const filePath of discarded) fs.unlinkSync(filePath);
  let created = false;
  if (files.length === 0) {
    files.push(WalFile.createWithHeader(dir, 1));
    created = true;
  }
  if (created || discarded.length > 0) fsyncDirectorySync(dir);
  return files;
}
