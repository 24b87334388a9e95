/**
 * Random access to a segment's term dictionary and postings files for decoding. A format 6 file is
 * read page by page with positional reads through the thread's descriptor cache
 * (directory/read-descriptors.ts); each page is checked against the file's page checksum table when
 * it is read from disk and then kept in the thread's bounded page cache (directory/page-cache.ts).
 * Opening reads only the header and the table. A file of an earlier format has no table: it is read
 * and verified whole at open and kept in memory, as those formats always were.
 */
import { readDescriptors } from '../directory/read-descriptors.ts';
import { pageCache, type CachedPage, type PageOwner } from '../directory/page-cache.ts';
import { crc32c } from '../directory/checksum.ts';
import { EngineError } from '../errors.ts';
import {
  checkHeader,
  corruptFile,
  FOOTER_BYTES,
  HEADER_BYTES,
  PAGE_TABLE_TRAILER_BYTES,
  PAGED_FORMAT_VERSION,
  readVerifiedFile,
  type FileChecksum,
} from './segment-file.ts';

/** Zero bytes after every range `read` returns, so decoders may read a few bytes past a range's end. */
export const READ_PADDING = 8;

const EMPTY_RANGE = new Uint8Array(READ_PADDING);

/** A segment data file read by byte ranges. */
export interface SegmentDataFile {
  /** Path of the file, named by corruption errors. */
  readonly path: string;
  /** End of the body: where the page table (format 6) or the footer starts. */
  readonly bodyEnd: number;
  /** File offset of byte 0 of the array the last `read` returned. */
  base: number;
  /**
   * Bytes `[start, end)` of the file: the returned array's byte `i` is file byte `base + i` (read
   * `base` right after the call), and at least READ_PADDING readable bytes follow `end`. Throws
   * corrupt_index naming the file for a range outside the body or a page that fails its checksum.
   */
  read(start: number, end: number): Uint8Array;
  /** Drops cached pages and the descriptor; the file must not be read afterwards. */
  close(): void;
}

/**
 * Opens a term dictionary or postings file, checking it against the segment meta: paged when its
 * header says format 6 or later, else read and verified whole.
 */
export function openSegmentDataFile(path: string, magic: string, expected: FileChecksum | undefined): SegmentDataFile {
  let header: Uint8Array;
  try {
    header = readExactly(path, 0, HEADER_BYTES);
  } catch {
    // Missing or too short: the whole-file read reports it as it always did.
    return new LoadedDataFile(path, readVerifiedFile(path, magic, expected));
  }
  const version = header[4]! | (header[5]! << 8) | (header[6]! << 16) | (header[7]! << 24);
  if (version >= PAGED_FORMAT_VERSION) return PagedDataFile.open(path, magic, expected);
  readDescriptors.forget(path);
  return new LoadedDataFile(path, readVerifiedFile(path, magic, expected));
}

/** A file of a format before 6: verified whole at open and kept in memory. */
export class LoadedDataFile implements SegmentDataFile {
  readonly bodyEnd: number;
  base = 0;

  constructor(
    readonly path: string,
    private readonly data: Uint8Array,
  ) {
    this.bodyEnd = data.length - FOOTER_BYTES;
  }

  read(start: number, end: number): Uint8Array {
    if (!(start >= 0 && start <= end && end <= this.bodyEnd)) throw corruptFile(this.path, `bytes ${start}..${end} lie outside the data`);
    this.base = 0;
    return this.data;
  }

  close(): void {}
}

/** Pages per read of `readSequential` (1 MiB at the default page size). */
const SEQUENTIAL_READ_PAGES = 64;

/** Most pages a paged file may have (a table of 4 bytes per page is read at open). */
const MAX_PAGES = 2 ** 26;

/** A format 6 file read page by page through the page cache. */
export class PagedDataFile implements SegmentDataFile, PageOwner {
  base = 0;
  private readonly pageShift: number;
  /** This file's pages in the thread's cache, by index. */
  private readonly resident: (CachedPage | undefined)[];
  private closed = false;

  private constructor(
    readonly path: string,
    readonly bodyEnd: number,
    private readonly pageBytes: number,
    private readonly pageCrcs: Uint32Array,
  ) {
    this.pageShift = Math.log2(pageBytes);
    this.resident = new Array<CachedPage | undefined>(pageCrcs.length);
  }

  /**
   * Opens a paged file: checks its size against the segment meta, its header, and its page table
   * against the table's own checksum. Pages are verified when read (`read`); whole-file checks
   * (shard verification) use the footer, which also covers the table.
   */
  static open(path: string, magic: string, expected: FileChecksum | undefined): PagedDataFile {
    let size: number;
    try {
      size = readDescriptors.size(path);
    } catch (error) {
      throw corruptFile(path, `cannot read (${(error as Error).message})`);
    }
    if (expected && size !== expected.bytes) throw corruptFile(path, `size ${size} differs from recorded ${expected.bytes}`);
    const trailerBytes = PAGE_TABLE_TRAILER_BYTES + FOOTER_BYTES;
    if (size < HEADER_BYTES + trailerBytes) throw corruptFile(path, 'file too short');
    const header = readExactly(path, 0, HEADER_BYTES + FOOTER_BYTES);
    checkHeader(path, header, magic);
    const version = header[4]! | (header[5]! << 8) | (header[6]! << 16) | (header[7]! << 24);
    if (version < PAGED_FORMAT_VERSION) throw corruptFile(path, `format version ${version} has no page table`);
    const trailer = Buffer.from(readExactly(path, size - trailerBytes, PAGE_TABLE_TRAILER_BYTES));
    const pageBytes = trailer.readUInt32LE(0);
    const pageCount = trailer.readUInt32LE(4);
    const tableBytes = pageCount * 4;
    const bodyEnd = size - trailerBytes - tableBytes;
    const validPageBytes = pageBytes >= 512 && pageBytes <= 1 << 24 && (pageBytes & (pageBytes - 1)) === 0;
    if (!validPageBytes || pageCount >= MAX_PAGES || bodyEnd < HEADER_BYTES || Math.ceil(bodyEnd / pageBytes) !== pageCount) {
      throw corruptFile(path, `malformed page table (${pageCount} pages of ${pageBytes} bytes)`);
    }
    const table = readExactly(path, bodyEnd, tableBytes + 8);
    if (crc32c(table) !== trailer.readUInt32LE(8)) throw corruptFile(path, 'page table checksum mismatch');
    const pageCrcs = new Uint32Array(pageCount);
    const view = Buffer.from(table.buffer, table.byteOffset, tableBytes);
    for (let i = 0; i < pageCount; i++) pageCrcs[i] = view.readUInt32LE(i * 4);
    return new PagedDataFile(path, bodyEnd, pageBytes, pageCrcs);
  }

  read(start: number, end: number): Uint8Array {
    if (!(start >= 0 && start <= end && end <= this.bodyEnd)) throw corruptFile(this.path, `bytes ${start}..${end} lie outside the data`);
    if (start === end) {
      this.base = start;
      return EMPTY_RANGE;
    }
    const first = start >>> 0 === start ? start >>> this.pageShift : Math.floor(start / this.pageBytes);
    const pageStart = first * this.pageBytes;
    if (end <= pageStart + this.pageBytes) {
      this.base = pageStart;
      return this.page(first);
    }
    const out = new Uint8Array(end - start + READ_PADDING);
    let written = 0;
    for (let page = first; written < end - start; page++) {
      const bytes = this.page(page);
      const from = page === first ? start - pageStart : 0;
      const take = Math.min(this.pageLength(page) - from, end - start - written);
      out.set(bytes.subarray(from, from + take), written);
      written += take;
    }
    this.base = start;
    return out;
  }

  /**
   * Passes bytes `[start, end)` to `visit` in order, in parts of at most SEQUENTIAL_READ_PAGES
   * pages, read straight from disk (past the page cache, which a long copy would only churn) with
   * every page they touch verified whole. A part is valid during its call only.
   */
  readSequential(start: number, end: number, visit: (bytes: Uint8Array) => void): void {
    if (!(start >= 0 && start <= end && end <= this.bodyEnd)) throw corruptFile(this.path, `bytes ${start}..${end} lie outside the data`);
    if (start === end) return;
    if (this.closed) throw new EngineError('shard_closed', `segment file ${this.path} is closed`);
    const pageBytes = this.pageBytes;
    const firstPage = Math.floor(start / pageBytes);
    const lastPage = Math.floor((end - 1) / pageBytes);
    const buffer = new Uint8Array(Math.min(SEQUENTIAL_READ_PAGES, lastPage + 1 - firstPage) * pageBytes);
    for (let page = firstPage; page <= lastPage; ) {
      const pages = Math.min(SEQUENTIAL_READ_PAGES, lastPage + 1 - page);
      const position = page * pageBytes;
      const length = Math.min(pages * pageBytes, this.bodyEnd - position);
      this.readVerified(page, pages, buffer, length);
      visit(buffer.subarray(Math.max(start, position) - position, Math.min(end, position + length) - position));
      page += pages;
    }
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    const resident = this.resident;
    for (let index = 0; index < resident.length; index++) {
      const page = resident[index];
      if (page === undefined) continue;
      pageCache.remove(page);
      resident[index] = undefined;
    }
    readDescriptors.forget(this.path);
  }

  /** Called by the cache when it drops one of this file's pages. */
  evicted(index: number): void {
    this.resident[index] = undefined;
  }

  private pageLength(page: number): number {
    return Math.min(this.pageBytes, this.bodyEnd - page * this.pageBytes);
  }

  /** Reads `length` bytes of `pages` pages from `firstPage` on into `buffer` and checks each page's checksum. */
  private readVerified(firstPage: number, pages: number, buffer: Uint8Array, length: number): void {
    const position = firstPage * this.pageBytes;
    let done = 0;
    while (done < length) {
      const read = readDescriptors.read(this.path, buffer, done, length - done, position + done);
      if (read <= 0) throw corruptFile(this.path, `unexpected end of file in page ${firstPage + Math.floor(done / this.pageBytes)}`);
      done += read;
    }
    for (let i = 0; i < pages; i++) {
      const from = i * this.pageBytes;
      const to = Math.min(from + this.pageBytes, length);
      if (crc32c(buffer.subarray(from, to)) !== this.pageCrcs[firstPage + i]) {
        throw corruptFile(this.path, `checksum mismatch in page ${firstPage + i} (bytes ${position + from}..${position + to})`);
      }
    }
  }

  /** Page `page` from the cache, or read from disk, verified and cached. */
  private page(page: number): Uint8Array {
    const cached = this.resident[page];
    if (cached !== undefined) {
      pageCache.touch(cached);
      return cached.bytes;
    }
    if (this.closed) throw new EngineError('shard_closed', `segment file ${this.path} is closed`);
    const length = this.pageLength(page);
    const bytes = new Uint8Array(length + READ_PADDING);
    this.readVerified(page, 1, bytes, length);
    const entry = pageCache.add(this, page, bytes);
    // A page larger than the whole cache is evicted at once: it is then not resident.
    if (entry.cached) this.resident[page] = entry;
    return bytes;
  }
}

/** Reads exactly `length` bytes at `position` through the descriptor cache. */
function readExactly(path: string, position: number, length: number): Uint8Array {
  const bytes = new Uint8Array(length);
  let done = 0;
  while (done < length) {
    let read: number;
    try {
      read = readDescriptors.read(path, bytes, done, length - done, position + done);
    } catch (error) {
      throw corruptFile(path, `cannot read (${(error as Error).message})`);
    }
    if (read <= 0) throw corruptFile(path, 'unexpected end of file');
    done += read;
  }
  return bytes;
}
