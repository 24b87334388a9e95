/**
 * Fuzzy matching, query_string (and the `q` parameter) and case_insensitive through real HTTP, on
 * a one-shard and a three-shard copy of the same books (the matches must agree); their 400s; and
 * the same queries through the OpenSearch JS client.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { Client } from '@opensearch-project/opensearch';
import { call, startServer, type TroveServer } from './harness.ts';
import { idsOnOneAndThreeShards, loadShardedCollections, searchHits, type Hit } from './sharded-collections.ts';

let server: TroveServer;
let client: Client;

const BOOKS = [
  { title: 'The Quick Brown Fox', summary: 'a fox jumps over a lazy dog', code: 'FX-101', genre: 'Fable', year: 1999 },
  { title: 'Quack Brownies', summary: 'baking brownies quickly', code: 'BK-202', genre: 'cooking', year: 2005 },
  { title: 'Brown Bears of the North', summary: 'bears and a qiuck fox', code: 'NT-303', genre: 'nature', year: 2012 },
  { title: 'Lazy Afternoons', summary: 'slow reading', code: 'LZ-404', genre: 'essay', year: 2020 },
];

before(async () => {
  server = await startServer();
  client = new Client({ node: server.url });
  const mappings = {
    properties: { title: { type: 'text' }, summary: { type: 'text' }, code: { type: 'keyword' }, genre: { type: 'keyword' }, year: { type: 'integer' } },
  };
  await loadShardedCollections(server, [['books', 1], ['books3', 3]], mappings, BOOKS);
});

after(async () => {
  await client?.close();
  await server?.cleanup();
});

async function badRequest(query: unknown, type: string, reason: RegExp): Promise<void> {
  const response = await call(server, 'POST', '/books/_search', { json: { query } });
  assert.equal(response.status, 400, response.text);
  assert.equal(response.body.error.type, type, response.text);
  assert.match(response.body.error.reason, reason);
}

test('fuzziness on match, multi_match, match_bool_prefix and the fuzzy query', async () => {
  assert.deepEqual(await idsOnOneAndThreeShards(server, { match: { summary: { query: 'quick', fuzziness: 'AUTO' } } }), ['b3']);
  assert.deepEqual(await idsOnOneAndThreeShards(server, { match: { summary: { query: 'quikcly', fuzziness: 'AUTO' } } }), ['b2']);
  assert.deepEqual(await idsOnOneAndThreeShards(server, { match: { title: { query: 'quick', fuzziness: 1 } } }), ['b1', 'b2']);
  assert.deepEqual(await idsOnOneAndThreeShards(server, { match: { title: { query: 'quick', fuzziness: 1, prefix_length: 3 } } }), ['b1']);
  assert.deepEqual(await idsOnOneAndThreeShards(server, { match: { title: { query: 'quick', fuzziness: 0 } } }), ['b1']);
  assert.deepEqual(await idsOnOneAndThreeShards(server, { match: { summary: { query: 'quick', fuzziness: 1, fuzzy_transpositions: false } } }), []);
  assert.deepEqual(await idsOnOneAndThreeShards(server, { multi_match: { query: 'quick', fields: ['title', 'summary'], fuzziness: 'AUTO' } }), ['b1', 'b2', 'b3']);
  assert.deepEqual(await idsOnOneAndThreeShards(server, { match_bool_prefix: { title: { query: 'quack bro', fuzziness: 1 } } }), ['b1', 'b2', 'b3']);
  assert.deepEqual(await idsOnOneAndThreeShards(server, { fuzzy: { genre: 'fabel' } }), []);
  assert.deepEqual(await idsOnOneAndThreeShards(server, { fuzzy: { genre: { value: 'Fabel', fuzziness: 2 } } }), ['b1']);
  assert.deepEqual(await idsOnOneAndThreeShards(server, { fuzzy: { title: { value: 'brwn' } } }), ['b1', 'b3']);
  // quick and quack are in one title each: the blended document frequency is theirs, so the exact
  // term scores as a term query and quack 0.8 (1 - 1/5) of what a term query of it would.
  const fuzzy = await searchHits(server, { fuzzy: { title: { value: 'quick', fuzziness: 1 } } });
  const fuzzyScore = (id: string): number => fuzzy.find((hit) => hit._id === id)!._score;
  const [quick] = await searchHits(server, { term: { title: 'quick' } });
  const [quack] = await searchHits(server, { term: { title: 'quack' } });
  assert.ok(Math.abs(fuzzyScore('b1') - quick!._score) < 1e-5);
  assert.ok(Math.abs(fuzzyScore('b2') - 0.8 * quack!._score) < 1e-5);
  // max_expansions keeps each shard's best terms (the exact one first), as ES rewrites per shard.
  const limited = await searchHits(server, { match: { title: { query: 'quick', fuzziness: 1, max_expansions: 1 } } });
  assert.deepEqual(limited.map((hit) => hit._id), ['b1']);
});

test('simple_query_string term~N is fuzzy', async () => {
  assert.deepEqual(await idsOnOneAndThreeShards(server, { simple_query_string: { query: 'qiuck~1', fields: ['summary', 'title'] } }), ['b1', 'b3']);
  assert.deepEqual(await idsOnOneAndThreeShards(server, { simple_query_string: { query: 'qiuck', fields: ['summary', 'title'] } }), ['b3']);
});

test('query_string: operators, fields, phrases, wildcards, regexps, fuzzy terms, ranges, boosts', async () => {
  const cases: Array<[string, string[]] | [string, string[], Record<string, unknown>]> = [
    ['fox AND lazy', ['b1']],
    ['fox OR lazy', ['b1', 'b3', 'b4']],
    ['fox -lazy', ['b3']],
    ['fox AND NOT title:bears', ['b1']],
    ['title:((brown OR brownies) AND (quick OR quack))', ['b1', 'b2']],
    ['summary:"fox jumps"', ['b1']],
    ['summary:"jumps fox"~2', ['b1']],
    ['title:brown*', ['b1', 'b2', 'b3']],
    ['code:?X-1*', ['b1']],
    ['code:/[A-Z]{2}-[23]0[23]/', ['b2', 'b3']],
    ['title:quikc~', ['b1']],
    ['title:quikc~2', ['b1', 'b2']],
    ['year:[2000 TO 2012]', ['b2', 'b3']],
    ['year:{2005 TO *}', ['b3', 'b4']],
    ['year:>=2012', ['b3', 'b4']],
    ['year:<2005', ['b1']],
    ['_exists_:genre AND genre:nature', ['b3']],
    ['code:FX\\-101', ['b1']],
    ['brown', ['b1', 'b3'], { default_field: 'title' }],
    ['lazy fox', ['b1'], { default_operator: 'AND' }],
    ['quick', ['b1'], { fields: ['title'] }],
  ];
  for (const [text, expected, options] of cases) {
    assert.deepEqual(await idsOnOneAndThreeShards(server, { query_string: { query: text, ...options } }), expected, text);
  }
  const boosted = await searchHits(server, { query_string: { query: 'title:lazy OR summary:lazy^10' } });
  assert.deepEqual(boosted.map((hit) => hit._id), ['b1', 'b4']);
  const fieldBoosted = await searchHits(server, { query_string: { query: 'lazy', fields: ['title^10', 'summary'] } });
  assert.deepEqual(fieldBoosted.map((hit) => hit._id), ['b4', 'b1']);
});

test('the q parameter is query_string syntax, with df, default_operator, lenient and analyze_wildcard, in _search and _count', async () => {
  const search = async (query: string): Promise<string[]> => {
    const response = await call(server, 'GET', `/books3/_search?${query}`);
    assert.equal(response.status, 200, response.text);
    return response.body.hits.hits.map((hit: Hit) => hit._id).sort();
  };
  assert.deepEqual(await search('q=title:brown*%20AND%20year:>2000'), ['b2', 'b3']);
  assert.deepEqual(await search('q=brown&df=title'), ['b1', 'b3']);
  assert.deepEqual(await search('q=1999'), ['b1'], 'the default field * takes numbers too');
  assert.deepEqual(await search('q=essay'), ['b4']);
  assert.deepEqual(await search('q=lazy%20fox&default_operator=AND'), ['b1']);
  assert.deepEqual(await search('q=year:abc&df=title&lenient=true'), []);
  assert.deepEqual(await search('q=title:quick-bro*&analyze_wildcard=true&default_operator=AND'), ['b1']);
  const counted = await call(server, 'GET', '/books3/_count?q=genre:nature%20OR%20genre:essay');
  assert.equal(counted.status, 200, counted.text);
  assert.equal(counted.body.count, 2);
  const strict = await call(server, 'GET', '/books/_search?q=year:abc&df=title');
  assert.equal(strict.status, 400, strict.text);
  const validated = await call(server, 'GET', '/books/_validate/query?q=year:abc&df=title&explain=true');
  assert.equal(validated.body.valid, false, validated.text);
  assert.equal((await call(server, 'GET', '/books/_validate/query?q=year:abc&df=title&lenient=true')).body.valid, true);
  const broken = await call(server, 'GET', '/books/_count?q=title:(brown');
  assert.equal(broken.status, 400, broken.text);
  assert.equal(broken.body.error.type, 'query_shard_exception');
});

test('case_insensitive on term and prefix; terms refuses it', async () => {
  assert.deepEqual(await idsOnOneAndThreeShards(server, { term: { genre: { value: 'fable', case_insensitive: true } } }), ['b1']);
  assert.deepEqual(await idsOnOneAndThreeShards(server, { term: { genre: { value: 'fable' } } }), []);
  assert.deepEqual(await idsOnOneAndThreeShards(server, { prefix: { code: { value: 'fx', case_insensitive: true } } }), ['b1']);
  assert.deepEqual(await idsOnOneAndThreeShards(server, { prefix: { code: { value: 'fx' } } }), []);
  await badRequest({ terms: { genre: ['fable'], case_insensitive: true } }, 'parsing_exception', /\[terms\] query does not support \[case_insensitive\]/);
});

test('bad input: 400s with the ES error types, nothing else', async () => {
  await badRequest({ match: { title: { query: 'x', fuzziness: 3 } } }, 'parsing_exception', /Valid edit distances are \[0, 1, 2\] but was \[3\]/);
  await badRequest({ match: { title: { query: 'x', fuzziness: 'AUTO:a,b' } } }, 'parsing_exception', /failed to find low and high distance values/);
  await badRequest({ fuzzy: { year: 1999 } }, 'parsing_exception', /Can only use fuzzy queries on keyword and text fields/);
  await badRequest({ multi_match: { query: 'x', fields: ['title'], type: 'cross_fields', fuzziness: 1 } }, 'parsing_exception', /Fuzziness not allowed for type \[cross_fields\]/);
  for (const text of ['fox AND', '(fox', 'title:"fox', 'year:[1 TO', 'OR fox', 'fox^']) {
    await badRequest({ query_string: { query: text } }, 'query_shard_exception', /^Failed to parse query \[/);
  }
  await badRequest({ query_string: { query: `${'('.repeat(80)}fox${')'.repeat(80)}` } }, 'parsing_exception', /nested deeper than 64/);
  await badRequest({ query_string: { query: Array.from({ length: 1100 }, (_, index) => `t${index}`).join(' '), fields: ['title'] } }, 'illegal_argument_exception', /too many clauses/);
  await badRequest({ query_string: { query: '*ox', allow_leading_wildcard: false } }, 'query_shard_exception', /not allowed as first character/);
  await badRequest({ query_string: { query: 'x', type: 'cross_fields' } }, 'parsing_exception', /\[type\] \[cross_fields\] is not supported/);
  const started = performance.now();
  await badRequest({ query_string: { query: '(a|'.repeat(25_000) } }, 'parsing_exception', /nested deeper than 64/);
  await badRequest({ query_string: { query: `code:${'*a'.repeat(3000)}b` } }, 'too_complex_to_determinize_exception', /would result in more than/);
  await badRequest({ fuzzy: { code: { value: 'x'.repeat(10_000), fuzziness: 2 } } }, 'too_complex_to_determinize_exception', /Term too complex/);
  assert.ok(performance.now() - started < 5000, 'hostile query strings and fuzzy terms are refused quickly');
  // Fuzzy expansions past the clause limit.
  const many = Array.from({ length: 40 }, () => ({ match: { title: { query: 'brown quick north lazy bears', fuzziness: 2 } } }));
  const response = await call(server, 'POST', '/books/_search', { json: { query: { bool: { should: many } } } });
  assert.equal(response.status, 200, 'a few real expansions stay under the limit');
});

test('through the OpenSearch JS client', async () => {
  const fuzzy = await client.search({ index: 'books3', body: { query: { match: { title: { query: 'quikc', fuzziness: 'AUTO' } } } } });
  assert.deepEqual(fuzzy.body.hits.hits.map((hit) => hit._id), ['b1']);
  const queryString = await client.search({ index: 'books3', q: 'genre:nature OR genre:essay', df: 'title' });
  assert.deepEqual(queryString.body.hits.hits.map((hit) => hit._id).sort(), ['b3', 'b4']);
  const counted = await client.count({ index: 'books3', body: { query: { query_string: { query: 'year:[2000 TO *]' } } } });
  assert.equal(counted.body.count, 3);
});
