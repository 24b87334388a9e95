import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { NO_MORE_DOCS } from './leaf-reader.ts';
import { SegmentReader } from './segment-reader.ts';
import { buildDocMaps, writeSegment } from './segment-writer.ts';
import { TEST_FIELDS, TestLeaf, generateTestDocs, type TestDoc } from './reference-leaf.fixture.ts';
import { assertLeafMatches } from './reference-leaf-assert.fixture.ts';
import { withTempDir } from './segment-dir.fixture.ts';


function tempDir(): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), 'trove-segment-'));
}

async function writeFrom(dir: string, name: string, leaves: TestLeaf[]): Promise<SegmentReader> {
  const docMaps = buildDocMaps(leaves);
  const meta = await writeSegment({
    dir: path.join(dir, name),
    name,
    sources: leaves.map((reader, index) => ({ reader, docMap: docMaps[index]! })),
    fields: TEST_FIELDS,
    inplaceFields: [],
  });
  return SegmentReader.open(path.join(dir, name), meta, { liveDocsGen: 0, inplaceGens: {} });
}

test('a written segment reads back exactly what its source leaf holds', async () => {
  const dir = tempDir();
  try {
    const docs = generateTestDocs(1500, 7);
    const leaf = new TestLeaf(docs, ['views']);
    const segment = await writeFrom(dir, 'seg_000001', [leaf]);
    try {
      assert.equal(segment.name, 'seg_000001');
      assert.ok(segment.postings('body', 'w0')!.docFreq > 1000, 'the test needs a term spanning many blocks');
      assertLeafMatches(segment, leaf);
      assert.equal(segment.segmentMeta.liveDocs, 1500);
      assert.ok(segment.bytesOnDisk() > 0);
      assert.ok(!fs.existsSync(path.join(dir, 'seg_000001.tmp')));
    } finally {
      segment.close();
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('positions can be read for some docs of a block and skipped for others', async () => {
  const dir = tempDir();
  try {
    const docs: TestDoc[] = Array.from({ length: 400 }, (_, n) => ({
      id: `d${n}`,
      text: { body: Array.from({ length: 1 + (n % 7) }, (_unused, i) => (i % 2 === 0 ? 'even' : `odd${n % 3}`)) },
    }));
    const leaf = new TestLeaf(docs);
    const segment = await writeFrom(dir, 'seg_000001', [leaf]);
    try {
      const cursor = segment.postings('body', 'even')!;
      const expected = leaf.postings('body', 'even')!;
      for (let doc = cursor.advance(3); doc !== NO_MORE_DOCS; doc = cursor.advance(doc + 5)) {
        assert.equal(expected.advance(doc), doc);
        if (doc % 3 === 0) assert.deepEqual(Array.from(cursor.positions()), Array.from(expected.positions()));
        assert.deepEqual(Array.from(cursor.positions()), Array.from(expected.positions()), 'repeated positions() call');
      }
      assert.equal(segment.postings('title', 'even'), null);
      assert.equal(segment.terms('nope').next(), null);
      assert.equal(segment.norm('nope', 0), 0);
      assert.deepEqual(segment.fieldStats('nope'), { docCount: 0, sumTotalTermFreq: 0 });
      assert.equal(segment.numericColumn('nope'), null);
      assert.equal(segment.keywordColumn('nope'), null);
    } finally {
      segment.close();
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('an empty source writes an empty, readable segment', async () => {
  const dir = tempDir();
  try {
    const segment = await writeFrom(dir, 'seg_000001', [new TestLeaf([])]);
    try {
      assert.equal(segment.maxDoc, 0);
      assert.equal(segment.numLiveDocs(), 0);
      assert.equal(segment.terms('body').next(), null);
      assert.equal(segment.lookupId('x'), -1);
      assert.equal(segment.keywordColumn('tag')!.ordinalCount, 0);
    } finally {
      segment.close();
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('writeSegment rejects doc maps that do not number kept docs in order', async () => {
  const dir = tempDir();
  try {
    const leaf = new TestLeaf(generateTestDocs(3, 1));
    await assert.rejects(
      writeSegment({
        dir: path.join(dir, 'seg_000001'),
        name: 'seg_000001',
        sources: [{ reader: leaf, docMap: Int32Array.from([1, 0, 2]) }],
        fields: TEST_FIELDS,
        inplaceFields: [],
      }),
      (error: Error & { code?: string }) => error.code === 'illegal_argument',
    );
    assert.ok(!fs.existsSync(path.join(dir, 'seg_000001')));
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('term lookups answer alike in any order, terms repeated within and beyond the lookups a dictionary keeps', () =>
  withTempDir('trove-segment-', async (dir) => {
    const docs = generateTestDocs(400, 11);
    const leaf = new TestLeaf(docs, ['views']);
    const segment = await writeFrom(dir, 'seg_000001', [leaf]);
    try {
      const terms: string[] = [];
      const iterator = leaf.terms('body');
      for (let term = iterator.next(); term !== null && terms.length < 40; term = iterator.next()) terms.push(term);
      assert.equal(terms.length, 40, 'the test needs 40 terms');
      const asked = [...terms, 'absent-a', ...terms.slice(0, 3), 'absent-a', ...terms.slice(0, 20).reverse(), ...terms.slice(5, 9), ...terms.slice(5, 9)];
      for (const term of [...asked, ...asked]) {
        assert.equal(segment.docFreq('body', term), leaf.docFreq('body', term), term);
        const cursor = segment.postings('body', term);
        const expected = leaf.postings('body', term);
        assert.equal(cursor?.docFreq ?? 0, expected?.docFreq ?? 0, term);
        assert.equal(cursor?.next() ?? NO_MORE_DOCS, expected?.next() ?? NO_MORE_DOCS, term);
      }
    } finally {
      segment.close();
    }
  }));

test('exact lookups find every term of blocks of shared prefixes and multi-byte characters, and no neighbour of them', () =>
  withTempDir('trove-segment-', async (dir) => {
    const stems = ['a', 'ab', 'abc', 'abd', 'abda', 'abé', 'ab😀', 'ab\uFFFF', 'ac', 'b', 'ba', 'bé', 'é', 'éa', '😀', '😀a', '\uFFFF'];
    const tags = stems.flatMap((stem) => [stem, `${stem}q`, `${stem}qq`, `${stem}qé`, `${stem}z`]);
    const docs = tags.map((tag, n): TestDoc => ({ id: `doc-${n}`, keyword: { tag: n % 3 === 0 ? [tag] : [tag, tags[(n * 7) % tags.length]!] } }));
    const leaf = new TestLeaf(docs, []);
    const segment = await writeFrom(dir, 'seg_000001', [leaf]);
    try {
      const asked = new Set<string>(['', 'aa', 'abb', 'abdb', 'abz', 'zz', '\u{1F601}']);
      for (const tag of tags) {
        asked.add(tag);
        asked.add(`${tag}a`);
        asked.add(tag.slice(0, -1));
        asked.add(`${tag.slice(0, -1)}r`);
      }
      let found = 0;
      for (const term of asked) {
        const expected = leaf.docFreq('tag', term);
        if (expected > 0) found++;
        assert.equal(segment.docFreq('tag', term), expected, JSON.stringify(term));
        assert.equal(segment.postings('tag', term)?.docFreq ?? 0, expected, JSON.stringify(term));
      }
      assert.equal(found, new Set(tags).size, 'every tag is found');
    } finally {
      segment.close();
    }
  }));
