import { test } from 'node:test';
import assert from 'node:assert/strict';
import { NO_MORE_DOCS, type PostingsCursor } from './leaf-reader.ts';
import type { SegmentPostingsCursor } from './postings-cursor.ts';
import { withBodySegment } from './body-segment.fixture.ts';
import { seededRandom, type TestDoc } from './reference-leaf.fixture.ts';

const WORDS = ['a', 'b', 'c', 'd', 'e', 'f', 'g'];

/** Docs where `a` is in nearly every doc (doc gaps of 1 or 2 bits), the rest ever rarer; some docs long. */
function denseDocs(count: number, seed: number): TestDoc[] {
  const random = seededRandom(seed);
  return Array.from({ length: count }, (_, n) => {
    const length = n % 29 === 0 ? 300 : 3 + Math.floor(random() * 20);
    const body = Array.from({ length }, () => WORDS[Math.floor(random() * random() * WORDS.length)]!);
    if (random() < 0.97) body.push('a');
    return { id: `d${n}`, text: { body } };
  });
}

/** The starts `keepStartsAt` should keep: those at which `positions` hold a position `offset` further. */
function expectedKept(starts: number[], positions: number[], offset: number): number[] {
  const present = new Set(positions);
  return starts.filter((start) => present.has(start + offset));
}

test('phrase starts written from a doc\'s positions and kept against another term\'s match the decoded positions', async () => {
  await withBodySegment(denseDocs(5000, 31), (segment, leaf) => {
    const random = seededRandom(7);
    let compared = 0;
    for (const [seedWord, otherWord] of [['a', 'b'], ['b', 'a'], ['c', 'a'], ['a', 'a'], ['g', 'a']] as const) {
      const seed = segment.postings('body', seedWord)! as SegmentPostingsCursor;
      const other = segment.postings('body', otherWord)! as SegmentPostingsCursor;
      const seedReference: PostingsCursor = leaf.postings('body', seedWord)!;
      const otherReference: PostingsCursor = leaf.postings('body', otherWord)!;
      for (let doc = seed.next(); doc !== NO_MORE_DOCS; doc = seed.next()) {
        assert.equal(seedReference.advance(doc), doc);
        if (other.advance(doc) === NO_MORE_DOCS) break;
        otherReference.advance(doc);
        if (other.doc !== doc) continue;
        const offset = Math.floor(random() * 3);
        const otherOffset = offset + 1 + Math.floor(random() * 2);
        const starts = new Int32Array(seed.positionsByteLength());
        const count = seed.positionStartsInto(starts, offset);
        const expectedStarts = Array.from(seedReference.positions(), (position) => position - offset);
        assert.deepEqual(Array.from(starts.subarray(0, count)), expectedStarts, `${seedWord}: starts in ${doc}`);
        const kept = other.keepStartsAt(starts, count, otherOffset);
        const expected = expectedKept(expectedStarts, Array.from(otherReference.positions()), otherOffset);
        assert.deepEqual(Array.from(starts.subarray(0, kept)), expected, `${seedWord} ${otherWord}: kept starts in ${doc}`);
        // The cursors' own positions stay readable after either call.
        assert.deepEqual(Array.from(other.positions()), Array.from(otherReference.positions()), `${otherWord}: positions of ${doc}`);
        compared++;
      }
    }
    assert.ok(compared > 3000, `many docs should be compared (${compared})`);
  });
});

test('a start below every position (a phrase starting before the doc) is never kept', async () => {
  await withBodySegment(denseDocs(400, 32), (segment) => {
    const cursor = segment.postings('body', 'a')! as SegmentPostingsCursor;
    let checked = 0;
    for (let doc = cursor.next(); doc !== NO_MORE_DOCS; doc = cursor.next()) {
      const first = cursor.positions()[0]!;
      const starts = Int32Array.of(first - 2, first - 1, first);
      assert.deepEqual(Array.from(starts.subarray(0, cursor.keepStartsAt(starts, 3, 0))), [first], `doc ${doc}`);
      checked++;
    }
    assert.ok(checked > 300);
  });
});

test('advancing over blocks of 1- and 2-bit doc gaps from either end of the block finds the same docs', async () => {
  await withBodySegment(denseDocs(6000, 33), (segment, leaf) => {
    const random = seededRandom(3);
    for (const longest of [3, 40, 130, 400]) {
      const cursor = segment.postings('body', 'a')!;
      const reference = leaf.postings('body', 'a')!;
      let doc = -1;
      let steps = 0;
      while (doc !== NO_MORE_DOCS) {
        const target = doc + 1 + Math.floor(random() * longest);
        doc = reference.advance(target);
        assert.equal(cursor.advance(target), doc, `advance(${target}) by up to ${longest}`);
        if (doc !== NO_MORE_DOCS && random() < 0.3) {
          assert.deepEqual(Array.from(cursor.positions()), Array.from(reference.positions()), `positions of ${doc}`);
        }
        steps++;
      }
      assert.ok(steps > 20, `the walk by up to ${longest} should take many steps (${steps})`);
    }
  });
});
