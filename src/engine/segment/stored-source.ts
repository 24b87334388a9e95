/**
 * Stored `_source` (`source` file): documents in blocks of about SOURCE_BLOCK_BYTES
 * uncompressed, each block compressed with LZ4 (format 3; raw deflate in files of formats 1 and
 * 2, which readers still decode); a block index at the end of the file. Readers keep only the
 * index in memory and read blocks with positional reads through the thread's bounded
 * descriptor cache (directory/read-descriptors.ts), caching a few decompressed blocks.
 */
import fs from 'node:fs';
import zlib from 'node:zlib';
import { compressSync as lz4Compress, uncompressSync as lz4Uncompress } from 'lz4-napi';
import { ByteReader, ByteSink } from './byte-io.ts';
import { FileMagic, FOOTER_BYTES, HEADER_BYTES, corruptFile, verifyFileStreaming, type FileChecksum, type OutputFile } from './segment-file.ts';
import { EngineError } from '../errors.ts';
import { readDescriptors } from '../directory/read-descriptors.ts';

/** Target uncompressed size of a source block. */
export const SOURCE_BLOCK_BYTES = 16 * 1024;

/** First format version whose source blocks are LZ4 (measured against deflate: see docs/formats/segment.md). */
export const LZ4_SOURCE_FORMAT_VERSION = 3;

/** Decompressed blocks a reader keeps. */
const CACHED_BLOCKS = 8;

/** Appends documents' sources to the source file, block by block. */
export class StoredSourceWriter {
  private readonly pending: Uint8Array[] = [];
  private pendingBytes = 0;
  private readonly blockDocCounts: number[] = [];
  private readonly blockCompressedBytes: number[] = [];
  private docCount = 0;
  private readonly block = new ByteSink(64 * 1024);

  constructor(private readonly file: OutputFile) {}

  /** Appends the next doc's source bytes. */
  add(source: Uint8Array): void {
    this.pending.push(source);
    this.pendingBytes += source.length;
    this.docCount++;
    if (this.pendingBytes >= SOURCE_BLOCK_BYTES) this.flushBlock();
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
    this.pending.length = 0;
    this.pendingBytes = 0;
  }
}

interface DecodedBlock {
  data: Buffer;
  /** Start of each doc in `data`, plus the end. */
  starts: Int32Array;
}

/** Random access to stored sources through an open file descriptor. */
export class StoredSourceReader {
  private readonly cache = new Map<number, DecodedBlock>();
  private closed = false;

  private constructor(
    private readonly path: string,
    readonly fileBytes: number,
    private readonly blockFirstDocs: Int32Array,
    private readonly blockOffsets: Float64Array,
    /** Format version of the file: blocks are LZ4 from version 3, raw deflate before. */
    private readonly formatVersion: number,
  ) {}

  /**
   * Verifies the file's checksum (streaming) and loads the block index, through a descriptor of its
   * own that it closes; blocks are later read through the thread's bounded `readDescriptors`.
   */
  static open(path: string, expected: FileChecksum | undefined, maxDoc: number): StoredSourceReader {
    const fd = fs.openSync(path, 'r');
    try {
      const size = verifyFileStreaming(path, fd, FileMagic.storedSource, expected);
      const header = Buffer.alloc(HEADER_BYTES);
      fs.readSync(fd, header, 0, HEADER_BYTES, 0);
      const trailer = Buffer.alloc(8);
      fs.readSync(fd, trailer, 0, 8, size - FOOTER_BYTES - 8);
      const indexOffset = trailer.readDoubleLE(0);
      const indexEnd = size - FOOTER_BYTES - 8;
      if (!(indexOffset >= HEADER_BYTES && indexOffset <= indexEnd)) throw corruptFile(path, 'source index offset out of range');
      const indexBytes = Buffer.alloc(indexEnd - indexOffset);
      fs.readSync(fd, indexBytes, 0, indexBytes.length, indexOffset);
      const reader = new ByteReader(indexBytes);
      const docCount = reader.readVarint();
      if (docCount !== maxDoc) throw corruptFile(path, `holds ${docCount} sources, segment has ${maxDoc}`);
      const blocks = reader.readVarint();
      const blockFirstDocs = new Int32Array(blocks + 1);
      const blockOffsets = new Float64Array(blocks + 1);
      blockOffsets[0] = HEADER_BYTES;
      for (let b = 0; b < blocks; b++) {
        blockFirstDocs[b + 1] = blockFirstDocs[b]! + reader.readVarint();
        blockOffsets[b + 1] = blockOffsets[b]! + reader.readVarint();
      }
      if (blockFirstDocs[blocks] !== docCount || blockOffsets[blocks] !== indexOffset) {
        throw corruptFile(path, 'source block index is inconsistent');
      }
      return new StoredSourceReader(path, size, blockFirstDocs, blockOffsets, header.readUInt32LE(4));
    } finally {
      fs.closeSync(fd);
    }
  }

  /** A copy of the doc's source bytes. */
  source(doc: number): Buffer {
    return Buffer.from(this.view(doc));
  }

  /** The doc's source bytes inside a cached block: read them at once, never write or keep them. */
  view(doc: number): Buffer {
    const blocks = this.blockFirstDocs.length - 1;
    if (doc < 0 || doc >= this.blockFirstDocs[blocks]!) throw new RangeError(`doc ${doc} out of range`);
    let low = 0;
    let high = blocks - 1;
    while (low < high) {
      const middle = (low + high + 1) >>> 1;
      if (this.blockFirstDocs[middle]! <= doc) low = middle;
      else high = middle - 1;
    }
    const block = this.block(low);
    const index = doc - this.blockFirstDocs[low]!;
    return block.data.subarray(block.starts[index]!, block.starts[index + 1]!);
  }

  /** Closes the reader and the cached descriptor of its file, if one is open. */
  close(): void {
    this.closed = true;
    readDescriptors.forget(this.path);
  }

  private block(block: number): DecodedBlock {
    const cached = this.cache.get(block);
    if (cached) {
      this.cache.delete(block);
      this.cache.set(block, cached);
      return cached;
    }
    if (this.closed) throw new EngineError('shard_closed', `segment source store ${this.path} is closed`);
    const start = this.blockOffsets[block]!;
    const compressed = Buffer.alloc(this.blockOffsets[block + 1]! - start);
    readDescriptors.read(this.path, compressed, 0, compressed.length, start);
    const data = this.decompress(block, compressed);
    const count = this.blockFirstDocs[block + 1]! - this.blockFirstDocs[block]!;
    const reader = new ByteReader(data);
    const lengths = new Int32Array(count);
    for (let i = 0; i < count; i++) lengths[i] = reader.readVarint();
    const starts = new Int32Array(count + 1);
    starts[0] = reader.pos;
    for (let i = 0; i < count; i++) starts[i + 1] = starts[i]! + lengths[i]!;
    if (starts[count] !== data.length) throw corruptFile(this.path, `source block ${block} has a bad layout`);
    const decoded = { data, starts };
    this.cache.set(block, decoded);
    if (this.cache.size > CACHED_BLOCKS) this.cache.delete(this.cache.keys().next().value!);
    return decoded;
  }

  /** Decompresses one block with the codec of the file's format version. */
  private decompress(block: number, compressed: Buffer): Buffer {
    try {
      return this.formatVersion >= LZ4_SOURCE_FORMAT_VERSION ? lz4Uncompress(compressed) : zlib.inflateRawSync(compressed);
    } catch (error) {
      throw corruptFile(this.path, `source block ${block} cannot be decompressed (${(error as Error).message})`);
    }
  }
}
