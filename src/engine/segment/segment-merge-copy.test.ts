import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { EngineError } from '../errors.ts';
import type { LeafReader, PostingsCursor, TermsIterator } from './leaf-reader.ts';
import { SegmentPostingsCursor } from './postings-cursor.ts';
import { HEADER_BYTES, SegmentFileName } from './segment-file.ts';
import { SegmentReader } from './segment-reader.ts';
import type { SegmentMeta } from './segment-writer.ts';
import { StoredSourceWriter } from './stored-source.ts';
import { TestLeaf, generateTestDocs, seededRandom, type TestDoc } from './reference-leaf.fixture.ts';
import { assertLeafMatches } from './reference-leaf-assert.fixture.ts';
import { damageWithValidChecksum } from './segment-damage.fixture.ts';
import { withTempDir, writeLeaves } from './segment-dir.fixture.ts';

const INITIAL = { liveDocsGen: 0, inplaceGens: {} };


function write(dir: string, name: string, leaves: LeafReader[]): Promise<SegmentMeta> {
  return writeLeaves(dir, name, leaves, ['views']);
}

async function merge(dir: string, name: string, leaves: LeafReader[]): Promise<SegmentReader> {
  return SegmentReader.open(path.join(dir, name), await write(dir, name, leaves), INITIAL);
}

/** Test docs, every seventh with a source big enough to be pieced (a block of its own). */
function docsWithBigSources(count: number, seed: number, prefix: string): TestDoc[] {
  return generateTestDocs(count, seed, prefix).map((doc, n) =>
    n % 7 === 3 ? { ...doc, source: { n, first: 'a'.repeat(9000 + n), second: 'b'.repeat(9000), third: { n } } } : doc,
  );
}

/** Counts calls of prototype methods while `run` runs. */
async function countingCalls(methods: [object, string][], run: () => Promise<void>): Promise<number[]> {
  const counts = methods.map(() => 0);
  const originals = methods.map(([prototype, method]) => (prototype as Record<string, (...args: unknown[]) => unknown>)[method]!);
  methods.forEach(([prototype, method], i) => {
    (prototype as Record<string, unknown>)[method] = function (this: unknown, ...args: unknown[]): unknown {
      counts[i]!++;
      return originals[i]!.apply(this, args);
    };
  });
  try {
    await run();
  } finally {
    methods.forEach(([prototype, method], i) => ((prototype as Record<string, unknown>)[method] = originals[i]));
  }
  return counts;
}

/** Three segments: one without deletions, one with deletions in its first docs only, one with deletions all over. */
async function buildSources(dir: string): Promise<{ segments: SegmentReader[]; docs: TestDoc[][] }> {
  const docs = [docsWithBigSources(500, 21, 'a'), docsWithBigSources(400, 22, 'b'), generateTestDocs(300, 23, 'c')];
  const segments: SegmentReader[] = [];
  const random = seededRandom(7);
  for (const [index, group] of docs.entries()) {
    const name = `seg_00000${index + 1}`;
    const segment = SegmentReader.open(path.join(dir, name), await write(dir, name, [new TestLeaf(group, ['views'])]), INITIAL);
    segments.push(segment);
    group.forEach((doc, n) => {
      if ((index === 1 && n < 40 && n % 3 === 0) || (index === 2 && random() < 0.2)) {
        assert.equal(segment.deleteDoc(n), true);
        doc.deleted = true;
      }
    });
  }
  return { segments, docs };
}

test('a merge copies whole source blocks and encoded postings, with and without deletions, and reads back doc by doc and term by term', async () => {
  await withTempDir('trove-merge-copy-', async (dir) => {
    const { segments, docs } = await buildSources(dir);
    const fresh = generateTestDocs(120, 24, 'd');
    const mutable = new TestLeaf(fresh, ['views']);
    mutable.deleteDoc(9);
    fresh[9]!.deleted = true;
    let merged: SegmentReader | null = null;
    try {
      const methods: [object, string][] = [
        // Each source block copied as stored, whole or in a run read at once, is recorded once.
        [StoredSourceWriter.prototype, 'recordStoredBlock'],
        [SegmentPostingsCursor.prototype, 'nextEncodedBlock'],
        [SegmentPostingsCursor.prototype, 'takeStoredBlock'],
      ];
      const [copiedBlocks, encodedBlocks, storedBlocks] = await countingCalls(methods, async () => {
        merged = await merge(dir, 'seg_000004', [...segments, mutable]);
      });
      const blocks = segments.map((segment) => segment.storedSourceFile().blockCount);
      // Every block of the first segment, some of the second; none of the third (20% of its docs deleted).
      assert.ok(copiedBlocks! > blocks[0]! && copiedBlocks! < blocks[0]! + blocks[1]!, `${copiedBlocks} blocks copied of ${blocks}`);
      assert.ok(encodedBlocks! > 1000, `${encodedBlocks} postings blocks copied encoded`);
      assert.ok(storedBlocks! > 4, `${storedBlocks} postings blocks copied as stored`);
      const kept = [...docs.flat(), ...fresh].filter((doc) => !doc.deleted);
      // Blocks copied as stored end the blocks before them short: bounds are checked against the docs they span.
      assertLeafMatches(merged!, new TestLeaf(kept, ['views']), 'bounding');
      // The merged segment's own blocks are copied again by the next merge.
      const again = await merge(dir, 'seg_000005', [merged!]);
      try {
        assertLeafMatches(again, new TestLeaf(kept, ['views']), 'bounding');
      } finally {
        again.close();
      }
    } finally {
      (merged as SegmentReader | null)?.close();
      for (const segment of segments) segment.close();
    }
  });
});

/** A view of a segment whose postings are not segment cursors, so that the writer decodes and re-encodes them. */
function decodingView(segment: SegmentReader): LeafReader {
  const view = Object.create(segment) as SegmentReader;
  const wrap = (cursor: PostingsCursor): PostingsCursor => ({
    get doc() {
      return cursor.doc;
    },
    docFreq: cursor.docFreq,
    maxFreq: cursor.maxFreq,
    minNorm: cursor.minNorm,
    next: () => cursor.next(),
    advance: (target) => cursor.advance(target),
    freq: () => cursor.freq(),
    positions: () => cursor.positions(),
    shallowAdvance: (target) => cursor.shallowAdvance(target),
    blockMaxFreq: () => cursor.blockMaxFreq(),
    blockMinNorm: () => cursor.blockMinNorm(),
  });
  view.terms = (field: string, from?: string): TermsIterator => {
    const terms = segment.terms(field, from);
    return { next: () => terms.next(), docFreq: () => terms.docFreq(), postings: () => wrap(terms.postings()) };
  };
  return view;
}

test('postings written from encoded and stored blocks read as those written by decoding every posting; positions and norms equal byte for byte', async () => {
  await withTempDir('trove-merge-copy-', async (dir) => {
    const { segments } = await buildSources(dir);
    try {
      const copied = await merge(dir, 'seg_000004', segments);
      const decoded = await merge(dir, 'seg_000005', segments.map(decodingView));
      try {
        // Blocks copied as stored end the blocks before them short, so only postings.doc (and the term offsets into it) differ.
        assertLeafMatches(copied, decoded, 'bounding');
      } finally {
        copied.close();
        decoded.close();
      }
      const bytes = (name: string, file: string): Buffer => fs.readFileSync(path.join(dir, name, file));
      for (const file of [SegmentFileName.positions, SegmentFileName.norms]) {
        assert.ok(bytes('seg_000004', file).equals(bytes('seg_000005', file)), `${file} differs`);
      }
      assert.ok(bytes('seg_000004', SegmentFileName.postings).length > bytes('seg_000005', SegmentFileName.postings).length, 'the short blocks cost bytes');
    } finally {
      for (const segment of segments) segment.close();
    }
  });
});

/** Merges the segment at `segmentDir` with another leaf; the error it throws, if any. */
async function mergeError(dir: string, segmentDir: string, meta: SegmentMeta): Promise<unknown> {
  const segment = SegmentReader.open(segmentDir, meta, INITIAL);
  try {
    await write(dir, 'seg_000009', [segment, new TestLeaf(generateTestDocs(20, 3), ['views'])]);
    return null;
  } catch (error) {
    return error;
  } finally {
    segment.close();
  }
}

test('a corrupt block met while copying fails the merge with corrupt_index naming the source file', async () => {
  await withTempDir('trove-merge-copy-', async (dir) => {
    // One term in ten docs, one position each (layout as in postings-positions.test.ts); sources
    // that do not compress much, so that the source file has pages past the first, read only by the copy.
    const random = seededRandom(5);
    const noise = (): string => Array.from({ length: 8000 }, () => Math.floor(random() * 16).toString(16)).join('');
    const docs: TestDoc[] = Array.from({ length: 10 }, (_, n) => ({ id: `d${n}`, text: { body: ['x'] }, source: { n, noise: noise() } }));
    const meta = await write(dir, 'seg_000001', [new TestLeaf(docs)]);
    const segmentDir = path.join(dir, 'seg_000001');
    const pristine = new Map(fs.readdirSync(segmentDir).map((file) => [file, fs.readFileSync(path.join(segmentDir, file))]));
    const restore = (): void => {
      for (const [file, bytes] of pristine) fs.writeFileSync(path.join(segmentDir, file), bytes);
    };
    assert.equal(await mergeError(dir, segmentDir, meta), null);
    fs.rmSync(path.join(dir, 'seg_000009'), { recursive: true });

    const cases: { file: string; names?: string; damage: (body: Buffer) => Buffer; checksums: boolean }[] = [
      // Position-length bits of 31: the packed lengths run past the block.
      { file: SegmentFileName.postings, damage: (body) => (body.writeUInt8(31, 3), body), checksums: true },
      // The last doc's position gains a continuation bit: its bytes no longer hold one varint.
      { file: SegmentFileName.positions, damage: (body) => (body.writeUInt8(0x80 | body[body.length - 1]!, body.length - 1), body), checksums: true },
      // The first doc's position byte length (packed at one bit a doc) drops to 0: the bytes to copy no longer hold its freq.
      { file: SegmentFileName.postings, names: SegmentFileName.positions, damage: (body) => (body.writeUInt8(body[4]! & 0xfe, 4), body), checksums: true },
      // A flipped byte in the compressed source block: its page fails its checksum when the copy reads it.
      { file: SegmentFileName.storedSource, damage: (body) => (body.writeUInt8(body[4]! ^ 0x20, 4), body), checksums: false },
    ];
    for (const { file, names, damage, checksums } of cases) {
      let damagedMeta = meta;
      if (checksums) {
        damagedMeta = damageWithValidChecksum(segmentDir, meta, file, damage);
      } else {
        const filePath = path.join(segmentDir, file);
        const bytes = fs.readFileSync(filePath);
        damage(bytes.subarray(HEADER_BYTES));
        fs.writeFileSync(filePath, bytes);
      }
      const error = await mergeError(dir, segmentDir, damagedMeta);
      assert.ok(error instanceof EngineError, `${file}: ${String(error)}`);
      assert.equal(error.code, 'corrupt_index', error.message);
      assert.ok(error.message.includes(path.join(segmentDir, names ?? file)), error.message);
      assert.ok(!fs.existsSync(path.join(dir, 'seg_000009')) && !fs.existsSync(path.join(dir, 'seg_000009.tmp')));
      restore();
    }
  });
});

test('a malformed block copied as it is stored fails the merge with corrupt_index naming postings.doc', async () => {
  await withTempDir('trove-merge-copy-', async (dir) => {
    // One term in 300 docs, one position each: three blocks (128, 128, 44 docs) behind the varint
    // block count and their skip entries (varints: last doc delta, docs short of 128, doc bytes,
    // position bytes, max freq; then the min norm byte and the varint count of further (freq, norm)
    // pairs, none here: every doc has freq 1 and length 1).
    const docs: TestDoc[] = Array.from({ length: 300 }, (_, n) => ({ id: `d${n}`, text: { body: ['x'] } }));
    const meta = await write(dir, 'seg_000001', [new TestLeaf(docs)]);
    const segmentDir = path.join(dir, 'seg_000001');
    const skipVarint = (body: Buffer, position: number): number => {
      while (body[position]! >= 0x80) position++;
      return position + 1;
    };
    const damagedMeta = damageWithValidChecksum(segmentDir, meta, SegmentFileName.postings, (body) => {
      let position = skipVarint(body, 0);
      for (let block = 0; block < 3; block++) {
        for (let varint = 0; varint < 5; varint++) position = skipVarint(body, position);
        position++;
        position = skipVarint(body, position);
      }
      // The first block's freq width (after its doc delta width, which the copy reads first): 40 bits cannot be.
      body.writeUInt8(40, position + 1);
      return body;
    });
    let error: unknown = null;
    const [stored, decoded] = await countingCalls(
      [
        [SegmentPostingsCursor.prototype, 'takeStoredBlock'],
        [SegmentPostingsCursor.prototype, 'nextEncodedBlock'],
      ],
      async () => {
        error = await mergeError(dir, segmentDir, damagedMeta);
      },
    );
    assert.deepEqual([stored, decoded], [1, 0], 'the block is met by the stored copy');
    assert.ok(error instanceof EngineError, String(error));
    assert.equal(error.code, 'corrupt_index', error.message);
    assert.ok(error.message.includes(path.join(segmentDir, SegmentFileName.postings)) && error.message.includes('block 0'), error.message);
  });
});
