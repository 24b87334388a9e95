import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { EngineError } from '../errors.ts';
import { NO_MORE_DOCS, type PostingsCursor } from './leaf-reader.ts';
import { SEGMENT_FORMAT_VERSION, SegmentFileName } from './segment-file.ts';
import { SegmentReader } from './segment-reader.ts';
import { buildDocMaps, writeSegment, type SegmentMeta } from './segment-writer.ts';
import { TEST_FIELDS, TestLeaf, generateTestDocs, seededRandom, type TestDoc } from './reference-leaf.fixture.ts';
import { assertLeafMatches } from './reference-leaf-assert.fixture.ts';
import { damageWithValidChecksum } from './segment-damage.fixture.ts';

const INITIAL = { liveDocsGen: 0, inplaceGens: {} };

async function withTempDir(run: (dir: string) => Promise<void>): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'trove-positions-'));
  try {
    await run(dir);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** Writes a leaf whose docs hold only the `body` text field. */
async function writeBodyLeaf(dir: string, leaf: TestLeaf): Promise<SegmentMeta> {
  const [docMap] = buildDocMaps([leaf]);
  const fields = TEST_FIELDS.filter((field) => field.name === 'body');
  return writeSegment({ dir: path.join(dir, 'seg_000001'), name: 'seg_000001', sources: [{ reader: leaf, docMap: docMap! }], fields, inplaceFields: [] });
}

/** Advances both cursors to random targets, reading positions at some docs only; they must agree. */
function assertSamePositionsWhileSkipping(actual: PostingsCursor, expected: PostingsCursor, seed: number, label: string): number {
  const random = seededRandom(seed);
  let compared = 0;
  let doc = -1;
  for (;;) {
    const target = doc + 1 + Math.floor(random() * 6);
    const stepByNext = random() < 0.3;
    doc = stepByNext ? expected.next() : expected.advance(target);
    assert.equal(stepByNext ? actual.next() : actual.advance(target), doc, `${label}: doc`);
    if (doc === NO_MORE_DOCS) return compared;
    if (random() < 0.4) continue;
    if (random() < 0.5) assert.equal(actual.freq(), expected.freq(), `${label}: freq of ${doc}`);
    assert.deepEqual(Array.from(actual.positions()), Array.from(expected.positions()), `${label}: positions of ${doc}`);
    compared++;
  }
}

test('positions round-trip through per-doc byte lengths: multi-byte deltas, long docs, skipped docs', async () => {
  await withTempDir(async (dir) => {
    const random = seededRandom(99);
    const docs: TestDoc[] = Array.from({ length: 700 }, (_, n) => {
      // Gaps past 127 and 16383 make two- and three-byte varints; some docs hold thousands of tokens.
      const length = n % 97 === 0 ? 3000 : 1 + Math.floor(random() * 30);
      const body = Array.from({ length }, (_unused, i) => (i % (1 + (n % 5)) === 0 ? 'hit' : `pad${i % 3}`));
      if (n % 11 === 0) body.push(...Array.from({ length: 200 + (n % 17000) }, () => 'gap'), 'hit');
      return { id: `d${n}`, text: { body } };
    });
    const leaf = new TestLeaf(docs);
    const meta = await writeBodyLeaf(dir, leaf);
    assert.equal(meta.formatVersion, SEGMENT_FORMAT_VERSION);
    const segment = SegmentReader.open(path.join(dir, 'seg_000001'), meta, INITIAL);
    try {
      assertLeafMatches(segment, leaf);
      for (const term of ['hit', 'pad0', 'pad2', 'gap']) {
        for (let seed = 1; seed <= 4; seed++) {
          const compared = assertSamePositionsWhileSkipping(segment.postings('body', term)!, leaf.postings('body', term)!, seed, `${term}/${seed}`);
          assert.ok(compared > 10, `${term}: the walk should read positions of some docs (${compared})`);
        }
      }
    } finally {
      segment.close();
    }
  });
});

test('a pinned format 3 segment (positions without byte lengths) reads back and merges into the current format', async () => {
  await withTempDir(async (dir) => {
    // Written by the format 3 writer from generateTestDocs(300, 43) with `views` inplace.
    const pinned = new URL('./fixtures/format-3/', import.meta.url);
    fs.cpSync(new URL('seg_000001', pinned), path.join(dir, 'seg_000001'), { recursive: true });
    const meta = JSON.parse(fs.readFileSync(new URL('segment-meta.json', pinned), 'utf8')) as SegmentMeta;
    assert.equal(meta.formatVersion, 3);
    const leaf = new TestLeaf(generateTestDocs(300, 43), ['views']);
    const old = SegmentReader.open(path.join(dir, 'seg_000001'), meta, INITIAL);
    try {
      assertLeafMatches(old, leaf);
      assert.ok(assertSamePositionsWhileSkipping(old.postings('body', 'w0')!, leaf.postings('body', 'w0')!, 5, 'format 3') > 10);
      const [docMap] = buildDocMaps([old]);
      const mergedMeta = await writeSegment({ dir: path.join(dir, 'seg_000002'), name: 'seg_000002', sources: [{ reader: old, docMap: docMap! }], fields: TEST_FIELDS, inplaceFields: [] });
      assert.equal(mergedMeta.formatVersion, SEGMENT_FORMAT_VERSION);
      const merged = SegmentReader.open(path.join(dir, 'seg_000002'), mergedMeta, INITIAL);
      try {
        assertLeafMatches(merged, leaf);
        assert.ok(assertSamePositionsWhileSkipping(merged.postings('body', 'w0')!, leaf.postings('body', 'w0')!, 5, 'merged') > 10);
      } finally {
        merged.close();
      }
    } finally {
      old.close();
    }
  });
});

/** Reads the positions of every doc of body:x; the error it throws, if any. */
function readAllPositions(segmentDir: string, meta: SegmentMeta): unknown {
  const segment = SegmentReader.open(segmentDir, meta, INITIAL);
  try {
    const cursor = segment.postings('body', 'x')!;
    while (cursor.next() !== NO_MORE_DOCS) cursor.positions();
    return null;
  } catch (error) {
    return error;
  } finally {
    segment.close();
  }
}

test('malformed position lengths or positions fail with corrupt_index naming the file', async () => {
  await withTempDir(async (dir) => {
    // One term in ten docs, one position each: postings.doc holds `varint lastDoc`, docBits,
    // freqBits (both 0, so no packed bytes), then the position-length bits and their packed values.
    const docs: TestDoc[] = Array.from({ length: 10 }, (_, n) => ({ id: `d${n}`, text: { body: ['x'] } }));
    const meta = await writeBodyLeaf(dir, new TestLeaf(docs));
    const segmentDir = path.join(dir, 'seg_000001');
    const pristine = new Map(fs.readdirSync(segmentDir).map((file) => [file, fs.readFileSync(path.join(segmentDir, file))]));
    const restore = (): void => {
      for (const [file, bytes] of pristine) fs.writeFileSync(path.join(segmentDir, file), bytes);
    };
    assert.equal(readAllPositions(segmentDir, meta), null);

    const cases: { file: string; damage: (body: Buffer) => Buffer }[] = [
      // Position-length bits of 31: the packed lengths would run past the end of postings.doc.
      { file: SegmentFileName.postings, damage: (body) => (body.writeUInt8(31, 3), body) },
      // The last doc's position gains a continuation bit: its varint runs past its byte length.
      { file: SegmentFileName.positions, damage: (body) => (body.writeUInt8(0x80 | body[body.length - 1]!, body.length - 1), body) },
      // Half of postings.pos is gone: the lengths point past the end of the data.
      { file: SegmentFileName.positions, damage: (body) => body.subarray(0, body.length >> 1) },
    ];
    for (const { file, damage } of cases) {
      const damagedMeta = damageWithValidChecksum(segmentDir, meta, file, damage);
      const error = readAllPositions(segmentDir, damagedMeta);
      assert.ok(error instanceof EngineError, `${file}: ${String(error)}`);
      assert.equal(error.code, 'corrupt_index');
      assert.ok(error.message.includes(path.join(segmentDir, file)), error.message);
      restore();
    }
    assert.equal(readAllPositions(segmentDir, meta), null);
  });
});
