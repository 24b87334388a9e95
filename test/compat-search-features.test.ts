/**
 * Search request features through real HTTP: explain (in a search and `_explain/{id}`, the BM25
 * figures adding up to the score), profile (per shard query tree with timings, rewrite, collector
 * and fetch times), collapse on keyword and numeric fields with inner_hits, stored_fields,
 * docvalue_fields, fields, version, seq_no_primary_term and max_score under a [_score, _doc]
 * sort; on one and three shards; their 400s; and the same through the OpenSearch JS client.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { Client } from '@opensearch-project/opensearch';
import { call, startServer, type TroveServer } from './harness.ts';
import { etcdSkipReason } from './etcd.fixture.ts';
import { startNemesisCluster } from './replication-cluster.ts';
import { loadShardedCollections } from './sharded-collections.ts';

let server: TroveServer;
let client: Client;

const BOOKS = [
  { title: 'The Quick Brown Fox', author: 'ann', year: 1999, published: '1999-05-01T10:00:00Z', tags: ['fable', 'animals'], rating: 4 },
  { title: 'Quick Brownies', author: 'bob', year: 2005, published: '2005-01-02', tags: ['cooking'], rating: 5 },
  { title: 'Brown Bears of the North', author: 'ann', year: 2012, published: '2012-03-04', tags: ['nature', 'animals'], rating: 4 },
  { title: 'Lazy Afternoons', author: 'cy', year: 2020, published: '2020-12-31', tags: ['essay'], rating: 3 },
  { title: 'The Quick Reader', author: 'bob', year: 2021, published: '2021-06-01', rating: 5 },
  { title: 'Quick Notes', year: 2022, published: '2022-02-02', rating: 2 },
];

interface Explanation {
  value: number;
  description: string;
  details: Explanation[];
}

before(async () => {
  server = await startServer();
  client = new Client({ node: server.url });
  const mappings = {
    properties: {
      title: { type: 'text', fields: { raw: { type: 'keyword' } } },
      author: { type: 'keyword', store: true },
      year: { type: 'integer' },
      published: { type: 'date' },
      tags: { type: 'keyword' },
      rating: { type: 'long' },
    },
  };
  await loadShardedCollections(server, [['books', 1], ['books3', 3]], mappings, BOOKS);
});

after(async () => {
  await client?.close();
  await server?.cleanup();
});

async function search(body: unknown, collection = 'books', query = ''): Promise<any> {
  const response = await call(server, 'POST', `/${collection}/_search${query}`, { json: body });
  assert.equal(response.status, 200, response.text);
  return response.body;
}

async function refused(body: unknown, type: string, reason: RegExp): Promise<void> {
  const response = await call(server, 'POST', '/books3/_search', { json: body });
  assert.equal(response.status, 400, response.text);
  assert.equal(response.body.error.type, type, response.text);
  assert.match(response.body.error.reason, reason);
}

/** Checks that every node with details adds up (sum, product or max as its description says). */
function checkSums(node: Explanation): void {
  if (node.details.length > 0 && node.description === 'sum of:') {
    const sum = node.details.reduce((total, child) => total + child.value, 0);
    assert.ok(Math.abs(sum - node.value) < 1e-5, `${node.description} ${sum} vs ${node.value}`);
  }
  if (node.description.startsWith('score(freq=')) {
    const product = node.details.reduce((total, child) => total * child.value, 1);
    assert.ok(Math.abs(product - node.value) < 1e-5, `boost * idf * tf ${product} vs ${node.value}`);
  }
  for (const child of node.details) checkSums(child);
}

test('explain: each hit carries its BM25 explanation, adding up to its score', async () => {
  for (const collection of ['books', 'books3']) {
    const body = await search({ query: { bool: { should: [{ match: { title: 'quick brown' } }, { term: { author: 'ann' } }] } }, explain: true }, collection);
    assert.ok(body.hits.hits.length > 0);
    for (const hit of body.hits.hits) {
      const explanation = hit._explanation as Explanation;
      assert.ok(Math.abs(explanation.value - hit._score) < 1e-5, `${hit._id}: ${explanation.value} vs ${hit._score}`);
      assert.match(hit._shard, new RegExp(`^\\[${collection}\\]\\[\\d\\]$`));
      assert.equal(typeof hit._node, 'string');
      checkSums(explanation);
    }
    const first = JSON.stringify(body.hits.hits[0]._explanation);
    assert.match(first, /weight\(title:(quick|brown) in \d+\) \[PerFieldSimilarity\]/);
    assert.match(first, /idf, computed as log\(1 \+ \(N - n \+ 0\.5\) \/ \(n \+ 0\.5\)\) from:/);
    assert.match(first, /tf, computed as freq \/ \(freq \+ k1 \* \(1 - b \+ b \* dl \/ avgdl\)\) from:/);
  }
  const viaParam = await search({ query: { match: { title: 'lazy' } } }, 'books', '?explain=true');
  assert.ok(viaParam.hits.hits[0]._explanation);
  const fuzzy = await search({ query: { match: { title: { query: 'quikc', fuzziness: 1 } } }, explain: true });
  assert.match(JSON.stringify(fuzzy.hits.hits[0]._explanation), /largest among the fuzzy expansions/);
});

test('_explain/{id}: matched with the explanation, not matched, missing document', async () => {
  const matched = await call(server, 'POST', '/books3/_explain/b1', { json: { query: { match: { title: 'quick fox' } } } });
  assert.equal(matched.status, 200, matched.text);
  assert.equal(matched.body._index, 'books3');
  assert.equal(matched.body._id, 'b1');
  assert.equal(matched.body.matched, true);
  const searched = await search({ query: { match: { title: 'quick fox' } } }, 'books3');
  const score = searched.hits.hits.find((hit: { _id: string }) => hit._id === 'b1')._score;
  assert.ok(Math.abs(matched.body.explanation.value - score) < 1e-5, `${matched.body.explanation.value} vs ${score}`);
  assert.equal(matched.body.explanation.description, 'sum of:');
  checkSums(matched.body.explanation);
  const byQ = await call(server, 'GET', '/books/_explain/b2?q=title:brownies');
  assert.equal(byQ.status, 200, byQ.text);
  assert.equal(byQ.body.matched, true);
  const notMatched = await call(server, 'POST', '/books/_explain/b4', { json: { query: { match: { title: 'quick' } } } });
  assert.equal(notMatched.status, 200);
  assert.equal(notMatched.body.matched, false);
  assert.equal(notMatched.body.explanation.value, 0);
  const missing = await call(server, 'POST', '/books/_explain/nope', { json: { query: { match_all: {} } } });
  assert.equal(missing.status, 404);
  assert.deepEqual(missing.body, { _index: 'books', _id: 'nope', matched: false });
  assert.equal(matched.body.get, undefined, 'no get section without a _source parameter');
  const withSource = await call(server, 'POST', '/books/_explain/b1?_source_includes=title,year', { json: { query: { match_all: {} } } });
  assert.deepEqual(withSource.body.get, { found: true, _source: { title: 'The Quick Brown Fox', year: 1999 } });
  const listed = await call(server, 'POST', '/books/_explain/b1?_source=year', { json: { query: { match_all: {} } } });
  assert.deepEqual(listed.body.get._source, { year: 1999 });
  const whole = await call(server, 'POST', '/books/_explain/b4?_source=true', { json: { query: { match: { title: 'quick' } } } });
  assert.equal(whole.body.matched, false);
  assert.equal(typeof whole.body.get._source.title, 'string', 'a document that does not match still shows its source');
  const none = await call(server, 'POST', '/books/_explain/b1?_source=false', { json: { query: { match_all: {} } } });
  assert.deepEqual(none.body.get, { found: true });
  const noQuery = await call(server, 'POST', '/books/_explain/b1', { json: {} });
  assert.equal(noQuery.status, 400, noQuery.text);
  assert.equal(noQuery.body.error.type, 'action_request_validation_exception');
});

test('profile: per shard query tree with nanosecond timings, rewrite, collector and fetch times', async () => {
  const body = await search({ query: { bool: { must: [{ match: { title: 'quick' } }], filter: [{ range: { year: { gte: 2000 } } }] } }, profile: true }, 'books3');
  assert.equal(body.profile.shards.length, 3);
  const ids = new Set<string>();
  for (const shard of body.profile.shards) {
    assert.match(shard.id, /^\[[^\]]+\]\[books3\]\[\d\]$/);
    ids.add(shard.id);
    const [searchProfile] = shard.searches;
    const [root] = searchProfile.query;
    assert.equal(root.type, 'BooleanQuery');
    assert.match(root.description, /\+title:quick #year:\[2000 TO/);
    assert.ok(root.time_in_nanos > 0);
    assert.ok(root.breakdown.create_weight > 0);
    assert.ok(root.breakdown.create_weight_count >= 1);
    assert.equal(root.children.length, 2);
    assert.equal(root.children[0].type, 'TermQuery');
    assert.equal(root.children[0].description, 'title:quick');
    assert.ok(searchProfile.rewrite_time >= 0);
    assert.equal(searchProfile.collector[0].name, 'SimpleTopScoreDocCollector');
    assert.ok(searchProfile.collector[0].time_in_nanos > 0);
    assert.equal(shard.fetch.type, 'fetch');
    assert.ok(shard.fetch.time_in_nanos >= 0);
  }
  assert.equal(ids.size, 3);
  const single = await search({ query: { match_all: {} }, profile: true, sort: ['year'] });
  assert.equal(single.profile.shards[0].searches[0].collector[0].name, 'TopFieldCollector');
  assert.equal((await search({ query: { match_all: {} } })).profile, undefined);
  // Aggregations: one node per aggregator, its sub-aggregators as children; collect calls add up to the hits.
  const named = await search(
    { size: 0, profile: true, aggs: { h: { histogram: { field: 'year', interval: 10 } }, d: { date_histogram: { field: 'published', calendar_interval: 'year' } }, n: { terms: { field: 'year' } }, m: { terms: { field: 'author', execution_hint: 'map' } } } },
    'books',
  );
  assert.deepEqual(
    named.profile.shards[0].aggregations.map((node: { type: string }) => node.type),
    ['NumericHistogramAggregator', 'DateHistogramAggregator', 'NumericTermsAggregator', 'MapStringTermsAggregator'],
  );
  const aggregated = await search({ query: { match_all: {} }, profile: true, aggs: { by_author: { terms: { field: 'author' }, aggs: { first: { min: { field: 'year' } } } } } }, 'books3');
  let collected = 0;
  let withAuthor = 0;
  for (const shard of aggregated.profile.shards) {
    const [terms] = shard.aggregations;
    assert.equal(shard.aggregations.length, 1);
    assert.deepEqual([terms.type, terms.description], ['GlobalOrdinalsStringTermsAggregator', 'by_author'], 'named as Elasticsearch names the collector');
    assert.equal(terms.breakdown.build_aggregation_count, 1);
    assert.ok(terms.breakdown.build_leaf_collector_count >= 1);
    const [min] = terms.children;
    assert.deepEqual([min.type, min.description], ['StatsAggregator', 'first']);
    assert.ok(terms.time_in_nanos >= min.time_in_nanos);
    collected += terms.breakdown.collect_count;
    withAuthor += min.breakdown.collect_count;
  }
  assert.equal(collected, aggregated.hits.total.value);
  assert.equal(withAuthor, (await search({ size: 0, query: { exists: { field: 'author' } } }, 'books3')).hits.total.value, 'the docs with an author reach the sub-aggregation');
});

test('collapse on a keyword and a numeric field, with inner_hits', async () => {
  for (const collection of ['books', 'books3']) {
    const byRating = await search({ query: { match_all: {} }, collapse: { field: 'rating' }, sort: [{ year: 'desc' }] }, collection);
    assert.deepEqual(byRating.hits.hits.map((hit: { _id: string }) => hit._id), ['b6', 'b5', 'b4', 'b3'], collection);
    assert.deepEqual(byRating.hits.hits.map((hit: { fields: Record<string, unknown[]> }) => hit.fields.rating), [[2], [5], [3], [4]]);
    assert.equal(byRating.hits.total.value, 6, 'the total counts hits, not groups');
    const byAuthor = await search({ query: { match: { title: 'quick' } }, collapse: { field: 'author', inner_hits: { name: 'others', size: 5, sort: [{ year: 'asc' }] } } }, collection);
    const groups = byAuthor.hits.hits.map((hit: { fields: { author: unknown[] } }) => hit.fields.author[0]);
    assert.deepEqual([...groups].sort((a, b) => String(a).localeCompare(String(b))), ['ann', 'bob', null]);
    const bob = byAuthor.hits.hits.find((hit: { fields: { author: unknown[] } }) => hit.fields.author[0] === 'bob');
    assert.deepEqual(bob.inner_hits.others.hits.hits.map((hit: { _id: string }) => hit._id), ['b2', 'b5']);
    assert.equal(bob.inner_hits.others.hits.total.value, 2);
    const detailed = await search(
      { query: { match: { title: 'quick' } }, collapse: { field: 'author', inner_hits: { name: 'more', size: 5, sort: [{ year: 'asc' }], version: true, seq_no_primary_term: true, fields: ['year'], _source: false } } },
      collection,
    );
    const bobDetailed = detailed.hits.hits.find((hit: { fields: { author: unknown[] } }) => hit.fields.author[0] === 'bob');
    const [first] = bobDetailed.inner_hits.more.hits.hits;
    assert.equal(first._version, 1, 'inner hits take version');
    assert.equal(typeof first._seq_no, 'number', 'and seq_no_primary_term');
    assert.equal(first._primary_term, 1);
    assert.deepEqual(first.fields, { year: [first.fields.year[0]] }, 'and fields');
    assert.equal(first._source, undefined);
    const paged = await search({ query: { match_all: {} }, collapse: { field: 'rating' }, sort: [{ year: 'desc' }], from: 1, size: 2 }, collection);
    assert.deepEqual(paged.hits.hits.map((hit: { _id: string }) => hit._id), ['b5', 'b4']);
  }
  await refused({ collapse: { field: 'title' } }, 'illegal_argument_exception', /unknown type for collapse field `title`, only keywords and numbers are accepted/);
  await refused({ collapse: { field: 'nope' } }, 'illegal_argument_exception', /no mapping found for `nope` in order to collapse on/);
  await refused({ collapse: { field: 'tags' } }, 'illegal_argument_exception', /the collapse field \[tags\] must be single valued/);
  await refused({ collapse: { field: 'rating' }, sort: ['year'], search_after: [1] }, 'illegal_argument_exception', /cannot use `collapse` in conjunction with `search_after`/);
  await refused({ collapse: { field: 'rating', inner_hits: { size: 200 } } }, 'illegal_argument_exception', /Inner result window is too large/);
  await refused({ collapse: { field: 'rating', colour: 1 } }, 'parsing_exception', /\[collapse\] unknown field \[colour\]/);
});

test('fields, docvalue_fields and stored_fields', async () => {
  const body = await search({ query: { ids: { values: ['b1'] } }, fields: ['title*', 'year', { field: 'published', format: 'yyyy/MM/dd' }], _source: false });
  const [hit] = body.hits.hits;
  assert.equal(hit._source, undefined);
  assert.deepEqual(hit.fields, { title: ['The Quick Brown Fox'], 'title.raw': ['The Quick Brown Fox'], year: [1999], published: ['1999/05/01'] });
  const docvalues = await search({ query: { ids: { values: ['b3'] } }, docvalue_fields: ['tags', 'published', { field: 'year' }] });
  assert.deepEqual(docvalues.hits.hits[0].fields, { tags: ['animals', 'nature'], published: ['2012-03-04T00:00:00.000Z'], year: [2012] });
  assert.ok(docvalues.hits.hits[0]._source, 'docvalue_fields keep the source');
  const stored = await search({ query: { ids: { values: ['b1'] } }, stored_fields: ['author', 'year'] });
  assert.equal(stored.hits.hits[0]._source, undefined, 'stored_fields without _source leave the source out');
  assert.deepEqual(stored.hits.hits[0].fields, { author: ['ann'] }, 'only fields mapped store: true');
  const none = await search({ query: { ids: { values: ['b1'] } }, stored_fields: '_none_' });
  assert.deepEqual(Object.keys(none.hits.hits[0]).sort(), ['_index', '_score']);
  const viaUrl = await search({ query: { ids: { values: ['b1'] } } }, 'books', '?stored_fields=_none_&docvalue_fields=year,tags');
  assert.deepEqual(viaUrl.hits.hits[0], { _index: 'books', _score: 1, fields: { year: [1999], tags: ['animals', 'fable'] } });
  const both = await search({ query: { ids: { values: ['b1'] } }, stored_fields: ['author'], _source: ['year'] });
  assert.deepEqual(both.hits.hits[0]._source, { year: 1999 });
  await refused({ docvalue_fields: ['title'] }, 'illegal_argument_exception', /fielddata is unsupported on fields of type \[text\]/);
  await refused({ stored_fields: '_none_', _source: true }, 'illegal_argument_exception', /cannot be disabled if \[_source\] is requested/);
  await refused({ docvalue_fields: Array.from({ length: 101 }, () => 'year') }, 'illegal_argument_exception', /too many docvalue_fields/);
  await refused({ fields: [{ field: 'year', colour: 1 }] }, 'parsing_exception', /\[fields\] unknown field \[colour\]/);
});

test('version, seq_no_primary_term and max_score when sorting on [_score, _doc]', async () => {
  const body = await search({ query: { match: { title: 'quick' } }, version: true, seq_no_primary_term: true, sort: ['_score', '_doc'] }, 'books3');
  assert.equal(typeof body.hits.max_score, 'number');
  assert.equal(body.hits.max_score, body.hits.hits[0]._score);
  for (const hit of body.hits.hits) {
    assert.equal(hit._version, 1);
    assert.equal(typeof hit._seq_no, 'number');
    assert.equal(hit._primary_term, 1);
  }
});

test('through the OpenSearch JS client: explain, profile, collapse and _explain', async () => {
  const explained = await client.search({ index: 'books3', body: { query: { match: { title: 'brown' } }, explain: true } });
  assert.ok(explained.body.hits.hits.every((hit) => hit._explanation !== undefined));
  const profiled = await client.search({ index: 'books3', body: { query: { match: { title: 'brown' } }, profile: true } });
  assert.equal(profiled.body.profile?.shards.length, 3);
  const collapsed = await client.search({ index: 'books3', body: { query: { match_all: {} }, collapse: { field: 'author' } } });
  assert.equal(collapsed.body.hits.hits.length, 4);
  const viaExplain = await client.explain({ index: 'books3', id: 'b3', body: { query: { term: { tags: 'nature' } } } });
  assert.equal(viaExplain.body.matched, true);
  assert.ok(viaExplain.body.explanation!.value > 0);
});

test('on a two-node cluster: explain, profile and collapse over shards on both nodes', { skip: etcdSkipReason() }, async () => {
  const cluster = await startNemesisCluster({ count: 2, ttlMs: 2000, name: 'features' });
  try {
    const [first, second] = cluster.nodes as [TroveServer, TroveServer];
    await loadShardedCollections(first, [['spread', 4]], { properties: { title: { type: 'text' }, author: { type: 'keyword' }, year: { type: 'integer' } } }, BOOKS);
    for (const node of [first, second]) {
      const response = await call(node, 'POST', '/spread/_search', {
        json: { query: { match: { title: 'quick brown' } }, explain: true, profile: true, collapse: { field: 'author', inner_hits: { size: 2 } }, sort: ['_score', { year: 'asc' }] },
      });
      assert.equal(response.status, 200, response.text);
      const { hits, profile } = response.body;
      for (const hit of hits.hits) assert.ok(Math.abs(hit._explanation.value - hit._score) < 1e-5);
      assert.equal(new Set(hits.hits.map((hit: { fields: { author: unknown[] } }) => hit.fields.author[0])).size, hits.hits.length);
      assert.equal(profile.shards.length, 4);
      const nodesInProfile = new Set(profile.shards.map((shard: { id: string }) => /^\[([^\]]+)\]/.exec(shard.id)![1]));
      assert.deepEqual([...nodesInProfile].sort(), [...cluster.nodeIds].sort(), 'shards on both nodes are profiled, each named by its node');
      assert.ok(hits.hits.every((hit: { _node: string }) => cluster.nodeIds.includes(hit._node)));
      assert.ok(profile.shards.every((shard: { searches: Array<{ query: unknown[] }> }) => shard.searches[0]!.query.length === 1));
      const explained = await call(node, 'POST', '/spread/_explain/b3', { json: { query: { match: { title: 'brown' } } } });
      assert.equal(explained.body.matched, true, explained.text);
    }
  } finally {
    await cluster.cleanup();
  }
});

test('indices_boost multiplies the scores of the collections, aliases or patterns it names (the first entry naming one applies)', async () => {
  const order = async (boost: unknown): Promise<string[]> => {
    const body = await search({ query: { ids: { values: ['b1'] } }, indices_boost: boost }, 'books,books3');
    return body.hits.hits.map((hit: { _index: string; _score: number }) => `${hit._index}:${hit._score}`);
  };
  assert.deepEqual(await order([{ books3: 2 }]), ['books3:2', 'books:1']);
  assert.deepEqual(await order([{ books: 3 }, { 'books*': 0.5 }]), ['books:3', 'books3:0.5'], 'books takes its own entry, books3 the pattern');
  assert.deepEqual(await order({ books: 0.5, books3: 1 }), ['books3:1', 'books:0.5'], 'the older object form');
  assert.equal((await call(server, 'POST', '/_aliases', { json: { actions: [{ add: { index: 'books3', alias: 'boosted-books' } }] } })).status, 200);
  assert.deepEqual(await order([{ 'boosted-books': 4 }]), ['books3:4', 'books:1'], 'an alias names its collections');
  const bad = await call(server, 'POST', '/books/_search', { json: { indices_boost: [{ books: 'high' }] } });
  assert.equal(bad.status, 400);
  const missing = await call(server, 'POST', '/books/_search', { json: { indices_boost: [{ nope: 2 }] } });
  assert.equal(missing.status, 404);
});

test('named queries: each hit lists the named clauses it matches, with their scores under include_named_queries_score', async () => {
  for (const collection of ['books', 'books3']) {
    const query = {
      bool: {
        _name: 'any',
        should: [
          { match: { title: { query: 'quick', _name: 'quick', boost: 2 } } },
          { term: { author: { value: 'bob', _name: 'by_bob' } } },
          { range: { year: { gte: 2010, _name: 'recent' } } },
        ],
      },
    };
    const plain = await search({ query, size: 20 }, collection);
    assert.ok(plain.hits.hits.length > 0);
    for (const hit of plain.hits.hits) {
      const expected: string[] = ['any'];
      const alone = async (clause: unknown): Promise<boolean> => (await search({ query: { bool: { must: [clause], filter: [{ ids: { values: [hit._id] } }] } } }, collection)).hits.total.value === 1;
      if (await alone({ match: { title: 'quick' } })) expected.push('quick');
      if (await alone({ term: { author: 'bob' } })) expected.push('by_bob');
      if (await alone({ range: { year: { gte: 2010 } } })) expected.push('recent');
      assert.deepEqual(hit.matched_queries, expected, `${collection} ${hit._id}`);
    }
    const scored = await search({ query, size: 20 }, collection, '?include_named_queries_score=true');
    for (const hit of scored.hits.hits) {
      assert.ok(Math.abs(hit.matched_queries.any - hit._score) < 1e-9, 'the outer clause scores as the hit');
      for (const value of Object.values(hit.matched_queries)) assert.ok((value as number) > 0);
    }
    const unnamed = await search({ query: { match: { title: 'quick' } } }, collection);
    assert.equal(unnamed.hits.hits[0].matched_queries, undefined);
  }
});

test('index.highlight.max_analyzed_offset: longer values are a 400 unless the unified highlighter reads indexed offsets; max_analyzer_offset analyses a prefix', async () => {
  const created = await call(server, 'PUT', '/hl-limit', {
    json: { settings: { 'index.highlight.max_analyzed_offset': 10 }, mappings: { properties: { plain: { type: 'text' }, offsets: { type: 'text', index_options: 'offsets' } } } },
  });
  assert.equal(created.status, 200, created.text);
  const text = 'The quick brown fox went to the forest and saw another fox.';
  await call(server, 'PUT', '/hl-limit/_doc/1?refresh=true', { json: { plain: text, offsets: text } });
  const highlighted = async (field: string, word: string, options: Record<string, unknown>) =>
    call(server, 'POST', '/hl-limit/_search', { json: { query: { match: { [field]: word } }, highlight: { fields: { [field]: options } } } });
  for (const options of [{}, { type: 'unified' }, { type: 'plain' }]) {
    const refused = await highlighted('plain', 'fox', options);
    assert.equal(refused.status, 400, JSON.stringify(options));
    assert.equal(refused.body.error.type, 'illegal_argument_exception');
    assert.match(refused.body.error.reason, /The length of \[plain\] field of \[1\] doc of \[hl-limit\] index has exceeded \[10\] - maximum allowed to be analyzed for highlighting/);
  }
  const withOffsets = await highlighted('offsets', 'fox', { type: 'unified' });
  assert.equal(withOffsets.status, 200, withOffsets.text);
  assert.deepEqual(withOffsets.body.hits.hits[0].highlight.offsets, ['The quick brown <em>fox</em> went to the forest and saw another <em>fox</em>.']);
  assert.equal((await highlighted('offsets', 'fox', { type: 'plain' })).status, 400, 'the plain highlighter analyses whatever the offsets');
  const prefix = await highlighted('plain', 'quick', { max_analyzer_offset: 10 });
  assert.equal(prefix.status, 200, prefix.text);
  assert.deepEqual(prefix.body.hits.hits[0].highlight.plain, ['The <em>quick</em> brown fox went to the forest and saw another fox.']);
  const beyond = await highlighted('plain', 'fox', { max_analyzer_offset: 10 });
  assert.equal(beyond.body.hits.hits[0].highlight, undefined, 'matches past the analysed prefix are not marked');
  const raised = await call(server, 'PUT', '/hl-limit/_settings', { json: { 'index.highlight.max_analyzed_offset': 1000 } });
  assert.equal(raised.status, 200, raised.text);
  assert.equal((await highlighted('plain', 'fox', {})).status, 200, 'a dynamic setting');
});
