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
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'trove-body-segment-'));
  try {
    const leaf = new TestLeaf(docs);
    const [docMap] = buildDocMaps([leaf]);
    const fields = TEST_FIELDS.filter((field) => field.name === 'body');
    const segmentDir = path.join(dir, 'seg_000001');
    const meta = await writeSegment({ dir: segmentDir, name: 'seg_000001', sources: [{ reader: leaf, docMap: docMap! }], fields, inplaceFields: [] });
    const segment = SegmentReader.open(segmentDir, meta, INITIAL);
    try {
      run(segment, leaf);
    } finally {
      segment.close();
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
