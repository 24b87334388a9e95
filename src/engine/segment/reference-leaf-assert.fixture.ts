/**
 * TEST HELPER ONLY: asserts that two LeafReaders expose the same content through every
 * LeafReader method (terms, postings with freqs and positions, skipping and block-max data,
 * norms, statistics, columns, sources, doc meta, id lookups).
 */
import assert from 'node:assert/strict';
import { NO_MORE_DOCS, type LeafReader, type PostingsCursor } from './leaf-reader.ts';
import { seededRandom } from './reference-leaf.fixture.ts';

const sorted = (values: string[]): string[] => [...values].sort();

function drain(cursor: PostingsCursor, withPositions: boolean): { docs: number[]; freqs: number[]; positions: number[][] } {
  const docs: number[] = [];
  const freqs: number[] = [];
  const positions: number[][] = [];
  for (let doc = cursor.next(); doc !== NO_MORE_DOCS; doc = cursor.next()) {
    docs.push(doc);
    freqs.push(cursor.freq());
    if (withPositions) positions.push(Array.from(cursor.positions()));
  }
  return { docs, freqs, positions };
}

/**
 * How block bounds are compared: `same`, the same blocks as the expected leaf's; `bounding`, any
 * blocks (a merge may end blocks short) whose bounds hold for every doc of the term they span.
 */
export type BlockCheck = 'same' | 'bounding';

/** A term's docs with their freqs and norms, to check block bounds against. */
export interface TermDocs {
  docs: number[];
  freqs: number[];
  norms: number[];
}

/** Checks the block `shallowAdvance(target)` moves to: it ends at a doc of the term at or past target's first, and bounds the freqs and norms of the docs it spans. */
function assertBoundingBlock(actual: PostingsCursor, target: number, term: TermDocs, label: string): void {
  const last = actual.shallowAdvance(target);
  let index = term.docs.findIndex((doc) => doc >= target);
  if (index < 0) {
    assert.equal(last, NO_MORE_DOCS, `${label}: shallowAdvance(${target}) past the last doc`);
    return;
  }
  assert.ok(last >= term.docs[index]! && term.docs.includes(last), `${label}: shallowAdvance(${target}) = ${last} ends at a doc of the term`);
  const maxFreq = actual.blockMaxFreq();
  const minNorm = actual.blockMinNorm();
  for (; index < term.docs.length && term.docs[index]! <= last; index++) {
    assert.ok(term.freqs[index]! <= maxFreq && term.norms[index]! >= minNorm, `${label}: the block at ${target} bounds doc ${term.docs[index]}`);
  }
}

/** Compares advance / shallowAdvance / block-max answers of two cursors on random targets (block bounds by `blocks`; `term` needed for `bounding`). */
export function assertSameSkipping(
  actual: PostingsCursor,
  expected: PostingsCursor,
  maxDoc: number,
  seed: number,
  label: string,
  blocks: BlockCheck = 'same',
  term?: TermDocs,
): void {
  const random = seededRandom(seed);
  let target = 0;
  for (;;) {
    target += 1 + Math.floor(random() * Math.max(1, maxDoc / 20));
    if (blocks === 'bounding') {
      assertBoundingBlock(actual, target, term!, label);
    } else {
      const shallowExpected = expected.shallowAdvance(target);
      assert.equal(actual.shallowAdvance(target), shallowExpected, `${label}: shallowAdvance(${target})`);
      if (shallowExpected !== NO_MORE_DOCS) {
        assert.equal(actual.blockMaxFreq(), expected.blockMaxFreq(), `${label}: blockMaxFreq at ${target}`);
        assert.equal(actual.blockMinNorm(), expected.blockMinNorm(), `${label}: blockMinNorm at ${target}`);
      }
    }
    const doc = expected.advance(target);
    assert.equal(actual.advance(target), doc, `${label}: advance(${target})`);
    if (doc === NO_MORE_DOCS) break;
    assert.equal(actual.freq(), expected.freq(), `${label}: freq after advance(${target})`);
    target = doc;
    if (random() < 0.5) {
      const next = expected.next();
      assert.equal(actual.next(), next, `${label}: next after advance`);
      if (next === NO_MORE_DOCS) break;
      target = next;
    }
  }
  assert.equal(actual.next(), NO_MORE_DOCS, `${label}: stays exhausted`);
}

/** Asserts that `actual` exposes exactly what `expected` does (block bounds compared by `blocks`). */
export function assertLeafMatches(actual: LeafReader, expected: LeafReader, blocks: BlockCheck = 'same'): void {
  assert.equal(actual.maxDoc, expected.maxDoc, 'maxDoc');
  assert.equal(actual.numLiveDocs(), expected.numLiveDocs(), 'numLiveDocs');
  for (let doc = 0; doc < expected.maxDoc; doc++) assert.equal(actual.isLive(doc), expected.isLive(doc), `isLive(${doc})`);

  assert.deepEqual(sorted(actual.indexedFields()), sorted(expected.indexedFields()), 'indexedFields');
  for (const field of expected.indexedFields()) {
    const withPositions = expected.hasPositions(field);
    assert.equal(actual.hasPositions(field), withPositions, `hasPositions(${field})`);
    assert.deepEqual(actual.fieldStats(field), expected.fieldStats(field), `fieldStats(${field})`);
    for (let doc = 0; doc < expected.maxDoc; doc++) {
      assert.equal(actual.norm(field, doc), expected.norm(field, doc), `norm(${field}, ${doc})`);
    }
    const actualTerms = actual.terms(field);
    const expectedTerms = expected.terms(field);
    const allTerms: string[] = [];
    for (let term = expectedTerms.next(); term !== null; term = expectedTerms.next()) {
      allTerms.push(term);
      assert.equal(actualTerms.next(), term, `terms(${field}) order`);
      assert.equal(actualTerms.docFreq(), expectedTerms.docFreq(), `docFreq of ${field}:${term}`);
      const actualCursor = actualTerms.postings();
      const expectedCursor = expectedTerms.postings();
      assert.equal(actualCursor.docFreq, expectedCursor.docFreq, `cursor docFreq of ${field}:${term}`);
      assert.equal(actualCursor.maxFreq, expectedCursor.maxFreq, `maxFreq of ${field}:${term}`);
      assert.equal(actualCursor.minNorm, expectedCursor.minNorm, `minNorm of ${field}:${term}`);
      assert.deepEqual(drain(actualCursor, withPositions), drain(expectedCursor, withPositions), `postings of ${field}:${term}`);
    }
    assert.equal(actualTerms.next(), null, `terms(${field}) ends`);

    for (const [index, term] of allTerms.entries()) {
      assert.equal(actual.docFreq(field, term), expected.docFreq(field, term), `docFreq(${field}, ${term})`);
      if (index % 7 === 0 || expected.docFreq(field, term) > 128) {
        let termDocs: TermDocs | undefined;
        if (blocks === 'bounding') {
          const { docs, freqs } = drain(expected.postings(field, term)!, false);
          termDocs = { docs, freqs, norms: docs.map((doc) => expected.norm(field, doc)) };
        }
        assertSameSkipping(actual.postings(field, term)!, expected.postings(field, term)!, expected.maxDoc, index, `${field}:${term}`, blocks, termDocs);
      }
    }
    for (const missing of ['', 'zzzz-missing', `${allTerms[0] ?? ''}\u0000`]) {
      if (allTerms.includes(missing)) continue;
      assert.equal(actual.postings(field, missing), null, `postings(${field}, ${JSON.stringify(missing)})`);
      assert.equal(actual.docFreq(field, missing), 0);
    }
    for (const from of [allTerms[0] ?? 'a', allTerms[Math.floor(allTerms.length / 2)] ?? 'm', 'w2', 'w55x', '\uD83D', 'zz']) {
      const expectedFrom: string[] = [];
      const actualFrom: string[] = [];
      const expectedIterator = expected.terms(field, from);
      const actualIterator = actual.terms(field, from);
      for (let term = expectedIterator.next(); term !== null; term = expectedIterator.next()) expectedFrom.push(term);
      for (let term = actualIterator.next(); term !== null; term = actualIterator.next()) actualFrom.push(term);
      assert.deepEqual(actualFrom, expectedFrom, `terms(${field}, ${JSON.stringify(from)})`);
    }
  }

  assert.deepEqual(sorted(actual.numericFields()), sorted(expected.numericFields()), 'numericFields');
  for (const field of expected.numericFields()) {
    const actualColumn = actual.numericColumn(field)!;
    const expectedColumn = expected.numericColumn(field)!;
    assert.equal(actual.inplaceColumn(field) === null, expected.inplaceColumn(field) === null, `inplace(${field})`);
    for (let doc = 0; doc < expected.maxDoc; doc++) {
      const count = expectedColumn.count(doc);
      assert.equal(actualColumn.count(doc), count, `count(${field}, ${doc})`);
      for (let i = 0; i < count; i++) assert.equal(actualColumn.value(doc, i), expectedColumn.value(doc, i), `value(${field}, ${doc}, ${i})`);
      const expectedInplace = expected.inplaceColumn(field);
      if (expectedInplace) assert.equal(actual.inplaceColumn(field)!.get(doc), expectedInplace.get(doc), `get(${field}, ${doc})`);
    }
  }

  assert.deepEqual(sorted(actual.keywordFields()), sorted(expected.keywordFields()), 'keywordFields');
  for (const field of expected.keywordFields()) {
    const actualColumn = actual.keywordColumn(field)!;
    const expectedColumn = expected.keywordColumn(field)!;
    assert.equal(actualColumn.ordinalCount, expectedColumn.ordinalCount, `ordinalCount(${field})`);
    for (let ordinal = 0; ordinal < expectedColumn.ordinalCount; ordinal++) {
      const term = expectedColumn.term(ordinal);
      assert.equal(actualColumn.term(ordinal), term, `term(${field}, ${ordinal})`);
      assert.equal(actualColumn.lookup(term), ordinal, `lookup(${field}, ${term})`);
    }
    assert.equal(actualColumn.lookup('zz-not-a-term'), -1);
    for (let doc = 0; doc < expected.maxDoc; doc++) {
      const count = expectedColumn.count(doc);
      assert.equal(actualColumn.count(doc), count, `keyword count(${field}, ${doc})`);
      for (let i = 0; i < count; i++) assert.equal(actualColumn.ordinal(doc, i), expectedColumn.ordinal(doc, i), `ordinal(${field}, ${doc}, ${i})`);
    }
  }

  for (let doc = 0; doc < expected.maxDoc; doc++) {
    assert.deepEqual(actual.source(doc), expected.source(doc), `source(${doc})`);
    const meta = expected.meta(doc);
    assert.deepEqual(actual.meta(doc), meta, `meta(${doc})`);
    assert.equal(actual.lookupId(meta.id), expected.lookupId(meta.id), `lookupId(${meta.id})`);
  }
  assert.equal(actual.lookupId('no-such-id'), -1);
}
