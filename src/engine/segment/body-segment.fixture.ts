/** Test helper: the `body` field of test docs written as one segment in a temporary directory. */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { SegmentReader } from './segment-reader.ts';
import { buildDocMaps, writeSegment } from './segment-writer.ts';
import { TEST_FIELDS, TestLeaf, type TestDoc } from './reference-leaf.fixture.ts';

const INITIAL = { liveDocsGen: 0, inplaceGens: {} };

/** Writes `docs` (field `body` only) as a segment, runs `run` on it and on the reference leaf, then removes it. */
export async function withBodySegment(docs: TestDoc[], run: (segment: SegmentReader, leaf: TestLeaf) => void): Promise<void> {
  await withBodySegments([docs], ([segment], [leaf]) => run(segment!, leaf!));
}

/** Writes each list of docs (field `body` only) as a segment of its own, runs `run` on them and their reference leaves, then removes them. */
export async function withBodySegments(docLists: TestDoc[][], run: (segments: SegmentReader[], leaves: TestLeaf[]) => void): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'trove-body-segment-'));
  const segments: SegmentReader[] = [];
  try {
    const leaves = docLists.map((docs) => new TestLeaf(docs));
    const fields = TEST_FIELDS.filter((field) => field.name === 'body');
    for (const [i, leaf] of leaves.entries()) {
      const [docMap] = buildDocMaps([leaf]);
      const name = `seg_${String(i + 1).padStart(6, '0')}`;
      const segmentDir = path.join(dir, name);
      const meta = await writeSegment({ dir: segmentDir, name, sources: [{ reader: leaf, docMap: docMap! }], fields, inplaceFields: [] });
      segments.push(SegmentReader.open(segmentDir, meta, INITIAL));
    }
    run(segments, leaves);
  } finally {
    for (const segment of segments) segment.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
