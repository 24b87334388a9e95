import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { EngineError } from '../errors.ts';
import { executeQuery } from '../query/execute.ts';
import { TEST_LEAF_FIELDS } from '../query/test-corpus.fixture.ts';
import { NO_MORE_DOCS, POSTINGS_BLOCK_SIZE } from './leaf-reader.ts';
import { SegmentPostingsCursor } from './postings-cursor.ts';
import { SEGMENT_FORMAT_VERSION, SegmentFileName } from './segment-file.ts';
import { SegmentReader } from './segment-reader.ts';
import type { SegmentMeta } from './segment-writer.ts';
import { TestLeaf, generateTestDocs, type TestDoc } from './reference-leaf.fixture.ts';
import { assertLeafMatches } from './reference-leaf-assert.fixture.ts';
import { damageWithValidChecksum } from './segment-damage.fixture.ts';
import { withTempDir, writeLeaves } from './segment-dir.fixture.ts';

const INITIAL = { liveDocsGen: 0, inplaceGens: {} };


const write = writeLeaves;

/** The last docs of a term's blocks, as shallowAdvance walks them. */
function blockEnds(segment: SegmentReader, field: string, term: string): number[] {
  const cursor = segment.postings(field, term)!;
  const ends: number[] = [];
  for (let end = cursor.shallowAdvance(0); end !== NO_MORE_DOCS; end = cursor.shallowAdvance(end + 1)) ends.push(end);
  return ends;
}

/** Blocks copied as stored (`takeStoredBlock` calls) while `run` runs. */
async function countingTakes(run: () => Promise<void>): Promise<[number]> {
  const original = SegmentPostingsCursor.prototype.takeStoredBlock;
  let count = 0;
  SegmentPostingsCursor.prototype.takeStoredBlock = function (this: SegmentPostingsCursor, ...args: Parameters<typeof original>): void {
    count++;
    original.apply(this, args);
  };
  try {
    await run();
  } finally {
    SegmentPostingsCursor.prototype.takeStoredBlock = original;
  }
  return [count];
}

/** `count` docs holding the term `x` once. */
function docsWithX(count: number, prefix: string): TestDoc[] {
  return Array.from({ length: count }, (_, n) => ({ id: `${prefix}${n}`, text: { body: ['x'] } }));
}

test('a merge ends a block short before a block it copies as stored; the term reads as it was written', async () => {
  await withTempDir('trove-block-counts-', async (dir) => {
    // 299 docs with x and one without, then 400 with x: the second source's first block keeps no distance to the
    // first's last x (decoded), its next blocks line up once the block before them ends short (copied).
    const groups = [[...docsWithX(299, 'a'), { id: 'a-last', text: { body: ['y'] } }], docsWithX(400, 'b')];
    groups.flat().forEach((doc, n) => (doc.seqNo = n));
    const sources = [];
    for (const [i, group] of groups.entries()) {
      const name = `seg_00000${i + 1}`;
      sources.push(SegmentReader.open(path.join(dir, name), await write(dir, name, [new TestLeaf(group)]), INITIAL));
    }
    const merged = SegmentReader.open(path.join(dir, 'seg_000003'), await write(dir, 'seg_000003', sources), INITIAL);
    try {
      assert.equal(merged.segmentMeta.formatVersion, SEGMENT_FORMAT_VERSION);
      const ends = blockEnds(merged, 'body', 'x');
      const docs: number[] = [];
      const cursor = merged.postings('body', 'x')!;
      for (let doc = cursor.next(); doc !== NO_MORE_DOCS; doc = cursor.next()) docs.push(doc);
      const sizes = ends.map((end, i) => docs.filter((doc) => doc <= end && (i === 0 || doc > ends[i - 1]!)).length);
      // Source one: two blocks copied and 43 docs; source two's first block fills that one to 128 and leaves 43, ended short before its next blocks, copied.
      assert.deepEqual(sizes, [128, 128, 128, 43, 128, 128, 16]);
      // The same docs written at once, in blocks of 128.
      const direct = SegmentReader.open(path.join(dir, 'seg_000004'), await write(dir, 'seg_000004', [new TestLeaf([...groups[0]!, ...groups[1]!])]), INITIAL);
      // The next merge copies the full blocks again and decodes the short one.
      const again = SegmentReader.open(path.join(dir, 'seg_000005'), await write(dir, 'seg_000005', [merged]), INITIAL);
      try {
        assertLeafMatches(merged, direct, 'bounding');
        assert.deepEqual(blockEnds(again, 'body', 'x'), ends);
        assertLeafMatches(again, direct, 'bounding');
      } finally {
        direct.close();
        again.close();
      }
    } finally {
      merged.close();
      for (const source of sources) source.close();
    }
  });
});

test('a copied block whose first doc follows the term at another distance gets its first doc delta rewritten, when it fits the block', async () => {
  await withTempDir('trove-block-counts-', async (dir) => {
    // x in 299 docs, not in the last; then in every other doc of 400: gaps of 1 (one bit), the first block's first gap 0 there and 1 merged.
    const groups: TestDoc[][] = [
      [...docsWithX(299, 'a'), { id: 'a-last', text: { body: ['y'] } }],
      Array.from({ length: 400 }, (_, n) => ({ id: `b${n}`, text: { body: [n % 2 === 0 ? 'x' : `only${n}`] } })),
    ];
    groups.flat().forEach((doc, n) => (doc.seqNo = n));
    const sources: SegmentReader[] = [];
    for (const [i, group] of groups.entries()) {
      const name = `seg_00000${i + 1}`;
      sources.push(SegmentReader.open(path.join(dir, name), await write(dir, name, [new TestLeaf(group)]), INITIAL));
    }
    const direct = SegmentReader.open(path.join(dir, 'seg_000003'), await write(dir, 'seg_000003', [new TestLeaf(groups.flat())]), INITIAL);
    let merged: SegmentReader | null = null;
    try {
      const [stored] = await countingTakes(async () => {
        merged = SegmentReader.open(path.join(dir, 'seg_000004'), await write(dir, 'seg_000004', sources), INITIAL);
      });
      // Source one's two full blocks, and source two's first.
      assert.equal(stored, 3);
      const ends = blockEnds(merged!, 'body', 'x');
      assert.equal(ends.length, 5, `blocks of 128, 128, 43, 128 and 72 docs (${ends})`);
      assertLeafMatches(merged!, direct, 'bounding');
    } finally {
      (merged as SegmentReader | null)?.close();
      direct.close();
      for (const source of sources) source.close();
    }
  });
});

test('a pinned format 7 segment (blocks of 128 docs but the last) answers as the same docs written in the current format, and merges into it', async () => {
  await withTempDir('trove-block-counts-', async (dir) => {
    // Written by the format 7 writer from generateTestDocs(600, 71), `views` inplace.
    const pinned = new URL('./fixtures/format-7/', import.meta.url);
    fs.cpSync(new URL('seg_000001', pinned), path.join(dir, 'seg_000001'), { recursive: true });
    const meta = JSON.parse(fs.readFileSync(new URL('segment-meta.json', pinned), 'utf8')) as SegmentMeta;
    assert.equal(meta.formatVersion, 7);
    const docs = generateTestDocs(600, 71);
    const leaf = new TestLeaf(docs, ['views']);
    const old = SegmentReader.open(path.join(dir, 'seg_000001'), meta, INITIAL);
    const current = SegmentReader.open(path.join(dir, 'seg_000002'), await write(dir, 'seg_000002', [leaf]), INITIAL);
    try {
      assertLeafMatches(old, leaf);
      assert.ok(old.postings('body', 'w0')!.docFreq > 2 * POSTINGS_BLOCK_SIZE, 'w0 has several blocks');
      for (const query of [{ match: { body: 'w0' } }, { match: { body: 'w0 w2 w7 w30' } }, { match_phrase: { body: 'w0 w1' } }, { match: { title: 'w0 w3' } }]) {
        const request = { query, from: 0, size: 10, trackTotalHits: true };
        assert.deepEqual(executeQuery([old], TEST_LEAF_FIELDS, request).hits, executeQuery([current], TEST_LEAF_FIELDS, request).hits, JSON.stringify(query));
      }
      // With a current segment after it, the format 7 blocks are copied and the blocks before them end short.
      const merged = SegmentReader.open(path.join(dir, 'seg_000003'), await write(dir, 'seg_000003', [current, old]), INITIAL);
      try {
        assert.equal(merged.segmentMeta.formatVersion, SEGMENT_FORMAT_VERSION);
        const renamed = docs.map((doc) => ({ ...doc }));
        assertLeafMatches(merged, new TestLeaf([...docs, ...renamed], ['views']), 'bounding');
      } finally {
        merged.close();
      }
    } finally {
      old.close();
      current.close();
    }
  });
});

test('a block count or a block doc count that does not add up is corrupt_index naming postings.doc', async () => {
  await withTempDir('trove-block-counts-', async (dir) => {
    const skipVarint = (body: Buffer, position: number): number => {
      while (body[position]! >= 0x80) position++;
      return position + 1;
    };
    // One term of 300 docs: varint block count (3), then the first entry's last doc delta and its docs short of 128 (0).
    const cases: [string, (body: Buffer) => void][] = [
      ['fewer blocks than the docs fill', (body) => body.writeUInt8(2, 0)],
      ['more blocks than docs', (body) => body.writeUInt8(0x7f, 0)],
      ['a block short by more than its size', (body) => body.writeUInt8(0x7f, skipVarint(body, 1))],
      ['counts that do not add up to the docs', (body) => body.writeUInt8(1, skipVarint(body, 1))],
    ];
    for (const [i, [label, damage]] of cases.entries()) {
      const name = `seg_00000${i + 1}`;
      const meta = await write(dir, name, [new TestLeaf(docsWithX(300, 'd'))]);
      const segmentDir = path.join(dir, name);
      const damaged = damageWithValidChecksum(segmentDir, meta, SegmentFileName.postings, (body) => {
        assert.equal(body[0], 3, 'three blocks');
        assert.equal(body[skipVarint(body, 1)], 0, 'the first block is full');
        damage(body);
        return body;
      });
      const segment = SegmentReader.open(segmentDir, damaged, INITIAL);
      try {
        assert.throws(
          () => segment.postings('body', 'x'),
          (error: unknown) => error instanceof EngineError && error.code === 'corrupt_index' && error.message.includes(path.join(segmentDir, SegmentFileName.postings)),
          label,
        );
      } finally {
        segment.close();
      }
    }
  });
});
