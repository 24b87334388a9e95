import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { flatField, type FlatField } from '../mapping/mapping.ts';
import { executeQuery } from '../query/execute.ts';
import type { LeafReader } from './leaf-reader.ts';
import { SegmentReader } from './segment-reader.ts';
import { buildDocMaps, writeSegment, type SegmentMeta } from './segment-writer.ts';
import { SEGMENT_FORMAT_VERSION, SegmentFileName } from './segment-file.ts';
import { TestLeaf, seededRandom, type TestDoc } from './reference-leaf.fixture.ts';
import { sortByValue } from './value-order.ts';

const FIELDS = [
  { name: 'tag', kind: 'keyword' as const, positions: false },
  { name: 'price', kind: 'numeric' as const, positions: false },
  { name: 'sizes', kind: 'numeric' as const, positions: false },
  { name: 'views', kind: 'numeric' as const, positions: false, inplace: true },
];

const MAPPING = new Map<string, FlatField>([
  ['tag', flatField('tag', { type: 'keyword' })],
  ['price', flatField('price', { type: 'double' })],
  ['sizes', flatField('sizes', { type: 'double' })],
  ['views', flatField('views', { type: 'long', inplace: true })],
]);

function tempDir(): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), 'trove-range-index-'));
}

/** A value drawn so that duplicates, negatives, fractions, zeros and extremes all occur. */
function randomValue(random: () => number): number {
  const pick = random();
  if (pick < 0.5) return Math.floor(random() * 50) - 10;
  if (pick < 0.8) return (random() - 0.5) * 1e6;
  if (pick < 0.85) return random() < 0.5 ? -0 : 0;
  if (pick < 0.9) return random() < 0.5 ? 2 ** 53 : -(2 ** 53);
  return Math.round(random() * 1e3) / 8;
}

function randomDocs(count: number, seed: number): TestDoc[] {
  const random = seededRandom(seed);
  return Array.from({ length: count }, (_, n) => {
    const numeric: Record<string, number[]> = {};
    if (random() < 0.9) numeric.price = [randomValue(random)];
    const sizeCount = Math.floor(random() * 4);
    if (sizeCount > 0) numeric.sizes = Array.from({ length: sizeCount }, () => randomValue(random));
    if (random() < 0.8) numeric.views = [Math.floor(random() * 100)];
    return { id: `d${n}`, keyword: { tag: [random() < 0.3 ? 'hot' : 'cold'] }, numeric, deleted: random() < 0.1 };
  });
}

async function writeFrom(dir: string, leaf: TestLeaf): Promise<{ segment: SegmentReader; meta: SegmentMeta }> {
  const [docMap] = buildDocMaps([leaf], true);
  const meta = await writeSegment({ dir: path.join(dir, 'seg_000001'), name: 'seg_000001', sources: [{ reader: leaf, docMap: docMap! }], fields: FIELDS, inplaceFields: [] });
  const segment = SegmentReader.open(path.join(dir, 'seg_000001'), meta, { liveDocsGen: 0, inplaceGens: {} });
  return { segment, meta };
}

/** The same segment as a format 1 segment: a copy without the range index, opened with meta version 1. */
function openAsFormat1(dir: string, meta: SegmentMeta): SegmentReader {
  const copy = path.join(dir, 'seg_000001_v1');
  fs.cpSync(path.join(dir, 'seg_000001'), copy, { recursive: true });
  fs.rmSync(path.join(copy, SegmentFileName.numericRangeIndex));
  const files = { ...meta.files };
  delete files[SegmentFileName.numericRangeIndex];
  return SegmentReader.open(copy, { ...meta, files, formatVersion: 1 }, { liveDocsGen: 0, inplaceGens: {} });
}

/** Live docs matching a DSL query, ascending. */
function matchingDocs(leaf: LeafReader, query: unknown): number[] {
  const result = executeQuery([leaf], MAPPING, { query, from: 0, size: 10_000, sort: '_doc', trackTotalHits: true });
  assert.equal(result.total.relation, 'eq');
  assert.equal(result.total.value, result.hits.length);
  return result.hits.map((hit) => hit.doc);
}

/** The live docs holding a value of `field` that `accepts`, computed from the column directly. */
function expectedDocs(leaf: LeafReader, field: string, accepts: (value: number) => boolean, tag?: string): number[] {
  const column = leaf.numericColumn(field)!;
  const tags = leaf.keywordColumn('tag')!;
  const docs: number[] = [];
  for (let doc = 0; doc < leaf.maxDoc; doc++) {
    if (!leaf.isLive(doc)) continue;
    if (tag !== undefined && tags.term(tags.ordinal(doc, 0)) !== tag) continue;
    for (let i = 0; i < column.count(doc); i++) {
      if (accepts(column.value(doc, i))) {
        docs.push(doc);
        break;
      }
    }
  }
  return docs;
}

test('sortByValue orders positions by value, ties by position, and leaves NaN out', async () => {
  const values = new Float64Array([3, -0, 0, -1.5, NaN, Infinity, -Infinity, 3, 2 ** 53, -(2 ** 60), 1e-300, -1e-300, NaN]);
  const sorted = await sortByValue(values, async () => undefined);
  assert.deepEqual([...sorted], [6, 9, 3, 11, 1, 2, 10, 0, 7, 8, 5]);
  const random = seededRandom(11);
  const many = Float64Array.from({ length: 200_000 }, () => randomValue(random));
  const order = await sortByValue(many, async () => undefined);
  assert.equal(order.length, many.length);
  for (let i = 1; i < order.length; i++) {
    const before = many[order[i - 1]!]!;
    const after = many[order[i]!]!;
    const zeroSigns = Object.is(before, -0) && Object.is(after, 0);
    assert.ok(before < after || (before === after && (zeroSigns || order[i - 1]! < order[i]!)), `entry ${i} out of order`);
  }
});

test('indexed ranges and values answer like the column scan and like the column itself', async () => {
  const dir = tempDir();
  try {
    const leaf = new TestLeaf(randomDocs(3000, 5), ['views']);
    const { segment, meta } = await writeFrom(dir, leaf);
    const format1 = openAsFormat1(dir, meta);
    try {
      assert.ok(segment.numericRangeIndex('price') !== null && segment.numericRangeIndex('sizes') !== null);
      assert.equal(segment.numericRangeIndex('views'), null, 'inplace fields keep the scan');
      assert.equal(format1.numericRangeIndex('price'), null);
      // Inplace values change after the segment was written: both readers must see the new ones.
      const random = seededRandom(99);
      for (let n = 0; n < 500; n++) {
        const doc = Math.floor(random() * segment.maxDoc);
        const value = random() < 0.1 ? NaN : Math.floor(random() * 200) - 50;
        segment.inplaceColumn('views')!.set(doc, value);
        format1.inplaceColumn('views')!.set(doc, value);
      }
      const values = [...new Set(leaf.docs.flatMap((doc) => [...(doc.numeric?.price ?? []), ...(doc.numeric?.sizes ?? [])]))];
      const bound = (): number => (random() < 0.7 ? values[Math.floor(random() * values.length)]! : randomValue(random));
      for (let n = 0; n < 600; n++) {
        const field = ['price', 'sizes', 'views'][n % 3]!;
        const options: Record<string, number> = {};
        const checks: Array<(value: number) => boolean> = [];
        if (random() < 0.85) {
          const lower = bound();
          if (random() < 0.5) {
            options.gte = lower;
            checks.push((value) => value >= lower);
          } else {
            options.gt = lower;
            checks.push((value) => value > lower);
          }
        }
        if (random() < 0.85) {
          const upper = random() < 0.2 && options.gte !== undefined ? options.gte : bound();
          if (random() < 0.5) {
            options.lte = upper;
            checks.push((value) => value <= upper);
          } else {
            options.lt = upper;
            checks.push((value) => value < upper);
          }
        }
        const accepts = (value: number): boolean => checks.every((check) => check(value));
        const range = { range: { [field]: options } };
        const expected = expectedDocs(segment, field, accepts);
        const label = `${field} ${JSON.stringify(options)}`;
        assert.deepEqual(matchingDocs(segment, range), expected, `indexed ${label}`);
        assert.deepEqual(matchingDocs(format1, range), expected, `scanned ${label}`);
        // In a conjunction the range is advanced to the candidates of the other clause.
        const filtered = { bool: { filter: [{ term: { tag: 'hot' } }, range] } };
        assert.deepEqual(matchingDocs(segment, filtered), expectedDocs(segment, field, accepts, 'hot'), `indexed hot ${label}`);
        if (n % 6 === 0) {
          const wanted = [bound(), bound(), bound()];
          const terms = { terms: { [field]: wanted } };
          const expectedTerms = expectedDocs(segment, field, (value) => wanted.includes(value));
          assert.deepEqual(matchingDocs(segment, terms), expectedTerms, `indexed terms ${field} ${wanted}`);
          assert.deepEqual(matchingDocs(format1, terms), expectedTerms, `scanned terms ${field} ${wanted}`);
        }
      }
    } finally {
      segment.close();
      format1.close();
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('a pinned format 1 segment opens, answers ranges from its column, and merges into the current format', async () => {
  const dir = tempDir();
  try {
    // Written by the format 1 writer: 200 docs, price dense (every tenth missing), sizes two values
    // on every third doc, views inplace (= n), doc n deleted when n % 17 = 5.
    const pinned = new URL('./fixtures/format-1/', import.meta.url);
    fs.cpSync(new URL('seg_000001', pinned), path.join(dir, 'seg_000001'), { recursive: true });
    const meta = JSON.parse(fs.readFileSync(new URL('segment-meta.json', pinned), 'utf8')) as SegmentMeta;
    assert.equal(meta.formatVersion, 1);
    assert.equal(fs.readFileSync(path.join(dir, 'seg_000001', 'columns.num')).readUInt32LE(4), 1);
    const old = SegmentReader.open(path.join(dir, 'seg_000001'), meta, { liveDocsGen: 0, inplaceGens: {} });
    try {
      assert.equal(old.numericRangeIndex('price'), null);
      assert.deepEqual(JSON.parse(old.source(42).toString('utf8')), { n: 42 }, 'format 1 source blocks are deflate');
      const range = { range: { price: { gte: 10, lt: 40 } } };
      const expected = expectedDocs(old, 'price', (value) => value >= 10 && value < 40);
      assert.ok(expected.length > 20 && expected.length < 150, `the fixture range should be selective (${expected.length})`);
      assert.deepEqual(matchingDocs(old, range), expected);
      assert.deepEqual(matchingDocs(old, { range: { views: { gt: 100, lte: 120 } } }), expectedDocs(old, 'views', (value) => value > 100 && value <= 120));

      const [docMap] = buildDocMaps([old]);
      const mergedDir = path.join(dir, 'seg_000002');
      const mergedMeta = await writeSegment({ dir: mergedDir, name: 'seg_000002', sources: [{ reader: old, docMap: docMap! }], fields: FIELDS, inplaceFields: [] });
      assert.equal(mergedMeta.formatVersion, SEGMENT_FORMAT_VERSION);
      const merged = SegmentReader.open(mergedDir, mergedMeta, { liveDocsGen: 0, inplaceGens: {} });
      try {
        assert.ok(merged.numericRangeIndex('price') !== null && merged.numericRangeIndex('sizes') !== null);
        const livePriced = Array.from({ length: 200 }, (_, n) => n).filter((n) => n % 17 !== 5 && n % 10 !== 3);
        assert.equal(merged.numericRangeIndex('price')!.size, livePriced.length);
        const ids = (leaf: LeafReader, docs: number[]): string[] => docs.map((doc) => leaf.meta(doc).id);
        assert.deepEqual(ids(merged, matchingDocs(merged, range)), ids(old, expected));
        const sizes = { range: { sizes: { gte: 9, lte: 10 } } };
        assert.deepEqual(ids(merged, matchingDocs(merged, sizes)), ids(old, expectedDocs(old, 'sizes', (value) => value >= 9 && value <= 10)));
      } finally {
        merged.close();
      }
    } finally {
      old.close();
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('a damaged range index is reported as a corrupt file naming it', async () => {
  const dir = tempDir();
  try {
    const { segment, meta } = await writeFrom(dir, new TestLeaf(randomDocs(300, 9), ['views']));
    segment.close();
    const file = path.join(dir, 'seg_000001', SegmentFileName.numericRangeIndex);
    const bytes = fs.readFileSync(file);
    bytes[20] ^= 0xff;
    fs.writeFileSync(file, bytes);
    assert.throws(
      () => SegmentReader.open(path.join(dir, 'seg_000001'), meta, { liveDocsGen: 0, inplaceGens: {} }),
      (error: Error & { code?: string }) => error.code === 'corrupt_index' && error.message.includes('columns.range'),
    );
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
