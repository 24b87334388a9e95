import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { loadConfig } from '../config/load-config.ts';
import { EngineError, TroveError } from '../engine/errors.ts';
import type { BulkItem } from './bulk.ts';
import { NodeError } from './node-error.ts';
import { NodeService } from './node-service.ts';
import { plainJson } from './raw-json.ts';

const logger = pino({ level: 'silent' });
const GENRES = ['sf', 'fantasy', 'crime', 'poetry'];
const MAPPINGS = {
  properties: {
    title: { type: 'text' },
    genre: { type: 'keyword' },
    year: { type: 'long' },
    rank: { type: 'integer' },
  },
};

let dataPath: string;
let node: NodeService;

function book(rank: number): Record<string, unknown> {
  return {
    title: `book ${rank} ${rank % 3 === 0 ? 'dragon' : 'ship'}`,
    genre: GENRES[rank % GENRES.length],
    year: 1950 + (rank % 7),
    rank,
  };
}

async function openNode(): Promise<NodeService> {
  // Writes to missing collections are refused here (index_not_found); test/compat-day-one.test.ts covers auto-creation, the default.
  const config = loadConfig({ flags: { 'path.data': dataPath, 'node.name': 'test-node', 'action.auto_create_index': 'false' } });
  const opened = await NodeService.open({ config, logger });
  await opened.register('http://127.0.0.1:9200');
  return opened;
}

function hasCode(expected: string): (error: unknown) => boolean {
  return (error) => error instanceof TroveError && error.code === expected;
}

function ids(response: { hits: { hits: Array<{ _id: string }> } }): string[] {
  return response.hits.hits.map((hit) => hit._id);
}

before(async () => {
  dataPath = await mkdtemp(join(tmpdir(), 'trove-node-service-'));
  node = await openNode();
  await node.collections.createCollection('books4', { settings: { number_of_shards: 4 }, mappings: MAPPINGS });
  await node.collections.createCollection('books1', { settings: { index: { number_of_shards: '1' } }, mappings: MAPPINGS });
  const items: BulkItem[] = [];
  for (let rank = 0; rank < 60; rank++) {
    for (const collection of ['books4', 'books1']) items.push({ action: 'index', collection, id: `b${rank}`, body: book(rank) });
  }
  const response = await node.documents.bulk(items);
  assert.equal(response.errors, false);
});

after(async () => {
  await node.close();
  await rm(dataPath, { recursive: true, force: true });
});

test('collections: shards on disk, descriptions, listing, name rules', async () => {
  const described = await node.collections.getCollection('books4');
  const settings = (described.books4.settings as { index: Record<string, string> }).index;
  assert.equal(settings.number_of_shards, '4');
  assert.equal(described.books4.namespace, 'default');
  const shardDirs = await readdir(join(dataPath, 'shards'));
  assert.equal(shardDirs.length, 5);

  const listed = await node.collections.listCollections();
  const books4 = listed.find((summary) => summary.name === 'books4');
  assert.equal(books4?.docsCount, 60);
  assert.equal(books4?.health, 'green');
  assert.equal(books4?.primaries, 4);

  await assert.rejects(node.collections.createCollection('books4', {}), hasCode('resource_already_exists'));
  await assert.rejects(node.collections.createCollection('Bad', {}), hasCode('invalid_index_name'));
  await assert.rejects(node.collections.createCollection('x', { settings: { number_of_shards: 0 } }), hasCode('illegal_argument'));
  await assert.rejects(node.collections.createCollection('x', { settings: { foo: 1 } }), hasCode('illegal_argument'));
  await assert.rejects(node.collections.getCollection('missing'), hasCode('index_not_found'));
  assert.deepEqual(Object.keys(await node.collections.getCollection('books*')), ['books1', 'books4']);
});

test('documents: index, get with routing and _source, delete, generated ids, id limits', async () => {
  const created = await node.documents.index('books4', undefined, { title: 'no id', rank: 1000 });
  assert.equal(created.result, 'created');
  assert.match(created._id, /^[A-Za-z0-9_-]{20}$/);
  assert.equal(created._shards.successful, 1);
  const fetched = await node.documents.get('books4', created._id, { source: { source: ['rank'] } });
  assert.ok(fetched.found);
  assert.deepEqual(fetched.found && fetched._source, { rank: 1000 });

  const routed = await node.documents.index('books4', 'routed', { title: 'r' }, { routing: 'user-7' });
  assert.equal(routed._version, 1);
  assert.equal((await node.documents.get('books4', 'routed', { routing: 'user-7' })).found, true);

  const again = await node.documents.index('books4', 'routed', { title: 'r2' }, { routing: 'user-7' });
  assert.equal(again.result, 'updated');
  assert.equal(again._version, 2);
  await assert.rejects(node.documents.index('books4', 'routed', { title: 'r3' }, { routing: 'user-7', opType: 'create' }), hasCode('version_conflict'));

  const deleted = await node.documents.delete('books4', created._id);
  assert.equal(deleted.result, 'deleted');
  assert.equal((await node.documents.delete('books4', created._id)).result, 'not_found');
  assert.equal((await node.documents.get('books4', created._id)).found, false);
  await node.documents.delete('books4', 'routed', { routing: 'user-7' });

  await assert.rejects(node.documents.index('books4', 'x'.repeat(513), { a: 1 }), hasCode('action_request_validation'));
  await assert.rejects(node.documents.index('books4', 'arr', [1, 2]), hasCode('mapper_parsing'));
  await assert.rejects(node.documents.index('nope', 'a', { a: 1 }), hasCode('index_not_found'));
});

test('search across 4 shards equals search over 1 shard: sort, from/size, search_after, totals', async () => {
  const bodies = [
    { sort: [{ rank: 'asc' }], size: 7 },
    { sort: [{ year: 'desc' }, { rank: 'asc' }], from: 5, size: 10 },
    { query: { match: { title: 'dragon' } }, sort: ['rank'], size: 50 },
    { query: { range: { year: { gte: 1953 } } }, sort: [{ rank: { order: 'desc' } }], from: 20, size: 15 },
  ];
  for (const body of bodies) {
    const sharded = await node.search.search('books4', body);
    const single = await node.search.search('books1', body);
    assert.ok(ids(single).length > 0, JSON.stringify(body));
    assert.deepEqual(ids(sharded), ids(single), JSON.stringify(body));
    assert.deepEqual(sharded.hits.total, single.hits.total);
    assert.deepEqual(sharded._shards, { total: 4, successful: 4, skipped: 0, failed: 0 });
    assert.deepEqual(
      sharded.hits.hits.map((hit) => hit.sort),
      single.hits.hits.map((hit) => hit.sort),
    );
  }

  const firstPage = await node.search.search('books4', { sort: [{ rank: 'asc' }], size: 5 });
  const lastSort = firstPage.hits.hits.at(-1)?.sort;
  const nextPage = await node.search.search('books4', { sort: [{ rank: 'asc' }], size: 5, search_after: lastSort });
  assert.deepEqual(ids(nextPage), ['b5', 'b6', 'b7', 'b8', 'b9']);

  const scored = await node.search.search('books4', { query: { match: { title: 'dragon' } }, size: 100 });
  assert.deepEqual(scored.hits.total, { value: 20, relation: 'eq' });
  assert.ok(scored.hits.max_score !== null && scored.hits.max_score > 0);
  assert.equal(scored.hits.hits[0]._index, 'books4');

  const limited = await node.search.search('books4', { track_total_hits: 10, size: 0 });
  assert.deepEqual(limited.hits.total, { value: 10, relation: 'gte' });
  const untracked = await node.search.search('books4', { track_total_hits: false, size: 1 });
  assert.equal(untracked.hits.total, undefined);

  const both = await node.search.search('books*', { query: { term: { rank: 3 } } });
  assert.deepEqual(both.hits.hits.map((hit) => hit._index).sort(), ['books1', 'books4']);
  assert.equal(both._shards.total, 5);
  assert.equal((await node.search.search('nothing-*', {})).hits.hits.length, 0);

  await assert.rejects(node.search.search('books4', { from: 9999, size: 2 }), hasCode('illegal_argument'));
  await assert.rejects(node.search.search('books4', { query: { no_such_query: {} } }), hasCode('parsing'));
  await assert.rejects(node.search.search('missing', {}), hasCode('index_not_found'));
  assert.equal((await node.search.count('books4', { query: { term: { genre: 'sf' } } })).count, 15);
});

test('source filtering and highlight in search hits', async () => {
  const response = await node.search.search('books4', {
    query: { match: { title: 'dragon' } },
    sort: ['rank'],
    size: 1,
    _source: { includes: ['title', 'rank'] },
    highlight: { fields: { title: {} } },
  });
  const [hit] = response.hits.hits;
  assert.deepEqual(hit._source, { title: 'book 0 dragon', rank: 0 });
  assert.ok(hit.highlight?.title?.[0]?.includes('<em>dragon</em>'));
  const noSource = await node.search.search('books4', { size: 1, _source: false });
  assert.equal(noSource.hits.hits[0]._source, undefined);
});

test('aggregations merge across shards', async () => {
  const aggs = {
    genres: { terms: { field: 'genre' }, aggs: { newest: { max: { field: 'year' } } } },
    years: { stats: { field: 'year' } },
    ranks: { histogram: { field: 'rank', interval: 20 } },
  };
  const sharded = await node.search.search('books4', { size: 0, aggs });
  const single = await node.search.search('books1', { size: 0, aggs });
  assert.deepEqual(sharded.aggregations, single.aggregations);
  const genres = sharded.aggregations?.genres as { buckets: Array<{ key: string; doc_count: number }> };
  assert.deepEqual(
    genres.buckets.map((bucket) => [bucket.key, bucket.doc_count]).sort(),
    [['crime', 15], ['fantasy', 15], ['poetry', 15], ['sf', 15]],
  );
});

test('bulk: per-item errors in request order, valid items applied', async () => {
  const response = await node.documents.bulk(
    [
      { action: 'index', id: 'ok-1', body: { title: 'fine', rank: 500 } },
      { action: 'index', collection: 'nope', id: 'x', body: { a: 1 } },
      { action: 'create', id: 'b1', body: { title: 'duplicate' } },
      { action: 'index', id: 'bad-year', body: { year: 'not a number' } },
      { action: 'update', id: 'missing-doc', body: { doc: { brand_new_field: 1 } } },
      { action: 'update', id: 'ok-1', body: { ops: [{ op: 'incr', field: 'rank', value: 5 }] } },
      { action: 'delete', id: 'never-existed' },
      { action: 'index', body: { title: 'generated id' } },
      { action: 'update', id: 'ok-1', body: { ops: [{ op: 'explode', field: 'rank' }] } },
    ],
    { collection: 'books4' },
  );
  assert.equal(response.errors, true);
  const summary = response.items.map((item) => ('error' in item ? `${item.action}:${item.error.code}` : `${item.action}:${item.response.result}`));
  assert.deepEqual(summary, [
    'index:created',
    'index:index_not_found',
    'create:version_conflict',
    'index:mapper_parsing',
    'update:document_missing',
    'update:updated',
    'delete:not_found',
    'index:created',
    'update:illegal_argument',
  ]);
  const failed = response.items[1];
  assert.ok('error' in failed && failed.index === 'nope' && failed.id === 'x');
  const updated = await node.documents.get('books4', 'ok-1');
  assert.equal(updated.found && (plainJson(updated._source) as { rank?: number }).rank, 505);
  const mapping = await node.collections.getMapping('books4');
  assert.equal(mapping.books4.mappings.properties.brand_new_field, undefined, 'a refused update adds no field');
});

test('mapping: dynamic fields reach the shards, explicit changes merge, conflicts and strict mode refuse', async () => {
  await node.documents.index('books4', 'paged', { title: 'paged', pages: 321, published: '2001-02-03' });
  const mapping = (await node.collections.getMapping('books4')).books4.mappings;
  assert.equal(mapping.properties.pages?.type, 'long');
  assert.equal(mapping.properties.published?.type, 'date');
  const byPages = await node.search.search('books4', { query: { range: { pages: { gte: 300 } } } });
  assert.deepEqual(ids(byPages), ['paged']);

  const update = await node.documents.update('books4', 'paged', { ops: [{ op: 'set', field: 'stats.reads', value: 3 }], _source: true });
  assert.equal(update.result, 'updated');
  assert.deepEqual((plainJson(update.get?._source) as { stats?: unknown }).stats, { reads: 3 });
  assert.equal((await node.collections.getMapping('books4')).books4.mappings.properties.stats?.properties?.reads?.type, 'long');
  assert.deepEqual(ids(await node.search.search('books4', { query: { term: { 'stats.reads': 3 } } })), ['paged']);

  await node.collections.putMapping('books4', { properties: { isbn: { type: 'keyword' } } });
  assert.equal((await node.collections.getMapping('books4')).books4.mappings.properties.isbn?.type, 'keyword');
  await assert.rejects(node.collections.putMapping('books4', { properties: { year: { type: 'text' } } }), hasCode('illegal_argument'));

  await node.collections.createCollection('strict', { mappings: { dynamic: 'strict', properties: { a: { type: 'long' } } } });
  await node.documents.index('strict', '1', { a: 1 });
  await assert.rejects(node.documents.index('strict', '2', { a: 1, b: 2 }), hasCode('strict_dynamic_mapping'));
  const concurrent = await Promise.all(
    Array.from({ length: 8 }, (_, index) => node.documents.index('books1', `c${index}`, { [`field_${index % 4}`]: index })),
  );
  assert.ok(concurrent.every((response) => response.result === 'created'));
  const fields = Object.keys((await node.collections.getMapping('books1')).books1.mappings.properties);
  for (const field of ['field_0', 'field_1', 'field_2', 'field_3']) assert.ok(fields.includes(field), field);
  await node.collections.deleteCollection('strict');
});

test('mget, namespaces, delete and restart', async () => {
  const fetched = await node.documents.mget({ docs: [{ _index: 'books4', _id: 'b2' }, { _index: 'nope', _id: 'x' }, { _index: 'books1', _id: 'missing' }] });
  assert.equal(fetched.docs[0] && 'found' in fetched.docs[0] && fetched.docs[0].found, true);
  assert.ok('error' in fetched.docs[1] && fetched.docs[1].error.code === 'index_not_found');
  assert.ok('found' in fetched.docs[2] && fetched.docs[2].found === false);
  assert.equal((await node.documents.mget({ ids: ['b1', 'b2'] }, { collection: 'books1' })).docs.length, 2);

  await node.collections.createNamespace('shop');
  await node.collections.createCollection('orders', { namespace: 'shop', settings: { number_of_shards: 2 } });
  await node.documents.index('orders', 'o1', { total: 5 });
  assert.deepEqual((await node.collections.getNamespace('shop')).collections, ['orders']);
  const before = (await readdir(join(dataPath, 'shards'))).length;
  assert.deepEqual((await node.collections.deleteNamespace('shop')).collections, ['orders']);
  assert.equal((await readdir(join(dataPath, 'shards'))).length, before - 2);
  await assert.rejects(node.documents.get('orders', 'o1'), hasCode('index_not_found'));

  await node.close();
  await assert.rejects(node.documents.get('books4', 'b1'), hasCode('node_closed'));
  await mkdir(join(dataPath, 'shards', 'left-by-a-crash'));
  node = await openNode();
  assert.equal(existsSync(join(dataPath, 'shards', 'left-by-a-crash')), false, 'unreferenced shard data is removed');
  const reopened = await node.documents.get('books4', 'b7');
  assert.equal(reopened.found && (plainJson(reopened._source) as { rank?: number }).rank, 7);
  assert.equal((await node.collections.getMapping('books4')).books4.mappings.properties.pages?.type, 'long');
  assert.deepEqual(ids(await node.search.search('books4', { sort: ['rank'], size: 3 })), ids(await node.search.search('books1', { sort: ['rank'], size: 3 })));

  await node.collections.deleteCollection('books1');
  await assert.rejects(node.search.search('books1', {}), hasCode('index_not_found'));
  await assert.rejects(node.collections.deleteCollection('books*'), hasCode('illegal_argument'));
});
