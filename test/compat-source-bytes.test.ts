/**
 * `_source` comes back exactly as it was sent: integers beyond 2^53 (the long and unsigned long
 * extremes), `1e400`, a decimal of more digits than a float keeps, unicode escapes, spacing and key
 * order, checked byte for byte in the raw response body of every read that shows a source (get,
 * `_source`, `_mget`, search, scroll, point in time, `_msearch`, `top_hits`, collapse inner hits,
 * update and bulk update answers, the change feed), on one and three shards. A source filter or
 * `filter_path` cuts the source without rounding a kept number, and `?pretty` keeps the literals.
 * Run with shard workers (the default) and with `TROVE_TEST_SHARD_WORKERS=0`; the two-node case
 * (a real etcd) reads copies on the other node through the remote shard handle.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { Client } from '@opensearch-project/opensearch';
import { startEtcd, startEtcdNodes, type EtcdServer } from './etcd.fixture.ts';
import { call, startServer, type TroveServer } from './harness.ts';

/** The documents, as the client sends them (no JSON.stringify: these literals do not survive it). */
const SOURCES: Record<string, string> = {
  big: '{ "tag":"a",\n  "n": 9223372036854775807, "neg" :-9223372036854775808,"u":18446744073709551615,\t"e": 1e400, "f": 0.1000000000000000055511151231257827 }',
  text: '{"z":1.0,"tag":"a","s":"caf\\u00e9 \\"quoted\\" \\ud83d\\ude00","a":[1 , 2,{"b":-0, "c" : 1E2}],"n":-9223372036854775808}',
  plain: '{"tag":"b","title":"nothing odd","n":7}',
};

const MAPPINGS = { dynamic: false, properties: { tag: { type: 'keyword' }, n: { type: 'long' }, title: { type: 'text' } } };
const COLLECTIONS = [
  ['one', 1],
  ['three', 3],
] as const;

let server: TroveServer;

/** The text that follows `"_source":` in `body`, as long as the expected text: what the node wrote there. */
function sourcesIn(body: string): string[] {
  const found: string[] = [];
  for (let at = body.indexOf('"_source":'); at >= 0; at = body.indexOf('"_source":', at + 1)) found.push(body.slice(at + '"_source":'.length));
  return found;
}

/** Asserts that `body` holds `"_source":<text>` for each expected text. */
function assertHoldsSources(body: string, expected: readonly string[], what: string): void {
  const written = sourcesIn(body);
  for (const text of expected) assert.ok(written.some((after) => after.startsWith(text)), `${what}: ${text} not found byte for byte in ${body.slice(0, 2000)}`);
}

async function load(target: { url: string }, collection: string, shards: number): Promise<void> {
  const created = await call(target, 'PUT', `/${collection}`, { json: { settings: { number_of_shards: shards }, mappings: MAPPINGS } });
  assert.equal(created.status, 200, created.text);
  for (const [id, text] of Object.entries(SOURCES)) {
    const put = await call(target, 'PUT', `/${collection}/_doc/${id}`, { body: text, headers: { 'content-type': 'application/json' } });
    assert.equal(put.status, 201, put.text);
  }
  assert.equal((await call(target, 'POST', `/${collection}/_refresh`)).status, 200);
}

before(async () => {
  server = await startServer();
  for (const [name, shards] of COLLECTIONS) await load(server, name, shards);
});

after(async () => {
  await server?.cleanup();
});

/** Checks the reads that address documents by id and the search paths on `collection` of `target`. */
async function checkReads(target: { url: string }, collection: string): Promise<void> {
  const all = Object.values(SOURCES);
  for (const [id, text] of Object.entries(SOURCES)) {
    const got = await call(target, 'GET', `/${collection}/_doc/${id}`);
    assert.equal(got.status, 200, got.text);
    assertHoldsSources(got.text, [text], `GET _doc/${id}`);
    const source = await call(target, 'GET', `/${collection}/_source/${id}`);
    assert.equal(source.text, text, `GET _source/${id}`);
  }
  const mget = await call(target, 'POST', `/${collection}/_mget`, { json: { ids: Object.keys(SOURCES) } });
  assertHoldsSources(mget.text, all, '_mget');
  const search = await call(target, 'POST', `/${collection}/_search`, { json: { query: { match_all: {} }, size: 10 } });
  assert.equal(search.body.hits.hits.length, 3, search.text);
  assertHoldsSources(search.text, all, '_search');
  // Larger than the one-round-trip page: query then fetch.
  const fetched = await call(target, 'POST', `/${collection}/_search`, { json: { query: { match_all: {} }, size: 500 } });
  assertHoldsSources(fetched.text, all, '_search, query then fetch');

  const scrolled: string[] = [];
  let page = await call(target, 'POST', `/${collection}/_search?scroll=1m`, { json: { size: 1 } });
  while (page.body.hits.hits.length > 0) {
    scrolled.push(page.text);
    page = await call(target, 'POST', '/_search/scroll', { json: { scroll: '1m', scroll_id: page.body._scroll_id } });
  }
  assertHoldsSources(scrolled.join('\n'), all, 'scroll');

  const pit = await call(target, 'POST', `/${collection}/_search/point_in_time?keep_alive=1m`);
  assert.equal(pit.status, 200, pit.text);
  const inPit = await call(target, 'POST', '/_search', { json: { pit: { id: pit.body.pit_id, keep_alive: '1m' }, size: 10, sort: ['_shard_doc'] } });
  assertHoldsSources(inPit.text, all, 'point in time');

  const msearch = await call(target, 'POST', '/_msearch', {
    body: `{"index":"${collection}"}\n{"query":{"ids":{"values":["big"]}}}\n{"index":"${collection}"}\n{"query":{"ids":{"values":["text","plain"]}}}\n`,
    headers: { 'content-type': 'application/x-ndjson' },
  });
  assertHoldsSources(msearch.text, all, '_msearch');

  const topHits = await call(target, 'POST', `/${collection}/_search`, { json: { size: 0, aggs: { tags: { terms: { field: 'tag' }, aggs: { top: { top_hits: { size: 5 } } } } } } });
  assertHoldsSources(topHits.text, all, 'top_hits');

  const collapsed = await call(target, 'POST', `/${collection}/_search`, { json: { collapse: { field: 'tag', inner_hits: { name: 'same_tag', size: 5 } }, size: 10 } });
  assert.equal(collapsed.status, 200, collapsed.text);
  assertHoldsSources(collapsed.text, all, 'collapse inner hits');
}

for (const [collection] of COLLECTIONS) {
  test(`every read of ${collection} shows _source byte for byte`, async () => {
    await checkReads(server, collection);
  });
}

test('update answers with _source, bulk update items and the change feed show the stored text', async () => {
  for (const [collection] of COLLECTIONS) {
    // A field update splices the stored text: every other byte stays as sent.
    const updated = await call(server, 'POST', `/${collection}/_update/big?_source=true`, { json: { doc: { tag: 'c' } } });
    assert.equal(updated.status, 200, updated.text);
    const afterUpdate = SOURCES.big!.replace('"tag":"a"', '"tag":"c"');
    assertHoldsSources(updated.text, [afterUpdate], '_update ?_source=true');
    assertHoldsSources((await call(server, 'GET', `/${collection}/_doc/big`)).text, [afterUpdate], 'GET after _update');

    const bulk = await call(server, 'POST', `/${collection}/_bulk`, {
      body: '{"update":{"_id":"text","_source":true}}\n{"doc":{"tag":"d"}}\n',
      headers: { 'content-type': 'application/x-ndjson' },
    });
    assert.equal(bulk.body.errors, false, bulk.text);
    assertHoldsSources(bulk.text, [SOURCES.text!.replace('"tag":"a"', '"tag":"d"')], '_bulk update with _source');

    const changes = await call(server, 'GET', `/${collection}/_changes?since=0&include_docs=true`);
    assert.equal(changes.status, 200, changes.text);
    for (const literal of ['"n":9223372036854775807', '"neg":-9223372036854775808', '"u":18446744073709551615', '"e":1e400', '"f":0.1000000000000000055511151231257827', '"z":1.0', '"s":"caf\\u00e9 \\"quoted\\" \\ud83d\\ude00"', '"a":[1,2,{"b":-0,"c":1E2}]']) {
      assert.ok(changes.text.includes(literal), `change feed: ${literal} in ${changes.text}`);
    }
    // Put the documents back as they were for the other tests.
    for (const id of ['big', 'text']) {
      await call(server, 'PUT', `/${collection}/_doc/${id}?refresh=true`, { body: SOURCES[id]!, headers: { 'content-type': 'application/json' } });
    }
  }
});

test('an inplace update shows its new value; the other bytes stay as sent', async () => {
  const created = await call(server, 'PUT', '/counters', { json: { mappings: { properties: { rating: { type: 'double', inplace: true }, n: { type: 'long' } } } } });
  assert.equal(created.status, 200, created.text);
  const text = '{ "rating": 1.50, "n": 9223372036854775807, "s": "\\u00e9" }';
  await call(server, 'PUT', '/counters/_doc/c?refresh=true', { body: text, headers: { 'content-type': 'application/json' } });
  assertHoldsSources((await call(server, 'GET', '/counters/_doc/c')).text, [text], 'GET before the update');
  const updated = await call(server, 'POST', '/counters/_update/c?_source=true&refresh=true', { json: { ops: [{ op: 'incr', field: 'rating', value: 1 }] } });
  assert.equal(updated.status, 200, updated.text);
  const expected = '{ "rating": 2.5, "n": 9223372036854775807, "s": "\\u00e9" }';
  assertHoldsSources(updated.text, [expected], 'inplace _update ?_source=true');
  assertHoldsSources((await call(server, 'GET', '/counters/_doc/c')).text, [expected], 'GET after the inplace update');
  assertHoldsSources((await call(server, 'POST', '/counters/_search', { json: {} })).text, [expected], 'search after the inplace update');
});

test('a source filter, filter_path and ?pretty keep the literals of the numbers they show', async () => {
  const filtered = await call(server, 'GET', '/three/_doc/big?_source_includes=n,u,e,f');
  assertHoldsSources(filtered.text, ['{"n":9223372036854775807,"u":18446744073709551615,"e":1e400,"f":0.1000000000000000055511151231257827}'], '_source_includes');
  const excluded = await call(server, 'POST', '/three/_search', { json: { query: { ids: { values: ['text'] } }, _source: { excludes: ['s', 'tag'] } } });
  assertHoldsSources(excluded.text, ['{"z":1.0,"a":[1,2,{"b":-0,"c":1E2}],"n":-9223372036854775808}'], '_source excludes');
  const pathFiltered = await call(server, 'GET', '/one/_doc/big?filter_path=_source.n,_source.neg');
  assert.equal(pathFiltered.text, '{"_source":{"n":9223372036854775807,"neg":-9223372036854775808}}');
  for (const [name, option] of [['cut', { excludes: ['secret'] }], ['hidden', { enabled: false }]] as const) {
    assert.equal((await call(server, 'PUT', `/${name}`, { json: { mappings: { _source: option, properties: { n: { type: 'long' } } } } })).status, 200);
    await call(server, 'PUT', `/${name}/_doc/1?refresh=true`, { body: '{"secret": "x", "n": 9223372036854775807}', headers: { 'content-type': 'application/json' } });
  }
  assertHoldsSources((await call(server, 'GET', '/cut/_doc/1')).text, ['{"n":9223372036854775807}'], 'mapping _source.excludes');
  assertHoldsSources((await call(server, 'POST', '/cut/_search', { json: {} })).text, ['{"n":9223372036854775807}'], 'mapping _source.excludes, search');
  const hidden = await call(server, 'GET', '/hidden/_doc/1');
  assert.equal(hidden.status, 200, hidden.text);
  assert.equal(hidden.body._source, undefined, hidden.text);
  const pretty = await call(server, 'GET', '/one/_doc/text?pretty');
  assert.ok(pretty.text.includes('\n  "_source": {\n    "z": 1.0,\n    "tag": "a",\n    "s": "caf\\u00e9 \\"quoted\\" \\ud83d\\ude00",\n    "a": [\n      1,\n      2,\n      {\n        "b": -0,\n        "c": 1E2\n      }\n    ],\n    "n": -9223372036854775808\n  }\n}\n'), pretty.text);
  const prettySearch = await call(server, 'POST', '/one/_search?pretty', { json: { query: { ids: { values: ['big'] } } } });
  assert.ok(prettySearch.text.includes('"n": 9223372036854775807,'), prettySearch.text);
});

test('the OpenSearch client receives the source bytes as stored', async () => {
  const client = new Client({ node: server.url });
  const response = await client.get({ index: 'three', id: 'big' }, { asStream: true });
  const chunks: Buffer[] = [];
  for await (const chunk of response.body as unknown as AsyncIterable<Buffer>) chunks.push(Buffer.from(chunk));
  assertHoldsSources(Buffer.concat(chunks).toString('utf8'), [SOURCES.big!], 'client get');
  await client.close();
});

test('on two nodes, sources read through the other node come back byte for byte', async (t) => {
  let etcd: EtcdServer;
  try {
    etcd = await startEtcd();
  } catch (error) {
    return t.skip((error as Error).message);
  }
  const nodes: TroveServer[] = [];
  try {
    await startEtcdNodes(etcd, 2, 'source-bytes', nodes);
    await load(nodes[0]!, 'spread', 4);
    const shards = (await call(nodes[0]!, 'GET', '/_cluster/state/shards')).body.shards.spread;
    const placed = new Set(Object.values(shards as Record<string, { primary: { node: string } }>).map((copy) => copy.primary.node));
    assert.equal(placed.size, 2, 'the primaries are on both nodes');
    for (const node of nodes) await checkReads(node, 'spread');
    const changes = await call(nodes[1]!, 'GET', '/spread/_changes?since=0&include_docs=true');
    assert.ok(changes.text.includes('"u":18446744073709551615'), changes.text);
  } finally {
    for (const node of nodes) await node.cleanup();
    await etcd.cleanup();
  }
});

test('_reindex and a re-indexing _update_by_query copy the stored text, numbers as they were sent', async () => {
  const created = await call(server, 'PUT', '/copied', { json: { settings: { number_of_shards: 2 }, mappings: MAPPINGS } });
  assert.equal(created.status, 200, created.text);
  const copied = await call(server, 'POST', '/_reindex?refresh=true', { json: { source: { index: 'three' }, dest: { index: 'copied' } } });
  assert.equal(copied.status, 200, copied.text);
  assert.deepEqual([copied.body.created, copied.body.failures], [Object.keys(SOURCES).length, []], copied.text);
  for (const [id, text] of Object.entries(SOURCES)) assertHoldsSources((await call(server, 'GET', `/copied/_doc/${id}`)).text, [text], `_reindex of ${id}`);
  const reindexed = await call(server, 'POST', '/copied/_update_by_query?refresh=true');
  assert.equal(reindexed.status, 200, reindexed.text);
  assert.deepEqual([reindexed.body.updated, reindexed.body.failures], [Object.keys(SOURCES).length, []], reindexed.text);
  for (const [id, text] of Object.entries(SOURCES)) assertHoldsSources((await call(server, 'GET', `/copied/_doc/${id}`)).text, [text], `_update_by_query of ${id}`);
});
