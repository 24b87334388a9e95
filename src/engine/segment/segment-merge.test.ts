import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { LeafReader } from './leaf-reader.ts';
import { SegmentReader } from './segment-reader.ts';
import { buildDocMaps, writeSegment } from './segment-writer.ts';
import { TEST_FIELDS, TestLeaf, generateTestDocs, seededRandom, type TestDoc } from './reference-leaf.fixture.ts';
import { assertLeafMatches } from './reference-leaf-assert.fixture.ts';

async function merge(dir: string, name: string, leaves: LeafReader[], keepDeleted = false, yieldEveryMs?: number): Promise<SegmentReader> {
  const docMaps = buildDocMaps(leaves, keepDeleted);
  const meta = await writeSegment({
    dir: path.join(dir, name),
    name,
    sources: leaves.map((reader, index) => ({ reader, docMap: docMaps[index]! })),
    fields: TEST_FIELDS,
    inplaceFields: ['views'],
    yieldEveryMs,
  });
  return SegmentReader.open(path.join(dir, name), meta, { liveDocsGen: 0, inplaceGens: {} });
}

/** Three segments, with deletions, inplace sets and meta updates applied after they were written. */
async function buildThreeSegments(dir: string): Promise<{ segments: SegmentReader[]; docs: TestDoc[][] }> {
  const random = seededRandom(99);
  const docs = [generateTestDocs(450, 1, 'a'), generateTestDocs(350, 2, 'b'), generateTestDocs(300, 3, 'c')];
  const segments: SegmentReader[] = [];
  for (const [index, group] of docs.entries()) {
    const segment = await merge(dir, `seg_00000${index + 1}`, [new TestLeaf(group, ['views'])]);
    segments.push(segment);
    group.forEach((doc, n) => {
      if (random() < 0.2) {
        assert.equal(segment.deleteDoc(n), true);
        assert.equal(segment.deleteDoc(n), false);
        doc.deleted = true;
      } else if (random() < 0.1) {
        segment.inplaceColumn('views')!.set(n, 5000 + n);
        doc.numeric = { ...doc.numeric, views: [5000 + n] };
        segment.setMeta(n, 90000 + n, 7, segment.meta(n).primaryTerm);
        doc.seqNo = 90000 + n;
        doc.version = 7;
      }
    });
  }
  return { segments, docs };
}

test('merging three segments with deletions equals a leaf of the kept docs', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'trove-merge-'));
  const { segments, docs } = await buildThreeSegments(dir);
  try {
    const merged = await merge(dir, 'seg_000004', segments);
    try {
      const kept = docs.flat().filter((doc) => !doc.deleted);
      assert.equal(merged.maxDoc, kept.length);
      // Blocks copied as stored end the blocks before them short: bounds are checked against the docs they span.
      assertLeafMatches(merged, new TestLeaf(kept, ['views']), 'bounding');
      assert.equal(merged.segmentMeta.liveDocs, kept.length);
      assert.ok(!fs.readdirSync(path.join(dir, 'seg_000004')).some((file) => file.startsWith('live.')));
    } finally {
      merged.close();
    }
  } finally {
    for (const segment of segments) segment.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('a merge that keeps deleted docs writes live.0 and keeps them deleted', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'trove-merge-'));
  const { segments, docs } = await buildThreeSegments(dir);
  try {
    const merged = await merge(dir, 'seg_000004', segments, true);
    try {
      const all = docs.flat();
      assert.ok(fs.existsSync(path.join(dir, 'seg_000004', 'live.0')));
      assert.equal(merged.segmentMeta.liveDocs, all.filter((doc) => !doc.deleted).length);
      assertLeafMatches(merged, new TestLeaf(all, ['views']), 'bounding');
    } finally {
      merged.close();
    }
  } finally {
    for (const segment of segments) segment.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('a mutable-like leaf and a segment merge into one segment', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'trove-merge-'));
  try {
    const first = generateTestDocs(300, 11, 'x');
    const second = generateTestDocs(200, 12, 'y');
    const segment = await merge(dir, 'seg_000001', [new TestLeaf(first, ['views'])]);
    const fresh = new TestLeaf(second, ['views']);
    fresh.deleteDoc(5);
    second[5]!.deleted = true;
    const merged = await merge(dir, 'seg_000002', [segment, fresh]);
    try {
      assertLeafMatches(merged, new TestLeaf([...first, ...second.filter((doc) => !doc.deleted)], ['views']));
    } finally {
      merged.close();
      segment.close();
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('the writer yields to the event loop while it works', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'trove-merge-'));
  try {
    let ticks = 0;
    let running = true;
    const spin = (): void => {
      ticks++;
      if (running) setImmediate(spin);
    };
    setImmediate(spin);
    const segment = await merge(dir, 'seg_000001', [new TestLeaf(generateTestDocs(800, 5), ['views'])], false, 0);
    running = false;
    segment.close();
    assert.ok(ticks > 20, `only ${ticks} event loop turns while writing`);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
