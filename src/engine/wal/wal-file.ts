/**
 * One write-ahead log file: its name, its header, the recovery scan, a sparse seq→offset index
 * and synchronous reads of durable records (docs/formats/wal.md).
 */
import fs from 'node:fs';
import path from 'node:path';
import { crc32c } from '../directory/checksum.ts';
import { EngineError } from '../errors.ts';
import { readDescriptors } from '../directory/read-descriptors.ts';
import {
  BODY_PREFIX_BYTES,
  FRAME_CORRUPT,
  FRAME_HEADER_BYTES,
  MAX_PAYLOAD_BYTES,
  FRAME_TORN,
  checkFrame,
  declaredFrameLength,
  framePayload,
  frameSeq,
  frameTimestamp,
  readUint64,
  writeUint64,
} from './frame.ts';

/** One record of the log as read back. */
export interface WalRecord {
  seq: number;
  /** Epoch milliseconds at append. */
  timestamp: number;
  /** The opaque payload; it may share memory with other records returned by the same read. */
  payload: Buffer;
}

/**
 * What a shard's commit point records of one log file (`WriteAheadLog.checkpoint`): the first `bytes`
 * bytes of file `name` hold intact records up to `lastSeq`, whose frame starts at `lastOffset`.
 * Opening with it verifies only that frame and the records after it (docs/formats/wal.md, "Recovery").
 */
export interface WalFileCheckpoint {
  name: string;
  bytes: number;
  lastSeq: number;
  lastOffset: number;
  /** Newest append time (epoch ms) of the file's durable records when the checkpoint was taken. */
  newestTimestamp: number;
}

/**
 * Where the log stood at a shard's checkpoint, as its manifest records it: for each file holding
 * records at or below the checkpoint seq, how far they reach. Opening with it never reads them.
 */
export interface WalCheckpoint {
  files: WalFileCheckpoint[];
}

/** Frames of a file that opening did not scan (below a checkpoint): indexed on the first read inside them. */
interface UnindexedRun {
  fromSeq: number;
  fromOffset: number;
  toSeq: number;
  toOffset: number;
}

/** Version of the file layout written in every header; files of any other version are refused. */
export const WAL_FORMAT_VERSION = 1;

/** Bytes of the file header: magic, format version, first seq, header CRC32C. */
export const FILE_HEADER_BYTES = 20;

const MAGIC = Buffer.from('TRVW', 'latin1');
const NAME_PATTERN = /^(\d{20})\.wal$/;
const SEQ_DIGITS = 20;
/** Distance in bytes between two entries of the sparse seq→offset index. */
const INDEX_INTERVAL_BYTES = 64 * 1024;
/** Bytes read at a time when scanning or reading records. */
const READ_WINDOW_BYTES = 256 * 1024;

/** The file name for a log file whose first record has `firstSeq`. */
export function walFileName(firstSeq: number): string {
  return `${String(firstSeq).padStart(SEQ_DIGITS, '0')}.wal`;
}

/** The first seq encoded in a log file name, or null when `name` is not a log file. */
export function parseWalFileName(name: string): number | null {
  const match = NAME_PATTERN.exec(name);
  return match ? Number(match[1]) : null;
}

/** Encodes the header of a log file whose first record has `firstSeq`. */
export function encodeFileHeader(firstSeq: number, target: Buffer = Buffer.alloc(FILE_HEADER_BYTES)): Buffer {
  MAGIC.copy(target, 0);
  target.writeUInt32LE(WAL_FORMAT_VERSION, 4);
  writeUint64(target, 8, firstSeq);
  target.writeUInt32LE(crc32c(target.subarray(0, 16)), 16);
  return target;
}

/** Reads `length` bytes at `position` (fewer only at end of file) with `readInto(buffer, offset, length, position)`. */
function readWith(readInto: (buffer: Buffer, offset: number, length: number, position: number) => number, position: number, length: number): Buffer {
  const buffer = Buffer.allocUnsafe(length);
  let filled = 0;
  while (filled < length) {
    const count = readInto(buffer, filled, length - filled, position + filled);
    if (count === 0) break;
    filled += count;
  }
  return filled === length ? buffer : buffer.subarray(0, filled);
}

/** Fsyncs a directory so that file creations and removals in it are durable. */
export function fsyncDirectorySync(dir: string): void {
  const fd = fs.openSync(dir, 'r');
  try {
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

/** Fsyncs a directory without blocking the event loop. */
export async function fsyncDirectory(dir: string): Promise<void> {
  const handle = await fs.promises.open(dir, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** Reads `length` bytes of the open file `fd` at `position` (fewer only at end of file). */
function readAt(fd: number, position: number, length: number): Buffer {
  return readWith((buffer, offset, count, at) => fs.readSync(fd, buffer, offset, count, at), position, length);
}

/**
 * An open log file. `size` and `lastSeq` only ever cover bytes known to be fsynced. The active file
 * holds its descriptor; a file the log no longer appends to gives it up (`releaseDescriptor`) and is
 * read through the thread's bounded `readDescriptors`.
 */
export class WalFile {
  /** Bytes of the file that hold its header and durable frames. */
  size = 0;
  /** Highest durable seq in this file (`firstSeq - 1` when it holds no record). */
  lastSeq: number;
  /** Latest append time (epoch ms) of any durable record in this file; 0 when it holds none. */
  newestTimestamp = 0;
  /** Offset of the frame of `lastSeq` (meaningless while the file holds no record). */
  lastFrameOffset = FILE_HEADER_BYTES;
  private readonly indexSeqs: number[] = [];
  private readonly indexOffsets: number[] = [];
  /** Frames between two index entries that were never scanned (opening skipped them), or null. */
  private unindexed: UnindexedRun | null = null;

  private constructor(
    readonly path: string,
    readonly firstSeq: number,
    private descriptor: number,
  ) {
    this.lastSeq = firstSeq - 1;
  }

  /** The file's own descriptor, for appends and recovery; the active file always holds one. */
  get fd(): number {
    if (this.descriptor < 0) throw new EngineError('shard_closed', `write-ahead log file ${path.basename(this.path)} has no descriptor of its own`);
    return this.descriptor;
  }

  /** Closes the file's own descriptor: from now on it is only read, through `readDescriptors`. */
  releaseDescriptor(): void {
    if (this.descriptor < 0) return;
    fs.closeSync(this.descriptor);
    this.descriptor = -1;
  }

  /** Closes every descriptor of the file (its own and a cached one); call before it is deleted. */
  close(): void {
    this.releaseDescriptor();
    readDescriptors.forget(this.path);
  }

  /** Creates a new, empty file (its header is written with its first frames). */
  static create(dir: string, firstSeq: number): WalFile {
    const filePath = path.join(dir, walFileName(firstSeq));
    return new WalFile(filePath, firstSeq, fs.openSync(filePath, 'wx+'));
  }

  /** Creates a new file holding only its header, written and fsynced (the directory is not). */
  static createWithHeader(dir: string, firstSeq: number): WalFile {
    const file = WalFile.create(dir, firstSeq);
    const header = encodeFileHeader(firstSeq);
    fs.writeSync(file.fd, header, 0, header.length, 0);
    fs.fsyncSync(file.fd);
    file.size = FILE_HEADER_BYTES;
    return file;
  }

  /**
   * Opens an existing file and validates its header. Returns null when the header is torn or
   * corrupt; throws when the file carries another format version.
   */
  static openExisting(dir: string, name: string): WalFile | null {
    const firstSeq = parseWalFileName(name);
    if (firstSeq === null) return null;
    const filePath = path.join(dir, name);
    const fd = fs.openSync(filePath, 'r+');
    const header = readAt(fd, 0, FILE_HEADER_BYTES);
    const hasMagic = header.length === FILE_HEADER_BYTES && header.subarray(0, 4).equals(MAGIC);
    // A file with our magic but another version is never treated as torn: it is not ours to delete.
    if (hasMagic && header.readUInt32LE(4) !== WAL_FORMAT_VERSION) {
      fs.closeSync(fd);
      throw new EngineError(
        'corrupt_index',
        `write-ahead log file ${name} has format version ${header.readUInt32LE(4)}; ` +
          `this build reads version ${WAL_FORMAT_VERSION}`,
      );
    }
    const valid =
      hasMagic &&
      crc32c(header.subarray(0, 16)) === header.readUInt32LE(16) &&
      readUint64(header, 8) === firstSeq;
    if (!valid) {
      fs.closeSync(fd);
      return null;
    }
    const file = new WalFile(filePath, firstSeq, fd);
    file.size = FILE_HEADER_BYTES;
    return file;
  }

  /**
   * Verifies every frame from the header on, indexing them; with a usable `checkpoint` of this file,
   * only its last frame and the frames after it (the ones before are indexed on first read). At the
   * first torn or corrupt frame (or a seq out of order) the file is truncated there and fsynced.
   * Returns true when the file was intact from where the scan began.
   */
  scan(checkpoint?: WalFileCheckpoint): boolean {
    const fileSize = fs.fstatSync(this.fd).size;
    let offset = FILE_HEADER_BYTES;
    let seq = this.firstSeq;
    if (checkpoint !== undefined && this.resumeAt(checkpoint, fileSize)) {
      offset = checkpoint.bytes;
      seq = checkpoint.lastSeq + 1;
    }
    let intact = true;
    scanning: while (offset < fileSize) {
      const window = this.readWindow(offset, fileSize);
      let position = 0;
      while (position < window.length) {
        const total = checkFrame(window, position, window.length, true);
        if (total === FRAME_TORN) break;
        if (total === FRAME_CORRUPT || frameSeq(window, position) !== seq) {
          intact = false;
          offset += position;
          break scanning;
        }
        this.noteFrame(seq, offset + position);
        this.lastFrameOffset = offset + position;
        this.newestTimestamp = Math.max(this.newestTimestamp, frameTimestamp(window, position));
        seq += 1;
        position += total;
      }
      if (position === 0) {
        intact = false;
        break;
      }
      offset += position;
    }
    this.size = offset;
    this.lastSeq = seq - 1;
    if (offset < fileSize) {
      fs.ftruncateSync(this.fd, offset);
      fs.fsyncSync(this.fd);
      intact = false;
    }
    return intact;
  }

  /**
   * Takes the records up to a checkpoint as intact without reading them, after checking that the
   * checkpoint's last frame is where it says, whole and with its seq. False (nothing changed) when
   * the checkpoint does not fit this file: then the whole file is scanned.
   */
  private resumeAt(checkpoint: WalFileCheckpoint, fileSize: number): boolean {
    const { bytes, lastSeq, lastOffset, newestTimestamp } = checkpoint;
    const numbers = [bytes, lastSeq, lastOffset, newestTimestamp];
    if (!numbers.every((value) => Number.isSafeInteger(value) && value >= 0)) return false;
    if (lastSeq < this.firstSeq || lastOffset < FILE_HEADER_BYTES || lastOffset >= bytes || bytes > fileSize) return false;
    if (bytes - lastOffset > FRAME_HEADER_BYTES + BODY_PREFIX_BYTES + MAX_PAYLOAD_BYTES) return false;
    const frame = this.readBytes(lastOffset, bytes - lastOffset);
    if (checkFrame(frame, 0, frame.length, true) !== frame.length || frameSeq(frame, 0) !== lastSeq) return false;
    this.noteFrame(this.firstSeq, FILE_HEADER_BYTES);
    if (lastOffset > FILE_HEADER_BYTES) {
      this.indexSeqs.push(lastSeq);
      this.indexOffsets.push(lastOffset);
      this.unindexed = { fromSeq: this.firstSeq, fromOffset: FILE_HEADER_BYTES, toSeq: lastSeq, toOffset: lastOffset };
    }
    this.lastFrameOffset = lastOffset;
    this.newestTimestamp = Math.max(newestTimestamp, frameTimestamp(frame, 0));
    return true;
  }

  /**
   * What a checkpoint at `seq` records of this file (`WalFileCheckpoint`), or null when the file
   * holds no durable record at or below `seq`.
   */
  checkpointAt(seq: number): WalFileCheckpoint | null {
    if (this.lastSeq < this.firstSeq || seq < this.firstSeq) return null;
    const name = path.basename(this.path);
    if (seq >= this.lastSeq) {
      return { name, bytes: this.size, lastSeq: this.lastSeq, lastOffset: this.lastFrameOffset, newestTimestamp: this.newestTimestamp };
    }
    this.indexUnscannedBefore(seq);
    const entry = this.indexEntryAtOrBefore(seq);
    let found: WalFileCheckpoint | null = null;
    this.walkFrames(this.indexOffsets[entry]!, this.indexSeqs[entry]!, this.size, (at, offset, total) => {
      if (at === seq) found = { name, bytes: offset + total, lastSeq: seq, lastOffset: offset, newestTimestamp: this.newestTimestamp };
      return found !== null;
    });
    if (found === null) throw this.corruptAt(this.size);
    return found;
  }

  /** Indexes the frames opening skipped when a read is to start among them (`seq` past their first). */
  private indexUnscannedBefore(seq: number): void {
    const run = this.unindexed;
    if (run === null || seq <= run.fromSeq || seq >= run.toSeq) return;
    const seqs: number[] = [];
    const offsets: number[] = [];
    let noted = run.fromOffset;
    const end = this.walkFrames(run.fromOffset, run.fromSeq, run.toOffset, (at, offset) => {
      if (offset - noted >= INDEX_INTERVAL_BYTES) {
        seqs.push(at);
        offsets.push(offset);
        noted = offset;
      }
      return false;
    });
    if (end.offset !== run.toOffset || end.seq !== run.toSeq) throw this.corruptAt(end.offset);
    const after = this.indexEntryAtOrBefore(run.fromSeq) + 1;
    this.indexSeqs.splice(after, 0, ...seqs);
    this.indexOffsets.splice(after, 0, ...offsets);
    this.unindexed = null;
  }

  /**
   * Steps through whole frames from the frame of `seq` at `offset` towards `limit` by their lengths
   * (checksums unchecked), calling `visit` with each one's seq, offset and length until it returns
   * true. A frame that is not whole or has another seq is `corrupt_index`. Returns where it stopped.
   */
  private walkFrames(offset: number, seq: number, limit: number, visit: (seq: number, offset: number, total: number) => boolean): { offset: number; seq: number } {
    while (offset < limit) {
      const window = this.readWindow(offset, limit);
      let position = 0;
      while (position < window.length) {
        const total = checkFrame(window, position, window.length, false);
        if (total === FRAME_TORN && position > 0) break;
        if (total < 0 || frameSeq(window, position) !== seq) throw this.corruptAt(offset + position);
        if (visit(seq, offset + position, total)) return { offset: offset + position, seq };
        seq += 1;
        position += total;
      }
      offset += position;
    }
    return { offset, seq };
  }

  /** Records that a frame for `seq` starts at `offset`, keeping one index entry per interval. */
  noteFrame(seq: number, offset: number): void {
    const count = this.indexOffsets.length;
    if (count === 0 || offset - this.indexOffsets[count - 1]! >= INDEX_INTERVAL_BYTES) {
      this.indexSeqs.push(seq);
      this.indexOffsets.push(offset);
    }
  }

  /** Appends to `out` up to `maxRecords` durable records with seq >= `fromSeq`, in order. */
  read(fromSeq: number, maxRecords: number, out: WalRecord[]): void {
    if (fromSeq > this.lastSeq || maxRecords <= 0) return;
    this.indexUnscannedBefore(fromSeq);
    const entry = this.indexEntryAtOrBefore(fromSeq);
    let offset = this.indexOffsets[entry]!;
    let seq = this.indexSeqs[entry]!;
    let remaining = maxRecords;
    while (remaining > 0 && offset < this.size) {
      const window = this.readWindow(offset, this.size);
      let position = 0;
      if (window.length === 0) throw this.corruptAt(offset);
      while (remaining > 0 && position < window.length) {
        const wanted = seq >= fromSeq;
        const total = checkFrame(window, position, window.length, wanted);
        if (total === FRAME_TORN && position > 0) break;
        if (total < 0 || frameSeq(window, position) !== seq) throw this.corruptAt(offset + position);
        if (wanted) {
          out.push({
            seq,
            timestamp: frameTimestamp(window, position),
            payload: framePayload(window, position, total),
          });
          remaining -= 1;
        }
        seq += 1;
        position += total;
      }
      offset += position;
    }
  }

  private corruptAt(offset: number): EngineError {
    const name = path.basename(this.path);
    return new EngineError('corrupt_index', `write-ahead log file ${name} is corrupt at offset ${offset}`);
  }

  /** Position of the last index entry whose seq is <= `seq` (the file must hold a record). */
  private indexEntryAtOrBefore(seq: number): number {
    let low = 0;
    let high = this.indexSeqs.length - 1;
    while (low < high) {
      const middle = (low + high + 1) >>> 1;
      if (this.indexSeqs[middle]! <= seq) low = middle;
      else high = middle - 1;
    }
    return low;
  }

  /** Reads a window starting at a frame boundary, widened so that its first frame fits whole. */
  private readWindow(offset: number, limit: number): Buffer {
    const available = limit - offset;
    const window = this.readBytes(offset, Math.min(available, READ_WINDOW_BYTES));
    if (window.length < FRAME_HEADER_BYTES) return window;
    const firstFrame = declaredFrameLength(window, 0);
    if (firstFrame > window.length && firstFrame <= available) return this.readBytes(offset, firstFrame);
    return window;
  }

  /** Reads through the file's own descriptor while it holds one, else through `readDescriptors`. */
  private readBytes(position: number, length: number): Buffer {
    if (this.descriptor >= 0) return readAt(this.descriptor, position, length);
    return readWith((buffer, offset, count, at) => readDescriptors.read(this.path, buffer, offset, count, at), position, length);
  }
}
