/**
 * The `intervals` query through real HTTP, on a one-shard and a three-shard copy of the same
 * documents: every rule (match, all_of, any_of, prefix, wildcard, regexp, fuzzy) and filter, with
 * the totals Elasticsearch and OpenSearch give for these documents; scores, boost, `_count`,
 * `_validate/query`, highlighting, and the 400s.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { call, ndjson, startServer, type TroveServer } from './harness.ts';
import { idsOnOneAndThreeShards, loadShardedCollections, searchHits } from './sharded-collections.ts';

let server: TroveServer;

const DOCS = [
  { text: 'Some like hot and dry, some like it cold and wet', tag: 'a' },
  { text: 'Its cold outside, theres no kind of atmosphere', tag: 'b' },
  { text: 'Baby its cold there outside', tag: 'c' },
  { text: 'Outside it is cold and wet', tag: 'd' },
  { text: 'cold rain makes it wet', tag: 'e' },
  { text: 'that is some cold cold rain', tag: 'f' },
];

before(async () => {
  server = await startServer();
  await loadShardedCollections(server, [['books', 1], ['books3', 3]], { properties: { text: { type: 'text', analyzer: 'standard' }, tag: { type: 'keyword' } } }, DOCS);
});

after(async () => {
  await server?.cleanup();
});

/** Ids matching `rule` on field `text`, the same on one and three shards. */
async function ids(rule: unknown): Promise<string[]> {
  return idsOnOneAndThreeShards(server, { intervals: { text: rule } });
}

/** hits.total.value of an intervals search on both copies (checked equal). */
async function total(rule: unknown): Promise<number> {
  const totals: number[] = [];
  for (const collection of ['books', 'books3']) {
    const response = await call(server, 'POST', `/${collection}/_search`, { json: { query: { intervals: { text: rule } } } });
    assert.equal(response.status, 200, response.text);
    totals.push(response.body.hits.total.value);
  }
  assert.equal(totals[1], totals[0], `three shards: ${JSON.stringify(rule)}`);
  return totals[0]!;
}

const match = (query: string, extra: Record<string, unknown> = {}) => ({ match: { query, ...extra } });
const coldOutside = [match('cold'), match('outside')];

test('match: ordered, unordered, max_gaps and no-overlap modes', async () => {
  assert.equal(await total(match('cold outside', { mode: 'ordered' })), 2);
  assert.equal(await total(match('cold outside', { ordered: true })), 2);
  assert.equal(await total(match('cold outside')), 3);
  assert.equal(await total(match('cold outside', { mode: 'unordered' })), 3);
  assert.equal(await total(match('cold outside', { ordered: false })), 3);
  assert.equal(await total(match('cold wet it', { mode: 'unordered' })), 3);
  assert.equal(await total(match('cold wet it', { mode: 'unordered_no_overlap' })), 2);
  assert.equal(await total(match('cold outside', { mode: 'ordered', max_gaps: 0 })), 1);
  assert.equal(await total(match('cold outside', { max_gaps: 1 })), 2);
  assert.deepEqual(await ids(match('cold outside', { mode: 'ordered' })), ['b2', 'b3']);
  assert.deepEqual(await ids(match('cold wet it', { mode: 'unordered_no_overlap' })), ['b1', 'b4']);
});

test('all_of and any_of', async () => {
  const either = { any_of: { intervals: coldOutside } };
  assert.equal(await total({ all_of: { intervals: [either, match('atmosphere')], mode: 'ordered' } }), 1);
  assert.equal(await total({ all_of: { intervals: [either, match('atmosphere')], ordered: true } }), 1);
  assert.equal(await total({ all_of: { intervals: coldOutside, max_gaps: 0, mode: 'ordered' } }), 1);
  assert.equal(await total({ all_of: { intervals: coldOutside, mode: 'ordered' } }), 2);
  assert.equal(await total({ all_of: { intervals: coldOutside, max_gaps: 1, mode: 'unordered' } }), 2);
  assert.equal(await total({ all_of: { intervals: coldOutside, max_gaps: 1, ordered: false } }), 2);
  const three = [match('cold'), match('wet'), match('it')];
  assert.equal(await total({ all_of: { intervals: three, mode: 'unordered' } }), 3);
  assert.equal(await total({ all_of: { intervals: three, mode: 'unordered_no_overlap' } }), 2);
  const coldOrHot = { any_of: { intervals: [match('cold'), match('hot')] } };
  assert.equal(await total({ all_of: { intervals: [coldOrHot, match('cold')], mode: 'unordered' } }), 6);
  assert.equal(await total({ all_of: { intervals: [coldOrHot, match('cold')], mode: 'unordered_no_overlap' } }), 2);
  assert.deepEqual(await ids({ any_of: { intervals: [match('baby'), match('atmosphere')] } }), ['b2', 'b3']);
});

test('filters', async () => {
  const unordered = { all_of: { intervals: coldOutside, mode: 'unordered' } };
  assert.equal(await total({ all_of: { intervals: coldOutside, mode: 'unordered', filter: { containing: match('is') } } }), 1);
  assert.equal(await total({ all_of: { intervals: coldOutside, mode: 'unordered', filter: { not_containing: match('is') } } }), 2);
  assert.equal(await total(match('is', { filter: { contained_by: unordered } })), 1);
  assert.equal(await total(match('it', { filter: { not_contained_by: { all_of: { intervals: coldOutside } } } })), 2);
  const babyThere = { all_of: { intervals: [match('baby'), match('there')], mode: 'unordered' } };
  assert.equal(await total({ all_of: { intervals: coldOutside, mode: 'ordered', filter: { not_overlapping: babyThere } } }), 1);
  assert.deepEqual(await ids(match('cold outside', { mode: 'ordered', filter: { overlapping: match('baby there', { mode: 'unordered' }) } })), ['b3']);
  assert.equal(await total(match('cold', { filter: { before: match('outside') } })), 2);
  assert.deepEqual(await ids(match('cold', { filter: { after: match('outside') } })), ['b4']);
});

test('prefix, wildcard, regexp and fuzzy', async () => {
  assert.equal(await total({ all_of: { intervals: [{ match: { query: 'cold' } }, { prefix: { prefix: 'out' } }] } }), 3);
  assert.equal(await total({ all_of: { intervals: [{ match: { query: 'cold' } }, { wildcard: { pattern: 'out?ide' } }] } }), 3);
  assert.equal(await total({ all_of: { intervals: [{ fuzzy: { term: 'cald' } }, { prefix: { prefix: 'out' } }] } }), 3);
  assert.equal(await total({ regexp: { pattern: 'at[a-z]{2,}here' } }), 1);
  assert.equal(await total({ regexp: { pattern: 'AT[a-z]{2,}HERE', case_insensitive: false } }), 0);
  assert.equal(await total({ regexp: { pattern: 'AT[a-z]{2,}HERE', case_insensitive: true } }), 1);
});

test('scores, boost, bool clauses, _count, _validate/query and highlighting', async () => {
  const hits = await searchHits(server, { intervals: { text: { match: { query: 'cold outside' } } } }, 'books');
  assert.deepEqual(hits.map((hit) => hit._id), ['b2', 'b3', 'b4'], 'tighter matches rank first');
  assert.ok(Math.abs(hits[0]!._score - 1 / 3) < 1e-4, String(hits[0]!._score));
  const boosted = await searchHits(server, { intervals: { text: { match: { query: 'cold outside' }, boost: 3, _name: 'near' } } }, 'books');
  assert.ok(Math.abs(boosted[0]!._score - 1) < 1e-4, String(boosted[0]!._score));
  assert.deepEqual(await idsOnOneAndThreeShards(server, { bool: { must: { intervals: { text: match('cold') } }, filter: { term: { tag: 'f' } } } }), ['b6']);
  const inBool = await call(server, 'POST', '/books3/_search', { json: { query: { bool: { must: { intervals: { text: match('cold') } }, must_not: { intervals: { text: match('wet') } } } } } });
  assert.deepEqual(inBool.body.hits.hits.map((hit: { _id: string }) => hit._id).sort(), ['b2', 'b3', 'b6']);
  const count = await call(server, 'POST', '/books3/_count', { json: { query: { intervals: { text: match('cold outside') } } } });
  assert.equal(count.body.count, 3, count.text);
  const valid = await call(server, 'POST', '/books/_validate/query', { json: { query: { intervals: { text: match('cold') } } } });
  assert.equal(valid.body.valid, true, valid.text);
  const invalid = await call(server, 'POST', '/books/_validate/query', { json: { query: { intervals: { text: { near: {} } } } } });
  assert.equal(invalid.body.valid, false, invalid.text);
  const highlighted = await call(server, 'POST', '/books/_search', {
    json: { query: { intervals: { text: { all_of: { intervals: [match('baby'), { prefix: { prefix: 'outs' } }] } } } }, highlight: { fields: { text: {} } } },
  });
  assert.equal(highlighted.status, 200, highlighted.text);
  assert.deepEqual(highlighted.body.hits.hits[0].highlight.text, ['<em>Baby</em> its cold there <em>outside</em>']);
});

test('bad input is a 400 with the ES error type', async () => {
  const cases: Array<[unknown, string, RegExp]> = [
    [{ intervals: { tag: match('a') } }, 'illegal_argument_exception', /Cannot create intervals over field \[tag\] with no positions indexed/],
    [{ intervals: { text: { near: { query: 'x' } } } }, 'parsing_exception', /Unknown interval type \[near\]/],
    [{ intervals: { text: { match: { query: 'x' }, prefix: { prefix: 'y' } } } }, 'parsing_exception', /Only one interval rule can be specified/],
    [{ intervals: { text: match('x', { filter: { script: { source: 'true' } } }) } }, 'parsing_exception', /script filters are not supported/],
    [{ intervals: { text: match('x', { filter: { beside: match('y') } }) } }, 'parsing_exception', /Unknown filter type \[beside\]/],
    [{ intervals: { text: match('x', { mode: 'sideways' }) } }, 'parsing_exception', /mode/],
    [{ intervals: { text: { all_of: { intervals: [] } } } }, 'parsing_exception', /non-empty \[intervals\]/],
    [{ intervals: { text: { regexp: { pattern: '[a-z]+', max_expansions: 3 } } } }, 'illegal_argument_exception', /expanded to too many terms \(limit 3\)/],
  ];
  for (const [query, type, reason] of cases) {
    for (const collection of ['books', 'books3']) {
      const response = await call(server, 'POST', `/${collection}/_search`, { json: { query } });
      assert.equal(response.status, 400, `${collection} ${JSON.stringify(query).slice(0, 80)}: ${response.text}`);
      assert.equal(response.body.error.type, type, response.text);
      assert.match(response.body.error.reason, reason);
    }
  }
});

test('a pattern matching more than 128 terms is a 400', async () => {
  const created = await call(server, 'PUT', '/many', { json: { mappings: { properties: { text: { type: 'text' } } } } });
  assert.equal(created.status, 200, created.text);
  const words = Array.from({ length: 130 }, (_, index) => `word${index}`);
  const body = ndjson([{ index: { _id: 'w' } }, { text: words.join(' ') }]);
  const loaded = await call(server, 'POST', '/many/_bulk?refresh=true', { body, headers: { 'content-type': 'application/x-ndjson' } });
  assert.equal(loaded.body.errors, false, loaded.text);
  const tooMany = await call(server, 'POST', '/many/_search', { json: { query: { intervals: { text: { prefix: { prefix: 'word' } } } } } });
  assert.equal(tooMany.status, 400, tooMany.text);
  assert.match(tooMany.body.error.reason, /\[word\*\] expanded to too many terms \(limit 128\)/);
  const fine = await call(server, 'POST', '/many/_search', { json: { query: { intervals: { text: { all_of: { intervals: [{ prefix: { prefix: 'word12' } }, match('word3')], mode: 'ordered' } } } } } });
  assert.equal(fine.status, 200, fine.text);
  assert.equal(fine.body.hits.total.value, 0, 'word3 comes before every word12x');
});
