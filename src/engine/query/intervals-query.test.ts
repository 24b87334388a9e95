import { test } from 'node:test';
import assert from 'node:assert/strict';
import { EngineError } from '../errors.ts';
import { executeQuery, parseQuery } from './execute.ts';
import { intervalFilter, orderedIntervals, unorderedIntervals, type Interval } from './intervals-algebra.ts';
import { buildLeaf, fieldsOf, hitIds, type CorpusDoc } from './test-corpus.fixture.ts';

const fields = fieldsOf({
  properties: { text: { type: 'text' }, other: { type: 'text' }, english: { type: 'text', analyzer: 'english' }, tag: { type: 'keyword' }, year: { type: 'integer' } },
});
const TEXTS = [
  'Some like hot and dry, some like it cold and wet',
  'Its cold outside, theres no kind of atmosphere',
  'Baby its cold there outside',
  'Outside it is cold and wet',
  'cold rain makes it wet',
  'that is some cold cold rain',
];
const docs: CorpusDoc[] = TEXTS.map((text, index) => ({ id: String(index + 1), source: { text, tag: 'x', other: index === 0 ? 'outside cold' : 'nothing here' } }));
docs.push({ id: '7', source: { english: 'the cold of the outside', text: 'zzz' } });
// Two leaves, so approximations and expansions cross leaf boundaries.
const leaves = [buildLeaf(docs.slice(0, 3), fields, 0), buildLeaf(docs.slice(3), fields, 1)];

function run(query: unknown): Array<[string, number]> {
  const result = executeQuery(leaves, fields, { query, from: 0, size: 20 });
  return hitIds(leaves, result.hits).map((id, index) => [id, result.hits[index]!.score]);
}

function ids(rule: unknown, field = 'text'): string[] {
  return run({ intervals: { [field]: rule } })
    .map(([id]) => id)
    .sort();
}

function parseError(query: unknown): string {
  try {
    parseQuery(query, fields);
  } catch (error) {
    assert.ok(error instanceof EngineError, String(error));
    return error.message;
  }
  assert.fail(`expected ${JSON.stringify(query)} to be refused`);
}

const intervals = (...pairs: Array<[number, number]>): Interval[] => pairs.map(([start, end]) => ({ start, end }));

test('ordered and unordered keep the minimal intervals', () => {
  // "a a b a b": a at 0, 1, 3; b at 2, 4.
  const a = intervals([0, 0], [1, 1], [3, 3]);
  const b = intervals([2, 2], [4, 4]);
  assert.deepEqual(orderedIntervals([a, b], -1), intervals([1, 2], [3, 4]));
  assert.deepEqual(unorderedIntervals([a, b], -1), intervals([1, 2], [2, 3], [3, 4]));
  assert.deepEqual(orderedIntervals([b, a], -1), intervals([2, 3]));
  assert.deepEqual(orderedIntervals([a, a], -1), intervals([0, 1], [1, 3]), 'a term twice needs two positions');
  assert.deepEqual(unorderedIntervals([a, a], -1), a, 'unordered lets sources share a position');
  // gaps: a at 0, b at 3 -> 2 gaps
  assert.deepEqual(orderedIntervals([intervals([0, 0]), intervals([3, 3])], 1), []);
  assert.deepEqual(orderedIntervals([intervals([0, 0]), intervals([3, 3])], 2), intervals([0, 3]));
  assert.deepEqual(unorderedIntervals([intervals([0, 2]), intervals([1, 1]), intervals([5, 5])], 2), intervals([0, 5]), 'covered positions are no gaps');
  assert.deepEqual(unorderedIntervals([intervals([0, 2]), intervals([1, 1]), intervals([5, 5])], 1), []);
  assert.deepEqual(orderedIntervals([a, []], -1), []);
});

test('filters compare boundaries inclusively', () => {
  const source = intervals([0, 1], [2, 5], [6, 6]);
  const filter = intervals([2, 2], [5, 7]);
  assert.deepEqual(intervalFilter('containing')(source, filter), intervals([2, 5]));
  assert.deepEqual(intervalFilter('not_containing')(source, filter), intervals([0, 1], [6, 6]));
  assert.deepEqual(intervalFilter('contained_by')(source, filter), intervals([6, 6]));
  assert.deepEqual(intervalFilter('not_contained_by')(source, filter), intervals([0, 1], [2, 5]));
  assert.deepEqual(intervalFilter('overlapping')(source, filter), intervals([2, 5], [6, 6]));
  assert.deepEqual(intervalFilter('not_overlapping')(source, filter), intervals([0, 1]));
  assert.deepEqual(intervalFilter('before')(source, filter), intervals([0, 1]), 'ends before the last filter start');
  assert.deepEqual(intervalFilter('after')(source, filter), intervals([6, 6]), 'starts after the first filter end');
  assert.deepEqual(intervalFilter('containing')(source, []), []);
  assert.deepEqual(intervalFilter('not_overlapping')(source, []), source);
});

test('match: unordered by default, ordered, max_gaps, no overlaps', () => {
  assert.deepEqual(ids({ match: { query: 'cold outside' } }), ['2', '3', '4']);
  assert.deepEqual(ids({ match: { query: 'cold outside', ordered: true } }), ['2', '3']);
  assert.deepEqual(ids({ match: { query: 'cold outside', mode: 'ordered' } }), ['2', '3']);
  assert.deepEqual(ids({ match: { query: 'cold outside', ordered: false } }), ['2', '3', '4']);
  assert.deepEqual(ids({ match: { query: 'cold outside', mode: 'ordered', max_gaps: 0 } }), ['2']);
  assert.deepEqual(ids({ match: { query: 'cold outside', max_gaps: 1 } }), ['2', '3']);
  assert.deepEqual(ids({ match: { query: 'cold outside', max_gaps: -1 } }), ['2', '3', '4']);
  assert.deepEqual(ids({ match: { query: 'cold wet it', mode: 'unordered' } }), ['1', '4', '5']);
  assert.deepEqual(ids({ match: { query: 'cold wet it', mode: 'unordered_no_overlap' } }), ['1', '4']);
  assert.deepEqual(ids({ match: { query: 'COLD' } }), ['1', '2', '3', '4', '5', '6'], 'the field analyzer lowercases');
  assert.deepEqual(ids({ match: { query: 'Cold', analyzer: 'keyword' } }), [], 'a query analyzer overrides it');
  assert.deepEqual(ids({ match: { query: '...' } }), [], 'no words, no intervals');
  assert.deepEqual(ids({ match: { query: 'cold cold', mode: 'ordered', max_gaps: 0 } }), ['6']);
});

test('match: stop words keep their places', () => {
  assert.deepEqual(ids({ match: { query: 'cold the outside', mode: 'ordered', max_gaps: 0 } }, 'english'), [], 'two words sit between');
  assert.deepEqual(ids({ match: { query: 'cold of the outside', mode: 'ordered', max_gaps: 0 } }, 'english'), ['7']);
  assert.deepEqual(ids({ match: { query: 'cold outside', mode: 'ordered', max_gaps: 2 } }, 'english'), ['7']);
});

test('use_field reads the positions of another field', () => {
  assert.deepEqual(ids({ match: { query: 'outside cold', mode: 'ordered', use_field: 'other' } }), ['1']);
  assert.deepEqual(ids({ all_of: { intervals: [{ match: { query: 'cold', use_field: 'other' } }, { match: { query: 'wet' } }] } }), ['1']);
  assert.deepEqual(ids({ match: { query: 'cold', use_field: 'missing' } }), []);
  assert.match(parseError({ intervals: { text: { match: { query: 'x', use_field: 'tag' } } } }), /Cannot create intervals over field \[tag\] with no positions indexed/);
});

test('all_of and any_of', () => {
  const coldOrOutside = { any_of: { intervals: [{ match: { query: 'cold' } }, { match: { query: 'outside' } }] } };
  assert.deepEqual(ids({ all_of: { intervals: [coldOrOutside, { match: { query: 'atmosphere' } }], ordered: true } }), ['2']);
  assert.deepEqual(ids({ all_of: { intervals: [coldOrOutside, { match: { query: 'atmosphere' } }], mode: 'ordered' } }), ['2']);
  const coldThenOutside = [{ match: { query: 'cold' } }, { match: { query: 'outside' } }];
  assert.deepEqual(ids({ all_of: { intervals: coldThenOutside, max_gaps: 0, mode: 'ordered' } }), ['2']);
  assert.deepEqual(ids({ all_of: { intervals: coldThenOutside, mode: 'ordered' } }), ['2', '3']);
  assert.deepEqual(ids({ all_of: { intervals: coldThenOutside, max_gaps: 1, mode: 'unordered' } }), ['2', '3']);
  const three = [{ match: { query: 'cold' } }, { match: { query: 'wet' } }, { match: { query: 'it' } }];
  assert.deepEqual(ids({ all_of: { intervals: three, mode: 'unordered' } }), ['1', '4', '5']);
  assert.deepEqual(ids({ all_of: { intervals: three, mode: 'unordered_no_overlap' } }), ['1', '4']);
  const coldOrHot = { any_of: { intervals: [{ match: { query: 'cold' } }, { match: { query: 'hot' } }] } };
  assert.deepEqual(ids({ all_of: { intervals: [coldOrHot, { match: { query: 'cold' } }], mode: 'unordered' } }), ['1', '2', '3', '4', '5', '6']);
  assert.deepEqual(ids({ all_of: { intervals: [coldOrHot, { match: { query: 'cold' } }], mode: 'unordered_no_overlap' } }), ['1', '6']);
  assert.deepEqual(ids({ any_of: { intervals: [{ match: { query: 'baby' } }, { match: { query: 'rain' } }] } }), ['3', '5', '6']);
  assert.deepEqual(ids({ all_of: { intervals: [{ match: { query: 'cold' } }, { match: { query: 'nowhere' } }] } }), []);
});

test('filters', () => {
  const coldOutside = (mode: string, filter: unknown) => ({ all_of: { intervals: [{ match: { query: 'cold' } }, { match: { query: 'outside' } }], mode, filter } });
  assert.deepEqual(ids(coldOutside('unordered', { containing: { match: { query: 'is' } } })), ['4']);
  assert.deepEqual(ids(coldOutside('unordered', { not_containing: { match: { query: 'is' } } })), ['2', '3']);
  const byColdOutside = { all_of: { intervals: [{ match: { query: 'cold' } }, { match: { query: 'outside' } }], mode: 'unordered' } };
  assert.deepEqual(ids({ match: { query: 'is', filter: { contained_by: byColdOutside } } }), ['4']);
  assert.deepEqual(ids({ match: { query: 'it', filter: { not_contained_by: byColdOutside } } }), ['1', '5']);
  const babyThere = { all_of: { intervals: [{ match: { query: 'baby' } }, { match: { query: 'there' } }], mode: 'unordered' } };
  assert.deepEqual(ids(coldOutside('ordered', { not_overlapping: babyThere })), ['2']);
  assert.deepEqual(ids(coldOutside('ordered', { overlapping: babyThere })), ['3']);
  assert.deepEqual(ids({ match: { query: 'cold outside', mode: 'ordered', filter: { overlapping: { match: { query: 'baby there', mode: 'unordered' } } } } }), ['3']);
  assert.deepEqual(ids({ match: { query: 'cold', filter: { before: { match: { query: 'outside' } } } } }), ['2', '3']);
  assert.deepEqual(ids({ match: { query: 'cold', filter: { after: { match: { query: 'outside' } } } } }), ['4']);
  assert.deepEqual(ids({ match: { query: 'cold', filter: { not_containing: { match: { query: 'absent' } } } } }), ['1', '2', '3', '4', '5', '6'], 'a filter with no intervals takes nothing away');
  assert.deepEqual(ids({ match: { query: 'cold', filter: { containing: { match: { query: 'absent' } } } } }), []);
  assert.deepEqual(ids({ any_of: { intervals: [{ match: { query: 'hot' } }, { match: { query: 'baby' } }], filter: { before: { match: { query: 'cold' } } } } }), ['1', '3']);
});

test('prefix, wildcard, regexp and fuzzy expand over the terms of every leaf', () => {
  const cold = { match: { query: 'cold' } };
  assert.deepEqual(ids({ all_of: { intervals: [cold, { prefix: { prefix: 'OUT' } }] } }), ['2', '3', '4']);
  assert.deepEqual(ids({ all_of: { intervals: [cold, { wildcard: { pattern: 'out?ide' } }] } }), ['2', '3', '4']);
  assert.deepEqual(ids({ regexp: { pattern: 'at[a-z]{2,}here' } }), ['2']);
  assert.deepEqual(ids({ regexp: { pattern: 'AT[a-z]{2,}HERE', case_insensitive: false } }), []);
  assert.deepEqual(ids({ regexp: { pattern: 'AT[a-z]{2,}HERE', case_insensitive: true } }), ['2']);
  assert.deepEqual(ids({ all_of: { intervals: [{ fuzzy: { term: 'cald' } }, { prefix: { prefix: 'out' } }] } }), ['2', '3', '4']);
  assert.deepEqual(ids({ fuzzy: { term: 'cald', fuzziness: 0 } }), []);
  assert.deepEqual(ids({ fuzzy: { term: 'wat', prefix_length: 1 } }), ['1', '4', '5']);
  assert.deepEqual(ids({ prefix: { prefix: 'zq' } }), []);
  assert.deepEqual(ids({ all_of: { intervals: [{ prefix: { prefix: 'ba' } }, { prefix: { prefix: 'th' } }], mode: 'ordered', max_gaps: 2 } }), ['3']);
  assert.throws(
    () => run({ intervals: { text: { regexp: { pattern: '[a-z]+', max_expansions: 5 } } } }),
    (error: unknown) => error instanceof EngineError && error.code === 'illegal_argument' && /expanded to too many terms \(limit 5\)/.test(error.message),
  );
});

test('too many expansions past 128 terms is a 400', () => {
  const many: CorpusDoc[] = Array.from({ length: 130 }, (_, index) => ({ id: `m${index}`, source: { text: `word${index} end` } }));
  const leaf = buildLeaf(many, fields, 0);
  const query = (rule: unknown) => executeQuery([leaf], fields, { query: { intervals: { text: rule } }, from: 0, size: 1 });
  assert.throws(() => query({ prefix: { prefix: 'word' } }), /pattern \[word\*\] expanded to too many terms \(limit 128\)/);
  assert.throws(() => query({ wildcard: { pattern: 'word*' } }), /limit 128/);
  assert.equal(query({ prefix: { prefix: 'word12' } }).total.value, 11);
});

test('scores: boost times freq / (freq + 1), tighter intervals score higher', () => {
  const scores = new Map(run({ intervals: { text: { match: { query: 'cold outside' } } } }));
  assert.ok(Math.abs(scores.get('2')! - 0.5 / 1.5) < 1e-6, String(scores.get('2')));
  assert.ok(scores.get('2')! > scores.get('3')! && scores.get('3')! > scores.get('4')!);
  const boosted = new Map(run({ intervals: { text: { match: { query: 'cold outside' }, boost: 2, _name: 'named' } } }));
  assert.ok(Math.abs(boosted.get('2')! - 2 * scores.get('2')!) < 1e-6);
  const twice = new Map(run({ intervals: { text: { match: { query: 'cold' } } } }));
  assert.ok(Math.abs(twice.get('6')! - 2 / 3) < 1e-6, 'two single-word intervals');
  assert.deepEqual(
    run({ bool: { filter: { intervals: { text: { match: { query: 'cold outside', mode: 'ordered' } } } }, must: { match: { text: 'baby' } } } }).map(([id]) => id),
    ['3'],
  );
});

test('unmapped fields match nothing; fields without positions and bad rules are refused', () => {
  assert.deepEqual(run({ intervals: { missing: { match: { query: 'cold' } } } }), []);
  assert.match(parseError({ intervals: { tag: { match: { query: 'x' } } } }), /Cannot create intervals over field \[tag\] with no positions indexed/);
  assert.match(parseError({ intervals: { year: { match: { query: '1' } } } }), /no positions indexed/);
  assert.match(parseError({ intervals: { text: { term: { value: 'x' } } } }), /Unknown interval type \[term\]/);
  assert.match(parseError({ intervals: { text: {} } }), /Missing intervals/);
  assert.match(parseError({ intervals: { text: { match: { query: 'x' }, prefix: { prefix: 'y' } } } }), /Only one interval rule can be specified, found \[match\] and \[prefix\]/);
  assert.match(parseError({ intervals: { text: { match: {} } } }), /\[match\] requires a \[query\]/);
  assert.match(parseError({ intervals: { text: { match: { query: 'x', slop: 1 } } } }), /\[match\] unknown field \[slop\]/);
  assert.match(parseError({ intervals: { text: { match: { query: 'x', mode: 'sideways' } } } }), /mode/);
  assert.match(parseError({ intervals: { text: { match: { query: 'x', max_gaps: 'two' } } } }), /max_gaps/);
  assert.match(parseError({ intervals: { text: { all_of: { intervals: [] } } } }), /non-empty \[intervals\]/);
  assert.match(parseError({ intervals: { text: { any_of: {} } } }), /non-empty \[intervals\]/);
  assert.match(parseError({ intervals: { text: { match: { query: 'x', filter: { script: { source: 'true' } } } } } }), /script filters are not supported/);
  assert.match(parseError({ intervals: { text: { match: { query: 'x', filter: { near: { match: { query: 'y' } } } } } } }), /Unknown filter type \[near\]/);
  assert.match(parseError({ intervals: { text: { match: { query: 'x', filter: { before: { match: { query: 'y' } }, after: { match: { query: 'z' } } } } } } }), /exactly one/);
  assert.match(parseError({ intervals: { text: { prefix: {} } } }), /\[prefix\] requires a \[prefix\]/);
  assert.match(parseError({ intervals: { text: { regexp: { pattern: 'a(' } } } }), /./);
  assert.match(parseError({ intervals: { text: { fuzzy: { term: 'x', fuzziness: 5 } } } }), /edit distances/);
  assert.match(parseError({ intervals: { text: { match: { query: 'x' }, boost: -1 } } }), /negative \[boost\]/);
  assert.match(parseError({ intervals: { text: { match: { query: 'x', analyzer: 'nope' } } } }), /analyzer \[nope\] not found/);
  const words = (count: number) => Array.from({ length: count }, (_, index) => `w${index}`).join(' ');
  assert.match(parseError({ intervals: { text: { match: { query: words(10), mode: 'unordered_no_overlap' } } } }), /too many clauses/);
  assert.deepEqual(ids({ match: { query: words(9), mode: 'unordered_no_overlap' } }), [], 'nine words pair up within the clause limit');
  assert.match(parseError({ intervals: { text: { match: { query: words(1100) } } } }), /too many clauses/);
  let nested: unknown = { match: { query: 'x' } };
  for (let depth = 0; depth < 80; depth++) nested = { any_of: { intervals: [nested] } };
  assert.match(parseError({ intervals: { text: nested } }), /nested deeper/);
});
