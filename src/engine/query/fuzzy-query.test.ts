import { test } from 'node:test';
import assert from 'node:assert/strict';
import { EngineError } from '../errors.ts';
import { countQuery, executeQuery } from './execute.ts';
import { editDistance, levenshteinDfa } from './fuzzy-automaton.ts';
import { editsFor, parseFuzziness } from './fuzzy-query.ts';
import { bm25Idf } from './bm25.ts';
import { buildLeaf, fieldsOf, hitIds, type CorpusDoc } from './test-corpus.fixture.ts';

const fields = fieldsOf({ properties: { title: { type: 'text' }, tag: { type: 'keyword' }, year: { type: 'integer' } } });
const docs: CorpusDoc[] = [
  { id: '1', source: { title: 'quick brown fox', tag: 'Quick', year: 2001 } },
  { id: '2', source: { title: 'quack brown box', tag: 'quack', year: 2002 } },
  { id: '3', source: { title: 'the qiuck dog', tag: 'qiuck' } },
  { id: '4', source: { title: 'quickly now', tag: 'quickly' } },
  { id: '5', source: { title: 'nothing alike', tag: 'other' } },
];
const leaves = [buildLeaf(docs.slice(0, 2), fields, 0), buildLeaf(docs.slice(2), fields, 1)];

function ids(query: unknown): string[] {
  return hitIds(leaves, executeQuery(leaves, fields, { query, from: 0, size: 20 }).hits).sort();
}

function parseFailure(query: unknown, pattern: RegExp): void {
  assert.throws(() => executeQuery(leaves, fields, { query, from: 0, size: 1 }), (error: unknown) => error instanceof EngineError && pattern.test(error.message));
}

test('the Levenshtein DFA accepts exactly the strings within the distance', () => {
  const words = ['quick', 'quack', 'qiuck', 'quickly', 'quic', 'uick', 'xquick', 'qu', 'kciuq', 'quikc', 'quixk'];
  for (const transpositions of [true, false]) {
    for (const edits of [0, 1, 2]) {
      for (const prefix of [0, 2]) {
        const dfa = levenshteinDfa('quick', edits, prefix, transpositions);
        for (const word of words) {
          const expected = word.startsWith('quick'.slice(0, prefix)) && editDistance(word, 'quick', edits, transpositions) <= edits;
          assert.equal(dfa.matches(word), expected, `${word} edits=${edits} prefix=${prefix} transpositions=${transpositions}`);
        }
      }
    }
  }
  assert.equal(editDistance('quick', 'qiuck', 2, true), 1);
  assert.equal(editDistance('quick', 'qiuck', 2, false), 2);
  assert.equal(editDistance('abc', 'xyzabc', 2, true), 3);
});

test('fuzziness values: 0-2, AUTO, AUTO:low,high; others refused', () => {
  assert.deepEqual(parseFuzziness('AUTO', 'match'), { kind: 'auto', low: 3, high: 6 });
  assert.deepEqual(parseFuzziness('auto:2,4', 'match'), { kind: 'auto', low: 2, high: 4 });
  assert.deepEqual(parseFuzziness(1, 'match'), { kind: 'fixed', edits: 1 });
  assert.deepEqual(parseFuzziness('2', 'match'), { kind: 'fixed', edits: 2 });
  const auto = parseFuzziness('AUTO', 'match');
  assert.deepEqual(['ab', 'abc', 'abcde', 'abcdef'].map((term) => editsFor(auto, term)), [0, 1, 1, 2]);
  assert.throws(() => parseFuzziness(3, 'match'), /Valid edit distances are \[0, 1, 2\] but was \[3\]/);
  assert.throws(() => parseFuzziness('1.5', 'match'), /Valid edit distances/);
  assert.throws(() => parseFuzziness('AUTO:x', 'match'), /failed to find low and high/);
  assert.throws(() => parseFuzziness('lots', 'match'), /invalid fuzziness/);
});

test('match with fuzziness finds terms within the edits; transpositions and prefix_length apply', () => {
  assert.deepEqual(ids({ match: { title: { query: 'quick', fuzziness: 'AUTO' } } }), ['1', '2', '3']);
  assert.deepEqual(ids({ match: { title: { query: 'quick', fuzziness: 1, fuzzy_transpositions: false } } }), ['1', '2']);
  assert.deepEqual(ids({ match: { title: { query: 'quick', fuzziness: 2 } } }), ['1', '2', '3', '4']);
  assert.deepEqual(ids({ match: { title: { query: 'quick', fuzziness: 1, prefix_length: 2 } } }), ['1', '2']);
  assert.deepEqual(ids({ match: { title: { query: 'quick', fuzziness: 0 } } }), ['1']);
  assert.deepEqual(ids({ match: { title: { query: 'quick', fuzziness: 2, max_expansions: 1 } } }), ['1']);
  assert.deepEqual(ids({ match: { title: { query: 'quikc fxo', fuzziness: 'AUTO', operator: 'and' } } }), ['1']);
  // AUTO: a two-letter term must match exactly.
  assert.deepEqual(ids({ match: { title: { query: 'fo', fuzziness: 'AUTO' } } }), []);
});

test('fuzzy scores: the exact term outranks its neighbours, each scored with the blended document frequency', () => {
  const result = executeQuery(leaves, fields, { query: { fuzzy: { title: { value: 'quick', fuzziness: 1 } } }, from: 0, size: 10 });
  const byId = new Map(hitIds(leaves, result.hits).map((id, index) => [id, result.hits[index]!.score]));
  assert.ok(byId.get('1')! > byId.get('2')!);
  // quick and quack each have docFreq 1 (the blend is 1), so quack scores 1 - 1/5 of quick's score when lengths match.
  const scoreQuick = byId.get('1')!;
  const scoreQuack = byId.get('2')!;
  assert.ok(Math.abs(scoreQuack / scoreQuick - 0.8) < 1e-9, `${scoreQuack / scoreQuick}`);
  assert.ok(bm25Idf(1, 5) > 0);
});

test('the fuzzy query: keyword terms, AUTO default, unmapped field, value fields refused', () => {
  assert.deepEqual(ids({ fuzzy: { tag: 'quick' } }), ['1', '2', '3']);
  assert.deepEqual(ids({ fuzzy: { tag: { value: 'Quick', fuzziness: 0 } } }), ['1']);
  assert.deepEqual(ids({ fuzzy: { tag: { value: 'quick', transpositions: false } } }), ['1', '2']);
  assert.deepEqual(ids({ fuzzy: { missing: 'quick' } }), []);
  parseFailure({ fuzzy: { year: 2001 } }, /Can only use fuzzy queries on keyword and text fields/);
  parseFailure({ fuzzy: { tag: { value: 'x', fuzziness: 5 } } }, /Valid edit distances/);
  parseFailure({ fuzzy: { tag: { value: 'x', colour: 'red' } } }, /\[fuzzy\] unknown field \[colour\]/);
  parseFailure({ match: { year: { query: '2001', fuzziness: 1 } } }, /Can only use fuzzy queries/);
  assert.deepEqual(ids({ match: { year: { query: '2001', fuzziness: 1, lenient: true } } }), []);
  parseFailure({ multi_match: { query: 'quick', fields: ['title'], type: 'phrase', fuzziness: 1 } }, /Fuzziness not allowed for type \[phrase\]/);
});

test('multi_match, match_bool_prefix and simple_query_string fuzzy terms', () => {
  assert.deepEqual(ids({ multi_match: { query: 'quikc', fields: ['title', 'tag'], fuzziness: 'AUTO' } }), ['1']);
  assert.deepEqual(ids({ multi_match: { query: 'qiuck', fields: ['title', 'tag'], fuzziness: 1, type: 'most_fields' } }), ['1', '3']);
  assert.deepEqual(ids({ match_bool_prefix: { title: { query: 'qiuck bro', fuzziness: 1 } } }), ['1', '2', '3']);
  assert.deepEqual(ids({ simple_query_string: { query: 'quikc~1', fields: ['title'] } }), ['1']);
  assert.deepEqual(ids({ simple_query_string: { query: 'quick~', fields: ['title'] } }), ['1', '2', '3', '4']);
  assert.deepEqual(ids({ simple_query_string: { query: 'quick~2', fields: ['title'], fuzzy_max_expansions: 1 } }), ['1']);
});

test('fuzzy expansions count against the clause limit', () => {
  const many: CorpusDoc[] = [];
  for (let index = 0; index < 1100; index++) many.push({ id: String(index), source: { tag: `a${String(index).padStart(4, '0')}` } });
  const leaf = buildLeaf(many, fields, 0);
  const clauses = Array.from({ length: 30 }, (_, index) => ({ fuzzy: { tag: { value: `a${String(index * 30).padStart(4, '0')}`, fuzziness: 2, max_expansions: 50 } } }));
  assert.throws(() => countQuery([leaf], fields, { bool: { should: clauses } }), /too many clauses/);
  assert.ok(countQuery([leaf], fields, { bool: { should: clauses.slice(0, 5) } }) > 5);
});

test('a fuzzy term longer than the bound is a 400, quickly', () => {
  const started = performance.now();
  parseFailure({ fuzzy: { tag: { value: 'a'.repeat(10_000), fuzziness: 2 } } }, /Term too complex/);
  parseFailure({ match: { tag: { query: 'b'.repeat(300), fuzziness: 'AUTO' } } }, /Term too complex/);
  assert.ok(performance.now() - started < 1000);
  assert.deepEqual(ids({ fuzzy: { tag: { value: 'q'.repeat(300), prefix_length: 100, fuzziness: 1 } } }), []);
});
