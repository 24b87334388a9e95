import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { SegmentReader } from './segment-reader.ts';
import { buildDocMaps, writeSegment } from './segment-writer.ts';
import { FOOTER_BYTES, HEADER_BYTES, PAGE_TABLE_TRAILER_BYTES, PAGED_FORMAT_VERSION, SEGMENT_FORMAT_VERSION, SegmentFileName, pageTableOf } from './segment-file.ts';
import { crc32c } from '../directory/checksum.ts';
import { TestLeaf, seededRandom, type TestDoc } from './reference-leaf.fixture.ts';
import { compressSync as lz4Compress } from 'lz4-napi';
import { ByteReader, ByteSink } from './byte-io.ts';
import { decodePiecedHeader, pieceCuts, PIECE_BYTES } from './source-pieces.ts';
import { SOURCE_BLOCK_BYTES, StoredSourceReader } from './stored-source.ts';
import { readTopLevelTexts, topLevelLayout } from '../update/source-splice.ts';

function sourcesDocs(count: number): TestDoc[] {
  const random = seededRandom(3);
  return Array.from({ length: count }, (_, n) => {
    const words = Array.from({ length: Math.floor(random() * (n % 50 === 0 ? 6000 : 80)) }, () => `w${Math.floor(random() * 500)}`);
    return { id: `s${n}`, source: n % 97 === 0 ? {} : { n, text: words.join(' '), nested: { unicode: 'été ✓ 𝄞', list: [n, null, true] } } };
  });
}

/** Runs `run` in a fresh temporary directory, removed afterwards. */
async function inTempDir(run: (dir: string) => Promise<void>): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'trove-source-'));
  try {
    await run(dir);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

async function writeFrom(dir: string, docs: TestDoc[]) {
  const leaf = new TestLeaf(docs);
  const [docMap] = buildDocMaps([leaf], true);
  const segmentDir = path.join(dir, 'seg_000001');
  const meta = await writeSegment({ dir: segmentDir, name: 'seg_000001', sources: [{ reader: leaf, docMap: docMap! }], fields: [], inplaceFields: [] });
  return { leaf, meta, segmentDir };
}

test('LZ4 source blocks read back every document as written, small, empty and larger than a block', () =>
  inTempDir(async (dir) => {
    const { leaf, meta, segmentDir } = await writeFrom(dir, sourcesDocs(700));
    assert.equal(fs.readFileSync(path.join(segmentDir, SegmentFileName.storedSource)).readUInt32LE(4), SEGMENT_FORMAT_VERSION);
    const segment = SegmentReader.open(segmentDir, meta, { liveDocsGen: 0, inplaceGens: {} });
    try {
      for (let doc = 699; doc >= 0; doc -= 3) assert.deepEqual(segment.source(doc), leaf.source(doc), `doc ${doc}`);
      for (let doc = 0; doc < 700; doc++) assert.deepEqual(segment.source(doc), leaf.source(doc), `doc ${doc}`);
    } finally {
      segment.close();
    }
  }));

test('a source block that does not decompress is a corrupt file naming the source file', () =>
  inTempDir(async (dir) => {
    const { meta, segmentDir } = await writeFrom(dir, sourcesDocs(100));
    const file = path.join(segmentDir, SegmentFileName.storedSource);
    const bytes = fs.readFileSync(file);
    // The first block starts after the header with its uncompressed size (u32): claim 1000 bytes
    // fewer, then give the file a valid checksum so that only the block decoding can notice.
    bytes.writeUInt32LE(bytes.readUInt32LE(HEADER_BYTES) - 1000, HEADER_BYTES);
    const files = { ...meta.files, [SegmentFileName.storedSource]: resealed(file, bytes) };
    const segment = SegmentReader.open(segmentDir, { ...meta, files }, { liveDocsGen: 0, inplaceGens: {} });
    try {
      assert.throws(
        () => segment.source(0),
        (error: Error & { code?: string }) => error.code === 'corrupt_index' && error.message.includes(file),
      );
    } finally {
      segment.close();
    }
  }));

/** Large sources of every shape the piecing handles, between small ones; raw texts keep their spacing. */
function piecedDocs(): TestDoc[] {
  const random = seededRandom(11);
  const words = (bytes: number): string => {
    const parts: string[] = [];
    for (let length = 0; length < bytes; length += 6) parts.push(`w${Math.floor(random() * 9000)}`);
    return parts.join(' ');
  };
  const raw = (text: string): Buffer => Buffer.from(text);
  const large: unknown[] = [
    { title: words(40), body: words(200_000), tag: 'red', n: 1 },
    { n: 2, tag: 'blue', body: words(40_000) },
    { body: words(30_000), n: 3 },
    Object.fromEntries(Array.from({ length: 900 }, (_, index) => [`f${index}`, words(60)])),
    raw(`{"a": "${words(20_000)}", "b": 1, "a": 2}`),
    raw(`{\n  "k\\"ey" : 1 ,\n  "body":"${words(25_000)}",\t"u": "été ✓ 𝄞"  ,"t":true }`),
    { nested: { x: Array.from({ length: 4000 }, (_, index) => index), y: { z: words(100) } }, list: [words(30_000)], flag: false },
    raw(`{${' '.repeat(20_000)}}`),
    { small: 1, big1: words(17_000), mid: words(9_000), big2: words(18_000), last: null },
  ];
  const docs: TestDoc[] = [];
  large.forEach((source, index) => {
    docs.push({ id: `small${index}`, source: { n: index, text: words(300) } });
    docs.push({ id: `large${index}`, source });
  });
  return docs;
}

/** The top-level keys of a source, and one it lacks. */
function keysOf(source: Buffer): string[] {
  return [...topLevelLayout(source).entries.map((entry) => entry.key), 'missing'];
}

/** The block index of a source file: per block its offset, docs and header bytes (format 5 and later). */
function sourceBlocks(bytes: Buffer): Array<{ offset: number; docs: number; bytes: number; headerBytes: number }> {
  const bodyEnd = bodyEndOf(bytes);
  const indexOffset = bytes.readDoubleLE(bodyEnd - 8);
  const reader = new ByteReader(bytes.subarray(indexOffset, bodyEnd - 8));
  reader.readVarint();
  const blocks = reader.readVarint();
  const out = [];
  let offset = HEADER_BYTES;
  for (let block = 0; block < blocks; block++) {
    const docs = reader.readVarint();
    const compressed = reader.readVarint();
    out.push({ offset, docs, bytes: compressed, headerBytes: reader.readVarint() });
    offset += compressed;
  }
  return out;
}

/** Rewrites a file's CRC32C footer and returns the checksum the segment meta must record. */
/** Where a source file's body ends: before its page table (format 6 on) or its footer. */
function bodyEndOf(bytes: Buffer): number {
  const paged = bytes.readUInt32LE(4) >= PAGED_FORMAT_VERSION;
  return bytes.length - FOOTER_BYTES - (paged ? bytes.readUInt32LE(bytes.length - FOOTER_BYTES - 8) * 4 + PAGE_TABLE_TRAILER_BYTES : 0);
}

/** Rewrites a file's page table (format 6 on) and CRC32C footer; returns the checksum the segment meta must record. */
function resealed(file: string, bytes: Buffer): { bytes: number; crc32c: number } {
  const content = bytes.subarray(0, bodyEndOf(bytes));
  const table = bytes.readUInt32LE(4) >= PAGED_FORMAT_VERSION ? pageTableOf(content) : Buffer.alloc(0);
  const sealed = Buffer.concat([content, table, Buffer.alloc(FOOTER_BYTES)]);
  const crc = crc32c(sealed.subarray(0, sealed.length - FOOTER_BYTES));
  sealed.writeUInt32LE(crc, sealed.length - FOOTER_BYTES);
  fs.writeFileSync(file, sealed);
  return { bytes: sealed.length, crc32c: crc };
}

test('large sources are stored in pieces: each reads back as written, and top-level fields read as a scan of the text finds them', () =>
  inTempDir(async (dir) => {
    const docs = piecedDocs();
    const { leaf, meta, segmentDir } = await writeFrom(dir, docs);
    const file = path.join(segmentDir, SegmentFileName.storedSource);
    const blocks = sourceBlocks(fs.readFileSync(file));
    assert.equal(blocks.filter((block) => block.headerBytes > 0).length, docs.length / 2, 'one pieced block per large doc');
    const reader = StoredSourceReader.open(file, meta.files[SegmentFileName.storedSource], docs.length);
    try {
      // Fields first (from the pieces), then whole texts, then fields again (from the assembled text).
      for (const round of ['pieces', 'whole'] as const) {
        for (let doc = 0; doc < docs.length; doc++) {
          const text = leaf.source(doc);
          if (round === 'whole') assert.deepEqual(reader.source(doc), text, `doc ${doc}`);
          const keys = keysOf(text);
          assert.deepEqual(reader.topLevelTexts(doc, keys), readTopLevelTexts(text, keys), `doc ${doc} fields (${round})`);
          assert.deepEqual(reader.topLevelTexts(doc, keys.slice(-2)), readTopLevelTexts(text, keys.slice(-2)), `doc ${doc} last field (${round})`);
        }
      }
      assert.equal(reader.topLevelTexts(9, ['a']).get('a'), '2', 'a repeated key reads as its last value');
    } finally {
      reader.close();
    }
  }));

test('pieces: every member lies in one piece, grouped pieces stay within PIECE_BYTES, longer members are pieces alone', () => {
  for (const doc of piecedDocs()) {
    const text = new TestLeaf([doc]).source(0);
    const { entries } = topLevelLayout(text);
    const cuts = pieceCuts(entries, text.length);
    assert.equal(cuts[0], 0);
    assert.equal(cuts[cuts.length - 1], text.length);
    for (let index = 1; index < cuts.length; index++) assert.ok(cuts[index]! > cuts[index - 1]!, 'no empty piece');
    const pieceOf = (offset: number): number => cuts.filter((cut) => cut <= offset).length - 1;
    for (const entry of entries) {
      const piece = pieceOf(entry.keyStart);
      assert.ok(entry.valueEnd <= cuts[piece + 1]!, `${doc.id}: member ${entry.key} spans pieces`);
      const pieceBytes = cuts[piece + 1]! - cuts[piece]!;
      if (entry.valueEnd - entry.keyStart > PIECE_BYTES) assert.ok(pieceBytes - (entry.valueEnd - entry.keyStart) <= 8, `${doc.id}: ${entry.key} shares its piece`);
      else assert.ok(pieceBytes <= PIECE_BYTES + 64, `${doc.id}: piece of ${entry.key} holds ${pieceBytes} bytes`);
    }
  }
});

test('a corrupt piece is a corrupt file naming the source file, and reading another field of the doc does not touch it', () =>
  inTempDir(async (dir) => {
    const body = 'w '.repeat(100_000);
    const { segmentDir } = await writeFrom(dir, [{ id: 'a', source: { title: 'short', body, n: 7 } }]);
    const file = path.join(segmentDir, SegmentFileName.storedSource);
    const bytes = fs.readFileSync(file);
    const [block] = sourceBlocks(bytes);
    const header = decodePiecedHeader(file, 0, bytes.subarray(block!.offset, block!.offset + block!.headerBytes), block!.bytes);
    assert.equal(header.pieceStarts.length - 1, 3, 'title, body and the rest are three pieces');
    // The body's piece claims 1000 bytes fewer than it holds (its LZ4 size prefix).
    const bodyPiece = block!.offset + header.compressedStarts[1]!;
    bytes.writeUInt32LE(bytes.readUInt32LE(bodyPiece) - 1000, bodyPiece);
    const reader = StoredSourceReader.open(file, resealed(file, bytes), 1);
    try {
      assert.deepEqual(reader.topLevelTexts(0, ['title', 'n']), new Map([['title', '"short"'], ['n', '7']]));
      const corrupt = (error: Error & { code?: string }): boolean => error.code === 'corrupt_index' && error.message.includes(file);
      assert.throws(() => reader.topLevelTexts(0, ['body']), corrupt);
      assert.throws(() => reader.source(0), corrupt);
    } finally {
      reader.close();
    }
  }));

test('a pieced block whose header does not add up is a corrupt file naming the source file', () =>
  inTempDir(async (dir) => {
    const { segmentDir } = await writeFrom(dir, [{ id: 'a', source: { title: 'short', body: 'w '.repeat(20_000) } }]);
    const file = path.join(segmentDir, SegmentFileName.storedSource);
    const pristine = fs.readFileSync(file);
    const [block] = sourceBlocks(pristine);
    // The header's first varint is the text's length: a single byte changed, the pieces no longer add up.
    for (const damage of [(bytes: Buffer) => bytes.writeUInt8(bytes[block!.offset]! ^ 0x01, block!.offset), (bytes: Buffer) => bytes.writeUInt8(0xff, block!.offset + block!.headerBytes - 1)]) {
      const bytes = Buffer.from(pristine);
      damage(bytes);
      const reader = StoredSourceReader.open(file, resealed(file, bytes), 1);
      try {
        assert.throws(
          () => reader.topLevelTexts(0, ['title']),
          (error: Error & { code?: string }) => error.code === 'corrupt_index' && error.message.includes(file) && error.message.includes('source block 0'),
        );
      } finally {
        reader.close();
      }
    }
  }));

test('a format 3 source file (no pieces, no header sizes in its index) still reads, large documents included', () =>
  inTempDir(async (dir) => {
    const leaf = new TestLeaf(piecedDocs());
    const sources = Array.from({ length: leaf.maxDoc }, (_, doc) => leaf.source(doc));
    // Laid out as the format 3 writer did: docs grouped until a block holds 16 KiB, LZ4 blocks,
    // per block only its doc count and compressed size in the index.
    const sink = new ByteSink();
    for (const char of 'TVSS') sink.writeByte(char.charCodeAt(0));
    sink.writeU32(3);
    const index: Array<[number, number]> = [];
    let pending: Buffer[] = [];
    const flush = (): void => {
      const block = new ByteSink();
      for (const source of pending) block.writeVarint(source.length);
      for (const source of pending) block.writeBytes(source);
      const compressed = lz4Compress(Buffer.from(block.toBytes()));
      sink.writeBytes(compressed);
      index.push([pending.length, compressed.length]);
      pending = [];
    };
    for (const source of sources) {
      pending.push(source);
      if (pending.reduce((sum, part) => sum + part.length, 0) >= SOURCE_BLOCK_BYTES) flush();
    }
    if (pending.length > 0) flush();
    const indexOffset = sink.length;
    sink.writeVarint(sources.length);
    sink.writeVarint(index.length);
    for (const [docs, bytes] of index) {
      sink.writeVarint(docs);
      sink.writeVarint(bytes);
    }
    sink.writeF64(indexOffset);
    sink.writeU32(0);
    const file = path.join(dir, 'source');
    const reader = StoredSourceReader.open(file, resealed(file, Buffer.from(sink.toBytes())), sources.length);
    try {
      sources.forEach((text, doc) => {
        assert.deepEqual(reader.source(doc), text, `doc ${doc}`);
        const keys = keysOf(text);
        assert.deepEqual(reader.topLevelTexts(doc, keys), readTopLevelTexts(text, keys), `doc ${doc} fields`);
      });
    } finally {
      reader.close();
    }
  }));
