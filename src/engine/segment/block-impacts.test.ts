import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { EngineError } from '../errors.ts';
import { Bm25Scoring } from '../query/bm25.ts';
import { executeQuery } from '../query/execute.ts';
import { TEST_LEAF_FIELDS } from '../query/test-corpus.fixture.ts';
import { ByteSink } from './byte-io.ts';
import { ImpactList, ImpactsBuilder, MAX_BLOCK_IMPACTS, readImpacts, skipImpacts, writeImpacts } from './block-impacts.ts';
import { NO_MORE_DOCS, POSTINGS_BLOCK_SIZE } from './leaf-reader.ts';
import { SEGMENT_FORMAT_VERSION, SegmentFileName } from './segment-file.ts';
import { SegmentReader } from './segment-reader.ts';
import { buildDocMaps, writeSegment, type SegmentMeta } from './segment-writer.ts';
import { TEST_FIELDS, TestLeaf, generateTestDocs, seededRandom, type TestDoc } from './reference-leaf.fixture.ts';
import { assertLeafMatches } from './reference-leaf-assert.fixture.ts';
import { damageWithValidChecksum } from './segment-damage.fixture.ts';
import { withTempDir, writeLeaves } from './segment-dir.fixture.ts';

const INITIAL = { liveDocsGen: 0, inplaceGens: {} };


const write = writeLeaves;

/** The pairs no other pair dominates (a freq at least as high with a norm at least as low), by brute force. */
function frontier(freqs: number[], norms: number[]): [number, number][] {
  const pairs: [number, number][] = [];
  for (let i = 0; i < freqs.length; i++) {
    const dominated = freqs.some((freq, j) => freq >= freqs[i]! && norms[j]! <= norms[i]! && (freq > freqs[i]! || norms[j]! < norms[i]!));
    if (!dominated && !pairs.some(([freq, norm]) => freq === freqs[i] && norm === norms[i])) pairs.push([freqs[i]!, norms[i]!]);
  }
  return pairs.sort((a, b) => a[0] - b[0]);
}

/** Computes a block's pairs from docs 0 .. n - 1 with these freqs and norms. */
function computed(freqs: number[], norms: number[]): [number, number][] {
  const builder = new ImpactsBuilder();
  const count = builder.compute(Int32Array.from(freqs, (_, i) => i), Int32Array.from(freqs), freqs.length, Uint8Array.from(norms));
  return Array.from({ length: count }, (_, i) => [builder.freqs[i]!, builder.norms[i]!]);
}

/** Encodes pairs and decodes them back; also checks that decoding, and stepping over them, consume exactly the bytes written. */
function roundTrip(pairs: [number, number][]): [number, number][] {
  const sink = new ByteSink(64);
  sink.writeByte(0xee);
  writeImpacts(sink, Int32Array.from(pairs, (pair) => pair[0]), Uint8Array.from(pairs, (pair) => pair[1]), 0, pairs.length);
  const bytes = new Uint8Array(sink.length + 8);
  let offset = 0;
  for (const part of sink.parts()) {
    bytes.set(part, offset);
    offset += part.length;
  }
  const out = new ImpactList(1);
  const end = readImpacts(bytes, 1, pairs[pairs.length - 1]![0], pairs[0]![1], out);
  assert.equal(end, sink.length, 'decoding ends where the pairs end');
  assert.equal(skipImpacts(bytes, 1), sink.length, 'stepping over them too');
  return Array.from({ length: out.size }, (_, i) => [out.freqs[i]!, out.norms[i]!]);
}

test('impacts: a block keeps its competitive (freq, norm) pairs, and they round-trip: none, one, several, the most', () => {
  assert.deepEqual(computed([], []), []);
  assert.deepEqual(computed([1, 1, 1], [7, 7, 7]), [[1, 7]]);
  // The longest doc has the highest freq, the shortest the lowest: every doc is competitive.
  assert.deepEqual(computed([3, 1, 2, 9], [20, 4, 11, 200]), [[1, 4], [2, 11], [3, 20], [9, 200]]);
  // (2, 30) is dominated by (5, 10); (5, 12) by (5, 10).
  assert.deepEqual(computed([2, 5, 1, 5], [30, 10, 3, 12]), [[1, 3], [5, 10]]);
  for (const pairs of [[[1, 0]], [[4, 255]], [[1, 0], [300, 255]], [[1, 3], [2, 4], [3, 5], [70_000, 6], [70_001, 255]]] as [number, number][][]) {
    assert.deepEqual(roundTrip(pairs), pairs);
  }
  const most = Array.from({ length: MAX_BLOCK_IMPACTS }, (_, i): [number, number] => [1 + i * 40, 3 + i * 20]);
  assert.deepEqual(roundTrip(most), most);
});

test('impacts: random blocks are the exact frontier up to the cap, and past it every doc stays bounded by a pair', () => {
  const random = seededRandom(17);
  const scoring = new Bm25Scoring(1, 2, 24, true);
  let capped = 0;
  for (let round = 0; round < 400; round++) {
    const count = 1 + Math.floor(random() * POSTINGS_BLOCK_SIZE);
    const spread = round % 2 === 0 ? 4 : 60;
    const norms = Array.from({ length: count }, () => Math.floor(random() * 256));
    const freqs = norms.map((norm) => 1 + Math.floor(random() * spread * (1 + norm / 64)));
    const exact = frontier(freqs, norms);
    const pairs = computed(freqs, norms);
    assert.deepEqual(roundTrip(pairs), pairs);
    if (exact.length <= MAX_BLOCK_IMPACTS) {
      assert.deepEqual(pairs, exact, `round ${round}`);
      continue;
    }
    capped++;
    assert.equal(pairs.length, MAX_BLOCK_IMPACTS);
    for (let i = 1; i < pairs.length; i++) assert.ok(pairs[i]![0] > pairs[i - 1]![0] && pairs[i]![1] > pairs[i - 1]![1], `round ${round}: ascending`);
    const bound = Math.max(...pairs.map(([freq, norm]) => scoring.bound(freq, norm)));
    for (let i = 0; i < count; i++) {
      assert.ok(pairs.some(([freq, norm]) => freq >= freqs[i]! && norm <= norms[i]!), `round ${round}: doc ${i} is bounded by a pair`);
      assert.ok(scoring.score(freqs[i]!, norms[i]!) <= bound, `round ${round}: doc ${i} scores below the bound`);
    }
    assert.ok(bound <= scoring.bound(Math.max(...freqs), Math.min(...norms)), 'no looser than (max freq, min norm)');
  }
  assert.ok(capped > 20, `some blocks must need the cap (${capped})`);
});

test('impacts: a builder reused from block to block finds what a fresh one finds, and a field without norms has one pair', () => {
  const random = seededRandom(29);
  const reused = new ImpactsBuilder();
  for (let round = 0; round < 200; round++) {
    const count = round % 7 === 0 ? 0 : 1 + Math.floor(random() * POSTINGS_BLOCK_SIZE);
    const low = Math.floor(random() * 256);
    const norms = Array.from({ length: count }, () => Math.min(255, low + Math.floor(random() * (round % 3 === 0 ? 4 : 256))));
    const freqs = norms.map(() => 1 + Math.floor(random() * 40));
    const size = reused.compute(Int32Array.from(freqs, (_, i) => i), Int32Array.from(freqs), count, Uint8Array.from(norms));
    const pairs = Array.from({ length: size }, (_, i): [number, number] => [reused.freqs[i]!, reused.norms[i]!]);
    assert.deepEqual(pairs, computed(freqs, norms), `round ${round}`);
    const withoutNorms = reused.compute(Int32Array.from(freqs, (_, i) => i), Int32Array.from(freqs), count, null);
    assert.deepEqual(
      Array.from({ length: withoutNorms }, (_, i) => [reused.freqs[i]!, reused.norms[i]!]),
      count === 0 ? [] : [[Math.max(...freqs), 0]],
      `round ${round} without norms`,
    );
  }
});

test('impacts: malformed pairs are rejected', () => {
  const out = new ImpactList();
  // More pairs than a block keeps: found when they are stepped over too.
  const tooMany = Uint8Array.of(MAX_BLOCK_IMPACTS, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0);
  assert.equal(readImpacts(tooMany, 0, 100, 0, out), -1);
  assert.equal(skipImpacts(tooMany, 0), -1);
  assert.equal(skipImpacts(Uint8Array.of(MAX_BLOCK_IMPACTS - 1, ...tooMany.subarray(1)), 0), 1 + 2 * (MAX_BLOCK_IMPACTS - 1));
  // A freq varint longer than 8 bytes is stepped over as decoding reads it: its first 8 bytes.
  const longVarint = Uint8Array.of(1, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0, 0, 0);
  assert.equal(skipImpacts(longVarint, 0), 10);
  // A freq that reaches the block's max freq.
  assert.equal(readImpacts(Uint8Array.of(1, 9, 0, 0, 0, 0, 0, 0, 0), 0, 10, 0, out), -1);
  // A norm past 255.
  assert.equal(readImpacts(Uint8Array.of(1, 0, 250, 0, 0, 0, 0, 0, 0), 0, 10, 10, out), -1);
  assert.equal(readImpacts(Uint8Array.of(1, 0, 244, 0, 0, 0, 0, 0, 0), 0, 10, 10, out), 3);
});

test('a segment block bound is at least every score of its docs, exact up to the cap and no looser than (max freq, min norm)', async () => {
  await withTempDir('trove-impacts-', async (dir) => {
    const meta = await write(dir, 'seg_000001', [new TestLeaf(generateTestDocs(3000, 5))]);
    assert.equal(meta.formatVersion, SEGMENT_FORMAT_VERSION);
    const segment = SegmentReader.open(path.join(dir, 'seg_000001'), meta, INITIAL);
    try {
      const scoring = new Bm25Scoring(1.5, 2.5, 30, true);
      let blocks = 0;
      let tighter = 0;
      for (const term of ['w0', 'w1', 'w2', 'w5', 'w9', 'w30', 'w120']) {
        const docs = segment.postings('body', term)!;
        const bounds = segment.postings('body', term)!;
        let blockEnd = -1;
        let best = 0;
        let blockBound = 0;
        let looseBound = 0;
        const closeBlock = (): void => {
          assert.ok(best <= blockBound, `${term} block ending at ${blockEnd}: ${best} > ${blockBound}`);
          assert.ok(blockBound <= looseBound, `${term} block ending at ${blockEnd}: looser than (max freq, min norm)`);
          if (blockBound < looseBound) tighter++;
          blocks++;
        };
        for (let doc = docs.next(); doc !== NO_MORE_DOCS; doc = docs.next()) {
          if (doc > blockEnd) {
            if (blockEnd >= 0) closeBlock();
            blockEnd = bounds.shallowAdvance(doc);
            blockBound = bounds.blockMaxBound!(scoring);
            looseBound = scoring.bound(bounds.blockMaxFreq(), bounds.blockMinNorm());
            best = 0;
          }
          best = Math.max(best, scoring.score(docs.freq(), segment.norm('body', doc)));
        }
        closeBlock();
      }
      assert.ok(blocks > 30 && tighter > blocks / 2, `${tighter} of ${blocks} blocks have a tighter bound`);
    } finally {
      segment.close();
    }
  });
});

/** 300 docs of `x` (freq rising with the doc's length, padded with `y`): three blocks, several pairs each; or 100 docs: one block. */
function risingDocs(count: number): TestDoc[] {
  return Array.from({ length: count }, (_, n) => {
    const freq = 1 + (n % 7);
    return { id: `d${n}`, text: { body: [...Array.from({ length: freq }, () => 'x'), ...Array.from({ length: 3 * (n % 7) + (n % 3) }, () => 'y')] } };
  });
}

/** Offset just past the varint at `position`. */
function skipVarint(body: Buffer, position: number): number {
  while (body[position]! >= 0x80) position++;
  return position + 1;
}

/** Offset just past the varints of the first skip entry of a term of several blocks (after the block count), before its min norm. */
function firstEntryVarintsEnd(body: Buffer): number {
  let position = skipVarint(body, 0);
  for (let varint = 0; varint < 5; varint++) position = skipVarint(body, position);
  return position;
}

test('a corrupt skip entry pair count is corrupt_index naming postings.doc, for a term of several blocks and of one', async () => {
  await withTempDir('trove-impacts-', async (dir) => {
    const cases = [
      // Several blocks: the block count, the first entry's varints (last doc delta, docs short of 128, doc bytes, position bytes, max freq), min norm, then the count.
      { count: 300, countOffset: (body: Buffer): number => firstEntryVarintsEnd(body) + 1 },
      // One block: its last doc, then the count.
      { count: 100, countOffset: (body: Buffer): number => skipVarint(body, 0) },
    ];
    for (const [i, { count, countOffset }] of cases.entries()) {
      const name = `seg_00000${i + 1}`;
      const meta = await write(dir, name, [new TestLeaf(risingDocs(count))]);
      const segmentDir = path.join(dir, name);
      const healthy = SegmentReader.open(segmentDir, meta, INITIAL);
      try {
        const cursor = healthy.postings('body', 'x')!;
        cursor.shallowAdvance(0);
        assert.equal(cursor.blockMaxBound!({ bound: (freq, norm) => (freq === 1 && norm === 1 ? 1 : 0) }), 1, 'the pair (1, 1) is recorded');
      } finally {
        healthy.close();
      }
      const damaged = damageWithValidChecksum(segmentDir, meta, SegmentFileName.postings, (body) => {
        const offset = countOffset(body);
        assert.ok(body[offset]! > 0 && body[offset]! < MAX_BLOCK_IMPACTS, 'the count of further pairs');
        body.writeUInt8(0x7f, offset);
        return body;
      });
      const segment = SegmentReader.open(segmentDir, damaged, INITIAL);
      try {
        let error: unknown = null;
        try {
          segment.postings('body', 'x');
        } catch (caught) {
          error = caught;
        }
        assert.ok(error instanceof EngineError, String(error));
        assert.equal(error.code, 'corrupt_index', error.message);
        assert.ok(error.message.includes(path.join(segmentDir, SegmentFileName.postings)) && error.message.includes('impacts'), error.message);
      } finally {
        segment.close();
      }
    }
  });
});

/** Runs `run` and returns the corrupt_index error it raises, naming `file`. */
function corruptError(run: () => unknown, file: string): EngineError {
  let error: unknown = null;
  try {
    run();
  } catch (caught) {
    error = caught;
  }
  assert.ok(error instanceof EngineError, String(error));
  assert.equal(error.code, 'corrupt_index', error.message);
  assert.ok(error.message.includes(file), error.message);
  return error;
}

test('a malformed pair is corrupt_index naming postings.doc when its block bound is asked for or a merge copies the block', async () => {
  await withTempDir('trove-impacts-', async (dir) => {
    const cases = [
      // Several blocks: the block count, the first entry's varints, min norm and pair count, then the first pair's freq delta.
      { count: 300, pairOffset: (body: Buffer): number => firstEntryVarintsEnd(body) + 2 },
      // One block: its last doc and pair count, then the first pair's freq delta.
      { count: 100, pairOffset: (body: Buffer): number => skipVarint(body, 0) + 1 },
    ];
    for (const [i, { count, pairOffset }] of cases.entries()) {
      const name = `seg_00000${i + 1}`;
      const meta = await write(dir, name, [new TestLeaf(risingDocs(count))]);
      const segmentDir = path.join(dir, name);
      const damaged = damageWithValidChecksum(segmentDir, meta, SegmentFileName.postings, (body) => {
        const offset = pairOffset(body);
        assert.ok(body[offset - 1]! > 0 && body[offset]! < 7, 'a pair below the max freq 7');
        // A freq past the block's max freq, in as many bytes.
        body.writeUInt8(0x7f, offset);
        return body;
      });
      const segment = SegmentReader.open(segmentDir, damaged, INITIAL);
      try {
        // Pairs are stepped over when the cursor is created and its docs are read without them.
        const cursor = segment.postings('body', 'x')!;
        let docs = 0;
        while (cursor.next() !== NO_MORE_DOCS) docs++;
        assert.equal(docs, count);
        const bounds = segment.postings('body', 'x')!;
        const lastDoc = bounds.shallowAdvance(0);
        const scoring = new Bm25Scoring(1, 1, 20, true);
        const file = path.join(segmentDir, SegmentFileName.postings);
        assert.ok(corruptError(() => bounds.blockMaxBound!(scoring), file).message.includes('impacts'));
        if (count > POSTINGS_BLOCK_SIZE) {
          // The next blocks' pairs are sound.
          bounds.shallowAdvance(lastDoc + 1);
          assert.ok(bounds.blockMaxBound!(scoring) > 0);
          const [docMap] = buildDocMaps([segment]);
          const sources = [{ reader: segment, docMap: docMap! }];
          const merge = writeSegment({ dir: path.join(dir, 'merged'), name: 'merged', sources, fields: TEST_FIELDS, inplaceFields: [] });
          await assert.rejects(merge, (error: unknown) => {
            assert.ok(error instanceof EngineError && error.code === 'corrupt_index' && error.message.includes(file), String(error));
            return true;
          });
        }
      } finally {
        segment.close();
      }
    }
  });
});

test('a pinned format 6 segment (one pair per block) answers as the same docs written in the current format, and merges into it', async () => {
  await withTempDir('trove-impacts-', async (dir) => {
    // Written by the format 6 writer from generateTestDocs(300, 67).
    const pinned = new URL('./fixtures/format-6/', import.meta.url);
    fs.cpSync(new URL('seg_000001', pinned), path.join(dir, 'seg_000001'), { recursive: true });
    const meta = JSON.parse(fs.readFileSync(new URL('segment-meta.json', pinned), 'utf8')) as SegmentMeta;
    assert.equal(meta.formatVersion, 6);
    const leaf = new TestLeaf(generateTestDocs(300, 67), ['views']);
    const old = SegmentReader.open(path.join(dir, 'seg_000001'), meta, INITIAL);
    const current = SegmentReader.open(path.join(dir, 'seg_000002'), await write(dir, 'seg_000002', [leaf]), INITIAL);
    try {
      assertLeafMatches(old, leaf);
      const cursor = old.postings('body', 'w0')!;
      assert.ok(cursor.docFreq > POSTINGS_BLOCK_SIZE, 'w0 has several blocks');
      const scoring = new Bm25Scoring(1, 1, 20, true);
      for (let target = 0; cursor.shallowAdvance(target) !== NO_MORE_DOCS; target = cursor.shallowAdvance(target) + 1) {
        assert.equal(cursor.blockMaxBound!(scoring), scoring.bound(cursor.blockMaxFreq(), cursor.blockMinNorm()));
      }
      const queries = [
        { match: { body: 'w0' } },
        { match: { body: 'w1 w0' } },
        { match: { body: 'w0 w2 w7 w30' } },
        { match: { title: 'w0 w3' } },
        { bool: { should: [{ match: { body: 'w4' } }, { term: { tag: 'tag3' } }] } },
        { match_phrase: { body: 'w0 w1' } },
      ];
      for (const query of queries) {
        for (const trackTotalHits of [true, 10]) {
          const request = { query, from: 0, size: 10, trackTotalHits };
          assert.deepEqual(executeQuery([old], TEST_LEAF_FIELDS, request).hits, executeQuery([current], TEST_LEAF_FIELDS, request).hits, JSON.stringify(query));
        }
      }
      const [docMap] = buildDocMaps([old]);
      const mergedMeta = await writeSegment({ dir: path.join(dir, 'seg_000003'), name: 'seg_000003', sources: [{ reader: old, docMap: docMap! }], fields: TEST_FIELDS, inplaceFields: [] });
      assert.equal(mergedMeta.formatVersion, SEGMENT_FORMAT_VERSION);
      for (const file of [SegmentFileName.postings, SegmentFileName.positions]) {
        assert.ok(fs.readFileSync(path.join(dir, 'seg_000003', file)).equals(fs.readFileSync(path.join(dir, 'seg_000002', file))), `${file}: merged as written`);
      }
      const merged = SegmentReader.open(path.join(dir, 'seg_000003'), mergedMeta, INITIAL);
      try {
        assertLeafMatches(merged, leaf);
      } finally {
        merged.close();
      }
    } finally {
      old.close();
      current.close();
    }
  });
});
