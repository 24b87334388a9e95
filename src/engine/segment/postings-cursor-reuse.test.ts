import { test } from 'node:test';
import assert from 'node:assert/strict';
import { NO_MORE_DOCS, type PostingsCursor } from './leaf-reader.ts';
import { SegmentPostingsCursor } from './postings-cursor.ts';
import { withBodySegments } from './body-segment.fixture.ts';
import { generateTestDocs, seededRandom } from './reference-leaf.fixture.ts';

/** Walks both cursors to the end by next and advance, comparing docs, freqs and positions (some only up to a limit). */
function assertSameWalk(actual: PostingsCursor, expected: PostingsCursor, random: () => number, label: string): void {
  assert.equal(actual.docFreq, expected.docFreq, `${label}: docFreq`);
  let doc = -1;
  for (let steps = 0; steps <= expected.docFreq; steps++) {
    const byNext = random() < 0.5;
    const target = doc + 1 + Math.floor(random() * random() * 300);
    doc = byNext ? expected.next() : expected.advance(target);
    assert.equal(byNext ? actual.next() : actual.advance(target), doc, `${label}: doc after ${byNext ? 'next' : `advance(${target})`}`);
    if (doc === NO_MORE_DOCS) return;
    assert.equal(actual.freq(), expected.freq(), `${label}: freq of ${doc}`);
    const all = Array.from(expected.positions());
    if (random() < 0.3) {
      const limit = Math.floor(random() * ((all.at(-1) ?? 0) + 2));
      const stop = all.findIndex((position) => position >= limit);
      // Decoded at least up to the first at or past the limit (singletons decode them all).
      const upTo = Array.from((actual as SegmentPostingsCursor).positionsUpTo(limit));
      assert.ok(upTo.length >= (stop < 0 ? all.length : stop + 1), `${label}: positions of ${doc} up to ${limit}`);
      assert.deepEqual(upTo, all.slice(0, upTo.length), `${label}: positions of ${doc} up to ${limit}`);
    }
    assert.deepEqual(Array.from(actual.positions()), all, `${label}: positions of ${doc}`);
  }
  assert.fail(`${label}: the walk did not end`);
}

test('a cursor moved from term to term, across two segments, reads each term as a new cursor would', async () => {
  // Words of their own in some docs give singleton terms.
  const docLists = [generateTestDocs(5000, 41, 'a'), generateTestDocs(700, 42, 'b')].map((docs) =>
    docs.map((doc, n) => (n % 9 === 0 ? { ...doc, text: { ...doc.text, body: [...doc.text!.body!, `only${n}`, `only${n}`] } } : doc)),
  );
  await withBodySegments(docLists, (segments, leaves) => {
    const random = seededRandom(7);
    const terms = segments.map((segment) => {
      const all: string[] = [];
      const iterator = segment.terms('body');
      for (let term = iterator.next(); term !== null; term = iterator.next()) all.push(term);
      return all;
    });
    let reused: PostingsCursor | undefined;
    const docFreqs = new Set<number>();
    // Random terms of either segment: long lists (skip-cached ones too), one-block lists and singletons, one after another.
    for (let step = 0; step < 1500; step++) {
      const which = random() < 0.7 ? 0 : 1;
      const term = terms[which]![Math.floor(random() ** 2 * terms[which]!.length)]!;
      const iterator = segments[which]!.terms('body', term);
      assert.equal(iterator.next(), term);
      const cursor = iterator.postings(reused);
      if (reused !== undefined) assert.equal(cursor, reused, 'a segment cursor is moved, not replaced');
      reused = cursor;
      docFreqs.add(Math.min(cursor.docFreq, 2049));
      const fresh = segments[which]!.postings('body', term)!;
      for (let target = 0; target < docLists[which]!.length + 200; target += 1 + Math.floor(random() * 400)) {
        assert.equal(cursor.shallowAdvance(target), fresh.shallowAdvance(target), `${term}: block bound of ${target}`);
        assert.equal(cursor.blockMaxFreq(), fresh.blockMaxFreq(), `${term}: block max freq at ${target}`);
      }
      assertSameWalk(cursor, leaves[which]!.postings('body', term)!, random, `${term} of segment ${which + 1} at step ${step}`);
    }
    assert.ok(reused instanceof SegmentPostingsCursor);
    assert.ok([...docFreqs].some((n) => n === 1) && [...docFreqs].some((n) => n > 2048), `singletons and lists past the skip cache's size were read (${[...docFreqs].length} sizes)`);
  });
});
