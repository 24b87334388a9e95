/**
 * Stored `_source` (`source` file): documents in blocks of about SOURCE_BLOCK_BYTES
 * uncompressed, each block compressed with LZ4 (format 3 and later; raw deflate in files of
 * formats 1 and 2, which readers still decode); from format 5 a document of PIECED_SOURCE_BYTES
 * or more has a block of its own, cut into separately compressed pieces at its top-level members
 * (source-pieces.ts), so that reading one top-level field decompresses only its piece. A block
 * index at the end of the file. Readers keep only the index in memory and read blocks with
 * positional reads through the thread's bounded descriptor cache (directory/read-descriptors.ts),
 * caching a few decoded blocks. From format 6 the file is paged (paged-file.ts): opening checks
 * its page table instead of streaming the whole file through its checksum, and each page is
 * verified when read, through the thread's page cache.
 */
import fs from 'node:fs';
import zlib from 'node:zlib';
import { compressSync as lz4Compress, uncompressSync as lz4Uncompress } from 'lz4-napi';
import { ByteReader, ByteSink } from './byte-io.ts';
import { FileMagic, FOOTER_BYTES, HEADER_BYTES, PAGED_FORMAT_VERSION, corruptFile, verifyFileStreaming, type FileChecksum, type OutputFile } from './segment-file.ts';
import { PagedDataFile } from './paged-file.ts';
import { decodePiecedHeader, encodePieces, pieceAt, PIECED_SOURCE_BYTES, type EncodedPieces, type PiecedHeader } from './source-pieces.ts';
import { EngineError } from '../errors.ts';
import { readDescriptors } from '../directory/read-descriptors.ts';
import { readTopLevelTexts, type TopLevelEntry } from '../update/source-splice.ts';

/** Target uncompressed size of a source block. */
export const SOURCE_BLOCK_BYTES = 16 * 1024;

/** First format version whose source blocks are LZ4 (measured against deflate: see docs/formats/segment.md). */
export const LZ4_SOURCE_FORMAT_VERSION = 3;

/** First format version with pieced blocks (and a header size per block in the index). */
export const PIECED_SOURCE_FORMAT_VERSION = 5;

/** Decoded blocks a reader keeps. */
const CACHED_BLOCKS = 8;

/** A pieced block this small is read whole at once (one read instead of the header's and a piece's). */
const READ_WHOLE_PIECED_BYTES = 64 * 1024;

/** Appends documents' sources to the source file, block by block. */
export class StoredSourceWriter {
  private readonly pending: Uint8Array[] = [];
  private pendingBytes = 0;
  private readonly blockDocCounts: number[] = [];
  private readonly blockCompressedBytes: number[] = [];
  /** Header bytes of each block: 0 for a block of docs, else a pieced block's header. */
  private readonly blockHeaderBytes: number[] = [];
  private docCount = 0;
  private readonly block = new ByteSink(64 * 1024);

  constructor(private readonly file: OutputFile) {}

  /** Appends the next doc's source bytes. */
  add(source: Uint8Array): void {
    if (source.length >= PIECED_SOURCE_BYTES) {
      const pieces = encodePieces(Buffer.from(source.buffer, source.byteOffset, source.byteLength));
      if (pieces) {
        if (this.pending.length > 0) this.flushBlock();
        this.writePieces(pieces);
        this.docCount++;
        return;
      }
    }
    this.pending.push(source);
    this.pendingBytes += source.length;
    this.docCount++;
    if (this.pendingBytes >= SOURCE_BLOCK_BYTES) this.flushBlock();
  }

  /**
   * Ends the block being filled, before blocks another file stored (`StoredSourceReader.copyBlocksTo`)
   * are copied as they are with `appendStoredBytes` and `recordStoredBlock`.
   */
  startStoredBlocks(): void {
    if (this.pending.length > 0) this.flushBlock();
  }

  /** Appends (part of) the bytes of blocks copied as stored; `recordStoredBlock` then records each of them. */
  appendStoredBytes(bytes: Uint8Array): void {
    this.file.sink.writeBytes(bytes);
  }

  /** Records a copied block whose bytes `appendStoredBytes` appended: its doc count, byte length and header bytes. */
  recordStoredBlock(docCount: number, bytes: number, headerBytes: number): void {
    this.blockDocCounts.push(docCount);
    this.blockCompressedBytes.push(bytes);
    this.blockHeaderBytes.push(headerBytes);
    this.docCount += docCount;
  }

  /** Flushes the last block and appends the block index (call once). */
  finish(): void {
    if (this.pending.length > 0) this.flushBlock();
    const sink = this.file.sink;
    const indexOffset = sink.length;
    sink.writeVarint(this.docCount);
    sink.writeVarint(this.blockDocCounts.length);
    for (let b = 0; b < this.blockDocCounts.length; b++) {
      sink.writeVarint(this.blockDocCounts[b]!);
      sink.writeVarint(this.blockCompressedBytes[b]!);
      sink.writeVarint(this.blockHeaderBytes[b]!);
    }
    sink.writeF64(indexOffset);
  }

  private flushBlock(): void {
    const block = this.block;
    block.reset();
    for (const source of this.pending) block.writeVarint(source.length);
    for (const source of this.pending) block.writeBytes(source);
    const bytes = block.toBytes();
    const compressed = lz4Compress(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength));
    this.file.sink.writeBytes(compressed);
    this.blockDocCounts.push(this.pending.length);
    this.blockCompressedBytes.push(compressed.length);
    this.blockHeaderBytes.push(0);
    this.pending.length = 0;
    this.pendingBytes = 0;
  }

  private writePieces({ header, pieces }: EncodedPieces): void {
    const sink = this.file.sink;
    sink.writeBytes(header);
    let bytes = header.length;
    for (const piece of pieces) {
      sink.writeBytes(piece);
      bytes += piece.length;
    }
    this.blockDocCounts.push(1);
    this.blockCompressedBytes.push(bytes);
    this.blockHeaderBytes.push(header.length);
  }
}

interface DecodedBlock {
  kind: 'docs';
  data: Buffer;
  /** Start of each doc in `data`, plus the end. */
  starts: Int32Array;
}

/** A pieced block (one doc): its header, the pieces decompressed so far, and the whole text once assembled. */
interface PiecedBlock {
  kind: 'pieces';
  header: PiecedHeader;
  /** The block's bytes when it was small enough to read at once (READ_WHOLE_PIECED_BYTES). */
  bytes: Buffer | null;
  pieces: Array<Buffer | undefined>;
  whole: Buffer | null;
}

/** Random access to stored sources through an open file descriptor. */
export class StoredSourceReader {
  private readonly cache = new Map<number, DecodedBlock | PiecedBlock>();
  private closed = false;

  private constructor(
    private readonly path: string,
    readonly fileBytes: number,
    private readonly blockFirstDocs: Int32Array,
    private readonly blockOffsets: Float64Array,
    /** Header bytes of each block: 0 for a block of docs, else a pieced block's header. */
    private readonly blockHeaderBytes: Int32Array,
    /** Format version of the file: blocks are LZ4 from version 3, raw deflate before. */
    private readonly formatVersion: number,
    /** The file read page by page (format 6 on), else null (read directly). */
    private readonly paged: PagedDataFile | null,
  ) {}

  /**
   * Loads the block index, through a descriptor of its own that it closes, after verifying the
   * file: a paged file (format 6) by its size, header and page table, its pages as they are read;
   * an earlier one by streaming it through its checksum. Blocks are later read through the
   * thread's bounded `readDescriptors` (and page cache).
   */
  static open(path: string, expected: FileChecksum | undefined, maxDoc: number): StoredSourceReader {
    const fd = fs.openSync(path, 'r');
    let paged: PagedDataFile | null = null;
    try {
      const header = Buffer.alloc(HEADER_BYTES);
      fs.readSync(fd, header, 0, HEADER_BYTES, 0);
      const formatVersion = header.readUInt32LE(4);
      let size: number;
      let bodyEnd: number;
      if (formatVersion >= PAGED_FORMAT_VERSION) {
        paged = PagedDataFile.open(path, FileMagic.storedSource, expected);
        size = fs.fstatSync(fd).size;
        bodyEnd = paged.bodyEnd;
      } else {
        size = verifyFileStreaming(path, fd, FileMagic.storedSource, expected);
        bodyEnd = size - FOOTER_BYTES;
      }
      const readAt = (position: number, length: number): Buffer => {
        if (paged === null) {
          const bytes = Buffer.alloc(length);
          fs.readSync(fd, bytes, 0, length, position);
          return bytes;
        }
        const data = paged.read(position, position + length);
        return Buffer.from(data.subarray(position - paged.base, position - paged.base + length));
      };
      if (bodyEnd < HEADER_BYTES + 8) throw corruptFile(path, 'file too short');
      const indexEnd = bodyEnd - 8;
      const indexOffset = readAt(indexEnd, 8).readDoubleLE(0);
      if (!(indexOffset >= HEADER_BYTES && indexOffset <= indexEnd)) throw corruptFile(path, 'source index offset out of range');
      const indexBytes = readAt(indexOffset, indexEnd - indexOffset);
      const reader = new ByteReader(indexBytes);
      const docCount = reader.readVarint();
      if (docCount !== maxDoc) throw corruptFile(path, `holds ${docCount} sources, segment has ${maxDoc}`);
      const blocks = reader.readVarint();
      if (blocks > indexBytes.length) throw corruptFile(path, 'source block index is inconsistent');
      const blockFirstDocs = new Int32Array(blocks + 1);
      const blockOffsets = new Float64Array(blocks + 1);
      const blockHeaderBytes = new Int32Array(blocks);
      blockOffsets[0] = HEADER_BYTES;
      for (let b = 0; b < blocks; b++) {
        blockFirstDocs[b + 1] = blockFirstDocs[b]! + reader.readVarint();
        blockOffsets[b + 1] = blockOffsets[b]! + reader.readVarint();
        if (formatVersion >= PIECED_SOURCE_FORMAT_VERSION) {
          blockHeaderBytes[b] = reader.readVarint();
          const pieced = blockHeaderBytes[b]! > 0;
          if (pieced && (blockFirstDocs[b + 1]! - blockFirstDocs[b]! !== 1 || blockHeaderBytes[b]! > blockOffsets[b + 1]! - blockOffsets[b]!)) {
            throw corruptFile(path, `source block ${b} is pieced but does not hold one doc behind its header`);
          }
        }
      }
      if (blockFirstDocs[blocks] !== docCount || blockOffsets[blocks] !== indexOffset || reader.pos !== indexBytes.length) {
        throw corruptFile(path, 'source block index is inconsistent');
      }
      return new StoredSourceReader(path, size, blockFirstDocs, blockOffsets, blockHeaderBytes, formatVersion, paged);
    } catch (error) {
      paged?.close();
      throw error;
    } finally {
      fs.closeSync(fd);
    }
  }

  /** Whether `copyBlocksTo` may copy this file's blocks as they are: LZ4 blocks, big docs pieced, pages verified as read (format 6). */
  get blocksCopyable(): boolean {
    return this.paged !== null;
  }

  /** Number of blocks of the file. */
  get blockCount(): number {
    return this.blockFirstDocs.length - 1;
  }

  /** File offset of a block (`blockCount` gives the end of the last). */
  blockOffset(block: number): number {
    return this.blockOffsets[block]!;
  }

  /** First doc of a block (`blockCount` gives the doc count). */
  blockFirstDoc(block: number): number {
    return this.blockFirstDocs[block]!;
  }

  /**
   * Appends blocks `[first, end)` to a writer as they are stored (compressed bytes, doc counts and
   * header bytes, see `blocksCopyable`), their bytes read sequentially in large parts.
   */
  copyBlocksTo(first: number, end: number, writer: StoredSourceWriter): void {
    const paged = this.paged;
    if (paged === null) throw new RangeError(`source blocks of format ${this.formatVersion} cannot be copied as they are`);
    if (this.closed) throw new EngineError('shard_closed', `segment source store ${this.path} is closed`);
    writer.startStoredBlocks();
    paged.readSequential(this.blockOffsets[first]!, this.blockOffsets[end]!, (bytes) => writer.appendStoredBytes(bytes));
    for (let block = first; block < end; block++) {
      const docCount = this.blockFirstDocs[block + 1]! - this.blockFirstDocs[block]!;
      writer.recordStoredBlock(docCount, this.blockOffsets[block + 1]! - this.blockOffsets[block]!, this.blockHeaderBytes[block]!);
    }
  }

  /** A copy of the doc's source bytes. */
  source(doc: number): Buffer {
    return Buffer.from(this.view(doc));
  }

  /** The doc's source bytes inside a cached block: read them at once, never write or keep them. */
  view(doc: number): Buffer {
    const block = this.blockOf(doc);
    const decoded = this.decoded(block);
    if (decoded.kind === 'pieces') return this.whole(block, decoded);
    const index = doc - this.blockFirstDocs[block]!;
    return decoded.data.subarray(decoded.starts[index]!, decoded.starts[index + 1]!);
  }

  /**
   * The JSON texts of the named top-level fields the doc's source holds (the last of a repeated
   * key, as JSON.parse reads it). A pieced doc decompresses only the pieces holding them.
   */
  topLevelTexts(doc: number, keys: readonly string[]): Map<string, string> {
    const block = this.blockOf(doc);
    const decoded = this.decoded(block);
    if (decoded.kind === 'docs') return readTopLevelTexts(this.view(doc), keys);
    const wanted = new Set(keys);
    const found = new Map<string, string>();
    for (const entry of decoded.header.entries) {
      if (wanted.has(entry.key)) found.set(entry.key, this.memberText(block, decoded, entry));
    }
    return found;
  }

  /** Closes the reader and the cached descriptor of its file, if one is open. */
  close(): void {
    this.closed = true;
    if (this.paged !== null) this.paged.close();
    else readDescriptors.forget(this.path);
  }

  private blockOf(doc: number): number {
    const blocks = this.blockFirstDocs.length - 1;
    if (doc < 0 || doc >= this.blockFirstDocs[blocks]!) throw new RangeError(`doc ${doc} out of range`);
    let low = 0;
    let high = blocks - 1;
    while (low < high) {
      const middle = (low + high + 1) >>> 1;
      if (this.blockFirstDocs[middle]! <= doc) low = middle;
      else high = middle - 1;
    }
    return low;
  }

  /** A block from the cache, else read (a block of docs decompressed, a pieced block's header only). */
  private decoded(block: number): DecodedBlock | PiecedBlock {
    const cached = this.cache.get(block);
    if (cached) {
      this.cache.delete(block);
      this.cache.set(block, cached);
      return cached;
    }
    const decoded = this.blockHeaderBytes[block]! > 0 ? this.readPiecedHeader(block) : this.readDocsBlock(block);
    this.cache.set(block, decoded);
    if (this.cache.size > CACHED_BLOCKS) this.cache.delete(this.cache.keys().next().value!);
    return decoded;
  }

  private readDocsBlock(block: number): DecodedBlock {
    const data = this.decompress(block, this.read(block, 0, this.blockOffsets[block + 1]! - this.blockOffsets[block]!));
    const count = this.blockFirstDocs[block + 1]! - this.blockFirstDocs[block]!;
    const reader = new ByteReader(data);
    const lengths = new Int32Array(count);
    for (let i = 0; i < count; i++) lengths[i] = reader.readVarint();
    const starts = new Int32Array(count + 1);
    starts[0] = reader.pos;
    for (let i = 0; i < count; i++) starts[i + 1] = starts[i]! + lengths[i]!;
    if (starts[count] !== data.length) throw corruptFile(this.path, `source block ${block} has a bad layout`);
    return { kind: 'docs', data, starts };
  }

  private readPiecedHeader(block: number): PiecedBlock {
    const headerBytes = this.blockHeaderBytes[block]!;
    const blockBytes = this.blockOffsets[block + 1]! - this.blockOffsets[block]!;
    const bytes = blockBytes <= READ_WHOLE_PIECED_BYTES ? this.read(block, 0, blockBytes) : null;
    const header = decodePiecedHeader(this.path, block, bytes ? bytes.subarray(0, headerBytes) : this.read(block, 0, headerBytes), blockBytes);
    return { kind: 'pieces', header, bytes, pieces: new Array(header.pieceStarts.length - 1), whole: null };
  }

  /** The JSON text of one member of a pieced doc, from the piece holding it. */
  private memberText(block: number, decoded: PiecedBlock, entry: TopLevelEntry): string {
    if (decoded.whole) return decoded.whole.toString('utf8', entry.valueStart, entry.valueEnd);
    const piece = pieceAt(decoded.header, entry.keyStart);
    const start = decoded.header.pieceStarts[piece]!;
    return this.piece(block, decoded, piece).toString('utf8', entry.valueStart - start, entry.valueEnd - start);
  }

  private piece(block: number, decoded: PiecedBlock, piece: number): Buffer {
    const cached = decoded.pieces[piece];
    if (cached) return cached;
    const { compressedStarts } = decoded.header;
    const compressed = this.blockBytes(block, decoded, compressedStarts[piece]!, compressedStarts[piece + 1]!);
    const data = this.decompressPiece(block, decoded.header, piece, compressed);
    decoded.pieces[piece] = data;
    return data;
  }

  /** The whole text of a pieced doc, assembled once (its pieces are then dropped); the pieces not yet decompressed are read at once. */
  private whole(block: number, decoded: PiecedBlock): Buffer {
    if (!decoded.whole) {
      const { compressedStarts } = decoded.header;
      const pieceCount = decoded.pieces.length;
      const first = compressedStarts[0]!;
      const compressed = this.blockBytes(block, decoded, first, compressedStarts[pieceCount]!);
      for (let piece = 0; piece < pieceCount; piece++) {
        if (decoded.pieces[piece]) continue;
        const bytes = compressed.subarray(compressedStarts[piece]! - first, compressedStarts[piece + 1]! - first);
        decoded.pieces[piece] = this.decompressPiece(block, decoded.header, piece, bytes);
      }
      decoded.whole = Buffer.concat(decoded.pieces as Buffer[], decoded.header.textBytes);
      decoded.pieces = [];
      decoded.bytes = null;
    }
    return decoded.whole;
  }

  /** Bytes `[start, end)` of a pieced block: from those read with its header, else read now. */
  private blockBytes(block: number, decoded: PiecedBlock, start: number, end: number): Buffer {
    return decoded.bytes ? decoded.bytes.subarray(start, end) : this.read(block, start, end - start);
  }

  private decompressPiece(block: number, header: PiecedHeader, piece: number, compressed: Buffer): Buffer {
    const data = this.decompress(block, compressed);
    const expected = header.pieceStarts[piece + 1]! - header.pieceStarts[piece]!;
    if (data.length !== expected) throw corruptFile(this.path, `source block ${block} piece ${piece} has ${data.length} bytes, its header says ${expected}`);
    return data;
  }

  /** `length` bytes of a block from `offset` within it. */
  private read(block: number, offset: number, length: number): Buffer {
    if (this.closed) throw new EngineError('shard_closed', `segment source store ${this.path} is closed`);
    const position = this.blockOffsets[block]! + offset;
    const paged = this.paged;
    if (paged !== null) {
      // A copy: cached pages are shared, and callers keep the bytes they get.
      const data = paged.read(position, position + length);
      return Buffer.from(data.subarray(position - paged.base, position - paged.base + length));
    }
    const bytes = Buffer.allocUnsafe(length);
    readDescriptors.read(this.path, bytes, 0, length, position);
    return bytes;
  }

  /** Decompresses one block (or piece) with the codec of the file's format version. */
  private decompress(block: number, compressed: Buffer): Buffer {
    try {
      return this.formatVersion >= LZ4_SOURCE_FORMAT_VERSION ? lz4Uncompress(compressed) : zlib.inflateRawSync(compressed);
    } catch (error) {
      throw corruptFile(this.path, `source block ${block} cannot be decompressed (${(error as Error).message})`);
    }
  }
}
