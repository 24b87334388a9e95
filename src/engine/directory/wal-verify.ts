/**
 * Read-only check of a shard's write-ahead log (trashed, or live up to its durable end) (docs/formats/wal.md): each file's header
 * (magic, version, first seq equal to its name, header CRC32C), every frame's CRC32C, seqs
 * contiguous within and across files, no torn tail, every record past the shard's checkpoint
 * retained (the segments do not hold those), and the last seq equal to the one recorded at delete
 * time. The payloads past the checkpoint are handed to the caller, in seq order, to replay.
 */
import { join } from 'node:path';
import { crc32c } from './checksum.ts';
import { checkFrame, FRAME_TORN, framePayload, frameSeq, readUint64 } from '../wal/frame.ts';
import { FILE_HEADER_BYTES, parseWalFileName, WAL_FORMAT_VERSION } from '../wal/wal-file.ts';
import { readWholeFile } from './shard-files.ts';

/** Result of `verifyWalFiles`. */
export interface WalCheck {
  /** Highest seq found, or null when no file could be read. */
  lastSeq: number | null;
  problems: string[];
}

/** A WAL file to check: its path relative to the shard directory, and how many of its bytes (default: all). */
export interface WalFileToCheck {
  path: string;
  bytes?: number;
}

/** Receives the payload of each record past the checkpoint. */
export type TailRecordHandler = (payload: Buffer) => void;

/** Checks one file; returns the seq after its last record, or null when its header is unusable. */
function checkWalFile(path: string, bytes: Buffer, firstSeq: number, problems: string[], checkpointSeq: number, onTail: TailRecordHandler): number | null {
  if (bytes.length < FILE_HEADER_BYTES) {
    problems.push(`${path}: shorter than its header`);
    return null;
  }
  if (bytes.toString('latin1', 0, 4) !== 'TRVW' || bytes.readUInt32LE(4) !== WAL_FORMAT_VERSION) {
    problems.push(`${path}: bad magic or format version`);
    return null;
  }
  if (crc32c(bytes.subarray(0, 16)) !== bytes.readUInt32LE(16)) {
    problems.push(`${path}: header checksum mismatch`);
    return null;
  }
  if (readUint64(bytes, 8) !== firstSeq) {
    problems.push(`${path}: header says first seq ${readUint64(bytes, 8)}`);
    return null;
  }
  let nextSeq = firstSeq;
  for (let offset = FILE_HEADER_BYTES; offset < bytes.length; ) {
    const total = checkFrame(bytes, offset, bytes.length, true);
    if (total < 0) {
      problems.push(`${path}: ${total === FRAME_TORN ? 'torn' : 'corrupt'} frame at byte ${offset}`);
      return nextSeq;
    }
    const seq = frameSeq(bytes, offset);
    if (seq !== nextSeq) {
      problems.push(`${path}: frame at byte ${offset} has seq ${seq}, expected ${nextSeq}`);
      return nextSeq;
    }
    if (seq > checkpointSeq) onTail(framePayload(bytes, offset, total));
    nextSeq++;
    offset += total;
  }
  return nextSeq;
}

/**
 * Verifies the WAL files `files` (paths relative to `dir`, e.g. `wal/000...1.wal`; a live shard's
 * active file only up to its durable end). `recordedLastSeq` is the shard's last seq at delete
 * time, or the last durable one of a live shard (null: unknown); `checkpointSeq` is its manifest's;
 * `recordedWhen` says in problems when the figures were recorded.
 */
export async function verifyWalFiles(
  dir: string,
  files: readonly WalFileToCheck[],
  recordedLastSeq: number | null,
  checkpointSeq: number,
  onTail: TailRecordHandler,
  recordedWhen = 'at delete time',
): Promise<WalCheck> {
  const problems: string[] = [];
  let expectedFirst: number | null = null;
  let firstRetained: number | null = null;
  let lastSeq: number | null = null;
  for (const { path, bytes: limit } of [...files].sort((left, right) => (left.path < right.path ? -1 : left.path > right.path ? 1 : 0))) {
    const firstSeq = parseWalFileName(path.slice(path.lastIndexOf('/') + 1));
    if (firstSeq === null) continue;
    if (expectedFirst !== null && firstSeq !== expectedFirst) problems.push(`${path}: starts at seq ${firstSeq}, expected ${expectedFirst}`);
    let bytes: Buffer;
    try {
      bytes = await readWholeFile(join(dir, path), limit);
    } catch (error) {
      problems.push(`${path}: cannot read (${(error as Error).message})`);
      return { lastSeq, problems };
    }
    const next = checkWalFile(path, bytes, firstSeq, problems, checkpointSeq, onTail);
    if (next === null) return { lastSeq, problems };
    firstRetained ??= firstSeq;
    expectedFirst = next;
    lastSeq = next - 1;
  }
  if (lastSeq !== null && recordedLastSeq !== null && lastSeq !== recordedLastSeq) {
    problems.push(`the write-ahead log ends at seq ${lastSeq}, seq ${recordedLastSeq} was recorded ${recordedWhen}`);
  }
  const expectedLast = recordedLastSeq ?? lastSeq ?? checkpointSeq;
  if (expectedLast > checkpointSeq && (firstRetained === null || firstRetained > checkpointSeq + 1)) {
    problems.push(`the write-ahead log lacks records past the checkpoint (seq ${checkpointSeq + 1} onwards) that no segment holds`);
  }
  return { lastSeq, problems };
}
