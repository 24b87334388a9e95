import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { TokenSpans, scanWhitespaceSeparated, scanWords } from './word-scanner.ts';

function spansOf(spans: TokenSpans): Array<[number, number, number]> {
  const out: Array<[number, number, number]> = [];
  for (let index = 0; index < spans.count; index++) {
    out.push([spans.starts[index]!, spans.ends[index]!, spans.ascii[index]!]);
  }
  return out;
}

/** Deterministic pseudo-random generator (xorshift32) so that failures reproduce. */
function randomSource(seed: number): () => number {
  let state = seed;
  return () => {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    return (state >>> 0) / 0x1_0000_0000;
  };
}

describe('scanWords', () => {
  it('finds the same spans on the ASCII fast path as on the general path', () => {
    const alphabet = "aZ9_'., -\n";
    const random = randomSource(42);
    const fast = new TokenSpans();
    const general = new TokenSpans();
    for (let round = 0; round < 2000; round++) {
      let text = '';
      const length = Math.floor(random() * 24);
      for (let index = 0; index < length; index++) text += alphabet[Math.floor(random() * alphabet.length)];
      scanWords(text, fast, true);
      scanWords(text, general, false);
      assert.deepEqual(spansOf(fast), spansOf(general), JSON.stringify(text));
    }
  });

  it('grows past its initial capacity and flags non-ASCII spans', () => {
    const spans = new TokenSpans();
    const words = Array.from({ length: 1000 }, (_, index) => (index % 2 === 0 ? `w${index}` : `é${index}`));
    scanWords(words.join(' '), spans, false);
    assert.equal(spans.count, 1000);
    assert.equal(spans.ascii[998], 1);
    assert.equal(spans.ascii[999], 0);
    assert.equal(spans.starts[999], words.slice(0, 999).join(' ').length + 1);
  });
});

describe('scanWhitespaceSeparated', () => {
  it('splits on Unicode whitespace but not on no-break spaces', () => {
    const spans = new TokenSpans();
    scanWhitespaceSeparated('\u2003a\u00a0b\u2028c\u202fd\u3000', spans);
    assert.deepEqual(spansOf(spans), [
      [1, 4, 0],
      [5, 8, 0],
    ]);
  });
});
