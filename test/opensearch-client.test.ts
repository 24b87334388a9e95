/**
 * The official OpenSearch JavaScript client against a real Trove server: collection admin,
 * index, the bulk helper, get, search with bool/range/sort/aggregations, count, delete.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { Client } from '@opensearch-project/opensearch';
import { cities, type CityDoc } from './corpora.ts';
import { startServer, type TroveServer } from './harness.ts';

let server: TroveServer;
let client: Client;
const CITY_COUNT = 2000;
let docs: CityDoc[];

before(async () => {
  server = await startServer();
  client = new Client({ node: server.url });
  docs = cities(CITY_COUNT);
});

after(async () => {
  await client?.close();
  await server?.cleanup();
});

test('info and collection admin', async () => {
  const info = await client.info();
  assert.equal(info.statusCode, 200);
  assert.equal(typeof info.body.version.number, 'string');
  assert.equal(typeof info.body.cluster_name, 'string');

  const created = await client.indices.create({
    index: 'places',
    body: {
      settings: { number_of_shards: 3, number_of_replicas: 0 },
      mappings: {
        properties: {
          name: { type: 'text', fields: { keyword: { type: 'keyword' } } },
          country: { type: 'keyword' },
          feature: { type: 'keyword' },
          population: { type: 'long' },
          lat: { type: 'double' },
          lon: { type: 'double' },
          capital: { type: 'boolean' },
        },
      },
    },
  });
  assert.equal(created.body.acknowledged, true);
  assert.equal((await client.indices.exists({ index: 'places' })).body, true);
  assert.equal((await client.indices.exists({ index: 'nowhere' })).body, false);
  const mapping = await client.indices.getMapping({ index: 'places' });
  assert.equal((mapping.body as any).places.mappings.properties.population.type, 'long');
  const duplicate = await client.indices.create({ index: 'places' }).catch((error: any) => error);
  assert.equal(duplicate.statusCode, 400);
  assert.equal(duplicate.body.error.type, 'resource_already_exists_exception');
});

test('index, get, count, delete one document', async () => {
  const indexed = await client.index({ index: 'places', id: 'home', body: { name: 'Hometown', country: 'ZZ', population: 7 }, refresh: true });
  assert.equal(indexed.statusCode, 201);
  assert.equal(indexed.body.result, 'created');
  const got = await client.get({ index: 'places', id: 'home' });
  assert.equal(got.body.found, true);
  assert.deepEqual(got.body._source, { name: 'Hometown', country: 'ZZ', population: 7 });
  assert.equal((await client.count({ index: 'places' })).body.count, 1);
  const deleted = await client.delete({ index: 'places', id: 'home' });
  assert.equal(deleted.body.result, 'deleted');
  const missing = await client.get({ index: 'places', id: 'home' }).catch((error: any) => error);
  assert.equal(missing.statusCode, 404);
  assert.equal((await client.exists({ index: 'places', id: 'home' })).body, false);
});

test('bulk helper loads the corpus', async () => {
  const dropped: unknown[] = [];
  const stats = await client.helpers.bulk({
    datasource: docs,
    onDocument: (doc: CityDoc) => ({ index: { _index: 'places', _id: doc.id } }),
    onDrop: (item) => dropped.push(item),
    flushBytes: 64 * 1024,
    concurrency: 2,
    refreshOnCompletion: 'places',
  });
  assert.deepEqual(dropped, []);
  assert.equal(stats.total, CITY_COUNT);
  assert.equal(stats.successful, CITY_COUNT);
  assert.equal(stats.failed, 0);
  const count = await client.count({ index: 'places' });
  assert.equal(count.body.count, CITY_COUNT);
});

test('search: bool + range + sort + aggregations', async () => {
  const minPopulation = 50_000;
  const expected = docs
    .filter((doc) => doc.population >= minPopulation && doc.feature !== 'PPLX')
    .sort((left, right) => right.population - left.population || (left.id < right.id ? -1 : 1));
  // The client's request types lag behind the DSL (e.g. terms `field`): the body is typed loosely.
  const searchBody = {
    size: 10,
    query: {
      bool: {
        filter: [{ range: { population: { gte: minPopulation } } }],
        must_not: [{ term: { feature: 'PPLX' } }],
      },
    },
    sort: [{ population: { order: 'desc' } }, { 'name.keyword': 'asc' }],
    aggs: {
      by_country: { terms: { field: 'country', size: 3 } },
      population: { stats: { field: 'population' } },
    },
  };
  const response = await client.search({ index: 'places', body: searchBody as never });
  const body = response.body as any;
  assert.equal(body.hits.total.value, expected.length);
  assert.deepEqual(
    body.hits.hits.map((hit: any) => hit._source.population),
    expected.slice(0, 10).map((doc) => doc.population),
  );
  assert.equal(body.aggregations.population.count, expected.length);
  assert.equal(body.aggregations.population.max, expected[0]!.population);
  const counts = new Map<string, number>();
  for (const doc of expected) counts.set(doc.country, (counts.get(doc.country) ?? 0) + 1);
  const top = [...counts].sort((left, right) => right[1] - left[1] || (left[0] < right[0] ? -1 : 1)).slice(0, 3);
  assert.deepEqual(
    body.aggregations.by_country.buckets.map((bucket: any) => [bucket.key, bucket.doc_count]),
    top,
  );

  const text = await client.search({ index: 'places', body: { query: { match: { name: docs[0]!.name } }, size: 5 } });
  assert.ok((text.body as any).hits.hits.some((hit: any) => hit._id === docs[0]!.id));
});

test('search helper, update and delete of the collection', async () => {
  const sources = await client.helpers.search({ index: 'places', body: { query: { ids: { values: [docs[1]!.id] } } } });
  assert.deepEqual(sources, [docs[1]]);
  const updated = await client.update({ index: 'places', id: docs[1]!.id, body: { doc: { population: 123456789 } } });
  assert.equal(updated.body.result, 'updated');
  const got = await client.get({ index: 'places', id: docs[1]!.id });
  assert.equal((got.body._source as any).population, 123456789);
  const removed = await client.indices.delete({ index: 'places' });
  assert.equal(removed.body.acknowledged, true);
  assert.equal((await client.indices.exists({ index: 'places' })).body, false);
});
