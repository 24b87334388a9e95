import { test } from 'node:test';
import assert from 'node:assert/strict';
import { EngineError } from '../errors.ts';
import { compilePattern, type Dfa } from './automaton.ts';
import { parseRegexp, parseWildcard, REGEXP_FLAGS } from './regexp-syntax.ts';

function regexp(pattern: string, flags = REGEXP_FLAGS.ALL!, caseInsensitive = false): Dfa {
  return compilePattern(parseRegexp(pattern, flags, caseInsensitive));
}

function wildcard(pattern: string, caseInsensitive = false): Dfa {
  return compilePattern(parseWildcard(pattern, caseInsensitive));
}

function check(automaton: Dfa, accepted: string[], rejected: string[]): void {
  for (const text of accepted) assert.ok(automaton.matches(text), `should accept [${text}]`);
  for (const text of rejected) assert.ok(!automaton.matches(text), `should reject [${text}]`);
}

function tooComplex(build: () => unknown): void {
  assert.throws(build, (error: unknown) => error instanceof EngineError && error.code === 'too_complex_to_determinize' && /would result in more than \d+ states/.test(error.message));
}

test('wildcards match whole terms; * any run, ? one code point, \\ escapes', () => {
  check(wildcard('ki*y'), ['kiy', 'kitty', 'kimchy'], ['ki', 'kitt', 'akiy']);
  check(wildcard('k?y'), ['kay', 'k😀y'], ['ky', 'kaay']);
  check(wildcard('a\\*b'), ['a*b'], ['ab', 'axb']);
  check(wildcard('*'), ['', 'anything'], []);
  check(wildcard('QuIcK*', true), ['quick', 'QUICKLY'], ['quack']);
  assert.equal(wildcard('kim*y').literalPrefix(), 'kim');
  assert.equal(wildcard('k*').literalPrefix(), 'k');
});

test('Lucene regexp syntax', () => {
  check(regexp('ab.*'), ['ab', 'abc', 'abxyz'], ['a', 'xab']);
  check(regexp('a(b|c)+d?'), ['ab', 'acbcd', 'abd'], ['a', 'ad', 'abdd']);
  check(regexp('a{2,3}'), ['aa', 'aaa'], ['a', 'aaaa']);
  check(regexp('a{2,}'), ['aa', 'aaaaa'], ['a']);
  check(regexp('[a-c]x[^0-9]'), ['axz', 'cx-'], ['dxz', 'ax5']);
  check(regexp('"a.b"c'), ['a.bc'], ['axbc']);
  check(regexp('\\d+-\\w\\s\\S'), ['12-a x', '1-_ !'], ['a-a x', '12-a  ']);
  check(regexp('a\\.b'), ['a.b'], ['axb']);
  check(regexp('()a'), ['a'], ['']);
  check(regexp('foo<1-100>'), ['foo1', 'foo42', 'foo100', 'foo007'], ['foo0', 'foo101', 'foo']);
  check(regexp('<01-10>'), ['01', '09', '10'], ['1', '11', '00']);
  check(regexp('@x', REGEXP_FLAGS.ANYSTRING!), ['x', 'abcx'], ['xa']);
  check(regexp('@x', REGEXP_FLAGS.NONE), ['@x'], ['x']);
  check(regexp('a|#'), ['a'], ['', '#']);
  check(regexp('a#', REGEXP_FLAGS.NONE), ['a#'], ['a']);
  check(regexp('a~b', REGEXP_FLAGS.NONE), ['a~b'], []);
  check(regexp('QuI.k', REGEXP_FLAGS.ALL, true), ['quick', 'QUIck'], ['quack']);
  check(regexp('a||b'), ['a', '|b'], ['b']);
  assert.equal(regexp('abc[de]f').literalPrefix(), 'abc');
});

test('malformed regexps are parsing errors naming the position', () => {
  const cases: Array<[string, RegExp]> = [
    ['a(b', /expected '\)' at position 3/],
    ['a)b', /end-of-string expected at position 1/],
    ['[ab', /expected '\]' at position 3/],
    ['a{2', /expected '}' at position 3/],
    ['a{x}', /integer expected at position 2/],
    ['a{3,2}', /invalid repetition range/],
    ['"ab', /expected '"'/],
    ['a|', /unexpected end-of-string/],
    ['<1-x>', /interval syntax error/],
    ['a~b', /complement operator \[~\] at position 1 is not supported/],
    ['a&b', /intersection operator \[&\] at position 1 is not supported/],
  ];
  for (const [pattern, message] of cases) {
    assert.throws(
      () => parseRegexp(pattern, REGEXP_FLAGS.ALL!, false),
      (error: unknown) => error instanceof EngineError && error.code === 'parsing' && message.test(error.message),
      pattern,
    );
  }
});

test('patterns whose DFA would explode are too complex, not slow', () => {
  tooComplex(() => regexp('[ab]*a[ab]{20}'));
  tooComplex(() => wildcard(`*a${'?'.repeat(20)}`));
  tooComplex(() => regexp('(a{1000}){1000}'));
  tooComplex(() => compilePattern(parseRegexp('[ab]*a[ab]{6}', REGEXP_FLAGS.ALL!, false), { maxDeterminizedStates: 10 }));
  assert.ok(regexp('[ab]*a[ab]{6}').matches('bbbabbbbbb'));
});

// Matching walks the DFA once per code point: these patterns, exponential for a backtracking
// matcher, cost one pass over the term by construction (no time assertion needed).
test('pathological patterns on long terms match in one pass', () => {
  const long = 'a'.repeat(10_000);
  const stars = wildcard('*a*a*a*a*a*a*a*b');
  assert.equal(stars.matches(long), false);
  assert.equal(stars.matches(`${long}b`), true);
  assert.ok(stars.stateCount < 20);
  assert.equal(regexp('(a+)+b').matches(long), false);
  assert.equal(regexp('(a|aa)*c').matches(long), false);
  assert.equal(regexp('(a|a)*').matches(long), true);
  assert.equal(regexp('(.*a){12}').matches(long), true);
});

test('nextCandidate: seeking the sorted terms to it skips only terms the automaton rejects', async () => {
  const { levenshteinDfa } = await import('./fuzzy-automaton.ts');
  let seed = 7;
  const random = (n: number): number => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    return seed % n;
  };
  const alphabet = 'abcdeé€';
  const terms = [...new Set(Array.from({ length: 3000 }, () => Array.from({ length: 1 + random(7) }, () => alphabet[random(alphabet.length)]).join('')))].sort();
  const automata = [regexp('a.*c'), regexp('[b-d]+e?'), regexp('(ab|cd)*'), wildcard('*é*'), wildcard('c?d*'), levenshteinDfa('abcde', 2, 0, true), levenshteinDfa('dea', 1, 1, false), levenshteinDfa('€ab', 2, 0, true)];
  for (const automaton of automata) {
    const expected = terms.filter((term) => automaton.matches(term));
    const found: string[] = [];
    let index = 0;
    while (index < terms.length) {
      const term = terms[index]!;
      if (automaton.matches(term)) {
        found.push(term);
        index++;
        continue;
      }
      const target = automaton.nextCandidate(term);
      if (target === null) break;
      assert.ok(target === undefined || target > term, `${target} > ${term}`);
      index++;
      if (target !== undefined) while (index < terms.length && terms[index]! < target) index++;
    }
    assert.deepEqual(found, expected);
  }
});

test('forEachAcceptedTerm visits exactly the accepted terms of a leaf, seeking or reading on', async () => {
  const { levenshteinDfa } = await import('./fuzzy-automaton.ts');
  const { forEachAcceptedTerm } = await import('./multi-term-query.ts');
  const { buildLeaf, fieldsOf } = await import('./test-corpus.fixture.ts');
  const fields = fieldsOf({ properties: { tag: { type: 'keyword' } } });
  let seed = 11;
  const random = (n: number): number => {
    seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
    return (seed >>> 8) % n;
  };
  const docs = Array.from({ length: 5000 }, (_, index) => ({ id: String(index), source: { tag: Array.from({ length: 2 + random(6) }, () => 'abcdefghij'[random(10)]).join('') } }));
  const leaf = buildLeaf(docs, fields, 0);
  const all: string[] = [];
  const iterator = leaf.terms('tag');
  for (let term = iterator.next(); term !== null; term = iterator.next()) all.push(term);
  for (const automaton of [wildcard('*ab*'), wildcard('c?d*'), regexp('[a-c]j.*'), regexp('(ab|cd)+'), levenshteinDfa('abcde', 2, 0, true), levenshteinDfa('jihg', 1, 1, false)]) {
    const visited: string[] = [];
    forEachAcceptedTerm(leaf, 'tag', automaton, automaton.literalPrefix(), (_terms, term) => visited.push(term));
    assert.deepEqual(visited, all.filter((term) => automaton.matches(term)));
  }
});
