import { test } from 'node:test';
import assert from 'node:assert/strict';
import { NO_MORE_DOCS, type LeafReader, type PostingsCursor } from './leaf-reader.ts';
import type { SegmentPostingsCursor } from './postings-cursor.ts';
import { withBodySegment } from './body-segment.fixture.ts';
import { seededRandom, type TestDoc } from './reference-leaf.fixture.ts';
import { PhraseScorer } from '../query/phrase-query.ts';

const WORDS = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i', 'j', 'k', 'l'];

/**
 * Docs whose words range from nearly everywhere to a few percent of docs (doc gaps packed 1 to
 * 8+ bits wide), a few with a word many times (position byte lengths packed up to 8+ bits wide).
 */
function skewedDocs(count: number, seed: number): TestDoc[] {
  const random = seededRandom(seed);
  return Array.from({ length: count }, (_, n) => {
    const length = n % 41 === 0 ? 400 : 2 + Math.floor(random() * 30);
    const body = Array.from({ length }, () => WORDS[Math.floor(random() * random() * random() * WORDS.length)]!);
    if (n % 7 === 0) body.push(...Array.from({ length: Math.floor(random() * 90) }, () => WORDS[n % WORDS.length]!));
    return { id: `d${n}`, text: { body } };
  });
}

/** Walks both cursors by next and by jumps of up to `longest` docs, comparing docs and (some docs') positions. */
function assertSameWalk(actual: PostingsCursor, expected: PostingsCursor, seed: number, longest: number, label: string): number {
  const random = seededRandom(seed);
  let doc = -1;
  let compared = 0;
  for (;;) {
    const byNext = random() < 0.2;
    const target = doc + 1 + Math.floor(random() * random() * longest);
    doc = byNext ? expected.next() : expected.advance(target);
    assert.equal(byNext ? actual.next() : actual.advance(target), doc, `${label}: doc after ${byNext ? 'next' : `advance(${target})`}`);
    if (doc === NO_MORE_DOCS) return compared;
    if (random() < 0.5) continue;
    const all = Array.from(expected.positions());
    if (random() < 0.5) {
      const limit = Math.floor(random() * ((all.at(-1) ?? 0) + 2));
      const stop = all.findIndex((position) => position >= limit);
      const upTo = (actual as SegmentPostingsCursor).positionsUpTo(limit);
      assert.deepEqual(Array.from(upTo), stop < 0 ? all : all.slice(0, stop + 1), `${label}: positions of ${doc} up to ${limit}`);
    }
    assert.deepEqual(Array.from(actual.positions()), all, `${label}: positions of ${doc}`);
    compared++;
  }
}

test('advancing by short and long jumps over blocks of every width finds the same docs and positions', async () => {
  await withBodySegment(skewedDocs(6000, 21), (segment, leaf) => {
    let compared = 0;
    for (const word of WORDS) {
      for (const [seed, longest] of [[1, 4], [2, 60], [3, 700]] as const) {
        compared += assertSameWalk(segment.postings('body', word)!, leaf.postings('body', word)!, seed + word.charCodeAt(0), longest, `${word} (${longest})`);
      }
    }
    assert.ok(compared > 5000, `the walks should compare many docs (${compared})`);
  });
});

test('a cursor over skip data decoded by an earlier one (the thread keeps it) reads the same docs and block bounds', async () => {
  await withBodySegment(skewedDocs(6000, 22), (segment, leaf) => {
    const scoring = { bound: (freq: number, norm: number) => freq * 1000 - norm };
    for (const word of WORDS) {
      const first = segment.postings('body', word)!;
      const second = segment.postings('body', word)!;
      assert.ok(first.docFreq > 16 * 128 || word > 'c', `the commonest words span many blocks (${word}: ${first.docFreq})`);
      const random = seededRandom(word.charCodeAt(0));
      for (let target = 0; target < 6000; target += 1 + Math.floor(random() * 300)) {
        assert.equal(second.shallowAdvance(target), first.shallowAdvance(target), `${word}: block end at ${target}`);
        assert.equal(second.blockMaxFreq(), first.blockMaxFreq(), `${word}: block max freq at ${target}`);
        assert.equal(second.blockMinNorm(), first.blockMinNorm(), `${word}: block min norm at ${target}`);
        assert.equal(second.blockMaxBound!(scoring), first.blockMaxBound!(scoring), `${word}: block bound at ${target}`);
      }
      assertSameWalk(second, leaf.postings('body', word)!, 5, 300, `${word} again`);
    }
  });
});

/** Each matching doc with its phrase freq, or null when a term is missing. */
function phraseMatches(leaf: LeafReader, terms: string[], offsets: number[]): [number, number][] | null {
  const cursors: PostingsCursor[] = [];
  for (const term of terms) {
    const cursor = leaf.postings('body', term);
    if (cursor === null) return null;
    cursors.push(cursor);
  }
  const scorer = new PhraseScorer(cursors, terms, offsets, 0, null, leaf, 'body');
  const matches: [number, number][] = [];
  for (let doc = scorer.nextDoc(); doc !== NO_MORE_DOCS; doc = scorer.nextDoc()) matches.push([doc, scorer.freq]);
  return matches;
}

test('exact phrases of one to five terms, built up term by term over segment postings, match the reference', async () => {
  await withBodySegment(skewedDocs(3000, 23), (segment, leaf) => {
    const random = seededRandom(17);
    const phrases: [string[], number[]][] = [
      [['a'], [0]],
      [['k'], [0]],
      [['a', 'a', 'a'], [0, 1, 2]],
      [['l', 'a', 'b'], [0, 1, 2]],
      [['a', 'b', 'a', 'c', 'a'], [0, 1, 2, 3, 4]],
    ];
    for (let n = 0; n < 60; n++) {
      const length = 2 + Math.floor(random() * 4);
      const terms = Array.from({ length }, () => WORDS[Math.floor(random() * random() * WORDS.length)]!);
      const offsets = terms.map((_, i) => i + (i > 0 && random() < 0.2 ? 1 : 0));
      for (let i = 1; i < length; i++) offsets[i] = Math.max(offsets[i]!, offsets[i - 1]! + 1);
      phrases.push([terms, offsets]);
    }
    let matched = 0;
    for (const [terms, offsets] of phrases) {
      const expected = phraseMatches(leaf, terms, offsets);
      assert.deepEqual(phraseMatches(segment, terms, offsets), expected, `${terms.join(' ')} ${offsets.join(',')}`);
      matched += expected?.length ?? 0;
    }
    assert.ok(matched > 3000, `the phrases should match many docs (${matched})`);
  });
});
