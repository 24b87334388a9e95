import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { LeafReader } from './leaf-reader.ts';
import { ByteSink } from './byte-io.ts';
import { collectDocMeta } from './doc-meta-collect.ts';
import { idListOf } from './doc-meta-ids.ts';
import { writeDocMeta, type CollectedDocMeta } from './doc-meta-store.ts';
import { SegmentReader } from './segment-reader.ts';
import { buildDocMaps, writeSegment } from './segment-writer.ts';
import { WriteContext } from './write-context.ts';
import { TEST_FIELDS, TestLeaf, generateTestDocs, seededRandom } from './reference-leaf.fixture.ts';

async function segmentOf(dir: string, name: string, leaf: TestLeaf): Promise<SegmentReader> {
  const meta = await writeSegment({
    dir: path.join(dir, name),
    name,
    sources: [{ reader: leaf, docMap: buildDocMaps([leaf])[0]! }],
    fields: TEST_FIELDS,
    inplaceFields: ['views'],
  });
  return SegmentReader.open(path.join(dir, name), meta, { liveDocsGen: 0, inplaceGens: {} });
}

/** The doc meta the sort path collects: each kept doc's `meta`, ids sorted by the writer. */
function collectedByMeta(leaves: LeafReader[], docMaps: Int32Array[]): CollectedDocMeta {
  const ids: Buffer[] = [];
  const seqNos: number[] = [];
  const versions: number[] = [];
  const primaryTerms: number[] = [];
  leaves.forEach((leaf, index) => {
    for (let doc = 0; doc < leaf.maxDoc; doc++) {
      if (docMaps[index]![doc]! < 0) continue;
      const meta = leaf.meta(doc);
      ids.push(Buffer.from(meta.id, 'utf8'));
      seqNos.push(meta.seqNo);
      versions.push(meta.version);
      primaryTerms.push(meta.primaryTerm);
    }
  });
  return {
    ids: idListOf(ids),
    seqNos: Float64Array.from(seqNos),
    versions: Float64Array.from(versions),
    primaryTerms: Float64Array.from(primaryTerms),
  };
}

function body(meta: CollectedDocMeta): Uint8Array {
  const sink = new ByteSink();
  writeDocMeta(sink, meta);
  return sink.toBytes();
}

test('doc meta merged from segments by their sorted ids is byte for byte the sorted doc meta', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'trove-docmeta-collect-'));
  const segments: SegmentReader[] = [];
  try {
    const random = seededRandom(7);
    // Shared prefixes give ids equal across segments (ties keep new doc order) and non-ASCII ids.
    const groups = [generateTestDocs(300, 1, 'x'), generateTestDocs(200, 2, 'x'), generateTestDocs(250, 3, 'y'), generateTestDocs(40, 4, 'x')];
    for (const [index, group] of groups.entries()) {
      const segment = await segmentOf(dir, `seg_00000${index + 1}`, new TestLeaf(group, ['views']));
      for (let doc = 0; doc < segment.maxDoc; doc++) {
        if (random() < 0.15) segment.deleteDoc(doc);
        else if (random() < 0.1) segment.setMeta(doc, 70000 + doc, 3, segment.meta(doc).primaryTerm);
      }
      segments.push(segment);
    }
    const docMaps = buildDocMaps(segments);
    const maxDoc = docMaps.reduce((sum, map) => sum + map.filter((doc) => doc >= 0).length, 0);
    const merged = await collectDocMeta(new WriteContext(segments.map((reader, i) => ({ reader, docMap: docMaps[i]! })), maxDoc, 8));
    assert.ok(merged.ids.sortedDocs !== null, 'segment sources give the sorted order');
    const expected = collectedByMeta(segments, docMaps);
    assert.deepEqual(merged.seqNos, expected.seqNos);
    assert.deepEqual(merged.versions, expected.versions);
    assert.deepEqual(merged.primaryTerms, expected.primaryTerms);
    assert.deepEqual(Buffer.from(body(merged)), Buffer.from(body(expected)));

    // A source that is not a segment: ids are pooled from `meta` and sorted by the writer, same bytes.
    const leaf = new TestLeaf(generateTestDocs(120, 5, 'x'), ['views']);
    const mixed = [segments[0]!, leaf, segments[2]!];
    const mixedMaps = buildDocMaps(mixed);
    const mixedMaxDoc = mixedMaps.reduce((sum, map) => sum + map.filter((doc) => doc >= 0).length, 0);
    const collected = await collectDocMeta(new WriteContext(mixed.map((reader, i) => ({ reader, docMap: mixedMaps[i]! })), mixedMaxDoc, 8));
    assert.equal(collected.ids.sortedDocs, null);
    assert.deepEqual(Buffer.from(body(collected)), Buffer.from(body(collectedByMeta(mixed, mixedMaps))));
  } finally {
    for (const segment of segments) segment.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
