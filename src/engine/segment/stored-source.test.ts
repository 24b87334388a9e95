import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { SegmentReader } from './segment-reader.ts';
import { buildDocMaps, writeSegment } from './segment-writer.ts';
import { FOOTER_BYTES, HEADER_BYTES, SEGMENT_FORMAT_VERSION, SegmentFileName } from './segment-file.ts';
import { crc32c } from '../directory/checksum.ts';
import { TestLeaf, seededRandom, type TestDoc } from './reference-leaf.fixture.ts';

function sourcesDocs(count: number): TestDoc[] {
  const random = seededRandom(3);
  return Array.from({ length: count }, (_, n) => {
    const words = Array.from({ length: Math.floor(random() * (n % 50 === 0 ? 6000 : 80)) }, () => `w${Math.floor(random() * 500)}`);
    return { id: `s${n}`, source: n % 97 === 0 ? {} : { n, text: words.join(' '), nested: { unicode: 'été ✓ 𝄞', list: [n, null, true] } } };
  });
}

async function writeFrom(dir: string, docs: TestDoc[]) {
  const leaf = new TestLeaf(docs);
  const [docMap] = buildDocMaps([leaf], true);
  const segmentDir = path.join(dir, 'seg_000001');
  const meta = await writeSegment({ dir: segmentDir, name: 'seg_000001', sources: [{ reader: leaf, docMap: docMap! }], fields: [], inplaceFields: [] });
  return { leaf, meta, segmentDir };
}

test('LZ4 source blocks read back every document as written, small, empty and larger than a block', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'trove-source-'));
  try {
    const { leaf, meta, segmentDir } = await writeFrom(dir, sourcesDocs(700));
    assert.equal(fs.readFileSync(path.join(segmentDir, SegmentFileName.storedSource)).readUInt32LE(4), SEGMENT_FORMAT_VERSION);
    const segment = SegmentReader.open(segmentDir, meta, { liveDocsGen: 0, inplaceGens: {} });
    try {
      for (let doc = 699; doc >= 0; doc -= 3) assert.deepEqual(segment.source(doc), leaf.source(doc), `doc ${doc}`);
      for (let doc = 0; doc < 700; doc++) assert.deepEqual(segment.source(doc), leaf.source(doc), `doc ${doc}`);
    } finally {
      segment.close();
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('a source block that does not decompress is a corrupt file naming the source file', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'trove-source-'));
  try {
    const { meta, segmentDir } = await writeFrom(dir, sourcesDocs(100));
    const file = path.join(segmentDir, SegmentFileName.storedSource);
    const bytes = fs.readFileSync(file);
    // The first block starts after the header with its uncompressed size (u32): claim 1000 bytes
    // fewer, then give the file a valid checksum so that only the block decoding can notice.
    bytes.writeUInt32LE(bytes.readUInt32LE(HEADER_BYTES) - 1000, HEADER_BYTES);
    const crc = crc32c(bytes.subarray(0, bytes.length - FOOTER_BYTES));
    bytes.writeUInt32LE(crc, bytes.length - FOOTER_BYTES);
    fs.writeFileSync(file, bytes);
    const files = { ...meta.files, [SegmentFileName.storedSource]: { bytes: bytes.length, crc32c: crc } };
    const segment = SegmentReader.open(segmentDir, { ...meta, files }, { liveDocsGen: 0, inplaceGens: {} });
    try {
      assert.throws(
        () => segment.source(0),
        (error: Error & { code?: string }) => error.code === 'corrupt_index' && error.message.includes(file),
      );
    } finally {
      segment.close();
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
