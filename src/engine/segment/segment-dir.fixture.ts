/** Test helper: a temporary directory for segments, and segments written into it from leaves. */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { LeafReader } from './leaf-reader.ts';
import { buildDocMaps, writeSegment, type SegmentMeta } from './segment-writer.ts';
import { TEST_FIELDS } from './reference-leaf.fixture.ts';

/** Runs `run` on a new temporary directory (named from `prefix`), then removes it. */
export async function withTempDir(prefix: string, run: (dir: string) => Promise<void>): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  try {
    await run(dir);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** Writes the leaves, in order, as segment `name` of `dir` with the fixture fields. */
export function writeLeaves(dir: string, name: string, leaves: LeafReader[], inplaceFields: string[] = []): Promise<SegmentMeta> {
  const docMaps = buildDocMaps(leaves);
  const sources = leaves.map((reader, i) => ({ reader, docMap: docMaps[i]! }));
  return writeSegment({ dir: path.join(dir, name), name, sources, fields: TEST_FIELDS, inplaceFields });
}
