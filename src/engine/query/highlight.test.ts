import { test } from 'node:test';
import assert from 'node:assert/strict';
import { EngineError } from '../errors.ts';
import { highlight } from './highlight.ts';
import { fieldsOf } from './test-corpus.fixture.ts';

const fields = fieldsOf({
  properties: {
    title: { type: 'text', fields: { keyword: { type: 'keyword' } } },
    body: { type: 'text', analyzer: 'english' },
    tag: { type: 'keyword' },
    meta: { type: 'object', properties: { note: { type: 'text' } } },
  },
});

const source = {
  title: 'The Quick brown fox',
  body: 'Foxes are quick. ' + 'Filler words go here and keep going. '.repeat(8) + 'A final fox appears at the end.',
  tag: ['alpha', 'beta'],
  meta: { note: 'quick note' },
};

test('matching terms are wrapped in the default tags', () => {
  const result = highlight(source, { fields: { title: {} } }, { match: { title: 'quick fox' } }, fields);
  assert.deepEqual(result, { title: ['The <em>Quick</em> brown <em>fox</em>'] });
});

test('fields without matches are left out and require_field_match limits terms to the queried field', () => {
  const query = { match: { title: 'quick' } };
  assert.deepEqual(highlight(source, { fields: { title: {}, 'meta.note': {} } }, query, fields), { title: ['The <em>Quick</em> brown fox'] });
  assert.deepEqual(highlight(source, { fields: { 'meta.note': {} }, require_field_match: false }, query, fields), {
    'meta.note': ['<em>quick</em> note'],
  });
});

test('long values are cut into fragments around the matches', () => {
  const result = highlight(source, { fields: { body: { fragment_size: 40, number_of_fragments: 2 } } }, { match: { body: 'fox' } }, fields);
  const fragments = result.body!;
  assert.equal(fragments.length, 2);
  assert.ok(fragments[0]!.startsWith('<em>Foxes</em>'), fragments[0]);
  assert.ok(fragments[1]!.includes('<em>fox</em>'), fragments[1]);
  for (const fragment of fragments) assert.ok(fragment.length < 80, fragment);
  const whole = highlight(source, { fields: { body: { number_of_fragments: 0 } } }, { match: { body: 'fox' } }, fields);
  assert.equal(whole.body!.length, 1);
  assert.equal(whole.body![0]!.replace(/<\/?em>/g, ''), source.body);
});

test('custom tags, html encoding, wildcards, keywords and prefixes', () => {
  const tagged = highlight(
    { title: 'Fish & <chips>' },
    { pre_tags: ['['], post_tags: [']'], encoder: 'html', fields: { 'ti*': {} } },
    { match: { title: 'chips' } },
    fields,
  );
  assert.deepEqual(tagged, { title: ['Fish &#38; &#60;[chips]&#62;'] });
  assert.deepEqual(highlight(source, { fields: { tag: {} } }, { term: { tag: 'beta' } }, fields), { tag: ['<em>beta</em>'] });
  assert.deepEqual(highlight(source, { fields: { title: {} } }, { prefix: { title: 'br' } }, fields), { title: ['The Quick <em>brown</em> fox'] });
  assert.deepEqual(highlight(source, { fields: { 'title.keyword': {} } }, { term: { 'title.keyword': 'The Quick brown fox' } }, fields), {
    'title.keyword': ['<em>The Quick brown fox</em>'],
  });
  assert.deepEqual(highlight(source, { fields: { title: { no_match_size: 9 } } }, { match: { title: 'zebra' } }, fields), { title: ['The Quick'] });
});

test('highlight_query overrides the search query and bad requests are parsing errors', () => {
  const result = highlight(source, { fields: { title: { highlight_query: { match: { title: 'brown' } } } } }, { match: { title: 'quick' } }, fields);
  assert.deepEqual(result, { title: ['The Quick <em>brown</em> fox'] });
  for (const request of [{}, { fields: 'title' }, { fields: { title: { fragment_size: 'big' } } }, { fields: {}, colour: 'red' }]) {
    assert.throws(
      () => highlight(source, request, { match_all: {} }, fields),
      (error: unknown) => error instanceof EngineError && error.code === 'parsing',
      JSON.stringify(request),
    );
  }
});

test('fields named like Object.prototype members are highlighted; inherited properties are not values', () => {
  const named = fieldsOf({ properties: { toString: { type: 'text' as const }, valueOf: { type: 'text' as const }, other: { type: 'text' } } });
  const result = highlight({ toString: 'quick fox', valueOf: 'a quick one' }, { fields: { '*': {} } }, { multi_match: { query: 'quick', fields: ['toString', 'valueOf'] } }, named);
  assert.deepEqual(result, { toString: ['<em>quick</em> fox'], valueOf: ['a <em>quick</em> one'] });
  assert.equal(Object.getPrototypeOf(result), Object.prototype);
  const missing = highlight({ other: 'x' }, { fields: { toString: { no_match_size: 10 } }, require_field_match: false }, { match: { other: 'x' } }, named);
  assert.deepEqual(missing, {}, 'toString is not read from Object.prototype');
});

test('fuzzy, wildcard and regexp matches are highlighted through their automata', () => {
  const fields = fieldsOf({ properties: { title: { type: 'text' }, code: { type: 'keyword' } } });
  const source = { title: 'The quick brown fox jumps', code: 'FX-101' };
  const marked = (query: unknown): string[] => highlight(source, { fields: { '*': {} } }, query, fields).title ?? [];
  assert.deepEqual(marked({ match: { title: { query: 'quikc', fuzziness: 1 } } }), ['The <em>quick</em> brown fox jumps']);
  assert.deepEqual(marked({ wildcard: { title: 'br*n' } }), ['The quick <em>brown</em> fox jumps']);
  assert.deepEqual(marked({ regexp: { title: 'j.mps|fo.' } }), ['The quick brown <em>fox</em> <em>jumps</em>']);
  assert.deepEqual(marked({ query_string: { query: 'title:qu?ck OR title:/f.x/' } }), ['The <em>quick</em> brown <em>fox</em> jumps']);
  assert.deepEqual(marked({ match: { title: 'zebra' } }), []);
});

test('a keyword value longer than ignore_above was not indexed and is not highlighted', () => {
  const short = fieldsOf({ properties: { k1: { type: 'keyword' }, k2: { type: 'keyword', ignore_above: 3 } } });
  const request = { require_field_match: false, fields: { k2: {} } };
  const query = { prefix: { k1: '12' } };
  assert.deepEqual(highlight({ k1: '123', k2: '123' }, request, query, short), { k2: ['<em>123</em>'] });
  assert.deepEqual(highlight({ k1: '1234', k2: '1234' }, request, query, short), {});
  assert.deepEqual(highlight({ k1: '123', k2: ['1234', '123'] }, request, query, short), { k2: ['<em>123</em>'] });
});
