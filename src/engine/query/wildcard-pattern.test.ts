import { test } from 'node:test';
import assert from 'node:assert/strict';
import { matchesWildcard, WildcardPattern } from './wildcard-pattern.ts';

/** The reference semantics, as a (backtracking) regular expression: only for short inputs. */
function reference(pattern: string, text: string, singleCharacter: boolean): boolean {
  const escaped = [...pattern]
    .map((character) => {
      if (character === '*') return '[\\s\\S]*';
      if (character === '?' && singleCharacter) return '[\\s\\S]';
      return character.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    })
    .join('');
  return new RegExp(`^${escaped}$`).test(text);
}

test('literal, star and question-mark patterns', () => {
  assert.equal(matchesWildcard('title', 'title'), true);
  assert.equal(matchesWildcard('title', 'titles'), false);
  assert.equal(matchesWildcard('*', ''), true);
  assert.equal(matchesWildcard('a*', 'a'), true);
  assert.equal(matchesWildcard('a*a', 'a'), false, 'the prefix and the suffix may not overlap');
  assert.equal(matchesWildcard('*.name', 'author.name'), true);
  assert.equal(matchesWildcard('a*b*c', 'axxbyyc'), true);
  assert.equal(matchesWildcard('a*b*c', 'axxcyyb'), false);
  assert.equal(matchesWildcard('a*', 'a\nb'), true, 'a star matches line breaks too');
  assert.equal(matchesWildcard('a?c', 'abc'), false, '? is literal unless enabled');
  assert.equal(matchesWildcard('a?c', 'a?c'), true);
  assert.equal(matchesWildcard('a?c', 'abc', { singleCharacter: true }), true);
  assert.equal(matchesWildcard('a?c', 'ac', { singleCharacter: true }), false);
  assert.equal(matchesWildcard('*.+(a)[b]$', 'x.+(a)[b]$'), true, 'regex metacharacters are literal');
});

test('the literal prefix stops at the first wildcard', () => {
  assert.equal(new WildcardPattern('author.*.name').literalPrefix, 'author.');
  assert.equal(new WildcardPattern('author.n?me').literalPrefix, 'author.n?me');
  assert.equal(new WildcardPattern('author.n?me', { singleCharacter: true }).literalPrefix, 'author.n');
  assert.equal(new WildcardPattern('plain').hasWildcard, false);
});

test('agrees with the regular-expression semantics on random short patterns', () => {
  let seed = 7;
  const random = (): number => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return seed / 2147483648;
  };
  const pick = (alphabet: string, length: number): string =>
    Array.from({ length }, () => alphabet[Math.floor(random() * alphabet.length)]).join('');
  for (let round = 0; round < 5000; round++) {
    const pattern = pick('ab*?', Math.floor(random() * 7));
    const text = pick('ab?', Math.floor(random() * 8));
    const singleCharacter = random() < 0.5;
    assert.equal(
      matchesWildcard(pattern, text, { singleCharacter }),
      reference(pattern, text, singleCharacter),
      `${JSON.stringify(pattern)} on ${JSON.stringify(text)} (singleCharacter ${singleCharacter})`,
    );
  }
});

test('pathological patterns match in linear time (a backtracking regex takes minutes)', () => {
  const name = 'a'.repeat(100_000);
  const started = performance.now();
  assert.equal(matchesWildcard('*a*a*a*a*a*a*a*b', name), false);
  assert.equal(matchesWildcard('*a*a*a*a*a*a*a*a', name), true);
  assert.equal(matchesWildcard('*a?a?a?a?a?a?a?b', name, { singleCharacter: true }), false);
  assert.equal(matchesWildcard(`${'a*'.repeat(2000)}b`, name), false);
  assert.ok(performance.now() - started < 1000, `took ${performance.now() - started} ms`);
});
