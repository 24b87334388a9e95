import assert from 'node:assert/strict';
import { test } from 'node:test';
import { NO_MORE_DOCS } from '../segment/leaf-reader.ts';
import { IntSlicePool, STREAM_HEAD, STREAM_TAIL, SliceReader, emptyStream, openSlice, sliceEntries } from './int-slices.ts';
import { FieldPostings } from './postings.ts';
import { TermTable } from './term-table.ts';

/** A small deterministic generator (xorshift32). */
function random(seed: number): () => number {
  let state = seed;
  return () => {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    return (state >>> 0) / 0x1_0000_0000;
  };
}

test('slice streams keep interleaved appends of many streams apart, across slices and chunks', () => {
  const pool = new IntSlicePool();
  const count = 50;
  // Write states 8 ints apart, as the postings keep them.
  const state = new Int32Array(count * 8);
  for (let stream = 0; stream < count; stream++) emptyStream(state, stream * 8);
  const expected: number[][] = Array.from({ length: count }, () => []);
  const next = random(7);
  // About 150k ints: several 64k-int chunks.
  for (let round = 0; round < 1500; round++) {
    for (let stream = 0; stream < count; stream++) {
      if (next() < 0.3 + (stream % 5) * 0.15) {
        const value = Math.floor(next() * 1e9);
        const at = stream * 8;
        let address = state[at + STREAM_TAIL]!;
        if (address === state[at + 2]!) address = openSlice(pool, state, at, 2);
        pool.set(address, value);
        pool.set(address + 1, -value);
        state[at + STREAM_TAIL] = address + 2;
        expected[stream]!.push(value);
      }
    }
  }
  assert.ok(pool.chunks.length >= 2, `${pool.chunks.length} chunks`);
  for (let stream = 0; stream < count; stream++) {
    const values = expected[stream]!;
    const reader = new SliceReader(pool, 2);
    reader.start(state[stream * 8 + STREAM_HEAD]!);
    for (let index = 0; index < values.length; index++) {
      reader.settle();
      assert.equal(reader.value(0), values[index]);
      assert.equal(reader.value(1), -values[index]!);
      reader.skip(1);
    }
    // Skipping many entries at once lands on the same entry as stepping.
    if (values.length > 40) {
      reader.start(state[stream * 8 + STREAM_HEAD]!);
      reader.skip(37);
      reader.settle();
      assert.equal(reader.value(0), values[37]);
    }
  }
  assert.equal(sliceEntries(0), 2);
  assert.ok(sliceEntries(30) >= sliceEntries(7));
});

test('the term table interns spans and strings to the same dense ids and grows past its first size', () => {
  const table = new TermTable();
  const text = 'alpha beta gamma alpha';
  assert.equal(table.internSpan(text, 0, 5), 0);
  assert.equal(table.internSpan(text, 6, 10), 1);
  assert.equal(table.internSpan(text, 17, 22), 0);
  assert.equal(table.intern('gamma'), 2);
  assert.equal(table.internSpan(text, 11, 16), 2);
  assert.equal(table.lookup('beta'), 1);
  assert.equal(table.lookup('delta'), -1);
  assert.equal(table.lookup(''), -1);
  for (let n = 0; n < 5000; n++) assert.equal(table.intern(`term${n}`), n + 3);
  for (let n = 0; n < 5000; n += 7) assert.equal(table.lookup(`term${n}`), n + 3);
  assert.equal(table.lookup('alpha'), 0);
  assert.equal(table.intern('é'), 5003);
  assert.equal(table.lookup('e'), -1);
  assert.equal(table.size, 5004);
  assert.deepEqual(table.terms.slice(0, 3), ['alpha', 'beta', 'gamma']);
});

interface Posting {
  doc: number;
  positions: number[];
}

/** Builds a field from random documents and returns it with the expected postings per term. */
function randomField(seed: number, docs: number, vocabulary: number, positions: boolean): { field: FieldPostings; expected: Map<string, Posting[]>; norms: number[] } {
  const next = random(seed);
  const field = new FieldPostings(new IntSlicePool(), positions);
  const expected = new Map<string, Posting[]>();
  const norms: number[] = [];
  for (let doc = 0; doc < docs; doc++) {
    // Skewed term choice: a few terms are in almost every doc, most are rare.
    const length = 1 + Math.floor(next() * 30);
    const ids = new Int32Array(length);
    const tokenPositions = new Int32Array(length);
    let position = 0;
    const seen = new Map<string, Posting>();
    for (let token = 0; token < length; token++) {
      const term = `t${Math.floor(vocabulary * next() ** 3)}`;
      ids[token] = field.intern(term);
      position += 1 + (next() < 0.1 ? 100 : 0);
      tokenPositions[token] = position;
      let posting = seen.get(term);
      if (!posting) {
        posting = { doc, positions: [] };
        seen.set(term, posting);
        const list = expected.get(term) ?? [];
        list.push(posting);
        expected.set(term, list);
      }
      posting.positions.push(position);
    }
    field.fitTerms();
    const norm = 1 + Math.floor(next() * 200);
    norms.push(norm);
    field.addTokens(doc, ids, positions ? tokenPositions : null, length, norm);
  }
  return { field, expected, norms };
}

test('cursors return every posting with its freq and positions, and the term bounds', () => {
  const { field, expected, norms } = randomField(11, 3000, 400, true);
  assert.equal(field.termCount, expected.size);
  for (const [term, postings] of expected) {
    const id = field.table.lookup(term);
    const cursor = field.cursor(id);
    assert.equal(cursor.docFreq, postings.length);
    assert.equal(field.docFreq(id), postings.length);
    assert.equal(cursor.maxFreq, Math.max(...postings.map((posting) => posting.positions.length)));
    assert.equal(cursor.minNorm, Math.min(...postings.map((posting) => norms[posting.doc]!)));
    for (const posting of postings) {
      assert.equal(cursor.next(), posting.doc);
      assert.equal(cursor.freq(), posting.positions.length);
      // Read the positions of some docs only: the skipped ones must not shift the next.
      if ((posting.doc + term.length) % 3 !== 0) assert.deepEqual(Array.from(cursor.positions()), posting.positions);
    }
    assert.equal(cursor.next(), NO_MORE_DOCS);
    assert.equal(cursor.shallowAdvance(0), postings.at(-1)!.doc);
    assert.equal(cursor.shallowAdvance(postings.at(-1)!.doc + 1), NO_MORE_DOCS);
  }
});

test('advance and countBelow agree with a linear scan', () => {
  const { field, expected } = randomField(23, 4000, 300, true);
  const next = random(5);
  for (const [term, postings] of expected) {
    const docs = postings.map((posting) => posting.doc);
    const id = field.table.lookup(term);
    for (const target of [0, 1, 999, 2000, 3999, 4000]) {
      assert.equal(field.cursor(id).countBelow!(target), docs.filter((doc) => doc < target).length, `${term} below ${target}`);
    }
    const cursor = field.cursor(id);
    let current = -1;
    for (let step = 0; step < 50; step++) {
      const target = current + 1 + Math.floor(next() * next() * 800);
      const want = docs.find((doc) => doc >= target) ?? NO_MORE_DOCS;
      current = cursor.advance(target);
      assert.equal(current, want, `${term} advance to ${target}`);
      if (current === NO_MORE_DOCS) break;
      const posting = postings.find((entry) => entry.doc === current)!;
      assert.equal(cursor.freq(), posting.positions.length);
      assert.deepEqual(Array.from(cursor.positions()), posting.positions);
    }
  }
});

test('a cursor sees the postings present when it was made, not later ones', () => {
  const field = new FieldPostings(new IntSlicePool(), true);
  const id = field.intern('x');
  field.fitTerms();
  for (let doc = 0; doc < 10; doc++) field.addTokens(doc, Int32Array.of(id, id), Int32Array.of(doc, doc + 1), 2, 5);
  const cursor = field.cursor(id);
  for (let doc = 10; doc < 1000; doc++) field.addTokens(doc, Int32Array.of(id), Int32Array.of(3), 1, 1);
  assert.equal(cursor.docFreq, 10);
  assert.equal(cursor.minNorm, 5);
  assert.equal(cursor.maxFreq, 2);
  let count = 0;
  while (cursor.next() !== NO_MORE_DOCS) {
    assert.deepEqual(Array.from(cursor.positions()), [cursor.doc, cursor.doc + 1]);
    count++;
  }
  assert.equal(count, 10);
  assert.equal(field.cursor(id).advance(500), 500);
  assert.equal(field.docFreq(id), 1000);
});

test('fields without positions keep one posting per doc (repeated values once) with freq 1', () => {
  const { field, expected } = randomField(3, 500, 50, false);
  for (const [term, postings] of expected) {
    const cursor = field.cursor(field.table.lookup(term));
    for (const posting of postings) {
      assert.equal(cursor.next(), posting.doc);
      assert.equal(cursor.freq(), 1);
      assert.deepEqual(Array.from(cursor.positions()), []);
    }
    assert.equal(cursor.next(), NO_MORE_DOCS);
    assert.equal(cursor.maxFreq, 1);
  }
});

test('sorted ids list the terms in UTF-16 code unit order and follow new terms', () => {
  const field = new FieldPostings(new IntSlicePool(), false);
  const terms = ['b', 'a', 'é', 'B', 'ab', '\u{1F600}', '\uFFFD', ''];
  for (const term of terms) field.intern(term);
  field.fitTerms();
  const order = (): string[] => [...field.sortedIds()].map((id) => field.table.terms[id]!);
  assert.deepEqual(order(), [...terms].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)));
  field.intern('aa');
  field.fitTerms();
  assert.deepEqual(order().slice(0, 5), ['', 'B', 'a', 'aa', 'ab']);
});

test('sorted ids match a string sort over thousands of terms with shared prefixes, surrogates and long runs', () => {
  const next = random(0x5eed);
  const alphabet = ['a', 'b', 'z', 'A', '0', 'é', 'ß', '\u{1F600}', '\uD7FF', '\uE000', '\uFFFF'];
  const terms = new Set<string>(['']);
  for (const length of [40, 300]) terms.add('p'.repeat(length));
  while (terms.size < 6000) {
    const prefix = next() < 0.3 ? 'prefix-shared-' : next() < 0.5 ? 'pre' : '';
    let term = prefix;
    const length = Math.floor(next() * 9);
    for (let index = 0; index < length; index++) term += alphabet[Math.floor(next() * alphabet.length)]!;
    terms.add(term);
  }
  const expected = [...terms].sort();
  // Random, sorted and reversed first-seen orders (sorted input defeats fixed pivots).
  for (const order of [[...terms], expected, [...expected].reverse()]) {
    const table = new TermTable();
    for (const term of order) table.intern(term);
    assert.deepEqual([...table.sortedIds()].map((id) => table.terms[id]!), expected);
  }
});

test('copyTo streams the same postings as the cursor accessors, in batches', () => {
  const { field, expected } = randomField(31, 2000, 200, true);
  for (const [term, postings] of expected) {
    const cursor = field.cursor(field.table.lookup(term));
    const seen: Posting[] = [];
    let batches = 0;
    while (!cursor.copyTo((doc, freq, positions) => {
      assert.equal(positions!.length, freq);
      seen.push({ doc, positions: Array.from(positions!) });
    }, 7)) {
      batches++;
      assert.ok(batches <= postings.length, 'copyTo ends');
    }
    assert.deepEqual(seen, postings);
  }
  // After docs read with next() (positions read for some of them), copyTo goes on from the next doc.
  for (const [term, postings] of expected) {
    const cursor = field.cursor(field.table.lookup(term));
    const skipped = Math.floor(postings.length / 3);
    for (let index = 0; index < skipped; index++) {
      cursor.next();
      if (index % 2 === 1) assert.deepEqual(Array.from(cursor.positions()), postings[index]!.positions);
    }
    const seen: Posting[] = [];
    let calls = 0;
    while (!cursor.copyTo((doc, freq, positions) => seen.push({ doc, positions: Array.from(positions!) }), 5)) {
      calls++;
      assert.ok(calls <= postings.length, 'copyTo ends');
    }
    assert.deepEqual(seen, postings.slice(skipped));
  }
  const keywords = randomField(37, 300, 20, false);
  for (const [term, postings] of keywords.expected) {
    const cursor = keywords.field.cursor(keywords.field.table.lookup(term));
    const docs: number[] = [];
    assert.equal(cursor.copyTo((doc, freq, positions) => {
      assert.equal(freq, 1);
      assert.equal(positions, null);
      docs.push(doc);
    }, 1_000_000), true);
    assert.deepEqual(docs, postings.map((posting) => posting.doc));
  }
});
