/**
 * Aliases, `_reindex`, automatic collection creation and `_cluster/health` waits (issue 17),
 * through real HTTP on one node and through the OpenSearch JS client: alias CRUD, `_aliases`
 * actions applied as one change, filtered and routed aliases in every read, writes through a
 * write index, names shared with collections, restart, delete and trash restore; reindex with its
 * options; health of one collection. Last, two nodes on a real etcd: health waits for the second
 * node, aliases made through one node serve reads and writes through the other, and survive a
 * restart of the cluster.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { Client } from '@opensearch-project/opensearch';
import { startEtcd } from './etcd.fixture.ts';
import { call, ndjson, startServer, until, type TroveServer } from './harness.ts';

let server: TroveServer;
let client: Client;
const NDJSON = { 'content-type': 'application/x-ndjson' };

const MAPPING = { properties: { title: { type: 'text' }, genre: { type: 'keyword' }, year: { type: 'integer' } } };
const FILMS = [
  { title: 'the red shoes', genre: 'drama', year: 1948 },
  { title: 'red river', genre: 'western', year: 1948 },
  { title: 'the third man', genre: 'noir', year: 1949 },
  { title: 'rio bravo', genre: 'western', year: 1959 },
];

async function load(name: string, shards = 1): Promise<void> {
  const created = await call(server, 'PUT', `/${name}`, { json: { settings: { number_of_shards: shards }, mappings: MAPPING } });
  assert.equal(created.status, 200, created.text);
  const loaded = await call(server, 'POST', `/${name}/_bulk`, { body: ndjson(FILMS.flatMap((film, index) => [{ index: { _id: `f${index}` } }, film])), headers: NDJSON });
  assert.equal(loaded.body.errors, false, loaded.text);
}

before(async () => {
  server = await startServer();
  client = new Client({ node: server.url });
  await load('films-a');
  await load('films-b', 2);
});

after(async () => {
  await client?.close();
  await server?.cleanup();
});

test('PUT, GET, HEAD and DELETE of one alias; aliases in GET /{collection} and _cat/aliases', async () => {
  assert.equal((await call(server, 'PUT', '/films-a/_alias/classics')).status, 200);
  const got = await call(server, 'GET', '/_alias/classics');
  assert.equal(got.status, 200, got.text);
  assert.deepEqual(got.body, { 'films-a': { aliases: { classics: {} } } });
  assert.equal((await call(server, 'HEAD', '/_alias/classics')).status, 200);
  assert.equal((await call(server, 'HEAD', '/films-a/_alias/classics')).status, 200);
  assert.equal((await call(server, 'HEAD', '/films-b/_alias/classics')).status, 404);
  assert.equal((await call(server, 'HEAD', '/_alias/nothing')).status, 404);
  const all = await call(server, 'GET', '/_alias');
  assert.deepEqual(all.body['films-b'], { aliases: {} });
  assert.deepEqual((await call(server, 'GET', '/films-a/_alias')).body, { 'films-a': { aliases: { classics: {} } } });
  assert.deepEqual((await call(server, 'GET', '/films-a')).body['films-a'].aliases, { classics: {} });
  assert.deepEqual((await call(server, 'GET', '/_cat/indices/classics?format=json&h=index')).body, [{ index: 'films-a' }]);
  const cat = await call(server, 'GET', '/_cat/aliases?format=json');
  assert.deepEqual(cat.body, [{ alias: 'classics', index: 'films-a', filter: '-', 'routing.index': '-', 'routing.search': '-', is_write_index: '-' }]);
  const missing = await call(server, 'GET', '/_alias/classics,nothing');
  assert.equal(missing.status, 404);
  assert.equal(missing.body.error, 'alias [nothing] missing');
  assert.deepEqual(missing.body['films-a'], { aliases: { classics: {} } });

  assert.equal((await call(server, 'DELETE', '/films-a/_alias/classics')).status, 200);
  assert.equal((await call(server, 'HEAD', '/_alias/classics')).status, 404);
  assert.equal((await call(server, 'HEAD', '/_alias')).status, 404);
  assert.equal((await call(server, 'HEAD', '/films-a/_alias')).status, 404);
  const gone = await call(server, 'DELETE', '/films-a/_alias/classics');
  assert.equal(gone.status, 404);
  assert.equal(gone.body.error.type, 'aliases_not_found_exception');
});

test('reads through an alias: search, count, get, mget, msearch, stats, mapping, by-query; a filter is ANDed in', async () => {
  const added = await call(server, 'POST', '/_aliases', {
    json: {
      actions: [
        { add: { indices: ['films-a', 'films-b'], alias: 'all-films' } },
        { add: { index: 'films-b', alias: 'westerns', filter: { term: { genre: 'western' } } } },
        { add: { index: 'films-a', alias: 'one-film' } },
      ],
    },
  });
  assert.equal(added.status, 200, added.text);
  const searched = await call(server, 'POST', '/all-films/_search', { json: { size: 20 } });
  assert.equal(searched.body.hits.total.value, 8, searched.text);
  assert.deepEqual(new Set(searched.body.hits.hits.map((hit: { _index: string }) => hit._index)), new Set(['films-a', 'films-b']));
  const westerns = await call(server, 'POST', '/westerns/_search', { json: { query: { match: { title: 'red' } } } });
  assert.equal(westerns.body.hits.total.value, 1, westerns.text);
  assert.equal(westerns.body.hits.hits[0]._source.title, 'red river');
  assert.equal((await call(server, 'GET', '/westerns/_count')).body.count, 2);
  assert.equal((await call(server, 'POST', '/west*/_count', { json: { query: { match_all: {} } } })).body.count, 2);
  // Named directly too, the collection is read whole.
  assert.equal((await call(server, 'GET', '/westerns,films-b/_count')).body.count, 4);
  const aggregated = await call(server, 'POST', '/westerns/_search', { json: { size: 0, aggs: { genres: { terms: { field: 'genre' } } } } });
  assert.deepEqual(aggregated.body.aggregations.genres.buckets, [{ key: 'western', doc_count: 2 }]);
  const document = await call(server, 'GET', '/one-film/_doc/f2');
  assert.equal(document.status, 200);
  assert.equal(document.body._index, 'films-a');
  const many = await call(server, 'POST', '/_mget', { json: { docs: [{ _index: 'one-film', _id: 'f0' }] } });
  assert.equal(many.body.docs[0].found, true, many.text);
  const ambiguous = await call(server, 'GET', '/all-films/_doc/f0');
  assert.equal(ambiguous.status, 400);
  assert.equal(ambiguous.body.error.type, 'illegal_argument_exception');
  const multi = await call(server, 'POST', '/_msearch', { body: ndjson([{ index: 'westerns' }, { query: { match_all: {} } }]), headers: NDJSON });
  assert.equal(multi.body.responses[0].hits.total.value, 2, multi.text);
  const stats = await call(server, 'GET', '/all-films/_stats');
  assert.equal(stats.status, 200, stats.text);
  assert.deepEqual(Object.keys(stats.body.indices).sort(), ['films-a', 'films-b']);
  assert.deepEqual(Object.keys((await call(server, 'GET', '/westerns/_mapping')).body), ['films-b']);
  const merged = await call(server, 'POST', '/one-film/_forcemerge');
  assert.equal(merged.status, 200, merged.text);
  const mergedSeveral = await call(server, 'POST', '/all-films/_forcemerge');
  assert.equal(mergedSeveral.status, 400, mergedSeveral.text);
  assert.match(mergedSeveral.body.error.reason, /points to several collections/);
  assert.equal((await call(server, 'HEAD', '/westerns')).status, 200);
  const updated = await call(server, 'POST', '/westerns/_update_by_query', { json: { doc: { seen: true } } });
  assert.equal(updated.status, 200, updated.text);
  assert.equal(updated.body.updated, 2);
  assert.equal((await call(server, 'POST', '/films-b/_count', { json: { query: { term: { seen: true } } } })).body.count, 2);
  const invalid = await call(server, 'POST', '/_aliases', { json: { actions: [{ add: { index: 'films-a', alias: 'bad', filter: { nonsense: {} } } }] } });
  assert.equal(invalid.status, 400, invalid.text);
  assert.equal((await call(server, 'HEAD', '/_alias/bad')).status, 404);
});

test('search_routing limits a search to its shards; index_routing routes writes', async () => {
  const routed = await call(server, 'PUT', '/films-b/_alias/routed', { json: { routing: 'r1' } });
  assert.equal(routed.status, 200, routed.text);
  const written = await call(server, 'PUT', '/routed/_doc/r-doc', { json: { title: 'routed', genre: 'x', year: 2000 } });
  assert.equal(written.status, 201, written.text);
  assert.equal((await call(server, 'GET', '/films-b/_doc/r-doc?routing=r1')).body.found, true);
  assert.equal((await call(server, 'GET', '/routed/_doc/r-doc')).body.found, true);
  const conflict = await call(server, 'PUT', '/routed/_doc/r-2?routing=other', { json: { title: 'x' } });
  assert.equal(conflict.status, 400);
  const searched = await call(server, 'POST', '/routed/_search', { json: { query: { match_all: {} } } });
  assert.equal(searched.body._shards.total, 1, searched.text);
  assert.ok(searched.body.hits.hits.some((hit: { _id: string }) => hit._id === 'r-doc'));
  assert.equal((await call(server, 'DELETE', '/routed/_doc/r-doc')).status, 200);
  assert.equal((await call(server, 'DELETE', '/films-b/_alias/routed')).status, 200);
});

test('writes through an alias go to its one collection or its write index; several without one is the ES error', async () => {
  const single = await call(server, 'PUT', '/one-film/_doc/w1', { json: { title: 'written', genre: 'x', year: 2001 } });
  assert.equal(single.status, 201, single.text);
  assert.equal(single.body._index, 'films-a');
  const refused = await call(server, 'PUT', '/all-films/_doc/w2', { json: { title: 'nowhere' } });
  assert.equal(refused.status, 400);
  assert.equal(refused.body.error.type, 'illegal_argument_exception');
  assert.match(refused.body.error.reason, /no write index is defined for alias \[all-films\]/);
  const bulkRefused = await call(server, 'POST', '/_bulk', { body: ndjson([{ index: { _index: 'all-films', _id: 'w3' } }, { title: 'x' }, { index: { _index: 'one-film', _id: 'w4' } }, { title: 'y' }]), headers: NDJSON });
  assert.equal(bulkRefused.body.items[0].index.status, 400, bulkRefused.text);
  assert.equal(bulkRefused.body.items[1].index.status, 201);
  assert.equal((await call(server, 'HEAD', '/all-films')).status, 200);
  const requireAlias = await call(server, 'POST', '/_bulk?require_alias=true', {
    body: ndjson([{ index: { _index: 'one-film', _id: 'w5' } }, { title: 'z' }, { index: { _index: 'not-an-alias', _id: 'w6' } }, { title: 'z' }, { index: { _index: 'not-an-alias', _id: 'w7', require_alias: false } }, { title: 'z' }]),
    headers: NDJSON,
  });
  assert.equal(requireAlias.body.items[0].index.status, 201, requireAlias.text);
  assert.equal(requireAlias.body.items[1].index.status, 404);
  assert.match(requireAlias.body.items[1].index.error.reason, /\[require_alias\] request flag is \[true\] and \[not-an-alias\] is not an alias/);
  assert.equal(requireAlias.body.items[2].index.status, 201);
  assert.equal((await call(server, 'DELETE', '/not-an-alias')).status, 200);
  for (const [method, path, json] of [
    ['PUT', '/not-an-alias/_doc/w8?require_alias=true', { title: 'z' }],
    ['POST', '/not-an-alias/_doc?require_alias=true', { title: 'z' }],
    ['PUT', '/not-an-alias/_create/w8?require_alias=true', { title: 'z' }],
    ['POST', '/not-an-alias/_update/w8?require_alias=true', { doc: { title: 'z' }, doc_as_upsert: true }],
  ] as const) {
    const single = await call(server, method, path, { json });
    assert.equal(single.status, 404, `${method} ${path}: ${single.text}`);
    assert.match(single.body.error.reason, /\[require_alias\] request flag is \[true\] and \[not-an-alias\] is not an alias/);
  }
  assert.equal((await call(server, 'HEAD', '/not-an-alias')).status, 404, 'a refused write creates nothing');
  assert.equal((await call(server, 'PUT', '/one-film/_doc/w9?require_alias=true', { json: { title: 'z' } })).status, 201, 'an alias takes it');
  assert.equal((await call(server, 'DELETE', '/films-a/_doc/w9')).status, 200);
  assert.equal((await call(server, 'DELETE', '/films-a/_doc/w5')).status, 200);
  const writer = await call(server, 'PUT', '/films-b/_alias/all-films', { json: { is_write_index: true } });
  assert.equal(writer.status, 200, writer.text);
  const through = await call(server, 'PUT', '/all-films/_doc/w2', { json: { title: 'through the write index', genre: 'x', year: 2002 } });
  assert.equal(through.status, 201, through.text);
  assert.equal(through.body._index, 'films-b');
  const twoWriters = await call(server, 'PUT', '/films-a/_alias/all-films', { json: { is_write_index: true } });
  assert.equal(twoWriters.status, 400);
  assert.match(twoWriters.body.error.reason, /more than one write index/);
  for (const [collection, id] of [['films-a', 'w1'], ['films-a', 'w4'], ['films-b', 'w2']]) {
    assert.equal((await call(server, 'DELETE', `/${collection}/_doc/${id}`)).status, 200);
  }
});

test('aliases and collections share one namespace of names', async () => {
  const aliasLikeCollection = await call(server, 'PUT', '/films-b/_alias/films-a');
  assert.equal(aliasLikeCollection.status, 400);
  assert.equal(aliasLikeCollection.body.error.type, 'invalid_alias_name_exception');
  const collectionLikeAlias = await call(server, 'PUT', '/all-films', { json: {} });
  assert.equal(collectionLikeAlias.status, 400);
  assert.equal(collectionLikeAlias.body.error.type, 'invalid_index_name_exception');
  const badName = await call(server, 'PUT', '/films-a/_alias/Bad');
  assert.equal(badName.status, 400);
  assert.equal(badName.body.error.type, 'invalid_alias_name_exception');
  const autoCreate = await call(server, 'PUT', '/westerns/_doc/1', { json: { title: 'x' } });
  assert.equal(autoCreate.status, 201, autoCreate.text);
  assert.equal(autoCreate.body._index, 'films-b');
  assert.equal((await call(server, 'DELETE', '/films-b/_doc/1')).status, 200);
  const deleteAlias = await call(server, 'DELETE', '/westerns');
  assert.equal(deleteAlias.status, 400);
  assert.match(deleteAlias.body.error.reason, /matches an alias/);
});

test('_aliases applies its actions as one change: a failing action changes nothing', async () => {
  const failed = await call(server, 'POST', '/_aliases', {
    json: { actions: [{ add: { index: 'films-a', alias: 'partial' } }, { remove: { index: 'films-a', alias: 'never-there' } }] },
  });
  assert.equal(failed.status, 404, failed.text);
  assert.equal((await call(server, 'HEAD', '/_alias/partial')).status, 404);
  const swapped = await call(server, 'POST', '/_aliases', {
    json: { actions: [{ remove: { index: 'films-a', alias: 'one-film' } }, { add: { index: 'films-b', alias: 'one-film' } }] },
  });
  assert.equal(swapped.status, 200, swapped.text);
  assert.deepEqual(Object.keys((await call(server, 'GET', '/_alias/one-film')).body), ['films-b']);
  const wildcardRemove = await call(server, 'POST', '/_aliases', { json: { actions: [{ remove: { index: '*', alias: 'one-*' } }] } });
  assert.equal(wildcardRemove.status, 200, wildcardRemove.text);
  assert.equal((await call(server, 'HEAD', '/_alias/one-film')).status, 404);
  const unknown = await call(server, 'POST', '/_aliases', { json: { actions: [{ rename: { index: 'films-a', alias: 'x' } }] } });
  assert.equal(unknown.status, 400);
});

test('aliases in the create body; remove_index swaps a collection for an alias; delete and trash restore', async () => {
  const created = await call(server, 'PUT', '/films-c', { json: { mappings: MAPPING, aliases: { 'c-alias': {}, 'c-dramas': { filter: { term: { genre: 'drama' } }, is_write_index: true } } } });
  assert.equal(created.status, 200, created.text);
  assert.deepEqual((await call(server, 'GET', '/_alias/c-dramas')).body, { 'films-c': { aliases: { 'c-dramas': { filter: { term: { genre: 'drama' } }, is_write_index: true } } } });
  const badFilter = await call(server, 'PUT', '/films-d', { json: { aliases: { d: { filter: { nonsense: {} } } } } });
  assert.equal(badFilter.status, 400);
  assert.equal((await call(server, 'HEAD', '/films-d')).status, 404);

  const swapped = await call(server, 'POST', '/_aliases', { json: { actions: [{ remove_index: { index: 'films-c' } }, { add: { index: 'films-a', alias: 'films-c' } }] } });
  assert.equal(swapped.status, 200, swapped.text);
  assert.deepEqual(Object.keys((await call(server, 'GET', '/_alias/films-c')).body), ['films-a']);
  assert.equal((await call(server, 'HEAD', '/_alias/c-alias')).status, 404);
  const trash = await call(server, 'GET', '/_cluster/trash');
  const item = trash.body.namespaces.default.items.find((entry: { name: string }) => entry.name === 'films-c');
  assert.ok(item, trash.text);
  // Restored while its name is an alias: refused; once the alias is gone it comes back with its aliases.
  assert.equal((await call(server, 'POST', `/_cluster/trash/${item.item_id}/_restore`)).status, 409);
  assert.equal((await call(server, 'DELETE', '/films-a/_alias/films-c')).status, 200);
  const restored = await call(server, 'POST', `/_cluster/trash/${item.item_id}/_restore`);
  assert.equal(restored.status, 200, restored.text);
  assert.deepEqual(Object.keys((await call(server, 'GET', '/films-c/_alias')).body['films-c'].aliases).sort(), ['c-alias', 'c-dramas']);

  const deleted = await call(server, 'DELETE', '/films-c');
  assert.equal(deleted.status, 200, deleted.text);
  assert.equal((await call(server, 'HEAD', '/_alias/c-alias')).status, 404);
});

test('aliases survive a restart', async () => {
  assert.equal((await call(server, 'PUT', '/films-a/_alias/kept', { json: { filter: { term: { year: 1949 } } } })).status, 200);
  await server.restart();
  assert.deepEqual((await call(server, 'GET', '/_alias/kept')).body, { 'films-a': { aliases: { kept: { filter: { term: { year: 1949 } } } } } });
  assert.equal((await call(server, 'GET', '/kept/_count')).body.count, 1);
});

test('the OpenSearch client: indices.putAlias, updateAliases, getAlias, existsAlias, deleteAlias', async () => {
  const put = await client.indices.putAlias({ index: 'films-a', name: 'client-alias', body: { filter: { term: { genre: 'noir' } } } });
  assert.equal(put.body.acknowledged, true);
  const updated = await client.indices.updateAliases({ body: { actions: [{ add: { index: 'films-b', alias: 'client-two' } }, { remove: { index: 'films-a', alias: 'client-alias' } }] } });
  assert.equal(updated.body.acknowledged, true);
  const got = await client.indices.getAlias({ name: 'client-two' });
  assert.deepEqual(got.body, { 'films-b': { aliases: { 'client-two': {} } } });
  assert.equal((await client.indices.existsAlias({ name: 'client-alias' })).body, false);
  const searched = await client.search({ index: 'client-two', body: { query: { match: { title: 'river' } } } });
  assert.deepEqual(searched.body.hits.total, { value: 1, relation: 'eq' });
  assert.equal((await client.indices.deleteAlias({ index: 'films-b', name: 'client-two' })).body.acknowledged, true);
});

/** The job once it is done or failed. */
function jobDone(id: string): Promise<Record<string, any>> {
  return until(async () => {
    const job = await call(server, 'GET', `/_jobs/${id}`);
    return job.body.state === 'done' || job.body.state === 'failed' ? job.body : undefined;
  }, `job ${id} finishes`);
}

test('_reindex copies documents into a new collection, with op_type, conflicts, max_docs, query, _source and batches', async () => {
  const copied = await call(server, 'POST', '/_reindex?refresh=true', { json: { source: { index: 'films-a', size: 2 }, dest: { index: 'films-copy' } } });
  assert.equal(copied.status, 200, copied.text);
  assert.equal(copied.body.total, 4);
  assert.equal(copied.body.created, 4);
  assert.equal(copied.body.updated, 0);
  assert.ok(copied.body.batches >= 2, copied.text);
  assert.equal(copied.body.version_conflicts, 0);
  assert.deepEqual(copied.body.failures, []);
  for (const key of ['took', 'timed_out', 'deleted', 'noops', 'retries', 'throttled_millis', 'requests_per_second', 'throttled_until_millis']) assert.ok(key in copied.body, key);
  assert.deepEqual((await call(server, 'GET', '/films-copy/_doc/f2')).body._source, FILMS[2]);
  // Created on the first write with a dynamic mapping, as Elasticsearch does (the source's mapping is not copied).
  assert.equal((await call(server, 'GET', '/films-copy/_mapping')).body['films-copy'].mappings.properties.year.type, 'long');

  const again = await call(server, 'POST', '/_reindex', { json: { source: { index: 'films-a' }, dest: { index: 'films-copy' } } });
  assert.equal(again.body.updated, 4, again.text);
  const creates = await call(server, 'POST', '/_reindex', { json: { source: { index: 'films-a' }, dest: { index: 'films-copy', op_type: 'create' }, conflicts: 'proceed' } });
  assert.equal(creates.status, 200, creates.text);
  assert.equal(creates.body.version_conflicts, 4);
  assert.equal(creates.body.created, 0);
  const aborted = await call(server, 'POST', '/_reindex', { json: { source: { index: 'films-a' }, dest: { index: 'films-copy', op_type: 'create' } } });
  assert.equal(aborted.status, 409, aborted.text);
  assert.equal(aborted.body.failures[0].cause.type, 'version_conflict_engine_exception');

  const some = await call(server, 'POST', '/_reindex', {
    json: { source: { index: ['films-a', 'films-b'], query: { term: { genre: 'western' } }, _source: ['title'] }, dest: { index: 'westerns-copy' }, max_docs: 3 },
  });
  assert.equal(some.status, 200, some.text);
  // Two westerns in each collection, under the same ids: max_docs stops after three writes, two of them creations.
  assert.equal(some.body.total, 3);
  assert.equal(some.body.created, 2);
  assert.equal(some.body.updated, 1);
  assert.equal((await call(server, 'GET', '/westerns-copy/_count')).body.count, 2);
  const hit = (await call(server, 'POST', '/westerns-copy/_search', { json: { size: 1 } })).body.hits.hits[0];
  assert.deepEqual(Object.keys(hit._source), ['title']);
});

test('_reindex through aliases and patterns, external versions, as a task, and its 400s', async () => {
  assert.equal((await call(server, 'PUT', '/films-b/_alias/b-westerns', { json: { filter: { term: { genre: 'western' } } } })).status, 200);
  assert.equal((await call(server, 'PUT', '/films-copy/_alias/copy-writer')).status, 200);
  const throughAliases = await call(server, 'POST', '/_reindex', { json: { source: { index: 'b-westerns' }, dest: { index: 'copy-writer' } } });
  assert.equal(throughAliases.status, 200, throughAliases.text);
  assert.equal(throughAliases.body.total, 2);
  assert.equal(throughAliases.body.updated, 2);

  await call(server, 'PUT', '/versioned/_doc/v1?version=7&version_type=external', { json: { n: 1 } });
  const external = await call(server, 'POST', '/_reindex', { json: { source: { index: 'versioned' }, dest: { index: 'versioned-copy', version_type: 'external' } } });
  assert.equal(external.body.created, 1, external.text);
  assert.equal((await call(server, 'GET', '/versioned-copy/_doc/v1')).body._version, 7);
  const older = await call(server, 'POST', '/_reindex', { json: { source: { index: 'versioned' }, dest: { index: 'versioned-copy', version_type: 'external' } } });
  assert.equal(older.status, 409, older.text);

  const started = await call(server, 'POST', '/_reindex?wait_for_completion=false', { json: { source: { index: 'films-*' }, dest: { index: 'all-copy' } } });
  assert.equal(started.status, 200, started.text);
  assert.match(started.body.task, /:/);
  const job = await jobDone(started.body.task);
  assert.equal(job.type, 'reindex');
  assert.equal(job.state, 'done', JSON.stringify(job));
  // The collections share ids: the first copy of an id is created, the others overwrite it.
  assert.equal(job.status.created + job.status.updated, (await call(server, 'POST', '/films-*/_count')).body.count);
  assert.equal((await call(server, 'GET', '/all-copy/_count')).body.count, job.status.created);

  const refusals: Array<[unknown, RegExp]> = [
    [{ source: { index: 'films-a', remote: { host: 'http://elsewhere:9200' } }, dest: { index: 'x' } }, /source\.remote/],
    [{ source: { index: 'films-a' }, dest: { index: 'films-a' } }, /cannot write into an index its reading from/],
    [{ source: { index: 'films-a' }, dest: { index: 'x' }, script: { source: 'ctx._source.n++' } }, /script/],
    [{ source: { index: 'films-a' } }, /index must be specified/],
    [{ source: { index: 'films-a' }, dest: { index: 'x', pipeline: 'p' } }, /pipeline/],
    [{ source: { index: 'films-a', size: 0 }, dest: { index: 'x' } }, /source\.size/],
  ];
  for (const [body, reason] of refusals) {
    const refused = await call(server, 'POST', '/_reindex', { json: body });
    assert.equal(refused.status, 400, refused.text);
    assert.match(refused.body.error.reason, reason);
  }
  assert.equal((await call(server, 'POST', '/_reindex', { json: { source: { index: 'nothing' }, dest: { index: 'x' } } })).status, 404);
  const notAlias = await call(server, 'POST', '/_reindex?require_alias=true', { json: { source: { index: 'films-a' }, dest: { index: 'x' } } });
  assert.equal(notAlias.status, 404, notAlias.text);
  assert.match(notAlias.body.error.reason, /require_alias/);
  assert.equal((await call(server, 'POST', '/_reindex?slices=4', { json: { source: { index: 'films-a' }, dest: { index: 'x' } } })).status, 400);
  assert.equal((await call(server, 'HEAD', '/x')).status, 404);
});

test('the OpenSearch client: reindex', async () => {
  const response = await client.reindex({ refresh: true, body: { source: { index: 'films-a' }, dest: { index: 'client-copy' } } });
  assert.equal((response.body as { created?: number }).created, 4);
  assert.equal((await client.count({ index: 'client-copy' })).body.count, 4);
});

test('automatic creation follows action.auto_create_index patterns; an alias name is never created', async () => {
  assert.equal((await call(server, 'PUT', '/_node/_local/settings', { json: { 'action.auto_create_index': '+logs-*,-tmp*' } })).status, 200);
  try {
    assert.equal((await call(server, 'PUT', '/logs-app/_doc/1', { json: { m: 'x' } })).status, 201);
    const tmp = await call(server, 'PUT', '/tmp-1/_doc/1', { json: { m: 'x' } });
    assert.equal(tmp.status, 404);
    assert.match(tmp.body.error.reason, /action\.auto_create_index/);
    assert.equal((await call(server, 'PUT', '/metrics-1/_doc/1', { json: { m: 'x' } })).status, 404);
    const bulk = await call(server, 'POST', '/_bulk', { body: ndjson([{ index: { _index: 'logs-bulk' } }, { m: 1 }, { index: { _index: 'tmp-bulk' } }, { m: 1 }]), headers: NDJSON });
    assert.equal(bulk.body.items[0].index.status, 201, bulk.text);
    assert.equal(bulk.body.items[1].index.status, 404);
    assert.equal((await call(server, 'PUT', '/_node/_local/settings', { json: { 'action.auto_create_index': '-tmp*,+*' } })).status, 200);
    assert.equal((await call(server, 'PUT', '/metrics-1/_doc/1', { json: { m: 'x' } })).status, 201);
    assert.equal((await call(server, 'PUT', '/tmp-2/_doc/1', { json: { m: 'x' } })).status, 404);
    for (const name of ['tmp-1', 'tmp-2', 'tmp-bulk']) assert.equal((await call(server, 'HEAD', `/${name}`)).status, 404, name);
  } finally {
    await call(server, 'PUT', '/_node/_local/settings', { json: { 'action.auto_create_index': null } });
  }
});

test('_cluster/health/{target}: one collection, an alias or a pattern; a missing one is red, and waits time out with 408', async () => {
  const one = await call(server, 'GET', '/_cluster/health/films-b');
  assert.equal(one.status, 200, one.text);
  assert.equal(one.body.status, 'green');
  assert.equal(one.body.number_of_collections, 1);
  assert.equal(one.body.active_primary_shards, 2);
  const pattern = await call(server, 'GET', '/_cluster/health/films-%3F,b-westerns?level=indices');
  assert.equal(pattern.body.number_of_collections, 2, pattern.text);
  assert.deepEqual(Object.keys(pattern.body.namespaces.default.collections).sort(), ['films-a', 'films-b']);
  assert.equal((await call(server, 'GET', '/_cluster/health/b-westerns')).body.number_of_collections, 1);
  const missing = await call(server, 'GET', '/_cluster/health/nothing');
  assert.equal(missing.status, 200);
  assert.equal(missing.body.status, 'red');
  const waited = await call(server, 'GET', '/_cluster/health/nothing?wait_for_status=yellow&timeout=200ms');
  assert.equal(waited.status, 408);
  assert.equal(waited.body.timed_out, true);
  const appears = call(server, 'GET', '/_cluster/health/later?wait_for_status=green&timeout=20s');
  await new Promise((resolve) => setTimeout(resolve, 300));
  assert.equal((await call(server, 'PUT', '/later')).status, 200);
  const appeared = await appears;
  assert.equal(appeared.status, 200, appeared.text);
  assert.equal(appeared.body.status, 'green');
  assert.equal((await call(server, 'GET', '/_cluster/health/films-a?wait_for_active_shards=1&wait_for_nodes=1&timeout=1s')).status, 200);
  assert.equal((await call(server, 'GET', '/_cluster/health/films-a?wait_for_nodes=2&timeout=200ms')).status, 408);
  const viaClient = await client.cluster.health({ index: 'films-a', wait_for_status: 'green', timeout: '5s' });
  assert.equal(viaClient.body.status, 'green');
});

test('two nodes on etcd: health waits for the second node; aliases made through one serve both and survive a restart', async (t) => {
  let etcd;
  try {
    etcd = await startEtcd();
  } catch (error) {
    return t.skip((error as Error).message);
  }
  const nodes: TroveServer[] = [];
  const settings = (name: string) => ({ settings: { 'cluster.etcd': etcd.endpoint, 'cluster.name': 'aliases', 'node.name': name } });
  try {
    nodes.push(await startServer(settings('node-1')));
    const waiting = call(nodes[0]!, 'GET', '/_cluster/health?wait_for_nodes=2&timeout=120s');
    nodes.push(await startServer(settings('node-2')));
    const joined = await waiting;
    assert.equal(joined.status, 200, joined.text);
    assert.equal(joined.body.number_of_nodes, 2);
    const [one, two] = nodes as [TroveServer, TroveServer];

    for (const [node, name] of [[one, 'c-one'], [two, 'c-two']] as const) {
      const created = await call(node, 'PUT', `/${name}`, { json: { settings: { number_of_shards: 2 }, mappings: MAPPING } });
      assert.equal(created.status, 200, created.text);
      const loaded = await call(node, 'POST', `/${name}/_bulk`, { body: ndjson(FILMS.flatMap((film, index) => [{ index: { _id: `${name}-${index}` } }, film])), headers: NDJSON });
      assert.equal(loaded.body.errors, false, loaded.text);
    }
    const health = await call(two, 'GET', '/_cluster/health/c-one,c-two?wait_for_status=green&wait_for_active_shards=4&timeout=30s');
    assert.equal(health.status, 200, health.text);
    assert.equal(health.body.number_of_collections, 2);

    const added = await call(one, 'POST', '/_aliases', {
      json: {
        actions: [
          { add: { indices: ['c-one', 'c-two'], alias: 'c-westerns', filter: { term: { genre: 'western' } } } },
          { add: { index: 'c-two', alias: 'c-westerns', is_write_index: true, filter: { term: { genre: 'western' } } } },
        ],
      },
    });
    assert.equal(added.status, 200, added.text);
    const seen = await until(async () => {
      const got = await call(two, 'GET', '/_alias/c-westerns');
      return Object.keys(got.body).length === 2 ? got.body : undefined;
    }, 'the second node sees the alias');
    assert.equal(seen['c-two'].aliases['c-westerns'].is_write_index, true);
    for (const node of nodes) assert.equal((await call(node, 'GET', '/c-westerns/_count')).body.count, 4);
    const written = await call(two, 'PUT', '/c-westerns/_doc/new', { json: { title: 'the searchers', genre: 'western', year: 1956 } });
    assert.equal(written.status, 201, written.text);
    assert.equal(written.body._index, 'c-two');
    assert.equal((await call(one, 'GET', '/c-two/_doc/new')).body.found, true);
    const conflict = await call(two, 'PUT', '/c-westerns', { json: {} });
    assert.equal(conflict.body.error?.type, 'invalid_index_name_exception', conflict.text);
    const copied = await call(two, 'POST', '/_reindex', { json: { source: { index: 'c-westerns' }, dest: { index: 'c-copy' } } });
    assert.equal(copied.body.created, 5, copied.text);

    for (const node of nodes) await node.kill('SIGTERM');
    for (const node of nodes) await node.restart();
    const after = await until(async () => {
      const got = await call(one, 'GET', '/_alias/c-westerns');
      return got.status === 200 && Object.keys(got.body).length === 2 ? got.body : undefined;
    }, 'the alias is back after the restart');
    assert.deepEqual(after['c-one'].aliases['c-westerns'], { filter: { term: { genre: 'western' } } });
    await until(async () => ((await call(two, 'GET', '/c-westerns/_count')).body.count === 5 ? true : undefined), 'the alias serves reads after the restart');

    assert.equal((await call(two, 'DELETE', '/c-two')).status, 200);
    const remaining = await until(async () => {
      const got = await call(one, 'GET', '/_alias/c-westerns');
      return Object.keys(got.body).length === 1 ? got.body : undefined;
    }, 'deleting a collection removes its aliases on the other node');
    assert.deepEqual(Object.keys(remaining), ['c-one']);
  } finally {
    for (const node of nodes) await node.cleanup();
    await etcd.cleanup();
  }
});

test('namespace-limited keys: an alias belongs to its collections namespace; outside ones are refused or unseen', async () => {
  const secured = await startServer({ security: true });
  try {
    const adminKey = await secured.bootstrapKey();
    const admin = async (method: string, path: string, json?: unknown) => {
      const response = await call(secured, method, path, { apiKey: adminKey, ...(json === undefined ? {} : { json }) });
      assert.ok(response.status < 300, `${method} ${path}: ${response.text}`);
      return response;
    };
    for (const team of ['team-a', 'team-b']) {
      await admin('PUT', `/_namespace/${team}`);
      await admin('PUT', `/${team}-docs`, { namespace: team, mappings: MAPPING });
      await admin('PUT', `/${team}-docs/_doc/1`, FILMS[0]);
      await admin('PUT', `/${team}-docs/_alias/${team}-alias`, { filter: { term: { genre: 'drama' } } });
    }
    const key = (await admin('POST', '/_security/api_key', { name: 'a-manager', role: 'manage', namespaces: ['team-a'] })).body.api_key as string;
    const asA = (method: string, path: string, json?: unknown) => call(secured, method, path, { apiKey: key, ...(json === undefined ? {} : { json }) });

    assert.equal((await asA('GET', '/team-a-alias/_count')).body.count, 1);
    assert.equal((await asA('GET', '/team-b-alias/_count')).status, 403);
    assert.equal((await asA('GET', '/team-b-alias/_doc/1')).status, 403);
    assert.equal((await asA('PUT', '/team-b-alias/_doc/2', { title: 'x' })).status, 403);
    assert.deepEqual(Object.keys((await asA('GET', '/_alias')).body), ['team-a-docs']);
    assert.equal((await asA('GET', '/_alias/team-b-alias')).status, 404);
    assert.deepEqual((await asA('GET', '/_cat/aliases?format=json')).body.map((row: { alias: string }) => row.alias), ['team-a-alias']);
    const searched = await asA('POST', '/team-*-alias/_search', {});
    assert.equal(searched.status, 200, searched.text);
    assert.deepEqual(searched.body.hits.hits.map((hit: { _index: string }) => hit._index), ['team-a-docs']);
    assert.equal((await asA('POST', '/_aliases', { actions: [{ add: { index: 'team-b-docs', alias: 'mine' } }] })).status, 403);
    assert.equal((await asA('POST', '/_aliases', { actions: [{ add: { index: 'team-*', alias: 'mine' } }] })).status, 403);
    const crossing = await asA('PUT', '/team-a-docs/_alias/team-b-alias');
    assert.equal(crossing.status, 400, crossing.text);
    // The refusal names no namespace.
  assert.equal(crossing.body.error.reason, 'alias [team-b-alias] would point to collections of several namespaces; an alias belongs to the one namespace of its collections');
    assert.equal((await asA('PUT', '/team-a-docs/_alias/mine')).status, 200);
    assert.equal((await asA('POST', '/_reindex', { source: { index: 'team-b-alias' }, dest: { index: 'team-a-docs' } })).status, 403);
  } finally {
    await secured.cleanup();
  }
});
