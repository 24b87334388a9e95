import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { EngineError } from '../errors.ts';
import { NO_MORE_DOCS } from './leaf-reader.ts';
import { PAGED_MAGICS, readVerifiedFile } from './segment-file.ts';
import { SegmentReader, type SegmentGenerations } from './segment-reader.ts';
import { buildDocMaps, writeSegment, type SegmentMeta } from './segment-writer.ts';
import { TEST_FIELDS, TestLeaf, generateTestDocs } from './reference-leaf.fixture.ts';
import { assertLeafMatches } from './reference-leaf-assert.fixture.ts';

const INITIAL: SegmentGenerations = { liveDocsGen: 0, inplaceGens: {} };

async function writeTestSegment(dir: string, leaf: TestLeaf): Promise<SegmentMeta> {
  return writeSegment({
    dir,
    name: path.basename(dir),
    sources: [{ reader: leaf, docMap: buildDocMaps([leaf])[0]! }],
    fields: TEST_FIELDS,
    inplaceFields: [],
  });
}

function withTempDir(run: (dir: string) => Promise<void>): () => Promise<void> {
  return async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'trove-durability-'));
    try {
      await run(dir);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  };
}

test(
  'live docs, inplace and meta generations persist and stale ones are removed',
  withTempDir(async (root) => {
    const dir = path.join(root, 'seg_000001');
    const leaf = new TestLeaf(generateTestDocs(300, 21), ['views']);
    const meta = await writeTestSegment(dir, leaf);
    const segment = SegmentReader.open(dir, meta, INITIAL);
    const bytesBefore = segment.bytesOnDisk();
    assert.equal(segment.dirtyLiveDocs, false);
    assert.equal(segment.deleteDoc(3), true);
    assert.equal(segment.deleteDoc(3), false);
    assert.equal(segment.deleteDoc(250), true);
    assert.equal(segment.dirtyLiveDocs, true);
    assert.equal(segment.lookupId(leaf.meta(3).id), -1);
    await segment.writeLiveDocs(1);
    assert.equal(segment.dirtyLiveDocs, false);

    segment.inplaceColumn('views')!.set(7, 123.5);
    segment.inplaceColumn('views')!.set(8, NaN);
    assert.deepEqual([...segment.dirtyInplace], ['views']);
    await segment.writeInplaceColumn('views', 1);
    assert.equal(segment.dirtyInplace.size, 0);

    segment.setMeta(9, 777_777, 42, 3);
    assert.equal(segment.dirtyMeta, true);
    await segment.writeMeta(1);
    assert.equal(segment.dirtyMeta, false);
    assert.ok(segment.bytesOnDisk() > bytesBefore);
    segment.close();

    const state: SegmentGenerations = { liveDocsGen: 1, inplaceGens: { views: 1 }, metaGen: 1 };
    const reopened = SegmentReader.open(dir, meta, state);
    assert.equal(reopened.numLiveDocs(), 298);
    assert.equal(reopened.isLive(3), false);
    assert.equal(reopened.isLive(250), false);
    assert.equal(reopened.isLive(4), true);
    assert.equal(reopened.inplaceColumn('views')!.get(7), 123.5);
    assert.equal(reopened.numericColumn('views')!.count(8), 0);
    assert.deepEqual(reopened.meta(9), { ...leaf.meta(9), seqNo: 777_777, version: 42, primaryTerm: 3 });
    assert.deepEqual(reopened.source(7), leaf.source(7), 'the stored source is not touched by inplace writes');

    reopened.deleteDoc(4);
    await reopened.writeLiveDocs(2);
    await reopened.removeStaleGenerations({ ...state, liveDocsGen: 2 });
    const files = fs.readdirSync(dir).sort();
    assert.ok(files.includes('live.2') && !files.includes('live.1'), files.join(','));
    assert.ok(files.includes('inplace.views.1') && !files.includes('inplace.views.0'), files.join(','));
    assert.ok(files.includes('meta.1'));
    reopened.close();

    const initial = SegmentReader.open(dir, meta, { liveDocsGen: 2, inplaceGens: { views: 1 }, metaGen: 1 });
    assert.equal(initial.numLiveDocs(), 297);
    initial.close();
  }),
);

/** Opens the segment and reads every term, doc, freq and position of it (paged files are verified page by page as read). */
function openAndReadAll(dir: string, meta: SegmentMeta, state: SegmentGenerations): void {
  const segment = SegmentReader.open(dir, meta, state);
  try {
    for (const field of segment.indexedFields()) {
      const terms = segment.terms(field);
      for (let term = terms.next(); term !== null; term = terms.next()) {
        const cursor = terms.postings();
        while (cursor.next() !== NO_MORE_DOCS) {
          cursor.freq();
          if (segment.hasPositions(field)) cursor.positions();
        }
      }
    }
  } finally {
    segment.close();
  }
}

test(
  'a corrupt byte in any file fails open with corrupt_index naming the file (in paged files: fails open or the read of its page; in their footer: fails whole-file verification)',
  withTempDir(async (root) => {
    const dir = path.join(root, 'seg_000001');
    const leaf = new TestLeaf(generateTestDocs(200, 22), ['views']);
    const meta = await writeTestSegment(dir, leaf);
    const writer = SegmentReader.open(dir, meta, INITIAL);
    writer.deleteDoc(1);
    await writer.writeLiveDocs(1);
    writer.setMeta(2, 5, 5, writer.meta(2).primaryTerm);
    await writer.writeMeta(1);
    writer.close();
    const state: SegmentGenerations = { liveDocsGen: 1, inplaceGens: {}, metaGen: 1 };
    const files = fs.readdirSync(dir);
    assert.ok(files.length >= 11, files.join(','));
    for (const file of files) {
      const filePath = path.join(dir, file);
      const original = fs.readFileSync(filePath);
      const paged = PAGED_MAGICS.has(original.subarray(0, 4).toString('latin1'));
      for (const offset of [Math.floor(original.length / 2), 0, original.length - 1]) {
        const damaged = Buffer.from(original);
        damaged[offset] = damaged[offset]! ^ 0x10;
        fs.writeFileSync(filePath, damaged);
        const namesFile = (error: unknown): boolean => error instanceof EngineError && error.code === 'corrupt_index' && error.message.includes(filePath);
        if (paged && offset === original.length - 1) {
          // The footer covers the whole file; only whole-file verification (shard verify) reads it.
          assert.throws(() => readVerifiedFile(filePath, original.subarray(0, 4).toString('latin1'), meta.files[file]), namesFile, `${file} footer damaged`);
          continue;
        }
        assert.throws(() => (paged ? openAndReadAll(dir, meta, state) : SegmentReader.open(dir, meta, state).close()), namesFile, `${file} damaged at ${offset}`);
      }
      fs.writeFileSync(filePath, original.subarray(0, original.length - 5));
      assert.throws(() => SegmentReader.open(dir, meta, state).close(), /corrupt segment file/, `${file} truncated`);
      fs.writeFileSync(filePath, original);
    }
    SegmentReader.open(dir, meta, state).close();
  }),
);

test(
  'a process killed while writing leaves only a .tmp directory that a new write replaces',
  withTempDir(async (root) => {
    const dir = path.join(root, 'seg_000001');
    const moduleUrl = (file: string): string => new URL(file, import.meta.url).href;
    const child = `
      const { TestLeaf, generateTestDocs, TEST_FIELDS } = await import(${JSON.stringify(moduleUrl('./reference-leaf.fixture.ts'))});
      const { writeSegment, buildDocMaps } = await import(${JSON.stringify(moduleUrl('./segment-writer.ts'))});
      const leaf = new TestLeaf(generateTestDocs(300, 23), ['views']);
      let written = 0;
      await writeSegment({
        dir: ${JSON.stringify(dir)}, name: 'seg_000001',
        sources: [{ reader: leaf, docMap: buildDocMaps([leaf])[0] }],
        fields: TEST_FIELDS, inplaceFields: [],
        faults: { afterFileWritten: () => { if (++written === 4) process.kill(process.pid, 'SIGKILL'); } },
      });`;
    const repositoryRoot = fileURLToPath(new URL('../../..', import.meta.url));
    const result = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', child], {
      cwd: repositoryRoot,
      encoding: 'utf8',
    });
    assert.equal(result.signal, 'SIGKILL', result.stderr);
    assert.ok(!fs.existsSync(dir), 'no final directory after a crash');
    assert.deepEqual(fs.readdirSync(root), ['seg_000001.tmp']);
    assert.equal(fs.readdirSync(`${dir}.tmp`).length, 4);

    const leaf = new TestLeaf(generateTestDocs(300, 23), ['views']);
    const meta = await writeTestSegment(dir, leaf);
    assert.deepEqual(fs.readdirSync(root), ['seg_000001']);
    const segment = SegmentReader.open(dir, meta, INITIAL);
    assertLeafMatches(segment, leaf);
    segment.close();
  }),
);

test(
  'a failing write removes its .tmp directory and refuses to overwrite a segment',
  withTempDir(async (root) => {
    const dir = path.join(root, 'seg_000001');
    const leaf = new TestLeaf(generateTestDocs(50, 24), ['views']);
    await assert.rejects(
      writeSegment({
        dir,
        name: 'seg_000001',
        sources: [{ reader: leaf, docMap: buildDocMaps([leaf])[0]! }],
        fields: TEST_FIELDS,
        inplaceFields: [],
        faults: {
          afterFileWritten: (file) => {
            if (file === 'norms') throw new EngineError('fault_injected', 'disk on fire');
          },
        },
      }),
      /disk on fire/,
    );
    assert.deepEqual(fs.readdirSync(root), []);
    await writeTestSegment(dir, leaf);
    await assert.rejects(writeTestSegment(dir, leaf), (error: EngineError) => error.code === 'illegal_argument');
  }),
);
