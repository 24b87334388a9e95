import { test } from 'node:test';
import assert from 'node:assert/strict';
import { NO_MORE_DOCS, type LeafReader, type PostingsCursor } from '../segment/leaf-reader.ts';
import { withBodySegment } from '../segment/body-segment.fixture.ts';
import { seededRandom, type TestDoc } from '../segment/reference-leaf.fixture.ts';
import type { SegmentPostingsCursor } from '../segment/postings-cursor.ts';
import { PhraseScorer } from './phrase-query.ts';

const WORDS = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'];

/** Docs of `body` tokens drawn with skewed frequencies (a is common, h rare), some long, some with far gaps. */
function phraseDocs(count: number, seed: number): TestDoc[] {
  const random = seededRandom(seed);
  return Array.from({ length: count }, (_, n) => {
    const length = n % 53 === 0 ? 600 : 1 + Math.floor(random() * 40);
    const body = Array.from({ length }, () => WORDS[Math.floor(random() * random() * WORDS.length)]!);
    if (n % 17 === 0) body.push(...Array.from({ length: 150 + (n % 300) }, () => 'pad'), 'a', 'b', 'a');
    return { id: `d${n}`, text: { body } };
  });
}

/** Each matching doc with its phrase freq, or null when a term is missing. */
function phraseMatches(leaf: LeafReader, terms: string[], offsets: number[], slop: number): [number, number][] | null {
  const cursors: PostingsCursor[] = [];
  for (const term of terms) {
    const cursor = leaf.postings('body', term);
    if (cursor === null) return null;
    cursors.push(cursor);
  }
  const scorer = new PhraseScorer(cursors, terms, offsets, slop, null, leaf, 'body');
  const matches: [number, number][] = [];
  for (let doc = scorer.nextDoc(); doc !== NO_MORE_DOCS; doc = scorer.nextDoc()) matches.push([doc, scorer.freq]);
  return matches;
}

test('exact phrases over segment postings (rarest positions first, others decoded only as far as needed) match the reference', async () => {
  await withBodySegment(phraseDocs(900, 5), (segment, leaf) => {
    const random = seededRandom(11);
    const phrases: [string[], number[]][] = [
      [['a', 'b'], [0, 1]],
      [['a', 'b', 'a'], [0, 1, 2]],
      [['a', 'a'], [0, 1]],
      [['h', 'a'], [0, 1]],
      [['a', 'h'], [0, 2]],
      [['pad', 'a', 'b'], [0, 1, 2]],
    ];
    for (let n = 0; n < 40; n++) {
      const length = 2 + Math.floor(random() * 3);
      const terms = Array.from({ length }, () => WORDS[Math.floor(random() * WORDS.length)]!);
      const offsets = terms.map((_, i) => i + (i > 0 && random() < 0.2 ? 1 : 0));
      for (let i = 1; i < length; i++) offsets[i] = Math.max(offsets[i]!, offsets[i - 1]! + 1);
      phrases.push([terms, offsets]);
    }
    let matched = 0;
    for (const [terms, offsets] of phrases) {
      for (const slop of [0, 2]) {
        const expected = phraseMatches(leaf, terms, offsets, slop);
        assert.deepEqual(phraseMatches(segment, terms, offsets, slop), expected, `${terms.join(' ')} ${offsets.join(',')} slop ${slop}`);
        matched += expected?.length ?? 0;
      }
    }
    assert.ok(matched > 500, `the phrases should match many docs (${matched})`);
  });
});

test('positionsUpTo stops at the first position >= its limit, positions() then decodes them all', async () => {
  await withBodySegment(phraseDocs(400, 9), (segment, leaf) => {
    const random = seededRandom(3);
    const actual = segment.postings('body', 'a') as SegmentPostingsCursor;
    const expected = leaf.postings('body', 'a')!;
    let checked = 0;
    for (let doc = expected.advance(0); doc !== NO_MORE_DOCS; doc = expected.advance(doc + 1 + Math.floor(random() * 4))) {
      assert.equal(actual.advance(doc), doc);
      const all = Array.from(expected.positions());
      const limit = Math.floor(random() * ((all.at(-1) ?? 0) + 3));
      const stop = all.findIndex((position) => position >= limit);
      assert.ok(actual.positionsByteLength() >= all.length, `byte length of ${doc}`);
      assert.deepEqual(Array.from(actual.positionsUpTo(limit)), stop < 0 ? all : all.slice(0, stop + 1), `positions of ${doc} up to ${limit}`);
      if (random() < 0.7) assert.deepEqual(Array.from(actual.positions()), all, `positions of ${doc}`);
      checked++;
    }
    assert.ok(checked > 50, `the walk should check many docs (${checked})`);
  });
});
