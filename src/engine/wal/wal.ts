/**
 * The per-shard write-ahead log: append with group commit, recovery at open, reads of durable
 * records for replay and the change feed, rotation and removal of old files.
 * The on-disk format is documented in docs/formats/wal.md.
 */
import fs from 'node:fs';
import path from 'node:path';
import { EngineError } from '../errors.ts';
import { FRAME_OVERHEAD_BYTES, MAX_PAYLOAD_BYTES, writeFrame } from './frame.ts';
import { recoverLogFiles } from './recovery.ts';
import { FILE_HEADER_BYTES, WalFile, type WalCheckpoint, type WalFileCheckpoint, type WalRecord, encodeFileHeader, fsyncDirectory } from './wal-file.ts';

export type { WalCheckpoint, WalFileCheckpoint, WalRecord } from './wal-file.ts';

/** Hooks a test sets to inject failures into the flush path; a hook fails the flush by throwing. */
export interface WalFaults {
  /** Called before a group's bytes are written. */
  beforeWrite?: () => void;
  /** Called after a group's bytes are written, before they are fsynced. */
  afterWrite?: () => void;
  /** Called before a group's fsync. */
  beforeFsync?: () => void;
}

/** Options of `WriteAheadLog.open`. */
export interface WalOptions {
  /** Directory of the shard's log files; created when missing. */
  dir: string;
  /** Size in bytes past which the next group starts a new file (default 64 MiB). */
  segmentBytes?: number;
  /** Failure injection for tests. */
  faults?: WalFaults;
  /**
   * The checkpoint the shard's commit point recorded (`checkpoint`): records it covers are taken as
   * intact without being read; the files or bytes it does not cover are recovered as always.
   */
  checkpoint?: WalCheckpoint;
}

/** What `append` returns: the seq of the batch's first record and when it is durable. */
export interface WalAppend {
  firstSeq: number;
  /** Epoch milliseconds stamped on every record of the batch. */
  timestamp: number;
  /** Resolves once the batch is written and fsynced; rejects with `wal_failure` otherwise. */
  durable: Promise<void>;
}

/** A record with the seq and append time another copy's log gave it (`appendNumbered`). */
export interface NumberedRecord {
  seq: number;
  /** Epoch milliseconds at the first append. */
  timestamp: number;
  payload: Uint8Array;
}

/** Counters reported by `WriteAheadLog.stats`. */
export interface WalStats {
  files: number;
  /** Durable bytes in all log files, headers included. */
  bytes: number;
  firstSeq: number;
  lastSeq: number;
  durableSeq: number;
  /** Fsyncs of log files (one per group commit). */
  fsyncs: number;
}

/** One file of the log as far as it is durable (`WriteAheadLog.durableFiles`). */
export interface DurableWalFile {
  name: string;
  bytes: number;
  /** Highest durable seq in the file (its first seq minus one when it holds no record). */
  lastSeq: number;
}

/** Default rotation threshold. */
export const DEFAULT_SEGMENT_BYTES = 64 * 1024 * 1024;

/** One promise shared by all appends of a group commit. */
class DurableGroup {
  readonly promise: Promise<void>;
  resolve!: () => void;
  reject!: (error: Error) => void;

  constructor() {
    this.promise = new Promise<void>((resolve, reject) => {
      this.resolve = resolve;
      this.reject = reject;
    });
    // Callers that await `durable` still see the rejection; this only keeps an append whose
    // caller ignored `durable` from crashing the process with an unhandled rejection.
    this.promise.catch(() => undefined);
  }
}

/** Writes all of `buffer` at `position`. */
function writeAll(fd: number, buffer: Buffer, position: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const writeFrom = (written: number): void => {
      fs.write(fd, buffer, written, buffer.length - written, position + written, (error, count) => {
        if (error) reject(error);
        else if (count === 0) reject(new Error('write made no progress'));
        else if (written + count < buffer.length) writeFrom(written + count);
        else resolve();
      });
    };
    writeFrom(0);
  });
}

/** Flushes a file's data (and the metadata needed to read it) to stable storage. */
function fdatasync(fd: number): Promise<void> {
  return new Promise((resolve, reject) => {
    fs.fdatasync(fd, (error) => (error ? reject(error) : resolve()));
  });
}

/** A shard's append-only log of framed, checksummed records numbered by `seq`. */
export class WriteAheadLog {
  private lastAppendedSeq: number;
  private lastDurableSeq: number;
  private pendingPayloads: Uint8Array[] = [];
  private pendingTimestamps: number[] = [];
  private pendingBytes = 0;
  private pendingGroup: DurableGroup | null = null;
  private inflightGroup: DurableGroup | null = null;
  private rotatingFile: WalFile | null = null;
  private flushing = false;
  private failure: EngineError | null = null;
  private closing: Promise<void> | null = null;
  private fsyncCount = 0;
  private readonly listeners = new Set<(durableSeq: number) => void>();
  private readonly startFlush = (): void => {
    void this.flushLoop();
  };

  private constructor(
    private readonly dir: string,
    private readonly segmentBytes: number,
    private readonly faults: WalFaults,
    private readonly files: WalFile[],
  ) {
    this.lastAppendedSeq = files[files.length - 1]!.lastSeq;
    this.lastDurableSeq = this.lastAppendedSeq;
  }

  /** Opens (creating if needed) the log in `options.dir`, applying the recovery rule. */
  static async open(options: WalOptions): Promise<WriteAheadLog> {
    const segmentBytes = options.segmentBytes ?? DEFAULT_SEGMENT_BYTES;
    if (!Number.isSafeInteger(segmentBytes) || segmentBytes <= 0) {
      const message = `segmentBytes must be a positive integer, got ${segmentBytes}`;
      throw new EngineError('illegal_argument', message);
    }
    await fs.promises.mkdir(options.dir, { recursive: true });
    const files = recoverLogFiles(options.dir, options.checkpoint);
    return new WriteAheadLog(options.dir, segmentBytes, options.faults ?? {}, files);
  }

  /** Highest seq appended (0 if none). */
  get lastSeq(): number {
    return this.lastAppendedSeq;
  }

  /** Highest seq known to be fsynced. */
  get durableSeq(): number {
    return this.lastDurableSeq;
  }

  /** Lowest seq still present in the log files (`lastSeq + 1` when they hold none). */
  get firstSeq(): number {
    return this.files[0]!.firstSeq;
  }

  /**
   * Synchronously assigns consecutive seqs to `payloads` and queues them for the next group
   * commit. The log keeps references to the payloads until they are written: do not modify them.
   */
  append(payloads: Uint8Array[]): WalAppend {
    this.assertWritable();
    const timestamp = Date.now();
    const firstSeq = this.lastAppendedSeq + 1;
    if (payloads.length === 0) return { firstSeq, timestamp, durable: this.sync() };
    const durable = this.enqueue(payloads, payloads.map(() => timestamp));
    return { firstSeq, timestamp, durable };
  }

  /**
   * Queues records that keep the seqs and timestamps another copy's log gave them (replication):
   * the first seq must be `lastSeq + 1` and the others consecutive, else `replication_gap` and
   * nothing is queued. Resolves once they are durable.
   */
  appendNumbered(records: readonly NumberedRecord[]): Promise<void> {
    this.assertWritable();
    if (records.length === 0) return this.sync();
    records.forEach((record, index) => {
      const expected = this.lastAppendedSeq + 1 + index;
      if (record.seq !== expected) {
        throw new EngineError('replication_gap', `record [${record.seq}] does not follow seq [${expected - 1}] of this log`);
      }
      if (!Number.isSafeInteger(record.timestamp)) throw new EngineError('illegal_argument', `record [${record.seq}] has no integer timestamp`);
    });
    return this.enqueue(
      records.map((record) => record.payload),
      records.map((record) => record.timestamp),
    );
  }

  /** Checks payload sizes, then queues the payloads with their timestamps for the next group commit. */
  private enqueue(payloads: readonly Uint8Array[], timestamps: readonly number[]): Promise<void> {
    let bytes = 0;
    for (const payload of payloads) {
      if (!(payload instanceof Uint8Array)) {
        throw new EngineError('illegal_argument', 'write-ahead log payloads must be Buffers');
      }
      if (payload.length > MAX_PAYLOAD_BYTES) {
        const message = `write-ahead log record of ${payload.length} bytes is too large`;
        throw new EngineError('illegal_argument', message);
      }
      bytes += FRAME_OVERHEAD_BYTES + payload.length;
    }
    for (let index = 0; index < payloads.length; index++) {
      this.pendingPayloads.push(payloads[index]!);
      this.pendingTimestamps.push(timestamps[index]!);
    }
    this.pendingBytes += bytes;
    this.lastAppendedSeq += payloads.length;
    this.pendingGroup ??= new DurableGroup();
    if (!this.flushing) {
      this.flushing = true;
      queueMicrotask(this.startFlush);
    }
    return this.pendingGroup.promise;
  }

  /** Durable records with seq >= `fromSeq`, read batch by batch as iteration proceeds (synchronous). */
  *replay(fromSeq: number): Iterable<WalRecord> {
    let next = fromSeq;
    for (;;) {
      const batch = this.readRange(next, 1024);
      if (batch.length === 0) return;
      yield* batch;
      next = batch[batch.length - 1]!.seq + 1;
    }
  }

  /**
   * Up to `maxRecords` durable records with seq >= `fromSeq`, in order. Records below `firstSeq`
   * are gone: the result then starts at `firstSeq` (callers compare to detect the gap).
   */
  readRange(fromSeq: number, maxRecords: number): WalRecord[] {
    if (this.closing !== null) throw new EngineError('shard_closed', 'write-ahead log is closed');
    if (!Number.isSafeInteger(fromSeq) || !Number.isSafeInteger(maxRecords)) {
      throw new EngineError('illegal_argument', 'readRange needs integer fromSeq and maxRecords');
    }
    const out: WalRecord[] = [];
    let seq = Math.max(fromSeq, this.firstSeq);
    if (seq > this.lastDurableSeq || maxRecords <= 0) return out;
    for (let position = this.fileHolding(seq); position < this.files.length; position++) {
      const file = this.files[position]!;
      file.read(seq, maxRecords - out.length, out);
      if (out.length >= maxRecords) break;
      seq = Math.max(seq, file.lastSeq + 1);
    }
    return out;
  }

  /**
   * Where the records up to the durable `seq` lie (`WalCheckpoint`), for a commit point that holds
   * them all elsewhere: reopening with it skips reading them.
   */
  checkpoint(seq: number): WalCheckpoint {
    if (!Number.isSafeInteger(seq) || seq > this.lastDurableSeq) {
      throw new EngineError('illegal_argument', `checkpoint seq [${seq}] is not durable (durable seq [${this.lastDurableSeq}])`);
    }
    const files: WalFileCheckpoint[] = [];
    for (const file of this.files) {
      const checkpoint = file.checkpointAt(seq);
      if (checkpoint !== null) files.push(checkpoint);
    }
    return { files };
  }

  /**
   * Deletes whole files (never the active one), oldest first, whose records all have seq <= `seq`
   * and were all appended at or before `appendedBy` (epoch ms; any time when omitted). Returns how many.
   */
  async removeUpTo(seq: number, appendedBy = Number.POSITIVE_INFINITY): Promise<number> {
    if (this.closing !== null) throw new EngineError('shard_closed', 'write-ahead log is closed');
    const removed: WalFile[] = [];
    const removable = (file: WalFile): boolean => file.lastSeq <= seq && file.newestTimestamp <= appendedBy;
    while (this.files.length > 1 && removable(this.files[0]!)) removed.push(this.files.shift()!);
    if (removed.length === 0) return 0;
    for (const file of removed) {
      file.close();
      await fs.promises.unlink(file.path);
    }
    await fsyncDirectory(this.dir);
    return removed.length;
  }

  /**
   * The log's files as far as they are durable, oldest first (the last is the active file): name,
   * bytes of header and durable frames, highest durable seq. A file being rotated in is not listed
   * until it joins the log. Bytes below these sizes never change while the log is open.
   */
  durableFiles(): DurableWalFile[] {
    return this.files.map((file) => ({ name: path.basename(file.path), bytes: file.size, lastSeq: file.lastSeq }));
  }

  /** Calls `listener` with the new durable seq after every group commit; returns an unsubscribe. */
  onDurable(listener: (durableSeq: number) => void): () => void {
    this.listeners.add(listener);
    return () => {
      this.listeners.delete(listener);
    };
  }

  /** Resolves once everything appended so far is durable. */
  sync(): Promise<void> {
    if (this.failure !== null) return Promise.reject(this.failure);
    const group = this.pendingGroup ?? this.inflightGroup;
    return group === null ? Promise.resolve() : group.promise;
  }

  /**
   * Waits for appended records to become durable, then closes the files. Resolves even if the
   * log failed (the failure was delivered to the `durable` promises); appends then throw.
   */
  close(): Promise<void> {
    this.closing ??= this.sync()
      .catch(() => undefined)
      .then(() => {
        for (const file of this.files) file.close();
        this.rotatingFile?.close();
      });
    return this.closing;
  }

  /** Sizes, seqs and fsync count. */
  stats(): WalStats {
    let bytes = 0;
    for (const file of this.files) bytes += file.size;
    return {
      files: this.files.length,
      bytes,
      firstSeq: this.firstSeq,
      lastSeq: this.lastAppendedSeq,
      durableSeq: this.lastDurableSeq,
      fsyncs: this.fsyncCount,
    };
  }

  private assertWritable(): void {
    if (this.closing !== null) throw new EngineError('shard_closed', 'write-ahead log is closed');
    if (this.failure !== null) throw this.failure;
  }

  /** Index in `files` of the file whose seq range holds `seq` (the last one starting at or before it). */
  private fileHolding(seq: number): number {
    let low = 0;
    let high = this.files.length - 1;
    while (low < high) {
      const middle = (low + high + 1) >>> 1;
      if (this.files[middle]!.firstSeq <= seq) low = middle;
      else high = middle - 1;
    }
    return low;
  }

  /** Writes and fsyncs queued appends, one group per iteration, until none are left. */
  private async flushLoop(): Promise<void> {
    while (this.pendingGroup !== null && this.failure === null) {
      const group = this.pendingGroup;
      const payloads = this.pendingPayloads;
      const timestamps = this.pendingTimestamps;
      const bytes = this.pendingBytes;
      this.pendingGroup = null;
      this.pendingPayloads = [];
      this.pendingTimestamps = [];
      this.pendingBytes = 0;
      this.inflightGroup = group;
      const firstSeq = this.lastDurableSeq + 1;
      try {
        await this.commitGroup(firstSeq, payloads, timestamps, bytes);
      } catch (error) {
        this.fail(error);
        break;
      }
      this.inflightGroup = null;
      this.lastDurableSeq = firstSeq + payloads.length - 1;
      group.resolve();
      this.notifyListeners();
    }
    this.flushing = false;
  }

  /** One write and one fsync for a whole group, starting a new file first when the active one is full. */
  private async commitGroup(
    firstSeq: number,
    payloads: Uint8Array[],
    timestamps: number[],
    bytes: number,
  ): Promise<void> {
    let file = this.files[this.files.length - 1]!;
    const rotate = file.size >= this.segmentBytes && file.lastSeq >= file.firstSeq;
    if (rotate) {
      file = WalFile.create(this.dir, firstSeq);
      this.rotatingFile = file;
    }
    const base = file.size;
    const headerBytes = base === 0 ? FILE_HEADER_BYTES : 0;
    const buffer = Buffer.allocUnsafe(headerBytes + bytes);
    if (headerBytes > 0) encodeFileHeader(firstSeq, buffer);
    let position = headerBytes;
    let lastFrameOffset = base;
    for (let index = 0; index < payloads.length; index++) {
      lastFrameOffset = base + position;
      file.noteFrame(firstSeq + index, lastFrameOffset);
      position = writeFrame(buffer, position, firstSeq + index, timestamps[index]!, payloads[index]!);
    }
    this.faults.beforeWrite?.();
    await writeAll(file.fd, buffer, base);
    this.faults.afterWrite?.();
    this.faults.beforeFsync?.();
    await fdatasync(file.fd);
    this.fsyncCount += 1;
    if (rotate) {
      // The new file joins the log only once its directory entry is durable, so the files
      // before it are never removed while it could still vanish in a crash.
      await fsyncDirectory(this.dir);
      this.files[this.files.length - 1]!.releaseDescriptor();
      this.files.push(file);
      this.rotatingFile = null;
    }
    file.size = base + buffer.length;
    file.lastSeq = firstSeq + payloads.length - 1;
    file.lastFrameOffset = lastFrameOffset;
    for (const timestamp of timestamps) file.newestTimestamp = Math.max(file.newestTimestamp, timestamp);
  }

  /** Fails the log for good: a failed write or fsync cannot be retried safely. */
  private fail(error: unknown): void {
    const reason = error instanceof Error ? error.message : String(error);
    this.failure = new EngineError('wal_failure', `write-ahead log write failed: ${reason}`);
    this.inflightGroup?.reject(this.failure);
    this.pendingGroup?.reject(this.failure);
    this.inflightGroup = null;
    this.pendingGroup = null;
    this.pendingPayloads = [];
    this.pendingTimestamps = [];
    this.pendingBytes = 0;
  }

  private notifyListeners(): void {
    const durableSeq = this.lastDurableSeq;
    for (const listener of this.listeners) {
      try {
        listener(durableSeq);
      } catch (error) {
        // A listener's bug must not fail the log; report it the way an event emitter would.
        queueMicrotask(() => {
          throw error;
        });
      }
    }
  }
}
