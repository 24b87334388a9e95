/**
 * Search end to end: every query type of PRODUCT.md 4.2 on a small hand-made catalogue (exact
 * expectations), and sorting, paging, search_after, track_total_hits and every aggregation kind
 * on GeoNames cities (expectations computed from the same data in the test).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { cities, type CityDoc } from './corpora.ts';
import { call, ndjson, startServer, type TroveServer } from './harness.ts';

let server: TroveServer;

const PRODUCTS = [
  { sku: 'p1', title: 'Red running shoes', description: 'Lightweight shoes for running on roads', brand: 'acme', price: 80, stock: 5, tags: ['sport', 'shoes'], released: '2023-03-01', popularity: 10 },
  { sku: 'p2', title: 'Blue running shorts', description: 'Breathable shorts for the summer', brand: 'acme', price: 30, stock: 0, tags: ['sport'], released: '2023-06-15', popularity: 50 },
  { sku: 'p3', title: 'Red wool sweater', description: 'Warm sweater for winter evenings', brand: 'knitco', price: 120, stock: 3, tags: ['winter'], released: '2022-11-20', popularity: 5 },
  { sku: 'p4', title: 'Trail running shoes', description: 'Grippy shoes for trail running in the mountains', brand: 'peak', price: 140, tags: ['sport', 'shoes', 'trail'], released: '2024-01-10', popularity: 30 },
  { sku: 'p5', title: 'Running socks', description: 'Socks', brand: 'acme', price: 10, stock: 100, tags: ['sport'], released: '2024-02-01', popularity: 1 },
  { sku: 'p6', title: 'Green rain jacket', description: 'Waterproof jacket for rainy days', brand: 'peak', price: 200, stock: 2, tags: ['outdoor'], released: '2021-09-09', popularity: 20 },
];

const CITY_COUNT = 1500;
let cityDocs: Array<CityDoc & { founded: string }>;

function foundedFor(city: CityDoc): string {
  const number = Number(city.id);
  return new Date(Date.UTC(2000 + (number % 8), number % 12, 1 + (number % 28))).toISOString();
}

before(async () => {
  server = await startServer();
  const products = await call(server, 'PUT', '/products', {
    json: {
      mappings: {
        properties: {
          sku: { type: 'keyword' },
          title: { type: 'text' },
          description: { type: 'text', analyzer: 'english' },
          brand: { type: 'keyword' },
          price: { type: 'double' },
          stock: { type: 'integer' },
          tags: { type: 'keyword' },
          released: { type: 'date' },
          popularity: { type: 'long', inplace: true },
        },
      },
    },
  });
  assert.equal(products.status, 200, products.text);
  const bulk = await call(server, 'POST', '/products/_bulk', {
    body: ndjson(PRODUCTS.flatMap((product) => [{ index: { _id: product.sku.slice(1) } }, product])),
    headers: { 'content-type': 'application/x-ndjson' },
  });
  assert.equal(bulk.body.errors, false, bulk.text);

  const created = await call(server, 'PUT', '/cities', {
    json: {
      settings: { number_of_shards: 2 },
      mappings: {
        properties: {
          cid: { type: 'keyword' },
          name: { type: 'text', fields: { keyword: { type: 'keyword' } } },
          country: { type: 'keyword' },
          feature: { type: 'keyword' },
          population: { type: 'long' },
          lat: { type: 'double' },
          lon: { type: 'double' },
          capital: { type: 'boolean' },
          founded: { type: 'date' },
        },
      },
    },
  });
  assert.equal(created.status, 200, created.text);
  cityDocs = cities(CITY_COUNT).map((city) => ({ ...city, founded: foundedFor(city) }));
  const lines = cityDocs.flatMap((city) => [{ index: { _id: city.id } }, { ...city, cid: city.id }]);
  const loaded = await call(server, 'POST', '/cities/_bulk', { body: ndjson(lines), headers: { 'content-type': 'application/x-ndjson' } });
  assert.equal(loaded.body.errors, false);
});

after(async () => {
  await server?.cleanup();
});

async function search(collection: string, body: unknown): Promise<any> {
  const path = collection === '' ? '/_search' : `/${collection}/_search`;
  const response = await call(server, 'POST', path, { json: body });
  assert.equal(response.status, 200, response.text);
  return response.body;
}

async function ids(query: unknown, extra: Record<string, unknown> = {}): Promise<string[]> {
  const body = await search('products', { query, size: 20, ...extra });
  return body.hits.hits.map((hit: { _id: string }) => hit._id);
}

function sorted(values: string[]): string[] {
  return [...values].sort();
}

describe('query types', () => {
  test('response envelope', async () => {
    const body = await search('products', { query: { match_all: {} } });
    assert.equal(typeof body.took, 'number');
    assert.equal(body.timed_out, false);
    assert.deepEqual(body._shards, { total: 1, successful: 1, skipped: 0, failed: 0 });
    assert.deepEqual(body.hits.total, { value: 6, relation: 'eq' });
    assert.equal(body.hits.max_score, 1);
    assert.equal(body.hits.hits.length, 6);
    for (const hit of body.hits.hits) {
      assert.equal(hit._index, 'products');
      assert.equal(hit._score, 1);
      assert.equal(typeof hit._source.title, 'string');
    }
  });

  test('match: or, and, minimum_should_match; best match first', async () => {
    assert.deepEqual(sorted(await ids({ match: { title: 'running' } })), ['1', '2', '4', '5']);
    assert.deepEqual(await ids({ match: { title: { query: 'red running', operator: 'and' } } }), ['1']);
    const either = await ids({ match: { title: 'red running' } });
    assert.deepEqual(sorted(either), ['1', '2', '3', '4', '5']);
    assert.equal(either[0], '1');
    assert.deepEqual(sorted(await ids({ match: { title: { query: 'red running shoes', minimum_should_match: 2 } } })), ['1', '4']);
  });

  test('match_phrase with and without slop', async () => {
    assert.deepEqual(sorted(await ids({ match_phrase: { title: 'running shoes' } })), ['1', '4']);
    assert.deepEqual(await ids({ match_phrase: { title: 'red shoes' } }), []);
    assert.deepEqual(await ids({ match_phrase: { title: { query: 'red shoes', slop: 1 } } }), ['1']);
  });

  test('multi_match with field boosts; english analyzer stems', async () => {
    assert.deepEqual(sorted(await ids({ multi_match: { query: 'shoes', fields: ['title^2', 'description'] } })), ['1', '4']);
    assert.deepEqual(sorted(await ids({ match: { description: 'evening' } })), ['3']);
  });

  test('simple_query_string', async () => {
    assert.deepEqual(
      sorted(await ids({ simple_query_string: { query: 'running -shoes', fields: ['title'], default_operator: 'and' } })),
      ['2', '5'],
    );
    assert.deepEqual(sorted(await ids({ simple_query_string: { query: '"wool sweater" | jacket', fields: ['title'] } })), ['3', '6']);
  });

  test('term, terms, ids, exists, prefix', async () => {
    assert.deepEqual(sorted(await ids({ term: { brand: 'acme' } })), ['1', '2', '5']);
    assert.deepEqual(sorted(await ids({ terms: { brand: ['knitco', 'peak'] } })), ['3', '4', '6']);
    assert.deepEqual(sorted(await ids({ term: { stock: 0 } })), ['2']);
    assert.deepEqual(sorted(await ids({ ids: { values: ['1', '3', '99'] } })), ['1', '3']);
    assert.deepEqual(sorted(await ids({ exists: { field: 'stock' } })), ['1', '2', '3', '5', '6']);
    assert.deepEqual(await ids({ prefix: { title: 'sw' } }), ['3']);
    assert.deepEqual(sorted(await ids({ prefix: { brand: 'pe' } })), ['4', '6']);
  });

  test('range on numbers, dates and keywords', async () => {
    assert.deepEqual(sorted(await ids({ range: { price: { gte: 30, lt: 140 } } })), ['1', '2', '3']);
    assert.deepEqual(sorted(await ids({ range: { released: { gte: '2024-01-01' } } })), ['4', '5']);
    assert.deepEqual(sorted(await ids({ range: { released: { lt: '2022-01-01T00:00:00Z' } } })), ['6']);
    assert.deepEqual(await ids({ range: { brand: { gte: 'b', lt: 'l' } } }), ['3']);
  });

  test('bool: must, filter, must_not, should with minimum_should_match', async () => {
    assert.deepEqual(
      sorted(
        await ids({
          bool: {
            must: [{ match: { title: 'running' } }],
            filter: [{ range: { price: { lte: 100 } } }],
            must_not: [{ term: { tags: 'shoes' } }],
          },
        }),
      ),
      ['2', '5'],
    );
    assert.deepEqual(
      sorted(
        await ids({
          bool: { should: [{ term: { brand: 'acme' } }, { term: { tags: 'winter' } }, { term: { tags: 'trail' } }], minimum_should_match: 1 },
        }),
      ),
      ['1', '2', '3', '4', '5'],
    );
    assert.deepEqual(
      await ids({ bool: { should: [{ term: { brand: 'acme' } }, { term: { tags: 'shoes' } }], minimum_should_match: 2 } }),
      ['1'],
    );
  });

  test('constant_score and function_score field_value_factor', async () => {
    const constant = await search('products', { query: { constant_score: { filter: { term: { tags: 'sport' } }, boost: 2 } } });
    assert.deepEqual(sorted(constant.hits.hits.map((hit: { _id: string }) => hit._id)), ['1', '2', '4', '5']);
    for (const hit of constant.hits.hits) assert.equal(hit._score, 2);
    const ranked = await search('products', {
      query: {
        function_score: { query: { match_all: {} }, field_value_factor: { field: 'popularity', factor: 1, modifier: 'none' }, boost_mode: 'replace' },
      },
    });
    assert.deepEqual(ranked.hits.hits.map((hit: { _id: string }) => hit._id), ['2', '4', '6', '1', '3', '5']);
    assert.deepEqual(ranked.hits.hits.map((hit: { _score: number }) => hit._score), [50, 30, 20, 10, 5, 1]);
  });

  test('an update of an inplace field re-ranks the next search', async () => {
    const response = await call(server, 'POST', '/products/_update/5', { json: { ops: [{ op: 'incr', field: 'popularity', value: 100 }] } });
    assert.equal(response.status, 200, response.text);
    const ranked = await ids({ function_score: { field_value_factor: { field: 'popularity' }, boost_mode: 'replace' } });
    assert.equal(ranked[0], '5');
    await call(server, 'POST', '/products/_update/5', { json: { ops: [{ op: 'incr', field: 'popularity', value: -100 }] } });
  });

  test('DSL errors are 400 parsing_exception', async () => {
    const response = await call(server, 'POST', '/products/_search', { json: { query: { bogus: {} } } });
    assert.equal(response.status, 400);
    assert.equal(response.body.error.type, 'parsing_exception');
    assert.match(response.body.error.reason, /bogus/);
  });
});

describe('sort, paging, source filtering, highlight', () => {
  test('sort by field asc/desc, multi-key, missing, with sort values', async () => {
    assert.deepEqual(await ids({ match_all: {} }, { sort: [{ price: 'asc' }] }), ['5', '2', '1', '3', '4', '6']);
    const desc = await search('products', { sort: [{ price: { order: 'desc' } }], size: 2 });
    assert.deepEqual(desc.hits.hits.map((hit: { _id: string }) => hit._id), ['6', '4']);
    assert.deepEqual(desc.hits.hits[0].sort, [200]);
    assert.deepEqual(await ids({ match_all: {} }, { sort: ['brand', { price: 'desc' }] }), ['1', '2', '5', '3', '6', '4']);
    const missingFirst = await ids({ match_all: {} }, { sort: [{ stock: { order: 'asc', missing: '_first' } }] });
    assert.deepEqual(missingFirst, ['4', '2', '6', '3', '1', '5']);
    const missingLast = await ids({ match_all: {} }, { sort: [{ stock: { order: 'desc' } }] });
    assert.equal(missingLast[missingLast.length - 1], '4');
  });

  test('from/size pages', async () => {
    assert.deepEqual(await ids({ match_all: {} }, { sort: [{ price: 'asc' }], from: 2, size: 2 }), ['1', '3']);
    assert.deepEqual(await ids({ match_all: {} }, { sort: [{ price: 'asc' }], from: 5, size: 10 }), ['6']);
    const tooFar = await call(server, 'POST', '/products/_search', { json: { from: 9995, size: 10 } });
    assert.equal(tooFar.status, 400);
    assert.equal(tooFar.body.error.type, 'illegal_argument_exception');
  });

  test('search_after walks every city exactly once in order', async () => {
    const expected = [...cityDocs]
      .sort((left, right) => right.population - left.population || (left.id < right.id ? -1 : left.id > right.id ? 1 : 0))
      .map((city) => city.id);
    const seen: string[] = [];
    let after: unknown[] | undefined;
    for (;;) {
      const page = await search('cities', {
        size: 200,
        sort: [{ population: 'desc' }, { cid: 'asc' }],
        _source: false,
        ...(after ? { search_after: after } : {}),
      });
      if (page.hits.hits.length === 0) break;
      for (const hit of page.hits.hits) seen.push(hit._id);
      after = page.hits.hits[page.hits.hits.length - 1].sort;
    }
    assert.deepEqual(seen, expected);
  });

  test('_source filtering in hits', async () => {
    const listed = await search('products', { query: { ids: { values: ['1'] } }, _source: ['title', 'price'] });
    assert.deepEqual(listed.hits.hits[0]._source, { title: 'Red running shoes', price: 80 });
    const none = await search('products', { query: { ids: { values: ['1'] } }, _source: false });
    assert.equal(none.hits.hits[0]._source, undefined);
    const pattern = await search('products', { query: { ids: { values: ['1'] } }, _source: { includes: ['t*', 'p*'], excludes: ['tags', 'popularity'] } });
    assert.deepEqual(pattern.hits.hits[0]._source, { title: 'Red running shoes', price: 80 });
    // Without _source the fetch phase skips the stored source, unless highlighting needs it.
    const highlighted = await search('products', { query: { match: { title: 'running' } }, _source: false, highlight: { fields: { title: {} } }, sort: [{ price: 'asc' }] });
    assert.equal(highlighted.hits.hits[0]._source, undefined);
    assert.deepEqual(highlighted.hits.hits[0].highlight.title, ['<em>Running</em> socks']);
  });

  test('highlight wraps matching terms', async () => {
    const body = await search('products', { query: { match: { title: 'running' } }, highlight: { fields: { title: {} } }, sort: [{ price: 'asc' }] });
    const first = body.hits.hits[0];
    assert.equal(first._id, '5');
    assert.deepEqual(first.highlight.title, ['<em>Running</em> socks']);
    const tagged = await search('products', {
      query: { match: { description: 'trail' } },
      highlight: { pre_tags: ['['], post_tags: [']'], fields: { description: {} } },
    });
    assert.match(tagged.hits.hits[0].highlight.description[0], /\[trail\]/);
  });

  test('track_total_hits bounds the count', async () => {
    const bounded = await search('cities', { track_total_hits: 100, size: 0 });
    assert.deepEqual(bounded.hits.total, { value: 100, relation: 'gte' });
    const exact = await search('cities', { track_total_hits: true, size: 0 });
    assert.deepEqual(exact.hits.total, { value: CITY_COUNT, relation: 'eq' });
  });

  test('URL parameters: q, sort, size, from, _source', async () => {
    const byQ = await call(server, 'GET', '/products/_search?q=title:shoes&sort=price:desc&_source=title');
    assert.equal(byQ.status, 200, byQ.text);
    assert.deepEqual(byQ.body.hits.hits.map((hit: { _id: string }) => hit._id), ['4', '1']);
    assert.deepEqual(byQ.body.hits.hits[0]._source, { title: 'Trail running shoes' });
    const paged = await call(server, 'GET', '/products/_search?sort=price:asc&from=1&size=1&lane=default');
    assert.deepEqual(paged.body.hits.hits.map((hit: { _id: string }) => hit._id), ['2']);
    const getWithBody = await call(server, 'GET', '/products/_search', { json: { query: { term: { brand: 'knitco' } } } });
    assert.deepEqual(getWithBody.body.hits.hits.map((hit: { _id: string }) => hit._id), ['3']);
  });

  test('/_search spans every collection', async () => {
    const body = await search('', { query: { term: { brand: 'peak' } } });
    assert.deepEqual(sorted(body.hits.hits.map((hit: { _id: string }) => hit._id)), ['4', '6']);
    for (const hit of body.hits.hits) assert.equal(hit._index, 'products');
  });
});

describe('aggregations', () => {
  function countBy<T>(values: T[]): Map<T, number> {
    const counts = new Map<T, number>();
    for (const value of values) counts.set(value, (counts.get(value) ?? 0) + 1);
    return counts;
  }

  test('terms with a sub-aggregation', async () => {
    const body = await search('cities', {
      size: 0,
      aggs: { countries: { terms: { field: 'country', size: 5 }, aggs: { people: { sum: { field: 'population' } } } } },
    });
    const counts = [...countBy(cityDocs.map((city) => city.country))].sort(
      (left, right) => right[1] - left[1] || (left[0] < right[0] ? -1 : 1),
    );
    const buckets = body.aggregations.countries.buckets;
    assert.deepEqual(
      buckets.map((bucket: { key: string; doc_count: number }) => [bucket.key, bucket.doc_count]),
      counts.slice(0, 5),
    );
    for (const bucket of buckets) {
      const expected = cityDocs.filter((city) => city.country === bucket.key).reduce((sum, city) => sum + city.population, 0);
      assert.equal(bucket.people.value, expected);
    }
    assert.equal(typeof body.aggregations.countries.sum_other_doc_count, 'number');
    assert.equal(
      body.aggregations.countries.sum_other_doc_count,
      counts.slice(5).reduce((sum, [, count]) => sum + count, 0),
    );
  });

  test('range and histogram', async () => {
    const body = await search('cities', {
      size: 0,
      aggs: {
        sizes: { range: { field: 'population', ranges: [{ to: 5000 }, { from: 5000, to: 100000 }, { from: 100000 }] } },
        spread: { histogram: { field: 'lat', interval: 30, min_doc_count: 1 } },
      },
    });
    const sizes = body.aggregations.sizes.buckets;
    assert.equal(sizes.length, 3);
    assert.equal(sizes[0].doc_count, cityDocs.filter((city) => city.population < 5000).length);
    assert.equal(sizes[1].doc_count, cityDocs.filter((city) => city.population >= 5000 && city.population < 100000).length);
    assert.equal(sizes[2].doc_count, cityDocs.filter((city) => city.population >= 100000).length);
    assert.equal(sizes[1].from, 5000);
    assert.equal(sizes[1].to, 100000);
    const expected = [...countBy(cityDocs.map((city) => Math.floor(city.lat / 30) * 30))].sort((left, right) => left[0] - right[0]);
    assert.deepEqual(
      body.aggregations.spread.buckets.map((bucket: { key: number; doc_count: number }) => [bucket.key, bucket.doc_count]),
      expected,
    );
  });

  test('date_histogram by year', async () => {
    const body = await search('cities', { size: 0, aggs: { years: { date_histogram: { field: 'founded', calendar_interval: 'year' } } } });
    const expected = [...countBy(cityDocs.map((city) => city.founded.slice(0, 4)))].sort((left, right) => (left[0] < right[0] ? -1 : 1));
    const buckets = body.aggregations.years.buckets;
    assert.deepEqual(
      buckets.map((bucket: { key_as_string: string; doc_count: number }) => [bucket.key_as_string.slice(0, 4), bucket.doc_count]),
      expected,
    );
    assert.equal(buckets[0].key, Date.UTC(Number(expected[0]![0]), 0, 1));
    assert.equal(buckets[0].key_as_string, `${expected[0]![0]}-01-01T00:00:00.000Z`);
  });

  test('metrics: min, max, avg, sum, stats, value_count, cardinality', async () => {
    const body = await search('cities', {
      size: 0,
      query: { term: { capital: false } },
      aggs: {
        lowest: { min: { field: 'population' } },
        highest: { max: { field: 'population' } },
        mean: { avg: { field: 'population' } },
        total: { sum: { field: 'population' } },
        summary: { stats: { field: 'population' } },
        counted: { value_count: { field: 'population' } },
        countries: { cardinality: { field: 'country' } },
      },
    });
    const selected = cityDocs.filter((city) => !city.capital).map((city) => city.population);
    const sum = selected.reduce((total, value) => total + value, 0);
    const aggs = body.aggregations;
    assert.equal(aggs.lowest.value, Math.min(...selected));
    assert.equal(aggs.highest.value, Math.max(...selected));
    assert.ok(Math.abs(aggs.mean.value - sum / selected.length) < 1e-6);
    assert.equal(aggs.total.value, sum);
    assert.equal(aggs.summary.count, selected.length);
    assert.equal(aggs.summary.min, Math.min(...selected));
    assert.equal(aggs.summary.max, Math.max(...selected));
    assert.equal(aggs.summary.sum, sum);
    assert.ok(Math.abs(aggs.summary.avg - sum / selected.length) < 1e-6);
    assert.equal(aggs.counted.value, selected.length);
    assert.equal(aggs.countries.value, new Set(cityDocs.filter((city) => !city.capital).map((city) => city.country)).size);
  });
});
