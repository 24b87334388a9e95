/**
 * Framing shared by every segment file: an 8-byte header (4-byte ASCII magic + uint32 format
 * version) and a 4-byte CRC32C footer over all preceding bytes. Paged files (term dictionary and
 * postings, format 6 on) also end with a table of one CRC32C per page, so that a reader can verify
 * the pages it reads instead of the whole file (paged-file.ts). Also the durable-write helpers
 * (fsync of files and directories) and checksum verification on load.
 */
import fs from 'node:fs';
import fsp, { type FileHandle } from 'node:fs/promises';
import { crc32c } from '../directory/checksum.ts';
import { Crc32cShift, crc32cCombine } from '../directory/crc-combine.ts';
import { EngineError } from '../errors.ts';
import { ByteSink } from './byte-io.ts';

/**
 * Version written in every segment file header and in `SegmentMeta.formatVersion` (2: range
 * index, 3: LZ4 source blocks, 4: per-doc position byte lengths in postings blocks, 5: large
 * sources stored in pieces with an index of their top-level fields, 6: page checksum tables in
 * the term dictionary and postings files, read page by page, 7: each postings block's competitive
 * (freq, norm) pairs in its skip entry, 8: each skip entry's doc count, so that a merge may end a
 * block short before a block it copies as stored).
 */
export const SEGMENT_FORMAT_VERSION = 8;

/** First format whose term dictionary and postings files end with a page checksum table. */
export const PAGED_FORMAT_VERSION = 6;

/** Bytes per checksummed page of a paged file (a power of two; the file records its own). */
export const PAGE_BYTES = 16 * 1024;

/** Bytes after the page checksums: u32 page bytes, u32 page count, u32 CRC32C of the table. */
export const PAGE_TABLE_TRAILER_BYTES = 12;

/** Oldest version readers accept: format 1 segments (no range index) open and answer by scanning. */
export const OLDEST_SEGMENT_FORMAT_VERSION = 1;

/** Whether readers understand a segment or segment file of this format version. */
export function isSupportedFormatVersion(version: number): boolean {
  return Number.isInteger(version) && version >= OLDEST_SEGMENT_FORMAT_VERSION && version <= SEGMENT_FORMAT_VERSION;
}

/** Size of the magic + version header. */
export const HEADER_BYTES = 8;

/** Size of the CRC32C footer. */
export const FOOTER_BYTES = 4;

/** Magic of each segment file kind. */
export const FileMagic = {
  terms: 'TVTD',
  postings: 'TVPD',
  positions: 'TVPP',
  norms: 'TVNM',
  numericColumns: 'TVNC',
  numericRangeIndex: 'TVRI',
  keywordColumns: 'TVKC',
  storedSource: 'TVSS',
  docMeta: 'TVDM',
  docMetaGeneration: 'TVMG',
  liveDocs: 'TVLD',
  inplace: 'TVIP',
  overlay: 'TVOV',
} as const;

/** Names of the immutable files of a segment directory. */
export const SegmentFileName = {
  terms: 'terms',
  postings: 'postings.doc',
  positions: 'postings.pos',
  norms: 'norms',
  numericColumns: 'columns.num',
  numericRangeIndex: 'columns.range',
  keywordColumns: 'columns.kw',
  storedSource: 'source',
  docMeta: 'docmeta',
} as const;

/** Size and checksum of a written file, as recorded in `SegmentMeta.files`. */
export interface FileChecksum {
  bytes: number;
  crc32c: number;
}

/** Magics of the files written with a page checksum table (read page by page, paged-file.ts). */
export const PAGED_MAGICS: ReadonlySet<string> = new Set([FileMagic.terms, FileMagic.postings, FileMagic.positions, FileMagic.storedSource]);

/**
 * The page checksum table of a paged file whose bytes before the table are `content` (header
 * included): the CRC32C of each PAGE_BYTES page, then u32 PAGE_BYTES, u32 page count and u32
 * CRC32C of the preceding table bytes. `OutputFile` builds the same table as it writes.
 */
export function pageTableOf(content: Uint8Array): Buffer {
  const count = Math.ceil(content.length / PAGE_BYTES);
  const table = Buffer.alloc(count * 4 + PAGE_TABLE_TRAILER_BYTES);
  for (let i = 0; i < count; i++) table.writeUInt32LE(crc32c(content.subarray(i * PAGE_BYTES, (i + 1) * PAGE_BYTES)), i * 4);
  writePageTableTrailer(table, count);
  return table;
}

function writePageTableTrailer(table: Buffer, count: number): void {
  table.writeUInt32LE(PAGE_BYTES, count * 4);
  table.writeUInt32LE(count, count * 4 + 4);
  table.writeUInt32LE(crc32c(table.subarray(0, count * 4 + 8)), count * 4 + 8);
}

/** Folds the CRC32C of a full page into the CRC32C of the bytes before it. */
const PAGE_SHIFT = new Crc32cShift(PAGE_BYTES);

/** Bytes handed to the file system and not yet written, past which `drain` waits for them. */
const MAX_WRITING_BYTES = 16 * 1024 * 1024;

/**
 * A segment file being written: append to `sink`, call `drain` now and then, `finish` once.
 * Drained bytes are written behind, each part at its offset, while the writer goes on; `finish`
 * waits for them. A paged file's bytes are checksummed once, page by page: the whole file's
 * CRC32C is combined from its pages' (crc-combine.ts).
 */
export class OutputFile {
  /** Bytes of the file; appended through the sink's methods. */
  readonly sink = new ByteSink();
  /** CRC32C of the bytes written so far, kept for files without pages. */
  private crc = 0;
  /** CRC32C of each complete page so far (paged files only), its count, and the current page's. */
  private pageCrcs: Uint32Array | null = null;
  private pageCount = 0;
  private pageCrc = 0;
  private pageFill = 0;
  /** File offset of the next part, the bytes of the parts being written and their completion. */
  private position = 0;
  private writingBytes = 0;
  private written: Promise<void> = Promise.resolve();
  private writeFailure: { error: unknown } | null = null;

  private constructor(
    readonly path: string,
    private readonly handle: FileHandle,
    paged: boolean,
  ) {
    if (paged) this.pageCrcs = new Uint32Array(64);
  }

  /** Creates (truncates) the file and writes its header; term dictionary and postings files are paged. */
  static async create(path: string, magic: string): Promise<OutputFile> {
    const handle = await fsp.open(path, 'w');
    const file = new OutputFile(path, handle, PAGED_MAGICS.has(magic));
    for (let i = 0; i < 4; i++) file.sink.writeByte(magic.charCodeAt(i));
    file.sink.writeU32(SEGMENT_FORMAT_VERSION);
    return file;
  }

  /** Starts writing the sink's full chunks to disk; waits when many bytes are still being written (keeps memory bounded). */
  async drain(): Promise<void> {
    this.writeParts(this.sink.takeChunks(false));
    if (this.writingBytes > MAX_WRITING_BYTES || this.writeFailure !== null) await this.settleWrites();
  }

  /** Writes the rest (and the page table of a paged file) and the CRC32C footer, fsyncs and closes; returns size and checksum. */
  async finish(): Promise<FileChecksum> {
    this.writeParts(this.sink.takeChunks(true));
    let tableBytes = 0;
    if (this.pageCrcs !== null) {
      const table = this.pageTable();
      tableBytes = table.length;
      this.crc = crc32c(table, this.contentCrc());
      this.startWrite(table);
    }
    const checksum = this.crc >>> 0;
    const footer = Buffer.alloc(FOOTER_BYTES);
    footer.writeUInt32LE(checksum, 0);
    this.startWrite(footer);
    await this.settleWrites();
    await this.handle.sync();
    await this.handle.close();
    return { bytes: this.sink.length + tableBytes + FOOTER_BYTES, crc32c: checksum };
  }

  /** CRC32C of the bytes before the page table, from the page CRCs (call after `pageTable`). */
  private contentCrc(): number {
    const pageCrcs = this.pageCrcs!;
    const fullPages = Math.floor(this.sink.length / PAGE_BYTES);
    let crc = 0;
    for (let i = 0; i < fullPages; i++) crc = PAGE_SHIFT.combine(crc, pageCrcs[i]!);
    const lastBytes = this.sink.length - fullPages * PAGE_BYTES;
    return lastBytes > 0 ? crc32cCombine(crc, pageCrcs[fullPages]!, lastBytes) : crc;
  }

  /** The page checksum table: the last page's CRC completed, the trailer and the table's own CRC. */
  private pageTable(): Buffer {
    if (this.pageFill > 0) this.pushPageCrc();
    const count = this.pageCount;
    const table = Buffer.alloc(count * 4 + PAGE_TABLE_TRAILER_BYTES);
    for (let i = 0; i < count; i++) table.writeUInt32LE(this.pageCrcs![i]!, i * 4);
    writePageTableTrailer(table, count);
    return table;
  }

  private pushPageCrc(): void {
    if (this.pageCount === this.pageCrcs!.length) {
      const grown = new Uint32Array(this.pageCount * 2);
      grown.set(this.pageCrcs!);
      this.pageCrcs = grown;
    }
    this.pageCrcs![this.pageCount++] = this.pageCrc >>> 0;
    this.pageCrc = 0;
    this.pageFill = 0;
  }

  /** Folds written bytes into the page checksums. */
  private addToPages(part: Uint8Array): void {
    for (let offset = 0; offset < part.length; ) {
      const take = Math.min(part.length - offset, PAGE_BYTES - this.pageFill);
      this.pageCrc = crc32c(part.subarray(offset, offset + take), this.pageCrc);
      this.pageFill += take;
      offset += take;
      if (this.pageFill === PAGE_BYTES) this.pushPageCrc();
    }
  }

  /** Closes the handle without completing the file (error paths). */
  async abandon(): Promise<void> {
    await this.written;
    await this.handle.close().catch(() => undefined);
  }

  private writeParts(parts: Uint8Array[]): void {
    for (const part of parts) {
      if (this.pageCrcs !== null) this.addToPages(part);
      else this.crc = crc32c(part, this.crc);
      this.startWrite(part);
    }
  }

  /** Hands `bytes` to the file system at the next offset; a failure is kept for `settleWrites`. */
  private startWrite(bytes: Uint8Array): void {
    const position = this.position;
    this.position += bytes.length;
    this.writingBytes += bytes.length;
    const write = writeAt(this.handle, bytes, position).then(
      () => {
        this.writingBytes -= bytes.length;
      },
      (error: unknown) => {
        this.writeFailure ??= { error };
      },
    );
    this.written = Promise.all([this.written, write]).then(() => undefined);
  }

  /** Waits for the parts being written; throws the first write failure. */
  private async settleWrites(): Promise<void> {
    await this.written;
    if (this.writeFailure !== null) throw this.writeFailure.error;
  }
}

/** Writes all of `bytes` at file offset `position`. */
async function writeAt(handle: FileHandle, bytes: Uint8Array, position: number): Promise<void> {
  for (let offset = 0; offset < bytes.length; ) {
    const { bytesWritten } = await handle.write(bytes, offset, bytes.length - offset, position + offset);
    if (bytesWritten <= 0) throw new Error(`no bytes written at offset ${position + offset}`);
    offset += bytesWritten;
  }
}

/** Writes a complete small file (header, body, footer) durably: used for generation files. */
export async function writeSmallFile(path: string, magic: string, body: (sink: ByteSink) => void): Promise<FileChecksum> {
  const file = await OutputFile.create(path, magic);
  try {
    body(file.sink);
    return await file.finish();
  } catch (error) {
    await file.abandon();
    throw error;
  }
}

/** fsyncs a directory so that created, renamed or removed entries are durable. */
export async function fsyncDirectory(dir: string): Promise<void> {
  const handle = await fsp.open(dir, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** The error every integrity failure raises, naming the file. */
export function corruptFile(path: string, reason: string): EngineError {
  return new EngineError('corrupt_index', `corrupt segment file ${path}: ${reason}`);
}

/** Checks magic and version of a header at the start of `data`. */
export function checkHeader(path: string, data: Uint8Array, magic: string): void {
  if (data.length < HEADER_BYTES + FOOTER_BYTES) throw corruptFile(path, 'file too short');
  for (let i = 0; i < 4; i++) {
    if (data[i] !== magic.charCodeAt(i)) throw corruptFile(path, `bad magic (expected ${magic})`);
  }
  const version = data[4]! | (data[5]! << 8) | (data[6]! << 16) | (data[7]! << 24);
  if (!isSupportedFormatVersion(version)) throw corruptFile(path, `unsupported format version ${version}`);
}

/**
 * Reads a whole file, verifies header, CRC32C footer and (when given) the size and checksum the
 * segment meta recorded. Returns the bytes in an 8-byte aligned buffer, footer included.
 */
export function readVerifiedFile(path: string, magic: string, expected?: FileChecksum): Uint8Array {
  let data: Uint8Array;
  try {
    data = fs.readFileSync(path);
  } catch (error) {
    throw corruptFile(path, `cannot read (${(error as Error).message})`);
  }
  if (data.byteOffset % 8 !== 0) data = new Uint8Array(data);
  if (expected && data.length !== expected.bytes) {
    throw corruptFile(path, `size ${data.length} differs from recorded ${expected.bytes}`);
  }
  checkHeader(path, data, magic);
  const bodyEnd = data.length - FOOTER_BYTES;
  const computed = crc32c(data.subarray(0, bodyEnd));
  verifyChecksum(path, data.subarray(bodyEnd), computed, expected);
  return data;
}

/**
 * Verifies a file without loading it: streams it through CRC32C in chunks on an open fd.
 * Returns the file size.
 */
export function verifyFileStreaming(path: string, fd: number, magic: string, expected?: FileChecksum): number {
  const size = fs.fstatSync(fd).size;
  if (expected && size !== expected.bytes) throw corruptFile(path, `size ${size} differs from recorded ${expected.bytes}`);
  if (size < HEADER_BYTES + FOOTER_BYTES) throw corruptFile(path, 'file too short');
  const buffer = Buffer.allocUnsafe(1024 * 1024);
  const bodyEnd = size - FOOTER_BYTES;
  let crc = 0;
  for (let offset = 0; offset < bodyEnd; ) {
    const length = Math.min(buffer.length, bodyEnd - offset);
    const read = fs.readSync(fd, buffer, 0, length, offset);
    if (read <= 0) throw corruptFile(path, 'unexpected end of file');
    if (offset === 0) checkHeader(path, buffer.subarray(0, Math.max(read, HEADER_BYTES + FOOTER_BYTES)), magic);
    crc = crc32c(buffer.subarray(0, read), crc);
    offset += read;
  }
  const footer = Buffer.alloc(FOOTER_BYTES);
  fs.readSync(fd, footer, 0, FOOTER_BYTES, bodyEnd);
  verifyChecksum(path, footer, crc >>> 0, expected);
  return size;
}

function verifyChecksum(path: string, footer: Uint8Array, computed: number, expected?: FileChecksum): void {
  const stored = (footer[0]! | (footer[1]! << 8) | (footer[2]! << 16) | (footer[3]! << 24)) >>> 0;
  if (stored !== computed) throw corruptFile(path, 'checksum mismatch');
  if (expected && expected.crc32c !== computed) throw corruptFile(path, 'checksum differs from the segment meta');
}
