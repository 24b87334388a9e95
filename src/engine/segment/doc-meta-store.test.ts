import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { EngineError } from '../errors.ts';
import { bitsRequired, packInto } from './bitpack.ts';
import { ByteSink as Sink } from './byte-io.ts';
import { DocMetaStore, writeDocMeta, type CollectedDocMeta } from './doc-meta-store.ts';
import { idListOf } from './doc-meta-ids.ts';
import { FileMagic, HEADER_BYTES, SegmentFileName, readVerifiedFile, writeSmallFile } from './segment-file.ts';
import { SegmentReader } from './segment-reader.ts';
import { buildDocMaps, writeSegment } from './segment-writer.ts';
import { TEST_FIELDS, TestLeaf, generateTestDocs } from './reference-leaf.fixture.ts';

interface Docs {
  ids: string[];
  seqNos: number[];
  versions: number[];
  primaryTerms: number[];
}

function collected(docs: Docs): CollectedDocMeta {
  return {
    ids: idListOf(docs.ids.map((id) => Buffer.from(id, 'utf8'))),
    seqNos: Float64Array.from(docs.seqNos),
    versions: Float64Array.from(docs.versions),
    primaryTerms: Float64Array.from(docs.primaryTerms),
  };
}

/** The version 1 body: one front-coded run of sorted ids, position -> doc, then the numbers packed. */
function writeVersion1(sink: Sink, docs: Docs): void {
  const ids = docs.ids.map((id) => Buffer.from(id, 'utf8'));
  const order = ids.map((_, doc) => doc).sort((left, right) => Buffer.compare(ids[left]!, ids[right]!) || left - right);
  sink.writeVarint(ids.length);
  let previous = Buffer.alloc(0);
  for (const doc of order) {
    const id = ids[doc]!;
    let prefix = 0;
    while (prefix < Math.min(previous.length, id.length) && previous[prefix] === id[prefix]) prefix++;
    sink.writeVarint(prefix);
    sink.writeVarint(id.length - prefix);
    sink.writeBytes(id.subarray(prefix));
    previous = id;
  }
  const width = bitsRequired(Math.max(0, ids.length - 1));
  sink.writeByte(width);
  packInto(sink, order, order.length, width);
  for (const values of [docs.seqNos, docs.versions, docs.primaryTerms]) {
    const min = values.length === 0 ? 0 : Math.min(...values);
    const offsets = values.map((value) => value - min);
    const valueWidth = bitsRequired(offsets.reduce((union, value) => union | value, 0));
    sink.writeByte(0);
    sink.writeF64(min);
    sink.writeByte(valueWidth);
    packInto(sink, offsets, offsets.length, valueWidth);
  }
}

async function withTempDir(run: (dir: string) => Promise<void>): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'trove-docmeta-'));
  try {
    await run(dir);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

async function openStore(dir: string, docs: Docs, version: 1 | 2): Promise<DocMetaStore> {
  const filePath = path.join(dir, `docmeta.${version}`);
  await writeSmallFile(filePath, FileMagic.docMeta, (sink) => {
    if (version === 1) writeVersion1(sink, docs);
    else writeDocMeta(sink, collected(docs));
  });
  return new DocMetaStore(readVerifiedFile(filePath, FileMagic.docMeta), HEADER_BYTES, docs.ids.length);
}

function numbered(ids: string[], seed = 1): Docs {
  return {
    ids,
    seqNos: ids.map((_, doc) => doc * 3 + seed),
    versions: ids.map((_, doc) => 1 + ((doc * 7) % 5)),
    primaryTerms: ids.map(() => seed),
  };
}

/** Ids exercising block boundaries: ascii, unicode, shared prefixes, an empty id and duplicates spanning blocks. */
function mixedIds(count: number): string[] {
  const ids: string[] = [];
  for (let doc = 0; doc < count; doc++) {
    if (doc % 11 === 0) ids.push('dup');
    else if (doc % 13 === 0) ids.push(`émile-${doc % 7}-日本語-${doc}`);
    else if (doc % 17 === 0) ids.push(`x${'y'.repeat(doc % 150)}`);
    else ids.push(`doc-${String(doc * 7919 % 1000).padStart(4, '0')}-${doc}`);
  }
  if (count > 5) ids[5] = '';
  return ids;
}

const allLive = { isLive: () => true };

function expectedLookup(ids: string[], id: string, isLive: (doc: number) => boolean): number {
  for (let doc = 0; doc < ids.length; doc++) if (ids[doc] === id && isLive(doc)) return doc;
  return -1;
}

function assertStoreHolds(store: DocMetaStore, docs: Docs, isLive: (doc: number) => boolean = () => true): void {
  const live = { isLive };
  for (const id of new Set(docs.ids)) {
    assert.equal(store.lookup(id, live), expectedLookup(docs.ids, id, isLive), `lookup ${JSON.stringify(id)}`);
  }
  for (let doc = 0; doc < docs.ids.length; doc++) {
    const expected = { id: docs.ids[doc], seqNo: docs.seqNos[doc], version: docs.versions[doc], primaryTerm: docs.primaryTerms[doc] };
    assert.deepEqual(store.meta(doc), expected);
  }
}

for (const version of [1, 2] as const) {
  test(`doc meta version ${version}: ids, lookups and numbers round trip at every size around a block`, async () => {
    await withTempDir(async (dir) => {
      for (const count of [0, 1, 31, 32, 33, 64, 65, 1000]) {
        const docs = numbered(mixedIds(count), count);
        const store = await openStore(dir, docs, version);
        const isLive = (doc: number): boolean => doc % 3 !== 0;
        assertStoreHolds(store, docs, isLive);
        // Reading every id decodes them all at once: lookups answer the same afterwards.
        assertStoreHolds(store, docs, isLive);
        assert.throws(() => store.meta(count), RangeError);
        assert.throws(() => store.meta(-1), RangeError);
      }
    });
  });

  test(`doc meta version ${version}: absent ids are not found, before, between and after the stored ones`, async () => {
    await withTempDir(async (dir) => {
      const ids = Array.from({ length: 200 }, (_, doc) => `id-${String(doc * 2).padStart(4, '0')}`);
      const store = await openStore(dir, numbered(ids), version);
      for (const absent of ['', 'a', 'id-', 'id-0001', 'id-0003', 'id-0199', 'id-0398a', 'id-0399', 'zzz', 'id-0002\u0000', 'ïd-0002']) {
        assert.equal(store.lookup(absent, allLive), -1, absent);
      }
      assert.equal(store.lookup('id-0002', allLive), 1);
      assert.equal(store.lookup('id-0002', { isLive: (doc) => doc !== 1 }), -1);
      assert.equal(store.lookup('id-0398', allLive), 199);
    });
  });
}

test('duplicate ids answer the first live doc in doc order, across block boundaries', async () => {
  await withTempDir(async (dir) => {
    const ids = Array.from({ length: 150 }, (_, doc) => (doc % 2 === 0 ? 'same' : `other-${doc}`));
    const store = await openStore(dir, numbered(ids), 2);
    assert.equal(store.lookup('same', allLive), 0);
    assert.equal(store.lookup('same', { isLive: (doc) => doc > 100 }), 102);
    assert.equal(store.lookup('same', { isLive: (doc) => doc % 2 === 1 }), -1);
  });
});

test('numbers that are not packable integers round trip raw', async () => {
  await withTempDir(async (dir) => {
    const ids = ['a', 'b', 'c', 'd'];
    const docs: Docs = { ids, seqNos: [0.5, -3, 2 ** 40, 7], versions: [1, 2 ** 33, 3, 4], primaryTerms: [1, 1, 2, 2] };
    const store = await openStore(dir, docs, 2);
    assertStoreHolds(store, docs);
  });
});

test('setMeta, snapshotMeta and applyGeneration change seq_no, version and primary term in place', async () => {
  await withTempDir(async (dir) => {
    const docs = numbered(mixedIds(100), 4);
    const store = await openStore(dir, docs, 2);
    const untouched = store.snapshotMeta();
    assert.deepEqual([...untouched.seqNos], docs.seqNos);
    store.setMeta(40, 900, 12, 5);
    assert.deepEqual(store.meta(40), { id: docs.ids[40], seqNo: 900, version: 12, primaryTerm: 5 });
    assert.deepEqual(store.meta(41), { id: docs.ids[41], seqNo: docs.seqNos[41], version: docs.versions[41], primaryTerm: 4 });
    const snapshot = store.snapshotMeta();
    assert.equal(snapshot.seqNos[40], 900);
    assert.equal(snapshot.primaryTerms![40], 5);
    snapshot.seqNos[40] = 1;
    assert.equal(store.meta(40).seqNo, 900, 'a snapshot is a copy');
    assert.throws(() => store.setMeta(100, 1, 1, 1), RangeError);

    const fresh = await openStore(dir, docs, 2);
    const versions = Float64Array.from(docs.versions, (value) => value + 1);
    fresh.applyGeneration({ seqNos: snapshot.seqNos, versions });
    assert.deepEqual(fresh.meta(40), { id: docs.ids[40], seqNo: 1, version: versions[40], primaryTerm: 4 });
  });
});

async function writeTestSegment(dir: string) {
  const leaf = new TestLeaf(generateTestDocs(120, 5), []);
  const sources = [{ reader: leaf, docMap: buildDocMaps([leaf])[0]! }];
  const meta = await writeSegment({ dir, name: path.basename(dir), sources, fields: TEST_FIELDS, inplaceFields: [] });
  return { leaf, meta };
}

function assertCorruptDocMeta(open: () => unknown): void {
  assert.throws(open, (error: unknown) => {
    assert.ok(error instanceof EngineError, String(error));
    assert.equal(error.code, 'corrupt_index');
    assert.match(error.message, /docmeta: /);
    return true;
  });
}

test('a segment reads its doc meta back, and a corrupt doc meta fails the open naming the file', async () => {
  await withTempDir(async (root) => {
    const dir = path.join(root, 'seg_000001');
    const { leaf, meta } = await writeTestSegment(dir);
    const initial = { liveDocsGen: 0, inplaceGens: {} };
    const segment = SegmentReader.open(dir, meta, initial);
    for (let doc = 0; doc < leaf.maxDoc; doc++) {
      assert.deepEqual(segment.meta(doc), leaf.meta(doc));
      assert.equal(segment.lookupId(leaf.meta(doc).id), doc);
    }
    segment.close();

    const filePath = path.join(dir, SegmentFileName.docMeta);
    const good = fs.readFileSync(filePath);
    const flipped = Buffer.from(good);
    flipped[HEADER_BYTES + 20] ^= 0x40;
    fs.writeFileSync(filePath, flipped);
    assertCorruptDocMeta(() => SegmentReader.open(dir, meta, initial));

    // Checksums that match but a body that does not: a wrong doc count, then an unknown version.
    const docs = numbered(mixedIds(leaf.maxDoc + 1));
    meta.files[SegmentFileName.docMeta] = await writeSmallFile(filePath, FileMagic.docMeta, (sink) => writeDocMeta(sink, collected(docs)));
    assertCorruptDocMeta(() => SegmentReader.open(dir, meta, initial));
    meta.files[SegmentFileName.docMeta] = await writeSmallFile(filePath, FileMagic.docMeta, (sink) => {
      sink.writeVarint(0);
      sink.writeByte(9);
    });
    assertCorruptDocMeta(() => SegmentReader.open(dir, meta, initial));
  });
});
