/**
 * Multi-shard correctness: the same corpus in a 1-shard and a 4-shard collection gives the same
 * hits (ids and order under a deterministic sort), totals, counts and aggregation results,
 * including after deletes and updates spread over the shards.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { cities } from './corpora.ts';
import { call, ndjson, startServer, type TroveServer } from './harness.ts';

let server: TroveServer;
const CITY_COUNT = 3000;

const MAPPINGS = {
  properties: {
    cid: { type: 'keyword' },
    name: { type: 'text', fields: { keyword: { type: 'keyword' } } },
    country: { type: 'keyword' },
    feature: { type: 'keyword' },
    population: { type: 'long' },
    lat: { type: 'double' },
    lon: { type: 'double' },
    capital: { type: 'boolean' },
  },
};

before(async () => {
  server = await startServer();
  const lines = cities(CITY_COUNT).flatMap((city) => [{ index: { _id: city.id } }, { ...city, cid: city.id }]);
  for (const [name, shards] of [['one', 1], ['four', 4]] as const) {
    const created = await call(server, 'PUT', `/${name}`, { json: { settings: { number_of_shards: shards }, mappings: MAPPINGS } });
    assert.equal(created.status, 200, created.text);
    for (let start = 0; start < lines.length; start += 1000) {
      const loaded = await call(server, 'POST', `/${name}/_bulk`, {
        body: ndjson(lines.slice(start, start + 1000)),
        headers: { 'content-type': 'application/x-ndjson' },
      });
      assert.equal(loaded.body.errors, false);
    }
  }
  const settings = await call(server, 'GET', '/four');
  assert.equal(Number(settings.body.four.settings.index.number_of_shards), 4);
});

after(async () => {
  await server?.cleanup();
});

async function both(body: unknown): Promise<[any, any]> {
  const [one, four] = await Promise.all([
    call(server, 'POST', '/one/_search', { json: body }),
    call(server, 'POST', '/four/_search', { json: body }),
  ]);
  assert.equal(one.status, 200, one.text);
  assert.equal(four.status, 200, four.text);
  assert.equal(four.body._shards.total, 4);
  return [one.body, four.body];
}

function hitIds(body: any): string[] {
  return body.hits.hits.map((hit: { _id: string }) => hit._id);
}

const SORTED_QUERIES: Array<{ name: string; body: Record<string, unknown> }> = [
  { name: 'all by population', body: { sort: [{ population: 'desc' }, { cid: 'asc' }], size: 50 } },
  { name: 'deep page', body: { sort: [{ population: 'desc' }, { cid: 'asc' }], from: 1200, size: 40 } },
  { name: 'keyword sort', body: { sort: [{ 'name.keyword': 'asc' }, { cid: 'asc' }], size: 100 } },
  {
    name: 'filtered',
    body: {
      query: { bool: { filter: [{ range: { population: { gte: 10_000, lt: 500_000 } } }, { terms: { feature: ['PPL', 'PPLA'] } }] } },
      sort: [{ lat: 'asc' }, { cid: 'desc' }],
      from: 10,
      size: 25,
    },
  },
  { name: 'text match', body: { query: { match: { name: 'san' } }, sort: [{ cid: 'asc' }], size: 30 } },
  { name: 'after', body: { sort: [{ population: 'desc' }, { cid: 'asc' }], search_after: [20_000, ''], size: 30 } },
];

test('sorted hits, totals and sort values are identical', async () => {
  for (const { name, body } of SORTED_QUERIES) {
    const [one, four] = await both({ ...body, track_total_hits: true });
    assert.deepEqual(four.hits.total, one.hits.total, name);
    assert.ok(one.hits.hits.length > 0, name);
    assert.deepEqual(hitIds(four), hitIds(one), name);
    assert.deepEqual(
      four.hits.hits.map((hit: { sort: unknown }) => hit.sort),
      one.hits.hits.map((hit: { sort: unknown }) => hit.sort),
      name,
    );
  }
});

test('scored queries match the same documents', async () => {
  const [one, four] = await both({ query: { match: { name: 'saint san santa' } }, size: 10_000 });
  assert.deepEqual(four.hits.total, one.hits.total);
  assert.deepEqual([...hitIds(four)].sort(), [...hitIds(one)].sort());
});

test('counts and aggregations are identical', async () => {
  const aggs = {
    countries: { terms: { field: 'country', size: 10 }, aggs: { people: { sum: { field: 'population' } } } },
    all_countries: { terms: { field: 'country', size: 500 } },
    sizes: { range: { field: 'population', ranges: [{ to: 1000 }, { from: 1000, to: 100_000 }, { from: 100_000 }] } },
    latitudes: { histogram: { field: 'lat', interval: 10 } },
    stats: { stats: { field: 'population' } },
    lowest: { min: { field: 'lat' } },
    highest: { max: { field: 'lon' } },
    mean: { avg: { field: 'population' } },
    total: { sum: { field: 'population' } },
    values: { value_count: { field: 'population' } },
    distinct: { cardinality: { field: 'country' } },
  };
  const [one, four] = await both({ size: 0, aggs, query: { range: { population: { gt: 0 } } } });
  const normalise = (value: any): any => {
    const copy = structuredClone(value);
    copy.mean.value = Math.round(copy.mean.value * 1e6) / 1e6;
    copy.stats.avg = Math.round(copy.stats.avg * 1e6) / 1e6;
    delete copy.countries.doc_count_error_upper_bound;
    return copy;
  };
  assert.deepEqual(normalise(four.aggregations), normalise(one.aggregations));
  for (const query of [{ match_all: {} }, { term: { capital: true } }, { match: { name: 'city' } }]) {
    const [countOne, countFour] = await Promise.all([
      call(server, 'POST', '/one/_count', { json: { query } }),
      call(server, 'POST', '/four/_count', { json: { query } }),
    ]);
    assert.equal(countFour.body.count, countOne.body.count);
  }
});

test('deletes and updates spread over shards keep both collections equal', async () => {
  const victims = cities(CITY_COUNT).filter((_, index) => index % 7 === 0).map((city) => city.id);
  const actions: unknown[] = victims.flatMap((id, index): unknown[] =>
    index % 2 === 0 ? [{ delete: { _id: id } }] : [{ update: { _id: id } }, { doc: { population: 1_000_000_000 + index } }],
  );
  for (const name of ['one', 'four']) {
    const response = await call(server, 'POST', `/${name}/_bulk`, { body: ndjson(actions), headers: { 'content-type': 'application/x-ndjson' } });
    assert.equal(response.body.errors, false, response.text.slice(0, 500));
  }
  const [one, four] = await both({
    sort: [{ population: 'desc' }, { cid: 'asc' }],
    size: 100,
    track_total_hits: true,
    aggs: { top: { max: { field: 'population' } } },
  });
  assert.equal(one.hits.total.value, CITY_COUNT - Math.ceil(victims.length / 2));
  assert.deepEqual(four.hits.total, one.hits.total);
  assert.deepEqual(hitIds(four), hitIds(one));
  assert.deepEqual(four.aggregations, one.aggregations);
});

test('_source: false answers ids and versions from the doc meta, in query-and-fetch and in query-then-fetch', async () => {
  const body = { query: { match: { name: 'san' } }, sort: [{ cid: 'asc' }], size: 20, version: true };
  const [withSource] = await both(body);
  assert.ok(withSource.hits.hits.length > 0 && withSource.hits.hits.every((hit: { _source?: unknown }) => hit._source !== undefined));
  const idsAndVersions = (result: any): unknown[] => result.hits.hits.map((hit: { _id: string; _version: number }) => [hit._id, hit._version]);
  const [one, four] = await both({ ...body, _source: false });
  for (const result of [one, four]) {
    assert.deepEqual(idsAndVersions(result), idsAndVersions(withSource));
    assert.ok(result.hits.hits.every((hit: { _source?: unknown }) => hit._source === undefined));
  }
});
